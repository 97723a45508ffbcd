"""Files the UCR benchmark writes: atomic replacement, JSON values, stale temporaries.

Every file of ``--out`` (the cached results, the reports, the plots) is written to a
temporary file beside it (``.NAME.<pid>-<random>.tmp``) and renamed onto it, so that a
reader sees the old file or the complete new one. A writer killed in between leaves its
temporary file; :func:`remove_stale_temporaries` removes those of dead writers.
"""

import contextlib
import os
import secrets
from pathlib import Path

import numpy as np

__all__ = ["atomic_write_text", "json_default", "replacing"]


@contextlib.contextmanager
def replacing(path):
    """Yield a temporary path beside ``path``; on success move it onto ``path`` atomically.

    The temporary file (``.NAME.<pid>-<random>.tmp`` in the same folder, so that
    ``os.replace`` never crosses file systems) is removed when the block fails: readers
    of ``path`` see the old file or the complete new one, never a partial write.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def atomic_write_text(path, text):
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically, synced to disk."""
    with replacing(path) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


def json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
