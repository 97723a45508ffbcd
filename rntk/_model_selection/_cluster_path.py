"""The large-n search on a Dask cluster: features and R factors per block of series.

:class:`ClusterFeaturePath` is the large-n path of a search (:class:`~._features.FeaturePath`,
a :class:`~._sources.GramSource`) run block by block on the workers of the series of
:mod:`._cluster`: features and R factors per block, the factors combined as a tree of
tasks, each block's leave-one-out and counts.
"""

import operator
import os

import numpy as np
from sklearn.base import clone

from .._nystroem import RNTKNystroem
from .._representations import fit_preparations
from .._utils import KernelOverflowError
from ._cluster import _gather_bounded, _Progress, _report, _series_of, dask_names
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
from ._on_workers import loo_of, remove, save, this_worker
from ._scorers import RidgeLOOScorer
from ._scoring import GramScores

__all__ = ["ClusterFeaturePath"]


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
                    "series (normalize='dataset' or 'log'), which the search on a cluster "
                    "does not compute; use a per-series normalize, or fit on series in "
                    "memory")
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
