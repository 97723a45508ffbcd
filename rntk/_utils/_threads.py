"""One thread policy for the numba engines and the BLAS calls."""

import threading
from contextlib import contextmanager, nullcontext

import numba

from ._validation import check_n_jobs

__all__ = ["INTERLEAVE", "JIT_OPTIONS", "blas_threads", "interleaved_loops", "numba_threads",
           "one_blas_thread"]

#: Options of every ``@njit`` of the package: compiled once, cached on disk.
JIT_OPTIONS = dict(fastmath=True, error_model="numpy", cache=True)


_PARALLEL_LOCK = threading.RLock()


def _parallel_guard():
    """Return a lock when numba's threading layer is not thread-safe (workqueue).

    The workqueue layer aborts the process when two Python threads enter parallel
    regions at once ("Concurrent access has been detected"); OpenMP and TBB do not.
    Before the first parallel region the layer is unknown: the lock is taken then too.
    """
    if numba.config.THREADING_LAYER == "workqueue":
        return _PARALLEL_LOCK
    try:
        active = numba.threading_layer()
    except ValueError:  # not initialised yet
        return _PARALLEL_LOCK
    return _PARALLEL_LOCK if active == "workqueue" else nullcontext()


@contextmanager
def numba_threads(n_jobs):
    """Run a block with ``n_jobs`` Numba threads, restoring the previous count after.

    The block may run parallel numba code: it is serialised between Python threads
    when the threading layer is not thread-safe (workqueue).

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
    with _parallel_guard():
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


_CONTROLLER = []  # one threadpoolctl.ThreadpoolController, made on first use


def _controller():
    """Return the process's ``ThreadpoolController``, made once.

    Making one scans the loaded libraries (``/proc/self/maps`` on Linux): a few
    milliseconds, which ``threadpool_limits`` pays on every call, hundreds of times in
    a model selection.
    """
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def blas_threads(n_jobs):
    """Limit the BLAS threads to ``n_jobs`` (``None``: no limit); usable with ``with``.

    Parameters
    ----------
    n_jobs : int or None
        Thread count; ``None`` or a negative value leaves the BLAS setting alone.

    Returns
    -------
    limits : context manager
        The limit, in force from this call until the end of its ``with`` block.
    """
    limits = n_jobs if n_jobs is not None and n_jobs > 0 else None
    return _controller().limit(limits=limits, user_api="blas")


def one_blas_thread(serial=True):
    """Limit BLAS to one thread when ``serial``; usable with ``with``.

    Parameters
    ----------
    serial : bool, default=True
        False: no limit (a null context).

    Returns
    -------
    limits : context manager
        The limit, in force from this call until the end of its ``with`` block.
    """
    return _controller().limit(limits=1, user_api="blas") if serial else nullcontext()


#: Vectors each lane loop of the ReLU and linear RNTK engines works on at once, where it
#: is compiled for a CPU with AVX-512's 32 vector registers (LLVM's own choice is 1
#: there): the ReLU engine 1.09-1.15x faster with 8 (``benchmarks/bench_kernel.py
#: --compare``, in one process against the previous engine), 2-5% more than with 4. The
#: erf engine is 3-5% slower interleaved and is left alone, as are CPUs without AVX-512
#: (AVX2's 16 registers: not measured).
INTERLEAVE = 8


def _interleave_count(count):
    """Return ``count`` when numba compiles for this host and it has AVX-512, else 0."""
    if not count or numba.config.CPU_NAME or numba.config.CPU_FEATURES:
        return 0  # nothing asked, or a portable or chosen target
    import llvmlite.binding as llvm

    return count if llvm.get_host_cpu_features().get("avx512f", False) else 0


_COMPILE_LOCK = threading.Lock()


@contextmanager
def interleaved_loops(dispatcher, count=INTERLEAVE):
    """Compile ``dispatcher`` with its vectorised loops interleaved ``count`` times.

    LLVM's loop vectoriser picks no interleaving for the engine's long lane loops; each
    vector then waits on its own chain of dependent operations. The option
    ``force-vector-interleave`` is process-wide: it is set only while a first call of
    ``dispatcher`` in this process compiles it (or loads it from the disk cache, which
    it does not change), and reset to LLVM's default (0, its own choice) after.

    Parameters
    ----------
    dispatcher : numba dispatcher
        The jitted function about to be called.
    count : int, default=INTERLEAVE
        Vectors at once; 0 leaves the loops to LLVM. Applied only on CPUs with AVX-512
        and when numba compiles for this host.

    Yields
    ------
    None
        The block runs the call.
    """
    count = 0 if dispatcher.signatures else _interleave_count(count)
    if not count:
        yield
        return
    import llvmlite.binding as llvm

    with _COMPILE_LOCK:
        llvm.set_option("rntk", f"-force-vector-interleave={count}")
        try:
            yield
        finally:
            llvm.set_option("rntk", "-force-vector-interleave=0")


@contextmanager
def compile_notice(dispatcher, what="the RNTK engine", after=2.0):
    """Say once on stderr that numba is compiling, when a first call takes a while.

    Loading the on-disk cache takes a fraction of a second; compiling for a new machine
    or a new numba takes seconds. If the first call of ``dispatcher`` in this process is
    still running after ``after`` seconds, one line says what is happening.

    Parameters
    ----------
    dispatcher : numba dispatcher
        The jitted function about to be called.
    what : str
        Its name in the message.
    after : float
        Seconds before the message.

    Yields
    ------
    None
        The block runs the call.
    """
    if dispatcher.signatures:  # already compiled or loaded in this process
        yield
        return
    import sys
    import time

    said = threading.Event()
    start = time.perf_counter()

    def say():
        said.set()
        print(f"rntk: compiling {what} for this machine with numba (first use only; the "
              "result is cached on disk for later runs) ...", file=sys.stderr, flush=True)

    timer = threading.Timer(after, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            print(f"rntk: compiled {what} in {time.perf_counter() - start:.1f} s",
                  file=sys.stderr, flush=True)
