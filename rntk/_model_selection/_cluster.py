"""Series on a Dask cluster (public in :mod:`rntk.distributed`), and predictions on them.

:class:`SeriesBlocks` holds series in blocks that the workers load; :class:`BoundSeries`
binds them to a client for a search, whose large-n path on the cluster is
:class:`~._cluster_path.ClusterFeaturePath`; :func:`apply_blocks` predicts block by block.
Dask is imported only when a cluster is used.
"""

import copy
import glob
import itertools
import math
import os
import time
from functools import partial

import numpy as np

from .._utils import as_sequences, check_int, fill_doc
from .._utils._sequences import check_missing
from ._on_workers import load_file, memmap_rows

__all__ = ["ARRAY_BLOCK", "BoundSeries", "SeriesBlocks", "apply_blocks", "dask_names",
           "for_prediction", "predict_source", "training_series"]


def dask_names(*names):
    """Names of ``distributed``, with a clear error where it is not installed."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("rntk.distributed needs Dask's distributed scheduler: "
                          'pip install "rntk[distributed]" (or "dask[distributed]")') from exc
    return tuple(getattr(distributed, name) for name in names)


# -- series in blocks, loaded by the workers ------------------------------------------
#: Series per block of :meth:`SeriesBlocks.from_array` when ``block_size`` is None.
ARRAY_BLOCK = 4096


def _series_of(item, k, missing):
    """Return the validated series of block ``k`` (on a worker), ``(T_i, m)`` arrays."""
    try:
        data = item() if callable(item) else item
        return as_sequences(data, "X", missing)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"block {k} of the series: {exc}") from None


def _describe(item, k, missing):
    """Lengths, RMS per step and channels of the series of block ``k``."""
    xs = _series_of(item, k, missing)
    lengths = np.array([len(x) for x in xs], dtype=np.int64)
    rms = np.array([math.sqrt(float(np.vdot(x, x)) / len(x)) for x in xs])
    return lengths, rms, xs[0].shape[1]


def _pick(item, k, missing, rows):
    """Series ``rows`` of block ``k``, copied.

    A series of a block may be a view of the whole block's array: held as a result until
    the client gathers it, a view would keep every block read ahead in the worker's memory.
    """
    xs = _series_of(item, k, missing)
    return [np.array(xs[i]) for i in rows]


# the options and the result shared by the constructors of SeriesBlocks
_BLOCKS_TAIL = """client : distributed.Client, default=None
    As in :class:`SeriesBlocks`.
missing : {"raise", "interpolate"}, default="raise"
    As in :class:`SeriesBlocks`.
features : {"disk", "memory"}, default="disk"
    As in :class:`SeriesBlocks`.

