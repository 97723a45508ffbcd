"""Files the UCR benchmark writes: atomic replacement, JSON values, stale temporaries.

Every file of ``--out`` (the cached results, the reports, the plots) is written to a
temporary file beside it (``.NAME.<pid>-<random>.tmp``) and renamed onto it, so that a
reader sees the old file or the complete new one. A writer killed in between leaves its
temporary file; :func:`remove_stale_temporaries` removes those of dead writers.
"""

import contextlib
import os
import re
import secrets
import time
from pathlib import Path

import numpy as np

__all__ = ["atomic_write_text", "json_default", "remove_stale_temporaries", "replacing"]


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
    """Turn numpy scalars and arrays (anything else: its str) into JSON values."""
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


#: ``.NAME.<pid>-<8 hex>.tmp``: a temporary file of :func:`replacing`
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp")
#: a temporary file younger than this (seconds) is never removed: its writer may be a
#: process of another machine (or container) sharing the folder, whose process id means
#: nothing here; a write takes far less
_MIN_AGE = 10.0


def _alive(pid):
    """Whether process ``pid`` may be running (True when it cannot be told)."""
    if pid == os.getpid():
        return True
    if os.name != "posix":  # os.kill(pid, 0) is no probe there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, another user's
        return True
    return True


def remove_stale_temporaries(folder, min_age=_MIN_AGE):
    """Remove the temporary files that writers killed mid-write left in ``folder``.

    A file named as :func:`replacing` names them (``.NAME.<pid>-<random>.tmp``) is
    removed when its process is no longer running and it was last modified more than
    ``min_age`` seconds ago. Nothing else is touched; a file that cannot be removed is
    left.

    Parameters
    ----------
    folder : path-like
        The folder (not searched recursively); a missing folder is no error.
    min_age : float, default=10
        Seconds since the last modification below which a temporary file is kept.

    Returns
    -------
    removed : list of pathlib.Path
        The files removed.
    """
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None or _alive(int(match["pid"])):
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or \
                    now - entry.stat(follow_symlinks=False).st_mtime < min_age:
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed
