"""One thread policy for the numba engines and the BLAS calls."""

from contextlib import contextmanager

import numba

from ._validation import check_n_jobs

__all__ = ["JIT_OPTIONS", "blas_threads", "numba_threads"]

#: Options of every ``@njit`` of the package: compiled once, cached on disk.
JIT_OPTIONS = dict(fastmath=True, error_model="numpy", cache=True)


@contextmanager
def numba_threads(n_jobs):
    """Run a block with ``n_jobs`` Numba threads, restoring the previous count after.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` keeps the current count; ``-1`` uses all available threads; a
        negative ``-k`` uses all but ``k - 1``.

    Yields
    ------
    n_threads : int
        The thread count in force inside the block.
    """
    check_n_jobs(n_jobs)
    previous = numba.get_num_threads()
    if n_jobs is None:
        yield previous
        return
    available = numba.config.NUMBA_NUM_THREADS
    n = n_jobs if n_jobs > 0 else max(1, available + 1 + n_jobs)
    n = min(n, available)
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)


def blas_threads(n_jobs):
    """Context manager limiting the BLAS threads to ``n_jobs`` (``None``: no limit).

    Parameters
    ----------
    n_jobs : int or None
        Thread count; ``None`` or a negative value leaves the BLAS setting alone.

    Returns
    -------
    limits : threadpoolctl.threadpool_limits
        The context manager.
    """
    from threadpoolctl import threadpool_limits

    limits = n_jobs if n_jobs is not None and n_jobs > 0 else None
    return threadpool_limits(limits=limits, user_api="blas")
