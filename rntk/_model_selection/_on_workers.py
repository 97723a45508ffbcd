"""What a task of the cluster search keeps on its worker: its files."""

import os
import tempfile
import time

import numpy as np


def this_worker():
    """Return the Dask worker running this task (None outside a worker)."""
    try:
        from distributed import get_worker
        return get_worker()
    except (ImportError, ValueError):
        return None


def save(values, what):
    """Write ``values`` to a new file of the worker's local directory; return its path."""
    worker = this_worker()  # not on a worker: this process's temporary folder
    folder = tempfile.gettempdir() if worker is None else worker.local_directory
    path = os.path.join(folder, f"rntk-{what}-{os.getpid()}-{time.time_ns()}-{id(values)}.npy")
    np.save(path, values)
    return path


def remove(paths):
    """Delete files of a worker (those of another machine are not there)."""
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass
