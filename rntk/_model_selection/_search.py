"""The model-selection engine: one Gram per kernel setting, every candidate scored on it.

:func:`search_grams` is the loop shared by the CV estimators and the UCR benchmark
(for every kernel it runs): it takes the Grams of the kernel settings one after the
other, scores the candidates of each setting (its values of ``C`` or ``alpha``) on
the folds, sliced out of the one Gram, and keeps the best candidate with
:class:`~sklearn.model_selection.GridSearchCV`'s tie rule (the first best in
candidate order). A Gram with non-finite entries (an overflow) scores NaN, with a
warning, and is never selected.
"""

from __future__ import annotations

import numbers
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import KFold, ParameterGrid, check_cv
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._representations import PREPARATION_NAMES
from .._utils import DOC, KernelOverflowError, fill_doc, one_blas_thread, validate_fit_data
from . import _grids
from ._candidates import (
    check_default_grid_values,
    check_some_score,
    group_by_kernel,
    prior_indices,
    results_dict,
    same_settings,
)
from ._cluster import (
    BoundSeries,
    ClusterFeaturePath,
    apply_blocks,
    predict_source,
    training_series,
)
from ._ensemble import AveragedClassifier, AveragedRegressor
from ._features import LARGE_N_COMPONENTS, feature_path
from ._loo import _check_two_classes, constant_loo_predictions
from ._scorers import RidgeLOOScorer, loo_r2
from ._screen import screen_settings

if TYPE_CHECKING:  # pragma: no cover - annotations only

    from .._utils._typing import Sequences

__all__ = ["TIE_RTOL", "BaseKernelSearchCV", "SearchOutcome", "group_by_kernel", "results_dict",
           "search_grams"]


class SearchOutcome(NamedTuple):
    """What :func:`search_grams` found."""

    scores: np.ndarray  # (n_candidates, n_splits)
    tiebreak: np.ndarray  # (n_candidates,) decides between equal mean scores (0: none)
    kernel_time: np.ndarray  # (n_candidates,) seconds of the Gram of its setting
    fit_time: np.ndarray  # (n_candidates,) seconds per fold fit
    best_index: int  # first best mean score in candidate order (-1: every score NaN)
    best_gram: np.ndarray  # the Gram of the best candidate's setting (None if none)
    failures: list  # messages of the failed fold fits
    non_finite: list  # indices of the settings whose Gram was not finite
    top: list = []  # (candidate index, Gram) of the best candidate of each of the
    #                 ``keep`` best settings, best first (see ``search_grams``)
    loo: dict = {}  # candidate index -> its leave-one-out predictions, for the best
    #                 candidate of each setting and the priors, when the scorer gives them


#: Relative tolerance below which two tie-breaks are equal: a tie-break that is the same
#: number for every candidate in exact arithmetic (the leave-one-out squared error of a
#: training set of one series per class) differs only by rounding, which depends on the
#: order of the series and on the path; such a tie goes to grid order.
TIE_RTOL = 1e-9


def _beats(key, other):
    """Whether the ``(mean score, tie-break)`` ``key`` is strictly better than ``other``.

    Mean scores compare exactly (accuracies are counts); tie-breaks only when they differ
    by more than :data:`TIE_RTOL` relative, so that rounding noise never decides.
    """
    if key[0] != other[0]:
        return key[0] > other[0]
    return key[1] - other[1] > TIE_RTOL * max(abs(key[1]), abs(other[1]))


def search_grams(grams, groups, candidates, y, splits, fold_score=None, *, score_gram=None,
                 n_jobs=None, error_score=np.nan, progress=None, keep=1, prior=None,
                 same_as=None, skip=()):
    """Cross-validate candidates that share precomputed Grams.

    Parameters
    ----------
    grams : iterable of ndarray of shape (n, n) or None
        One training Gram per group, produced lazily in the order of ``groups``;
        ``None`` (a kernel that refused to overflow) is scored like a non-finite Gram.
    groups : list of list of int
        Indices of the candidates that each Gram serves.
    candidates : list of dict
        Full parameters of each candidate, handed to ``fold_score``.
    y : ndarray of shape (n,) or (n, n_targets)
        Targets.
    splits : list of (train, test) index arrays
        The folds.
    fold_score : callable, optional
        ``fold_score(K_train, y_train, K_test, y_test, params) -> float``.
    score_gram : callable, optional
        Instead of ``fold_score``: ``score_gram(K, y, params_list) -> (scores,
        tiebreak)`` scores every candidate of a Gram at once (``scores`` of shape
        ``(len(params_list), n_splits)``; ``tiebreak`` None or one value per candidate,
        higher is better, deciding between equal mean scores before grid order), as
        the exact leave-one-out of kernel ridge does for all its ridges.
    n_jobs : int, default=None
        Threads for the fold fits (libsvm and the ridge solves release the GIL);
        ``None``: joblib's current setting (one unless set by ``joblib.parallel_config``).
    error_score : "raise" or float, default=np.nan
        Score of a failed fit (recorded in ``failures``), or ``"raise"``.
    progress : callable, optional
        ``progress(settings_done, n_settings, best_mean_score)`` after each setting.
    keep : int, default=1
        Number of kernel settings whose Grams are kept in ``outcome.top``: the
        settings ranked by their best candidate (mean score, then tie-break, then
        candidate order), each with that candidate's index.
    prior : int or sequence of int, optional
        Index (indices) of the candidate(s) taken when every scored candidate has the
        same mean score, as the leave-one-out accuracy of a training set with one
        series per class (0 for all): the best candidate is the first, and with
        ``keep > 1`` the kept settings are theirs first, then the others by
        tie-break.
    same_as : dict, optional
        ``{group: earlier group}``: groups whose Gram is that of an earlier group (the
        same kernel; ``grams`` gives that group's Gram again, or anything, for them).
        Their candidates take the earlier group's scores and tie-breaks, candidate by
        candidate (the two groups list the same scoring parameters, e.g. ridges, in the
        same order), and the earlier group's Gram; they are ranked and kept like the
        others.
    skip : collection of int, default=()
        Groups left unscored (a screening dropped them; ``grams`` gives anything for
        them): their candidates score NaN, without a warning, and are never ranked.
        A group of ``same_as`` is skipped with the group it maps to.

    Returns
    -------
    outcome : SearchOutcome
        A named tuple: ``scores`` (n_candidates, n_splits), ``tiebreak``
        (n_candidates,), ``kernel_time`` and ``fit_time`` (seconds per candidate),
        ``best_index`` (the first best mean score in candidate order, then the
        tie-break; -1 when every score is NaN), ``best_gram`` (the Gram of its
        setting), ``failures`` (messages of failed fits), ``non_finite`` (settings
        whose Gram was not finite) and ``top`` (see ``keep``).
    """
    n_cand, n_splits = len(candidates), len(splits)
    if (fold_score is None) == (score_gram is None):
        raise ValueError("give exactly one of fold_score and score_gram")
    scores = np.full((n_cand, n_splits), np.nan)
    tiebreak = np.zeros(n_cand)
    kernel_time = np.zeros(n_cand)
    fit_time = np.zeros(n_cand)
    failures, non_finite = [], []
    best_i, best_key, best_K = -1, None, None
    top = []  # (key, -setting, candidate index, Gram), best first
    priors = [] if prior is None else [int(i) for i in np.atleast_1d(prior)]
    same_as = dict(same_as or {})
    for g, h in same_as.items():
        if (not 0 <= h < g < len(groups) or h in same_as
                or len(groups[g]) != len(groups[h])):
            raise ValueError(f"same_as maps group {g} to {h}: it needs an earlier group "
                             f"of as many candidates, not itself in same_as")
    last_use = {h: max(g for g in same_as if same_as[g] == h) for h in same_as.values()}
    kept = {}  # group -> its Gram, while a later group of same_as needs it
    loo_by_group, loo = {}, {}  # the scorer's leave-one-out predictions
    prior_grams = {}  # prior candidate -> (Gram, setting)
    # the fold fits are small: one BLAS thread is faster and does not oversubscribe
    blas = one_blas_thread(len(y) < 2000)
    n_workers = effective_n_jobs(n_jobs)
    pool = ThreadPoolExecutor(n_workers) if n_workers > 1 else None

    def fold(task, K):
        i, f = task
        train, test = splits[f]
        try:
            return fold_score(K[np.ix_(train, train)], y[train], K[np.ix_(test, train)],
                              y[test], candidates[i]), None
        except Exception as exc:
            if error_score == "raise":
                raise
            return error_score, f"{type(exc).__name__}: {exc}"

    t = time.perf_counter()
    with blas, (pool if pool is not None else nullcontext()):
        for s, (K, idxs) in enumerate(zip(grams, groups)):
            kernel_time[idxs] = time.perf_counter() - t
            t1 = time.perf_counter()
            if s in skip:
                pass  # screened out: its candidates keep their NaN scores, unranked
            elif s in same_as:
                h = same_as[s]
                K = kept.pop(h, None) if last_use[h] == s else kept.get(h)
                if h in non_finite:
                    non_finite.append(s)
                else:
                    scores[idxs] = scores[groups[h]]
                    tiebreak[idxs] = tiebreak[groups[h]]
                    if h in loo_by_group:
                        loo_by_group[s] = dict(zip(idxs, loo_by_group[h].values()))
            elif K is None or not _all_finite(K):  # None: the kernel refused
                non_finite.append(s)
            elif score_gram is not None:
                try:
                    S, tb = score_gram(K, y, [candidates[i] for i in idxs])
                    scores[idxs] = S
                    if tb is not None:
                        tiebreak[idxs] = tb
                    group_loo = getattr(score_gram, "last_loo", None)
                    if group_loo is not None:
                        loo_by_group[s] = dict(zip(idxs, group_loo))
                except Exception as exc:
                    if error_score == "raise":
                        raise
                    scores[idxs] = error_score
                    failures.append(f"{type(exc).__name__}: {exc}")
                fit_time[idxs] = (time.perf_counter() - t1) / len(idxs)
            else:
                tasks = [(i, f) for i in idxs for f in range(n_splits)]
                run = partial(fold, K=K)
                results = pool.map(run, tasks) if pool is not None else map(run, tasks)
                for (i, f), (score, failure) in zip(tasks, results):
                    scores[i, f] = score
                    if failure is not None:
                        failures.append(failure)
                fit_time[idxs] = (time.perf_counter() - t1) / len(tasks)
            if s in same_as.values() and s not in non_finite:
                kept[s] = K
            if s not in non_finite and s not in skip:
                for i in priors:
                    if i in idxs:
                        prior_grams[i] = (K, s)
                set_i, set_key = -1, None
                for i in idxs:
                    mean = np.mean(scores[i])
                    key = (-np.inf if np.isnan(mean) else mean, tiebreak[i])
                    if best_K is None or _beats(key, best_key):  # ties: the first in order
                        best_i, best_key, best_K = i, key, K
                    if set_key is None or _beats(key, set_key):
                        set_i, set_key = i, key
                group_loo = loo_by_group.get(s, {})
                for i in {set_i, best_i, *priors} & set(group_loo):
                    loo[i] = np.array(group_loo[i])  # what a refit of i is calibrated on
                if s not in same_as.values():  # no later group reads them
                    loo_by_group.pop(s, None)
                if keep > 1 and not np.isnan(np.mean(scores[set_i])):
                    # after every setting it does not beat: ties go to the first setting
                    at = next((j for j, e in enumerate(top) if _beats(set_key, e[0])),
                              len(top))
                    top.insert(at, (set_key, -s, set_i, K))
                    del top[keep:]
            if progress is not None:
                progress(s + 1, len(groups), -np.inf if best_key is None else best_key[0])
            t = time.perf_counter()
    if non_finite:
        first = candidates[groups[non_finite[0]][0]]
        warnings.warn(
            f"{len(non_finite)} of {len(groups)} kernel settings gave a Gram with non-finite "
            f"entries (an overflow); their candidates score NaN and are never selected. "
            f"First: {first}", RuntimeWarning, stacklevel=2)
    means = scores.mean(axis=1)
    if prior_grams and np.ptp(means[~np.isnan(means)]) == 0:
        # the scores cannot tell the candidates apart: the priors, then the tie-break
        first = [(None, -prior_grams[i][1], i, prior_grams[i][0])
                 for i in priors if i in prior_grams]
        best_i, best_K = first[0][2], first[0][3]
        taken = {e[1] for e in first}
        top = first + [e for e in top if e[1] not in taken]
        del top[keep:]
    if keep <= 1:
        top = [] if best_i < 0 else [(None, None, best_i, best_K)]
    return SearchOutcome(scores, tiebreak, kernel_time, fit_time, best_i, best_K, failures,
                         non_finite, [(i, K) for _, _, i, K in top], loo)


def _all_finite(K):
    """Whether a Gram (or features, or a cluster's handle of them) is finite."""
    check = getattr(K, "all_finite", None)
    return check() if check is not None else bool(np.isfinite(K).all())


#: Kernel settings per launch of the batched GPU engine in a search (memory: this many
#: Grams of the training set on the GPU and the host at once).
_CUDA_BATCH = 64


def _series_prep(est):
    return tuple(getattr(est, name, None) for name in PREPARATION_NAMES)


def _batched_cuda_grams(base, candidates, kernel_groups, raw):
    """Yield the Gram of every kernel group, in order, from batched GPU launches.

    The groups that share the series' preparation (the parameters of
    :data:`rntk._representations.PREPARATIONS`) are computed together, up to
    ``_CUDA_BATCH`` settings per launch; a batch that overflows is recomputed one setting
    at a time, so that only the overflowing settings give ``None``.
    """
    from .._kernels._cuda import rntk_kernel_cuda_batched

    ests = [clone(base).set_params(**candidates[idxs[0]]) for idxs in kernel_groups]
    ready = {}
    for g, est in enumerate(ests):
        if g not in ready:
            scale = _series_prep(est)
            batch = [h for h in range(g, len(ests))
                     if _series_prep(ests[h]) == scale][:_CUDA_BATCH]
            xs = est._prepare(raw)
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


@fill_doc(**DOC)
class BaseKernelSearchCV(BaseEstimator):
    """Grid search over a precomputed-kernel estimator, one Gram per kernel setting.

    Two protocols. ``"loo"``: the inner model is kernel ridge, scored by its exact
    leave-one-out from one eigendecomposition per Gram (or on ``cv`` folds when given).
    ``"paper"``: the RNTK paper's protocol, the estimator's own model (the SVC for a
    classifier) scored on ``cv`` folds (``_paper_cv`` of them by default).

    Subclasses set ``_estimator_class`` (a precomputed-kernel sequence estimator),
    ``_kernel_keys`` (its parameters that change the Gram), ``_paper_cv``,
    ``_default_grid(xs)`` (it may depend on the training series) and
    ``_fold_scorer(base)`` (the fast fold score used when ``scoring`` is None).
    """

    _estimator_class = None
    _kernel_keys = ()
    _paper_cv = 10
    _search_constraints = {
        "param_grid": [dict, list, None],
        "protocol": [StrOptions({"loo", "paper"})],
        "cv": ["cv_object", None],
        "scoring": [str, callable, None],
        "refit": ["boolean"],
        "verbose": ["verbose"],
        "error_score": [StrOptions({"raise"}), numbers.Real],
    }

    def _n_average(self):
        """Return how many settings' best candidates the refit averages (1: the best)."""
        return 1

    def _candidates(self, base, grid):
        candidates = list(ParameterGrid(grid))
        if not candidates:
            raise ValueError("param_grid gives no candidate")
        valid = set(base.get_params())
        for c in candidates:
            unknown = set(c) - valid
            if unknown:
                raise ValueError(
                    f"param_grid names unknown parameter(s) {sorted(unknown)} of "
                    f"{type(base).__name__}; valid ones: {sorted(valid)}"
                )
        return candidates

    def _scoring_fold_score(self, base):
        """Fold score of a user-given ``scoring``: the inner model is fit and scored."""
        scorer = check_scoring(base, scoring=self.scoring)

        def score(K_train, y_train, K_test, y_test, params):
            inner = clone(base).set_params(**params)._make_inner().fit(K_train, y_train)
            return float(scorer(inner, K_test, y_test))

        return score

    def _progress(self, n_settings):
        if not self.verbose:
            return None
        start = time.perf_counter()
        first = []  # seconds of the first setting, which pays the engine's compilation
        every = max(1, n_settings // 10) if self.verbose == 1 else 1

        def report(done, total, best):
            elapsed = time.perf_counter() - start
            if not first:
                first.append(elapsed)
            if done % every == 0 or done == total:
                # the rate of the settings after the first: a first run's compilation
                # is no measure of the settings still to come
                eta = ("      ?" if done == 1 and total > 1 else
                       f"{(elapsed - first[0]) / max(done - 1, 1) * (total - done):6.1f}s")
                print(f"[{type(self).__name__}] kernel settings {done}/{total} "
                      f"({100 * done / total:3.0f}%) | elapsed {elapsed:6.1f}s | "
                      f"ETA {eta} | best mean CV score {best:.4f}", flush=True)

        return report

    def _default_folds(self, y, base):
        """Return the protocol's folds: K-fold when no class fills the stratified ones."""
        n_splits = self._paper_cv
        if base._is_regressor:
            return n_splits
        _, counts = np.unique(y, return_counts=True)
        if counts.max() >= n_splits:
            return n_splits
        k = max(2, min(n_splits, len(y)))
        warnings.warn(
            f"every class has fewer than {n_splits} members (at most {counts.max()}), too "
            f"few for the protocol's stratified {n_splits}-fold CV: using KFold({k}) "
            "instead; pass cv to choose the folds", UserWarning, stacklevel=3)
        return KFold(k)

    #: What a fit sets: removed when a fit starts, so that nothing of an earlier fit
    #: outlives it (``refit=False`` sets the scores' ``best_*``, not the refitted model).
    _fitted_attributes = ("cv_results_", "best_estimator_", "averaged_params_",
                          "refit_time_", "classes_", "loo_score_", "best_index_",
                          "best_score_", "best_params_", "n_splits_")

    def _search(self, X, y, groups):
        for attr in self._fitted_attributes:
            self.__dict__.pop(attr, None)
        base = self._base_estimator()
        exact_loo = self.protocol == "loo" and self.cv is None
        raw, y, cluster = self._training_data(X, y, base, exact_loo)
        if not base._is_regressor:  # before any candidate runs
            _check_two_classes(np.unique(y))
        if self.param_grid is None:
            grid = self._default_grid(raw, base)
            check_default_grid_values(self, base, grid)
        else:
            grid = self.param_grid
        candidates = self._candidates(base, grid)
        if exact_loo and len(raw) < 2:
            raise ValueError("the exact leave-one-out needs at least 2 samples, got "
                             f"n_samples = {len(raw)}")
        score_gram = fold_score = None
        # many series: Nystroem features instead of Grams (None: the exact Grams)
        features = cluster or (feature_path(self, base, len(raw)) if exact_loo else None)
        if exact_loo:
            if self.scoring is not None:
                raise ValueError(
                    "scoring is not available with the exact leave-one-out of "
                    "protocol='loo' and cv=None (it scores accuracy, or R^2 for a "
                    "regressor); give cv folds to use another scorer")
            n = len(raw)
            splits = [(np.arange(n), np.arange(n))]  # one column of scores: the LOO score
            score_gram = RidgeLOOScorer(classification=not base._is_regressor)
            if features is not None:
                score_gram = features.scorer
        else:
            cv = self.cv if self.cv is not None else self._default_folds(y, base)
            cv = check_cv(cv, y, classifier=base._is_regressor is False)
            splits = list(cv.split(np.zeros((len(raw), 1)), y, groups))
            fold_score = (self._fold_scorer(base) if self.scoring is None
                          else self._scoring_fold_score(base))
        defaults = base.get_params()
        full = [{**defaults, **c} for c in candidates]
        kernel_groups = group_by_kernel(full, self._kernel_keys)
        n_settings, n_cand, n_splits = len(kernel_groups), len(candidates), len(splits)
        if self.verbose > 0:
            how = ("Scoring by exact leave-one-out (one eigendecomposition per kernel "
                   "setting)" if exact_loo else f"Fitting {n_splits} folds for")
            print(f"[{type(self).__name__}] {how} each of {n_cand} candidates ({n_settings} "
                  f"kernel settings)" + ("" if exact_loo else
                                         f", totalling {n_cand * n_splits} fits"), flush=True)
        n_average = self._n_average()
        prior, same_as, redirect = None, {}, {}
        if exact_loo and self.param_grid is None and not base._is_regressor:
            names = list(_grids.default_settings(self.n_channels_in_))
            prior = prior_indices(grid, candidates, names)
            if (_grids._unit_rms_of(raw.rms) if cluster else _grids.unit_rms(raw)):
                same_as, redirect = same_settings(grid, candidates, kernel_groups, names)

        def computed_grams(computed, series):  # of the groups computed, in order
            if features is not None:
                yield from features.grams(base, candidates, computed, series)
                return
            if getattr(base, "device", "cpu") == "cuda":
                yield from _batched_cuda_grams(base, candidates, computed, series)
                return
            for idxs in computed:
                est = clone(base).set_params(**candidates[idxs[0]])
                try:
                    yield est._gram(est._prepare(series))
                except KernelOverflowError:
                    yield None  # scored NaN, with the engine's warning

        def grams(series, skip=()):  # same_as[g]'s Gram is the search's
            lazy = [g in same_as or g in skip for g in range(n_settings)]
            source = computed_grams([idxs for g, idxs in enumerate(kernel_groups)
                                     if not lazy[g]], series)
            for g in range(n_settings):
                yield None if lazy[g] else next(source)

        def subsample_search(idx):  # the same search on a subsample of the series
            scorer = RidgeLOOScorer(classification=not base._is_regressor)
            return search_grams(grams([raw[i] for i in idx]), kernel_groups, full, y[idx],
                                [(np.arange(len(idx)),) * 2], score_gram=scorer,
                                same_as=same_as, error_score=self.error_score)

        screen = (screen_settings(subsample_search, self, y, kernel_groups, same_as,
                                  n_average, not base._is_regressor)
                  if exact_loo and features is None else None)
        skip = () if screen is None else screen.skip
        outcome = search_grams(grams(raw, skip), kernel_groups, full, y, splits, fold_score,
                               score_gram=score_gram, keep=n_average, prior=prior,
                               same_as=same_as,
                               n_jobs=self.n_jobs if self.scoring is None else 1,
                               error_score=self.error_score,
                               progress=self._progress(n_settings), skip=skip)
        if outcome.failures:
            warnings.warn(
                f"\n{len(outcome.failures)} fits failed out of a total of "
                f"{n_cand * n_splits}.\nThe score on these train-test partitions for these "
                f"parameters will be set to {self.error_score}.\n"
                f"First error: {outcome.failures[0]}",
                FitFailedWarning,
            )
        self.cv_results_ = results_dict(candidates, outcome.scores, outcome.kernel_time,
                                        outcome.fit_time)
        if screen is not None:
            self.cv_results_["screen_test_score"] = screen.scores
        if outcome.best_index >= 0:  # the best score, then the tie-break, then grid order
            self.best_index_ = outcome.best_index
        else:
            self.best_index_ = int(self.cv_results_["rank_test_score"].argmin())
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.best_params_ = candidates[self.best_index_]
        self.n_splits_ = len(raw) if exact_loo else n_splits
        if self.refit:
            check_some_score(self.cv_results_["mean_test_score"], outcome)
            t0 = time.perf_counter()
            top = outcome.top if n_average > 1 else [(self.best_index_, outcome.best_gram)]
            if exact_loo and base._is_regressor:
                top = self._average_or_mean(top, candidates, y, score_gram, outcome.loo)
                n_average = len(top)
            members, used, fitted = [], [], {}
            for i, K in top:
                i = redirect.get(i, i)  # a setting of same_as: the one it is
                used.append(i)
                if i in fitted:  # listed twice: one fitted member, evaluated once
                    members.append(fitted[i])
                    continue
                est = clone(base).set_params(**candidates[i])
                if features is not None:
                    if "precision" in est.get_params():  # the features are float64's
                        est.set_params(precision="float64")
                    features.fit_preparation(est, raw)
                    features.refit(est, K, y)
                    if not base._is_regressor:
                        est._calibrate(outcome.loo.get(i), y)
                else:
                    est._fit_gram(est._prepare(raw), K, y, loo=outcome.loo.get(i))
                for attr in ("n_channels_in_", "n_features_in_", "feature_names_in_"):
                    if hasattr(self, attr):
                        setattr(est, attr, getattr(self, attr))
                members.append(est)
                fitted[i] = est
            if n_average > 1:
                self.averaged_params_ = [candidates[i] for i in used]
                if base._is_regressor:
                    self.best_estimator_ = AveragedRegressor(members).fit()
                else:
                    loo = [outcome.loo.get(redirect.get(i, i)) for i, _ in top]
                    self.best_estimator_ = AveragedClassifier(members).fit()
                    self.best_estimator_._calibrate(
                        None if any(v is None for v in loo) else np.mean(loo, axis=0), y)
            else:
                self.best_estimator_ = members[0]
            self.refit_time_ = time.perf_counter() - t0
        return self

    def _training_data(self, X, y, base, exact_loo):
        """Return the training series, the targets and the cluster's path (or None).

        Series on a Dask cluster (:class:`rntk.distributed.SeriesBlocks`, a dask array,
        or series in memory under ``joblib.parallel_config(backend="dask")``) above the
        ``large_n`` threshold are described there and searched by the cluster's large-n
        path; at or below it they are gathered here and searched as any others.
        """
        from ._features import resolve_large_n
        threshold = resolve_large_n(getattr(self, "large_n", None))
        # series in memory go to a cluster only for the search it runs
        source = training_series(X, threshold if exact_loo and not base._is_regressor
                                 else None, getattr(self, "missing", "raise"))
        if source is None:
            return (*validate_fit_data(self, X, y, base._is_regressor), None)
        if base._is_regressor or not exact_loo:
            raise ValueError(
                f"series on a Dask cluster are fitted by the classifier's large-n search "
                f"(RNTKClassifierCV with protocol='loo' and cv=None); {type(self).__name__}"
                f" with protocol={self.protocol!r}, cv={self.cv!r} needs them in memory")
        series = BoundSeries(source, verbose=self.verbose)
        if threshold is None or len(series) <= threshold:
            return (*validate_fit_data(self, series.gather(), y, base._is_regressor), None)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        if len(y) != len(series):
            raise ValueError(f"y has {len(y)} labels for {len(series)} series")
        _check_two_classes(np.unique(y))
        for attr in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(attr, None)
        self.n_channels_in_ = series.n_channels
        m = getattr(self, "n_components", None) or LARGE_N_COMPONENTS
        return series, y, ClusterFeaturePath(series, y, m, verbose=self.verbose)

    def _delegate(self, method, X):
        """``best_estimator_.<method>(X)``; block by block on a cluster for its series."""
        self._check_refit()
        source = predict_source(X, getattr(self, "missing", "raise"))
        if source is None:
            return getattr(self.best_estimator_, method)(X)
        return apply_blocks(self.best_estimator_, method, source, verbose=self.verbose)

    def _average_or_mean(self, top, candidates, y, scorer, loo_of):
        """Return the members a regression search refits: the average, or the mean.

        The leave-one-out predictions of an average of regressors are the average of
        theirs, so the average of the ``top`` members is scored exactly; where its
        leave-one-out ``R^2`` is not above the mean's (the first ``alpha=inf``
        candidate of the grid, if any), the mean is refitted instead. Sets
        ``loo_score_``.
        """
        loo = np.mean([loo_of[i] if i in loo_of else
                       scorer.regression_loo(K, y, [candidates[i]["alpha"]])[0]
                       for i, K in top], axis=0)
        self.loo_score_ = float(loo_r2(y, loo[None])[0])
        mean = next((i for i, c in enumerate(candidates) if np.isinf(c.get("alpha", 0.0))),
                    None)
        if mean is None:
            return top
        # the mean's own leave-one-out R^2: its setting may have been screened out
        score = float(loo_r2(y, constant_loo_predictions(y)[None])[0])
        if self.loo_score_ > score:
            return top
        self.loo_score_ = score
        return [(mean, top[0][1])]  # any Gram of the right size: the mean does not read it

    # -- delegation to the refitted estimator ------------------------------------------
    def _check_refit(self):
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError(
                f"This {type(self).__name__} was fitted with refit=False: there is no "
                "best_estimator_ to predict with"
            )

    def predict(self, X: Sequences) -> np.ndarray:
        """Predict with the refitted best estimator.

        {X_predict}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions of ``best_estimator_``.
        """
        return self._delegate("predict", X)
