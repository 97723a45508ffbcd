"""The RNTK on a Dask cluster: Grams in blocks, and the default classifier's search.

Two entry points:

* :func:`rntk_kernel`: a Gram computed as one Dask task per block;
* :class:`SeriesBlocks`: training (or test) series in blocks that the workers load
  (arrays, memmaps, dask arrays, a folder of files), larger than the memory of any one
  machine. ``RNTKClassifierCV().fit(SeriesBlocks(...), y)`` runs the large-n search on
  the cluster: each kernel setting's Nystroem features are computed block by block on the
  workers, the exact leave-one-out of every ridge comes from one reduced ``m x m``
  statistic (the R factor of the features, combined as a tree of tasks) and per-block
  leverages, and ``predict`` on a :class:`SeriesBlocks` runs block by block. A fit on
  series held in memory inside ``joblib.parallel_config(backend="dask")`` takes the same
  path. The landmarks, the selected candidates and the decisions are those of the fit on
  one machine, to rounding.

Needs the optional extra ``distributed`` (``pip install "rntk[distributed]"``, which
installs ``dask[distributed]``); the rest of the package never imports Dask. Every
worker runs :func:`rntk.rntk_kernel` on its blocks; Numba compiles the engine once per
machine (the on-disk cache) and each worker process loads it once.
"""

import sys
import time

import numpy as np

from ._kernels._params import RNTK_PARAM_NAMES, resolve_params
from ._kernels._rntk import rntk_kernel as _local_kernel
from ._kernels._shared import check_out
from ._model_selection._cluster import SeriesBlocks, dask_names
from ._utils import DOC, as_sequences, check_int, check_n_jobs, check_same_channels, fill_doc

__all__ = ["SeriesBlocks", "rntk_kernel"]
# SeriesBlocks and the search on a cluster live with the other search paths
# (rntk/_model_selection/_cluster.py); documented here
SeriesBlocks.__module__ = __name__

_MAX_BLOCK = 2000  # series per side of a block: 32 MB of float64 results
_MIN_BLOCK = 200
_TASKS_PER_WORKER = 8


def _block(xs, ys, rows, cols, kernel):
    """One task: the Gram of ``xs[rows]`` against ``ys[cols]``.

    ``ys`` None: a diagonal block of a symmetric Gram, computed as one.
    """
    x = xs[rows[0]:rows[1]]
    y = None if ys is None else ys[cols[0]:cols[1]]
    return _local_kernel(x, y, **kernel)


def _blocks(n_x, n_y, size, symmetric):
    """Return the ``(rows, cols)`` of every task, the largest first.

    For a symmetric Gram only the blocks on and above the diagonal; a diagonal block
    computes half its pairs, so it comes after the full ones of the same size (the small
    tasks at the end fill the workers' last gaps).
    """
    out = []
    for i0 in range(0, n_x, size):
        for j0 in range(i0 if symmetric else 0, n_y, size):
            out.append(((i0, min(i0 + size, n_x)), (j0, min(j0 + size, n_y))))
    return sorted(out, key=lambda b: -_work(b, symmetric))


def _work(block, symmetric):
    """Pairs computed by a block."""
    (i0, i1), (j0, j1) = block
    if symmetric and i0 == j0:
        return (i1 - i0) * (i1 - i0 + 1) // 2
    return (i1 - i0) * (j1 - j0)


