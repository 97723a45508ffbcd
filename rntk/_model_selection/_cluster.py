"""The default classifier's large-n search on a Dask cluster (public in :mod:`rntk.distributed`).

:class:`SeriesBlocks` holds series in blocks that the workers load; :class:`ClusterFeaturePath`
is the large-n path of a search (:class:`~._features.FeaturePath`) run block by block on the
workers: features and R factors per block, the factors combined as a tree of tasks, each
block's leave-one-out and counts; :func:`apply_blocks` predicts block by block. Dask is
imported only when a cluster is used.
"""

import copy
import glob
import itertools
import math
import operator
import os
import time
from functools import partial

import numpy as np
from sklearn.base import clone

from .._nystroem import RNTKNystroem
from .._representations import fit_preparations
from .._utils import KernelOverflowError, as_sequences, check_int, fill_doc
from .._utils._sequences import check_missing
from ._features import (
    LANDMARK_SEED,
    R_FANIN,
    FeaturePath,
    FeatureStats,
    SettingFeatures,
    feature_block_r,
    stack_r,
)
from ._loo import decision_to_labels, one_vs_all_targets
from ._on_workers import load_file, loo_of, memmap_rows, remove, save, this_worker
from ._scorers import RidgeLOOScorer
from ._scoring import GramScores

__all__ = ["ARRAY_BLOCK", "BoundSeries", "ClusterFeaturePath", "SeriesBlocks", "apply_blocks",
           "dask_names", "for_prediction", "predict_source", "training_series"]


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


# -- the large-n search on a cluster ------------------------------------------------------
def _block_features(item, k, missing, est, nys, self_rows, self_features):
    """Return the Nystroem features of block ``k`` under the setting of ``est``."""
    xs = est._prepare(_series_of(item, k, missing))
    out = np.empty((len(xs), nys.n_components_))
    self_rows = np.asarray(self_rows, dtype=np.intp)
    if self_rows.size:  # landmarks: paired with themselves, rows of W W^{-1/2}
        out[self_rows] = self_features
    rest = np.setdiff1d(np.arange(len(xs)), self_rows)
    return nys._features(xs, rest, out) if rest.size else out


def _first_pass(inputs, targets, where, ref=None):
    """Return a block's features (or the file that holds them) and their R factor.

    ``inputs``: the arguments of :func:`_block_features`; ``targets``: the block's class
    ``codes`` and each class's targets, ``table`` (the block's targets: ``table[codes]``).
    ``where="disk"``: the features go to a file of the worker's local directory, read back
    by :func:`_second_pass`, so that a worker holds one block at a time; ``"memory"``:
    they stay in its memory. The R factor is None where the features are not finite (an
    overflow). ``ref``: how the file's :class:`_OnDisk` finds the block's series again
    (:func:`_item_ref`; default: the series given).
    """
    Phi = _block_features(*inputs)
    codes, table = targets
    R = feature_block_r(Phi, table[codes]) if np.all(np.isfinite(Phi)) else None
    if where == "memory" or R is None:
        return Phi, R
    item, k, missing, _, _, rows, own = inputs
    return _OnDisk(save(Phi, "features"), item if ref is None else ref, k, missing, rows,
                   own), R


class _ItemKey:
    """The key of a block held on the cluster (a future's data), fetched when needed."""

    def __init__(self, key):
        self.key = key

    def fetch(self):
        """Return the block's data (on a worker: from the worker that holds it)."""
        get_client, future = dask_names("get_client", "Future")
        return future(self.key, get_client()).result()


def _item_ref(item):
    """Return what a file of features keeps of its block: a loader, or a future's key.

    A bound block is one or the other (:meth:`SeriesBlocks._bind`). The block's data
    itself would travel with the file's :class:`_OnDisk` each time the scheduler runs
    the second pass on another worker, and stay there until it runs.
    """
    return item if callable(item) else _ItemKey(item.key)


