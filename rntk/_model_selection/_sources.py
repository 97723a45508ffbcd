"""Where a search's Grams come from: one declared interface, several sources.

A :class:`GramSource` yields, for each kernel setting of a search in order, what the
search's scorer reads (the ``n x n`` Gram, or features standing for it), ``None`` where
the kernel overflows; and refits a candidate on all training series from it. The
sources: :class:`NumbaGrams` (the Numba engine, one setting at a time),
:class:`CudaGrams` (batched GPU launches), and the large-n paths of
:mod:`._features` (Nystroem features per setting) and :mod:`._cluster` (the same, block
by block on a Dask cluster).
"""

from abc import ABC, abstractmethod

from sklearn.base import clone

from .._representations import PREPARATIONS
from .._utils import KernelOverflowError

__all__ = ["CudaGrams", "GramSource", "NumbaGrams"]


#: Values of prepared training series a search may keep for its refit whatever the
#: number of series (8 MB of float64).
KEPT_VALUES = 2**20
#: The attributes a preparation learns from the training series.
_FITTED = tuple(a for p in PREPARATIONS for a in p.fitted)


def _preparation_key(est):
    """Return a hashable key of what ``est``'s preparation of the training series reads."""
    return repr(sorted(est._preparation_values().items()))


class GramSource(ABC):
    """The Grams of a search, setting by setting (an abstract base class)."""

    #: The exact leave-one-out scorer of what :meth:`grams` yields, if not the Gram's
    #: (``None``: :class:`~rntk.model_selection.RidgeLOOScorer` on the Gram).
    scorer = None
    #: The series of the last :meth:`grams` and those kept prepared (:meth:`_start`).
    _raw, _prepared = None, {}

    @abstractmethod
    def grams(self, base, candidates, kernel_groups, raw):
        """Yield what each kernel group's scorer reads, in order (``None``: an overflow).

        Parameters
        ----------
        base : SearchableEstimator
            The search's estimator; a group's setting is ``clone(base).set_params(
            **candidates[group[0]])``.
        candidates : list of dict
            The candidates' parameters.
        kernel_groups : list of list of int
            Candidate indices per kernel setting, the groups to compute.
        raw : list of ndarray
            The training series, unprepared.
        """

    def refit(self, est, K, y, raw, loo):
        """Fit the candidate ``est`` on all series ``raw`` from its setting's ``K``.

        ``loo``: the leave-one-out decision values the search has for it (or None).
        The series as :meth:`_keep` kept them are not prepared again.
        """
        kept = self._prepared.get(_preparation_key(est)) if raw is self._raw else None
        if kept is None:
            return est._fit_gram(est._prepare(raw), K, y, loo=loo)
        xs, fitted = kept
        for name, value in fitted.items():  # what the preparation learnt from raw
            setattr(est, name, value)
        return est._fit_gram(xs, K, y, loo=loo)

    def _start(self, raw):
        """Forget the series kept so far: :meth:`grams` runs on ``raw`` now.

        A screening's subsample first, then all series: only the last are kept.
        """
        self._raw, self._prepared = raw, {}
        self._room = max(len(raw) ** 2, KEPT_VALUES)

    def _keep(self, est, xs):
        """Keep the series ``xs`` as ``est`` prepared them, for the refit, if there is room.

        Room: all those kept hold fewer values than one ``n x n`` Gram, of which the
        search keeps several (memory of the same order), or than :data:`KEPT_VALUES`.
        """
        key, size = _preparation_key(est), sum(x.size for x in xs)
        if key not in self._prepared and size <= self._room:
            self._room -= size
            self._prepared[key] = (xs, {name: getattr(est, name) for name in _FITTED
                                        if hasattr(est, name)})


class NumbaGrams(GramSource):
    """The exact Grams from the Numba engine, one kernel setting at a time."""

    def grams(self, base, candidates, kernel_groups, raw):  # noqa: D102 (the base's)
        self._start(raw)
        for idxs in kernel_groups:
            est = clone(base).set_params(**candidates[idxs[0]])
            xs = est._prepare(raw)
            self._keep(est, xs)
            try:
                yield est._gram(xs)
            except KernelOverflowError:
                yield None  # scored NaN, with the engine's warning


#: Kernel settings per launch of the batched GPU engine in a search (memory: this many
#: Grams of the training set on the GPU and the host at once).
CUDA_BATCH = 64


class CudaGrams(GramSource):
    """The exact Grams from batched GPU launches (``device="cuda"``).

    The groups that share the series' preparation (the parameters of
    :data:`rntk._representations.PREPARATIONS`) are computed together, up to
    :data:`CUDA_BATCH` settings per launch; a batch that overflows is recomputed one
    setting at a time, so that only the overflowing settings give ``None``.
    """

    def grams(self, base, candidates, kernel_groups, raw):  # noqa: D102 (the base's)
        from .._kernels._cuda import rntk_kernel_cuda_batched

        self._start(raw)
        ests = [clone(base).set_params(**candidates[idxs[0]]) for idxs in kernel_groups]
        ready = {}
        for g, est in enumerate(ests):
            if g not in ready:
                scale = est._preparation_values()
                batch = [h for h in range(g, len(ests))
                         if ests[h]._preparation_values() == scale][:CUDA_BATCH]
                xs = est._prepare(raw)
                self._keep(est, xs)
                try:
                    Ks = rntk_kernel_cuda_batched(xs, None,
                                                  [ests[h]._kernel_params() for h in batch])
                    ready.update(zip(batch, Ks))
                except KernelOverflowError:
                    for h in batch:
                        try:
                            ready[h] = ests[h]._gram(xs)
                        except KernelOverflowError:
                            ready[h] = None  # scored NaN, with the engine's warning
            yield ready.pop(g)