Returns
-------
blocks : SeriesBlocks
    The blocks."""


class SeriesBlocks:
    """Series in blocks that the workers of a Dask cluster load, one block per task.

    The input of ``RNTKClassifierCV().fit`` and of its ``predict``, ``decision_function``,
    ``predict_proba`` and ``score`` for data on a cluster: the search then runs there
    (:mod:`rntk.distributed`), and no process holds more than a block of series (and the
    landmarks). A block is anything :func:`rntk.as_sequences` reads (a 2-D or 3-D array,
    NaN-padded for different lengths, or a list of series), or a function without
    arguments that returns one (it runs on the worker).

    Parameters
    ----------
    blocks : sequence
        The blocks, in order: arrays, lists of series, functions returning them, or
        ``distributed.Future`` objects of them.
    client : distributed.Client, default=None
        The cluster. ``None``: Dask's current client (``distributed.get_client()``: the
        last one created in this process, or the one of
        ``joblib.parallel_config(backend="dask")``).
    missing : {"raise", "interpolate"}, default="raise"
        NaN inside a series: an error naming the block, or filled (as the estimators'
        ``missing``).
    features : {"disk", "memory"}, default="disk"
        Where a worker keeps a kernel setting's features of its blocks between the two
        passes of the exact leave-one-out: in files of its local directory (its memory
        then holds one block at a time, whatever the number of series; a block read on
        another machine is computed again), or in its memory (faster where it fits;
        Dask spills to disk above its memory limit).

    See Also
    --------
    SeriesBlocks.from_array : Blocks of rows of an array, a memmap or a dask array.
    SeriesBlocks.from_files : One block per file of a folder.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk.distributed import SeriesBlocks
    >>> X = np.random.default_rng(0).normal(size=(10_000, 50))
    >>> blocks = SeriesBlocks.from_array(X, block_size=4000)
    >>> len(blocks.blocks)
    3
    >>> from distributed import Client  # doctest: +SKIP
    >>> client = Client("tcp://scheduler:8786")  # doctest: +SKIP
    >>> clf = RNTKClassifierCV().fit(blocks, y)  # doctest: +SKIP
    """

    def __init__(self, blocks, *, client=None, missing="raise", features="disk"):
        self.blocks = list(blocks)
        if not self.blocks:
            raise ValueError("SeriesBlocks needs at least one block")
        check_missing(missing)
        if features not in ("disk", "memory"):
            raise ValueError(f"features must be 'disk' or 'memory', got {features!r}")
        self.client = client
        self.missing = missing
        self.features = features

    @classmethod
    @fill_doc(blocks_tail=_BLOCKS_TAIL)
    def from_array(cls, X, *, block_size=None, client=None, missing="raise", features="disk"):
        """Blocks of consecutive rows of an array of series.

        Parameters
        ----------
        X : ndarray, numpy.memmap or dask.array.Array of shape (n, T) or (n, T, m)
            The series (NaN-padded at the end for different lengths). A memmap is read
            by the workers from its file (which they must see at the same path); a dask
            array is computed chunk by chunk on the cluster; an array in memory is sent
            block by block.
        block_size : int, default=None
            Series per block; ``None``: ``ARRAY_BLOCK`` (4096), or the chunks of a dask
            array along its first axis.
        {blocks_tail}
        """
        if type(X).__module__.startswith("dask."):
            if X.ndim not in (2, 3):
                raise ValueError(f"X must have 2 or 3 dimensions, got {X.ndim}")
            if block_size is not None:
                X = X.rechunk({0: check_int(block_size, "block_size")})
            X = X.rechunk({i: -1 for i in range(1, X.ndim)})
            parts = list(X.to_delayed().reshape(-1))
            return cls(parts, client=client, missing=missing, features=features)
        if not hasattr(X, "shape") or len(X.shape) not in (2, 3):
            raise ValueError("from_array takes a 2-D or 3-D array (n_series, n_steps[, "
                             "n_channels]); give a list of series to SeriesBlocks")
        size = ARRAY_BLOCK if block_size is None else check_int(block_size, "block_size")
        starts = range(0, X.shape[0], size)
        if isinstance(X, np.memmap) and X.filename is not None:
            base = X
            while isinstance(base.base, np.memmap):
                base = base.base
            if base is not X or not (X.flags.c_contiguous or X.flags.f_contiguous):
                X = np.asarray(X)  # a view of a memmap: its rows are sent
            else:
                order = "C" if X.flags.c_contiguous else "F"
                return cls([partial(memmap_rows, X.filename, X.dtype, X.shape, X.offset,
                                    order, i, min(i + size, X.shape[0])) for i in starts],
                           client=client, missing=missing, features=features)
        return cls([X[i:i + size] for i in starts], client=client, missing=missing,
                   features=features)

    @classmethod
    @fill_doc(blocks_tail=_BLOCKS_TAIL)
    def from_files(cls, files, *, loader=None, client=None, missing="raise", features="disk"):
        """One block per file; the workers read the files.

        Parameters
        ----------
        files : str or sequence of str
            A folder (its ``.npy`` and ``.npz`` files, sorted by name), a glob pattern
            (``"data/part-*.npy"``, sorted) or a list of paths, in order. The workers must
            see them at these paths.
        loader : callable, default=None
            ``loader(path)`` returns the file's series in any layout of
            :func:`rntk.as_sequences` (it runs on the worker and must be picklable).
            ``None``: ``numpy.load`` (``.npy``; ``.npz`` with the array ``X``).
        {blocks_tail}
        """
        if isinstance(files, (str, os.PathLike)):
            files = os.fspath(files)
            if os.path.isdir(files):
                paths = sorted(glob.glob(os.path.join(files, "*.npy"))
                               + glob.glob(os.path.join(files, "*.npz")))
            else:
                paths = sorted(glob.glob(files))
        else:
            paths = [os.fspath(f) for f in files]
        if not paths:
            raise ValueError(f"no file of series found in {files!r}")
        load = load_file if loader is None else loader
        return cls([partial(load, path) for path in paths], client=client, missing=missing,
                   features=features)

    def _bind(self):
        """Return the client, and the blocks as task arguments (arrays scattered once)."""
        if self.client is not None:
            client = self.client
        else:
            get_client, = dask_names("get_client")
            try:
                client = get_client()
            except ValueError as exc:
                raise ValueError(
                    "SeriesBlocks needs a Dask cluster: create a distributed.Client (its "
                    "scheduler's address, or a LocalCluster) before fitting, or pass "
                    "client=") from exc
        items = list(self.blocks)
        delayed = [k for k, b in enumerate(items) if hasattr(b, "dask") and not callable(b)]
        delayed += [k for k, b in enumerate(items)
                    if type(b).__name__ == "Delayed" and k not in delayed]
        if delayed:
            for k, fut in zip(delayed, client.compute([items[k] for k in delayed])):
                items[k] = fut
        local = [k for k, b in enumerate(items)
                 if not callable(b) and type(b).__name__ != "Future"]
        if local:
            for k, fut in zip(local, client.scatter([items[k] for k in local], hash=False)):
                items[k] = fut
        return client, items


class BoundSeries:
    """Training series in blocks on a cluster, described by one pass over the blocks."""

    def __init__(self, source, verbose=0):
        self.client, self.items = source._bind()
        self.missing, self.features = source.missing, source.features
        futures = [self.client.submit(_describe, item, k, self.missing, pure=False)
                   for k, item in enumerate(self.items)]
        described = self.client.gather(futures)
        self.counts = np.array([len(d[0]) for d in described])
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)])
        self.lengths = np.concatenate([d[0] for d in described])
        self.rms = np.concatenate([d[1] for d in described])
        channels = sorted({d[2] for d in described})
        if len(channels) > 1:
            first = [next(k for k, d in enumerate(described) if d[2] == c) for c in channels]
            raise ValueError(f"the blocks have different channel counts {channels} (first "
                             f"in blocks {first})")
        self.n_channels = channels[0]
        if verbose:
            print(f"[rntk.distributed] {len(self)} series in {len(self.items)} block(s), "
                  f"{self.n_channels} channel(s), lengths {self.lengths.min()} to "
                  f"{self.lengths.max()}", flush=True)

    def __len__(self):
        return int(self.offsets[-1])

    def pick(self, indices):
        """Return the series at the global ``indices``, in that order (gathered here)."""
        indices = np.asarray(indices)
        block = np.searchsorted(self.offsets, indices, side="right") - 1
        futures = {}
        for k in np.unique(block):
            rows = indices[block == k] - self.offsets[k]
            futures[k] = self.client.submit(_pick, self.items[k], int(k), self.missing,
                                            rows.tolist(), pure=False)
        got = {k: iter(f.result()) for k, f in futures.items()}
        return [next(got[k]) for k in block]

    def gather(self):
        """Every series, here (a training set small enough for one machine)."""
        futures = [self.client.submit(_series_of, item, k, self.missing, pure=False)
                   for k, item in enumerate(self.items)]
        return [x for xs in self.client.gather(futures) for x in xs]


def training_series(X, large_n, missing="raise"):
    """Return the training series of a search on a cluster, or None (in memory).

    ``X`` is a :class:`SeriesBlocks` (or a dask array), or series in memory while
    ``joblib.parallel_config(backend="dask")`` is active and more than ``large_n`` of
    them (the cluster then runs the large-n path).
    """
    source = predict_source(X, missing)
    if source is not None:
        return source
    if large_n is None or not _dask_backend():
        return None
    try:
        n = X.shape[0] if hasattr(X, "shape") else len(X)
    except TypeError:
        return None
    if n <= large_n:
        return None
    if hasattr(X, "shape") and len(X.shape) in (2, 3):
        return SeriesBlocks.from_array(X, missing=missing)
    xs = as_sequences(X, "X", missing)
    return SeriesBlocks([xs[i:i + ARRAY_BLOCK] for i in range(0, len(xs), ARRAY_BLOCK)],
                        missing=missing)


def _dask_backend():
    """Whether joblib's active backend is Dask's (``parallel_config(backend="dask")``)."""
    try:
        from joblib.parallel import get_active_backend
    except ImportError:  # pragma: no cover - depends on joblib
        return False
    backend = get_active_backend()[0]
    return type(backend).__name__ == "DaskDistributedBackend"


def predict_source(X, missing="raise"):
    """``X`` as :class:`SeriesBlocks` when it lives on a cluster, else None.

    ``missing`` is the estimator's: ``"interpolate"`` there, or on the blocks, fills
    missing values inside the series (``"raise"`` is the default of both).
    """
    if isinstance(X, SeriesBlocks):
        if missing == X.missing or missing == "raise":
            return X
        blocks = copy.copy(X)
        blocks.missing = missing
        return blocks
    if type(X).__module__.startswith("dask."):
        return SeriesBlocks.from_array(X, missing=missing)
    return None


def _apply(est, k, item, missing, method):
    return getattr(est, method)(_series_of(item, k, missing))


def for_prediction(est, memo=None):
    """Return a shallow copy of ``est`` without its ``oos_decision_`` (members too).

    A search's refitted model keeps the leave-one-out decisions of every training series,
    which no prediction reads: sent to every worker, they were ``n x n_targets`` floats per
    member (32 MB each at a million series of 4 classes). A member listed twice stays one
    object (evaluated once).
    """
    memo = {} if memo is None else memo
    if id(est) not in memo:
        light = memo[id(est)] = copy.copy(est)
        light.__dict__.pop("oos_decision_", None)
        for name in ("estimators", "estimators_"):
            members = light.__dict__.get(name)
            if isinstance(members, list):
                setattr(light, name, [for_prediction(m, memo) for m in members])
    return memo[id(est)]


def apply_blocks(est, method, source, verbose=0):
    """``est.<method>`` of every block of ``source`` on its cluster, concatenated here."""
    client, items = source._bind()
    est_f = client.scatter(for_prediction(est), broadcast=True, hash=False)
    progress = _Progress(len(items), verbose, f"{method}: block") if verbose else None
    return np.concatenate(_gather_bounded(client, lambda item: client.submit(
        _apply, est_f, *item, source.missing, method, pure=False), enumerate(items), progress))


def _gather_bounded(client, submit, items, progress=None):
    """Return the results of the tasks ``submit(item)`` (each a future), in order.

    A result waits in its worker's memory until gathered: submitted at once, every block's
    (its predictions, or its leave-one-out of one ridge) waited together, ``n x n_targets``
    floats at any ``n``. A batch of two tasks per worker thread is gathered while the next
    runs: at most two batches wait. A task's error is raised here.
    """
    batch = 2 * max(1, sum(client.nthreads().values()))
    out, items = [], iter(items)
    running = [submit(item) for item in itertools.islice(items, batch)]
    while running:
        ahead = [submit(item) for item in itertools.islice(items, batch)]
        out += client.gather(running)
        if progress is not None:
            progress.update(len(out))
        running = ahead
    return out


def _report(futures, verbose, progress):
    """Wait for ``futures`` (their results stay on the workers), raising a task's error.

    When ``verbose``, ``progress`` (:class:`_Progress`, which may have counted the first of
    them) prints the finished tasks every tenth (every one above 1).
    """
    wait, as_completed = dask_names("wait", "as_completed")
    if not verbose:
        wait(futures)
    else:
        for fut in as_completed(futures[progress.done:]):
            if fut.status == "error":
                break
            progress.update(progress.done + 1)
    for fut in futures:
        if fut.status == "error":
            fut.result()  # raises the task's error here


class _Progress:
    """Lines of ``[rntk.distributed] <what> done/total``, every tenth (every one above 1)."""

    def __init__(self, total, verbose, what):
        self.total, self.what, self.done = total, what, 0
        self.every = max(1, total // 10) if verbose == 1 else 1
        self.start = time.perf_counter()

    def update(self, done):
        """Count ``done`` tasks finished, printing the lines it passes."""
        for k in range(self.done + 1, done + 1):
            if k % self.every == 0 or k == self.total:
                print(f"[rntk.distributed] {self.what} {k}/{self.total} | elapsed "
                      f"{time.perf_counter() - self.start:6.1f}s", flush=True)
        self.done = max(self.done, done)