class _OnDisk:
    """A block's features in a file of a worker, and how to compute them again.

    It holds the file and what locates the block's series (light: it travels between
    workers when the second pass runs on another one); the kernel setting and its
    landmarks come with the second pass from the futures broadcast to every worker.
    """

    def __init__(self, path, ref, k, missing, rows, own):
        self.path, self.ref, self.k, self.missing = path, ref, k, missing
        self.rows, self.own = rows, own

    def load(self, est, nys):
        """Return the features, deleting the file (computed again where it is not here)."""
        try:
            Phi = np.load(self.path)
        except OSError:  # another machine's file, or a worker restarted: compute again
            item = self.ref.fetch() if isinstance(self.ref, _ItemKey) else self.ref
            return _block_features(item, self.k, self.missing, est, nys, self.rows,
                                   self.own)
        os.remove(self.path)
        return Phi


def _second_pass(stats, held, setting, targets, classes, alphas, where):
    """Return a block's leave-one-out predictions for every ridge, and its counts.

    ``targets``: as :func:`_first_pass`'s (the labels: ``classes[codes]``); ``setting``:
    the estimator and the fitted Nystroem of the kernel setting (to compute the features
    again where their file is not on this machine). The predictions (``(n_alphas, n_rows,
    n_targets)``) stay in the worker's memory, or with ``where="disk"`` in a file of its
    local directory (its path and the worker's address are returned); the counts are
    those of :func:`_block_counts`.
    """
    Phi = held.load(*setting) if isinstance(held, _OnDisk) else held
    codes, table = targets
    Y = table[codes]
    loo = stats.loo(Phi, Y, alphas)
    counts = _block_counts(loo, Y, classes[codes], classes)
    if where == "memory":
        return loo, counts
    return (save(loo, "loo"), getattr(this_worker(), "address", None)), counts


def _stack(*factors):
    if any(f is None for f in factors):
        return None
    return stack_r(*factors)


#: Blocks whose R factors may wait for their node of the tree: the first pass of block
#: ``k`` is submitted once the node of block ``k - _AHEAD`` has combined its factors.
_AHEAD = 2 * R_FANIN


class _Tree:
    """:func:`combine_r`'s tree as tasks, built while the blocks' factors are submitted.

    The nodes are those of ``combine_r`` (each level's factors :data:`R_FANIN` at a time,
    in order; the last group of a level as it is): the same R factor, bitwise. Submitted
    all at once, the blocks' factors (2 MB each at 500 landmarks) waited in the workers'
    memory (the scheduler runs the first passes before the nodes, whatever their
    priority); :meth:`wait_for` holds the submission back: at most about :data:`_AHEAD`
    factors wait, whatever the number of blocks.
    """

    def __init__(self, client):
        self.client, self.levels, self.nodes = client, [[]], []

    def add(self, factor, level=0):
        """Add a factor (a future) at ``level``; a full group becomes a node above."""
        if len(self.levels) == level:
            self.levels.append([])
        self.levels[level].append(factor)
        if len(self.levels[level]) == R_FANIN:
            self._up(level)

    def _up(self, level):
        group, self.levels[level] = self.levels[level], []
        node = self.client.submit(_stack, *group, pure=False, priority=1)
        if level == 0:
            self.nodes.append(node)
        self.add(node, level + 1)

    def wait_for(self, k):
        """Wait until the node that combines block ``k``'s factor has run (if any).

        Return the number of blocks known to be done then (every block of its group).
        """
        g = k // R_FANIN
        if k < 0 or g >= len(self.nodes):
            return 0
        if self.nodes[g] is not None:  # then its factor is its parent's to hold
            dask_names("wait")[0](self.nodes[g])
            self.nodes[g] = None
        return (g + 1) * R_FANIN

    def root(self):
        """Return the future of the R factor of every block (the last groups combined)."""
        level = 0
        while level < len(self.levels):
            above = any(self.levels[level + 1:])
            if self.levels[level] and (above or len(self.levels[level]) > 1):
                self._up(level)
            level += 1
        return next(f for group in self.levels for f in group)


def _block_counts(loo, Y, y, classes):
    """Correct leave-one-out labels and squared errors of a block, per ridge."""
    correct = (decision_to_labels(classes, loo) == y[None, :]).sum(axis=1)
    return correct, ((loo - Y[None]) ** 2).sum(axis=(1, 2))