def _auto_block_size(n_x, n_y, symmetric, n_workers):
    """Largest block size (at most 2000) giving every worker about 8 tasks.

    Fewer, larger tasks cost less scheduling, but with only a few per worker the last
    ones leave workers idle (2 workers, 6000 series of 150 steps, a 2-core machine:
    6 blocks of 2000 ran at 1.36-1.38x the speed of one worker, 21 blocks of about 1000
    at 1.5-1.8x; ``benchmarks/bench_scale.py --probe``).
    """
    size = max(1, min(_MAX_BLOCK, n_x, n_y))
    while size > _MIN_BLOCK:
        k_x, k_y = -(-n_x // size), -(-n_y // size)
        if (k_x * (k_x + 1) // 2 if symmetric else k_x * k_y) >= _TASKS_PER_WORKER * n_workers:
            break
        size = max(_MIN_BLOCK, size * 4 // 5)
    return size


@fill_doc(**DOC)
def rntk_kernel(X, Y=None, *, client=None, block_size=None, out=None, verbose=False,
                **kernel):
    """RNTK Gram matrix computed in blocks, one Dask task per block.

    The Gram is cut into blocks of ``block_size`` x ``block_size`` series; each block
    is a task computing :func:`rntk.rntk_kernel` on a worker, and the results are
    assembled, as they complete, into a new array or into ``out`` (a
    :class:`numpy.memmap` for a Gram larger than the memory). The series are sent to
    every worker once (``client.scatter``). For ``Y=None`` only the blocks on and above
    the diagonal are computed. A worker that dies costs the re-run of its tasks (the
    scheduler reschedules them), not the result.

    Parameters
    ----------
    {XY_sets}
    client : distributed.Client, default=None
        The cluster to run on. ``None`` starts a local cluster of two worker processes
        of one thread each (``LocalCluster(processes=True, n_workers=2,
        threads_per_worker=1)``) for this call and closes it afterwards.
    block_size : int, default=None
        Series per side of a block (a task returns ``block_size ** 2`` doubles, 32 MB
        at 2000). ``None``: the largest size up to 2000 (down to 200) that gives each
        worker thread of the cluster at least 8 tasks, so that the last tasks balance
        the load. The largest blocks are submitted first.
    out : ndarray or numpy.memmap of shape (n_X, n_Y), dtype float64, default=None
        Where to write the Gram (every entry is overwritten). ``None``: a new array.
    verbose : bool, default=False
        Print the count of finished blocks on stderr as they complete.
    **kernel
        The RNTK hyperparameters of :func:`rntk.rntk_kernel` (``n_layers``,
        ``sigma_w``, ..., ``direction``, ``diff``) and ``n_jobs``, the Numba threads of
        one task (default 1: the cluster's workers are the parallelism).

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
        The Gram matrix, float64 (``out`` itself when given), equal to
        ``rntk.rntk_kernel(X, Y, **kernel)``.

    Raises
    ------
    rntk.KernelOverflowError
        When a block overflows float64 (raised by the task).

    Examples
    --------
    >>> import numpy as np
    >>> from rntk.distributed import rntk_kernel
    >>> X = np.random.default_rng(0).normal(size=(300, 20))
    >>> K = rntk_kernel(X, block_size=100)  # doctest: +SKIP
    >>> K.shape  # doctest: +SKIP
    (300, 300)
    """
    unknown = set(kernel) - set(RNTK_PARAM_NAMES) - {"n_jobs"}
    if unknown:
        raise TypeError(f"unknown keyword argument(s) {sorted(unknown)}; the kernel takes "
                        f"{list(RNTK_PARAM_NAMES) + ['n_jobs']}")
    kernel = {"n_jobs": 1, **kernel}
    check_n_jobs(kernel["n_jobs"])
    # check the options here, before any cluster starts, rather than in every task
    resolve_params(**{k: v for k, v in kernel.items() if k != "n_jobs"})
    Client, LocalCluster, as_completed = dask_names("Client", "LocalCluster", "as_completed")
    if block_size is not None:
        block_size = check_int(block_size, "block_size")
    xs = as_sequences(X, "X")
    symmetric = Y is None
    ys = xs if symmetric else as_sequences(Y, "Y")
    check_same_channels(xs, ys)
    check_out(out, None, len(xs), len(ys), 1)
    K = np.zeros((len(xs), len(ys))) if out is None else out

    own = client is None
    if own:
        cluster = LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                               dashboard_address=":0")
        client = Client(cluster)
    futures = {}
    try:
        # random keys: a key hashed from the data could be one a previous call is releasing
        x_f = client.scatter([xs], broadcast=True, hash=False)[0]
        y_f = None if symmetric else client.scatter([ys], broadcast=True, hash=False)[0]
        if block_size is None:
            block_size = _auto_block_size(len(xs), len(ys), symmetric,
                                          max(1, sum(client.nthreads().values())))
        blocks = _blocks(len(xs), len(ys), block_size, symmetric)
        for k, (rows, cols) in enumerate(blocks):
            diagonal = symmetric and rows == cols
            # priorities in the order of the list: the largest blocks run first
            fut = client.submit(_block, x_f, None if diagonal else (y_f or x_f), rows, cols,
                                kernel, pure=False, priority=len(blocks) - k)
            futures[fut] = (rows, cols)
        start, done = time.perf_counter(), 0
        for fut, block in as_completed(list(futures), with_results=True):
            (i0, i1), (j0, j1) = futures.pop(fut)
            if not isinstance(block, np.ndarray):  # a cancelled task yields its error
                fut.result()
                raise RuntimeError(f"block {(i0, i1)} x {(j0, j1)} returned {block!r}")
            K[i0:i1, j0:j1] = block
            if symmetric and i0 != j0:
                K[j0:j1, i0:i1] = block.T
            done += 1
            if verbose:
                print(f"rntk.distributed: {done}/{done + len(futures)} blocks, "
                      f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
            del fut
    finally:
        if futures:  # an error or an interrupt: cancel the blocks not collected, so that
            # they do not keep the workers busy after the call (their results are lost)
            client.cancel(list(futures))
        if own:
            client.close()
            cluster.close()
    return K
