"""What a task of the cluster search reads and writes on its worker: files."""

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


def loo_of(held, a):
    """Return the leave-one-out predictions of ridge ``a`` of a block (array, or its file)."""
    if not isinstance(held, str):
        return np.array(held[a])
    try:
        return np.array(np.load(held, mmap_mode="r")[a])
    except FileNotFoundError as exc:
        raise RuntimeError(
            f"the leave-one-out predictions of a block ({held}) are gone with the worker "
            "that wrote them (it left the cluster during the search): fit again") from exc


def memmap_rows(filename, dtype, shape, offset, order, start, stop):
    """Rows ``start:stop`` of a memmap, read on a worker (the file is not sent)."""
    X = np.memmap(filename, dtype=dtype, mode="r", shape=shape, offset=offset, order=order)
    return np.array(X[start:stop])


def load_file(path):
    """One file of series: ``.npy`` (read through a memmap) or ``.npz`` (array ``X``)."""
    if str(path).endswith(".npz"):
        with np.load(path, allow_pickle=False) as f:
            return f["X"]
    return np.load(path, mmap_mode="r", allow_pickle=False)