class _ClusterSetting(SettingFeatures):
    """One kernel setting on the cluster: ``Phi`` the futures of its blocks' features.

    ``setting``: the futures of its estimator and fitted Nystroem, broadcast to every
    worker (the second pass reads them).
    """

    def __init__(self, Phi, nys, stats, setting):
        super().__init__(Phi, nys, stats)
        self.setting = setting

    def all_finite(self):
        return True  # a setting whose features overflow is None


class _RemoteLoo:
    """The leave-one-out predictions of one ridge, kept on the workers until read.

    ``blocks``: per block, the future of its predictions in a worker's memory, or the
    path of their file and the address of the worker that wrote it (read there).
    """

    def __init__(self, client, blocks, a):
        self.client, self.blocks, self.a = client, blocks, a

    def _read(self, held):
        path, address = held if isinstance(held, tuple) else (held, None)
        where = {} if address is None else {"workers": [address], "allow_other_workers": True}
        return self.client.submit(loo_of, path, self.a, pure=False, **where)

    def __array__(self, dtype=None, copy=None):
        out = np.concatenate(_gather_bounded(self.client, self._read, self.blocks))
        return out if dtype is None else out.astype(dtype)


class ClusterFeaturePath(FeaturePath):
    """The large-n path of a search on a cluster (``FeaturePath`` on blocks of series).

    Parameters
    ----------
    series : BoundSeries
        The training series in blocks.
    y : ndarray of shape (n_samples,)
        Their labels.
    n_components : int
        Landmarks per setting.
    verbose : int
        Progress per setting and block.
    """

    def __init__(self, series, y, n_components, verbose=0):
        self._classes, codes = np.unique(np.asarray(y), return_inverse=True)
        self._table = one_vs_all_targets(self._classes)[1]  # each class's targets
        self._codes = codes.astype(np.min_scalar_type(len(self._classes) - 1))
        self._targets = None  # the futures of the blocks' class codes and the classes' targets
        self.series, self.client = series, series.client
        n = len(series)
        self.m = min(int(n_components), n)
        super().__init__(self.m, n_jobs=1, classification=True)
        # the landmarks of RNTKNystroem(random_state=LANDMARK_SEED) on the same series
        self.indices = np.random.RandomState(LANDMARK_SEED).permutation(n)[:self.m]
        self.landmarks = series.pick(self.indices)
        self.verbose = verbose
        block = np.searchsorted(series.offsets, self.indices, side="right") - 1
        self._self_rows = [(np.flatnonzero(block == k),
                            (self.indices[block == k] - series.offsets[k]).tolist())
                           for k in range(len(series.items))]
        path = self

        class Scorer(RidgeLOOScorer):
            def __call__(self, K, y, params):
                return path.score(K, y, params)

        self.scorer = Scorer(classification=True)

    def _target_blocks(self, k):
        """Return the futures of block ``k``'s class codes and of each class's targets.

        Scattered once per fit: the codes (a byte per series below 256 classes), from which
        the passes make a block's targets and labels. Held for the fit, the targets and
        labels themselves were 40 MB at a million series of 4 classes. A task that names a
        future instead of arrays leaves nothing of them in the scheduler's record of it,
        which it keeps as long as the task's results are held (the leave-one-out files
        until the search ends).
        """
        if self._targets is None:
            cuts = zip(self.series.offsets[:-1], self.series.offsets[1:])
            codes = self.client.scatter([self._codes[i0:i1] for i0, i1 in cuts], hash=False)
            self._targets = codes, self.client.scatter(self._table, broadcast=True, hash=False)
        return self._targets[0][k], self._targets[1]

    def fit_preparation(self, est, raw):
        """Fit what the preparations learn (nothing: each is per series) on the landmarks."""
        est._fit_preparation(self.landmarks)

    def grams(self, base, candidates, kernel_groups, raw):
        """Yield the features of every kernel group (``None``: an overflow).

        The files of the leave-one-out predictions (``features="disk"``) are deleted when
        the search is done with the generator.
        """
        self._files = []  # the paths of the leave-one-out files, and their workers
        try:
            yield from self._grams(base, candidates, kernel_groups)
        finally:  # (a generator dropped after its client closed has nothing to ask)
            self._targets = None
            if self._files and self.client.status == "running":
                paths = [path for path, _ in self._files]
                self._files = []
                # on every worker: a file is on its writer's machine
                self.client.run(remove, paths, on_error="ignore")

    def _grams(self, base, candidates, kernel_groups):
        client, series = self.client, self.series
        for s, idxs in enumerate(kernel_groups):
            est = clone(base).set_params(**candidates[idxs[0]])
            learnt = fit_preparations(self.landmarks, est._preparation_values())
            if learnt:  # from the whole training set: not computed on blocks yet
                raise ValueError(
                    f"{candidates[idxs[0]]} learns {sorted(learnt)} from the training "
                    "series (normalize='dataset'), which the search on a cluster does not "
                    "compute; use a per-series normalize, or fit on series in memory")
            nys = RNTKNystroem(n_components=self.m, random_state=LANDMARK_SEED, normalize=False,
                               n_jobs=None, **est._kernel_params())
            try:
                W = nys._fit_landmarks(est._prepare(self.landmarks), self.indices)
            except KernelOverflowError:
                yield None
                continue
            nys.n_jobs = 1  # on the workers: one thread per task
            own = W @ nys.normalization_
            est_f, nys_f = client.scatter([est, nys], broadcast=True, hash=False)
            phi, tree = [], _Tree(client)
            progress = _Progress(len(series.items), self.verbose,
                                 f"kernel setting {s + 1}/{len(kernel_groups)}: block")
            for k, item in enumerate(series.items):
                done = tree.wait_for(k - _AHEAD)
                if self.verbose and done:
                    progress.update(done)
                pos, rows = self._self_rows[k]
                inputs = (item, k, series.missing, est_f, nys_f, rows, own[pos])
                f = client.submit(_first_pass, inputs, self._target_blocks(k), series.features,
                                  _item_ref(item), pure=False)
                phi.append(client.submit(operator.itemgetter(0), f, pure=False))
                tree.add(client.submit(operator.itemgetter(1), f, pure=False))
            try:
                _report(phi, self.verbose, progress)
                R = tree.root().result()
            except KernelOverflowError:
                yield None
                continue
            if R is None:
                yield None
                continue
            stats = FeatureStats(R, len(series), self.m)
            yield _ClusterSetting(phi, nys, stats, [est_f, nys_f])

    def score(self, K, y, params):
        """Return the leave-one-out scores of the ridges ``params`` on the setting ``K``."""
        alphas = np.array([float(p["alpha"]) for p in params])
        if np.any(alphas <= 0) or np.any(np.isinf(alphas)):
            raise ValueError("exact leave-one-out needs every alpha > 0 and finite")
        classes = self._classes  # y is unused: the blocks' class codes were scattered once
        client, series = self.client, self.series
        absolute = alphas * K.stats.scale
        stats_f = client.scatter(K.stats, broadcast=True, hash=False)
        both = [client.submit(_second_pass, stats_f, f, K.setting, self._target_blocks(k),
                              classes, absolute, series.features, pure=False)
                for k, f in enumerate(K.Phi)]
        K.Phi = K.setting = None  # released once their leave-one-out is computed
        if series.features == "disk":
            # the files' places come here: no future (and no record of its task in the
            # scheduler and the workers) is held per block until the search ends
            loo, got = zip(*client.gather(both))
            self._files += loo
        else:
            loo = [client.submit(operator.itemgetter(0), f, pure=False) for f in both]
            got = client.gather([client.submit(operator.itemgetter(1), f, pure=False)
                                 for f in both])
        n = len(series)
        acc = np.sum([c for c, _ in got], axis=0) / n
        mse = np.sum([e for _, e in got], axis=0) / (n * self._table.shape[1])
        return GramScores(acc[:, None], -mse,
                          [_RemoteLoo(client, loo, a) for a in range(len(alphas))])
