"""The search skeleton: it asks for candidates, scores them on Grams, refits the best.

:class:`BaseKernelSearchCV` is the base of :class:`rntk.RNTKClassifierCV` and
:class:`rntk.RNTKRegressorCV`, built of parts: the candidates (a grid; the default
grid's priors and settings that are one another, :mod:`._candidates`), the protocol
(exact leave-one-out, or folds), the Gram source (:mod:`._sources`: the Numba engine,
the GPU, Nystroem features for many series, a Dask cluster), the scoring loop
(:func:`~._scoring.search_grams`) and the refit policies (:mod:`._refit`: the best
candidate, an average, the mean). The estimator it searches follows the protocol of
:class:`~._protocol.SearchableEstimator`.
"""

from __future__ import annotations

import numbers
import time
import warnings
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import KFold, ParameterGrid, check_cv
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._utils import DOC, fill_doc, validate_fit_data
from . import _grids
from ._candidates import (
    check_default_grid_values,
    check_some_score,
    gated_indices,
    group_by_kernel,
    init_defaults,
    prior_indices,
    results_dict,
    same_settings,
    same_value,
)
from ._cluster import BoundSeries, apply_blocks, predict_source, training_series
from ._cluster_path import ClusterFeaturePath
from ._features import LARGE_N_COMPONENTS, feature_path
from ._loo import _check_two_classes
from ._protocol import SearchableEstimator
from ._refit import refit_best
from ._scorers import RidgeLOOScorer
from ._scoring import search_grams
from ._screen import screen_settings
from ._sources import CudaGrams, NumbaGrams

if TYPE_CHECKING:  # pragma: no cover - annotations only

    from .._utils._typing import Sequences

__all__ = ["BaseKernelSearchCV", "SearchPlan"]


class SearchPlan:
    """What a search fit works on: the estimator, the series, the candidates, the parts.

    Attributes
    ----------
    base : SearchableEstimator
        The estimator searched (the protocol's model set).
    raw, y : list of ndarray, ndarray
        The training series (unprepared; on a cluster, their handle) and targets.
    exact_loo : bool
        Whether the candidates are scored by exact leave-one-out (else on folds).
    grid, candidates, full : dict or list, list of dict, list of dict
        The grid, its candidates, and their full parameters (the estimator's beneath).
    kernel_groups : list of list of int
        The candidates of each kernel setting (one Gram each).
    source : GramSource
        Where the Grams come from; ``large`` says whether it is a large-n path.
    splits, fold_score, score_gram
        The folds, and the fold scorer or the Gram scorer (one of them is None).
    n_average : int
        The settings whose best candidates the refit averages.
    prior, same_as, redirect
        The default grid's rules (:func:`search_grams`'s ``prior`` and ``same_as``; the
        candidate a setting of ``same_as`` is refitted as).
    gated, n_gated
        The candidates of the default regression grid's gated settings
        (``DEFAULT_REGRESSION_GATED``) and how many settings they make.
    """

    def __init__(self, **parts):
        self.prior, self.same_as, self.redirect = None, {}, {}
        self.gated, self.n_gated = frozenset(), 0
        self.__dict__.update(parts)

    @property
    def keep(self):
        """Settings whose Grams the scoring keeps: those averaged, and the gated ones."""
        return self.n_average + self.n_gated


@fill_doc(**DOC)
class BaseKernelSearchCV(BaseEstimator):
    """Grid search over a precomputed-kernel estimator, one Gram per kernel setting.

    Two protocols. ``"loo"``: the inner model is kernel ridge, scored by its exact
    leave-one-out from one eigendecomposition per Gram (or on ``cv`` folds when given).
    ``"paper"``: the RNTK paper's protocol, the estimator's own model (the SVC for a
    classifier) scored on ``cv`` folds (``_paper_cv`` of them by default).

    Subclasses set ``_estimator_class`` (a :class:`SearchableEstimator`),
    ``_kernel_keys`` (its parameters that change the Gram) and ``_paper_cv``, and
    define ``_base_estimator()`` (the estimator searched, the protocol's model set),
    ``_default_grid(xs, base)`` (it may depend on the training series) and
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

    def _base_estimator(self):
        raise NotImplementedError  # pragma: no cover - each search defines its own

    def _default_grid(self, xs, base=None):
        raise NotImplementedError  # pragma: no cover

    def _fold_scorer(self, base):
        raise NotImplementedError  # pragma: no cover

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
        """Fit: plan, score every candidate, record the scores, refit the best."""
        for attr in self._fitted_attributes:
            self.__dict__.pop(attr, None)
        plan = self._plan(X, y, groups)
        outcome, screen = self._score(plan)
        self._record(plan, outcome, screen)
        if self.refit:
            check_some_score(self.cv_results_["mean_test_score"], outcome)
            t0 = time.perf_counter()
            refit_best(self, plan, outcome)
            self.refit_time_ = time.perf_counter() - t0
        return self

    def _plan(self, X, y, groups):
        """Return the :class:`SearchPlan` of a fit on ``X, y``."""
        base = self._base_estimator()
        if not isinstance(base, SearchableEstimator):
            raise TypeError(f"{type(self).__name__} searches an estimator of the search "
                            f"protocol (SearchableEstimator), not {type(base).__name__}")
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
        # many series: Nystroem features instead of Grams (None: the exact Grams)
        source = cluster or (feature_path(self, base, len(raw)) if exact_loo else None)
        large = source is not None
        if not large:
            source = CudaGrams() if getattr(base, "device", "cpu") == "cuda" else NumbaGrams()
        splits, fold_score, score_gram = self._protocol_parts(base, raw, y, groups,
                                                              exact_loo, source)
        defaults = base.get_params()
        full = [{**defaults, **c} for c in candidates]
        plan = SearchPlan(base=base, raw=raw, y=y, cluster=cluster, exact_loo=exact_loo,
                          grid=grid, candidates=candidates, full=full,
                          kernel_groups=group_by_kernel(full, self._kernel_keys),
                          source=source, large=large, splits=splits, fold_score=fold_score,
                          score_gram=score_gram, n_average=self._n_average())
        self._say_plan(plan)
        self._warn_unused(plan)
        self._default_rules(plan)
        return plan

    def _warn_unused(self, plan):
        """Warn about a large-n or screening option given where its path does not run."""
        defaults = init_defaults(self)
        unused = {
            "large_n": ("the exact leave-one-out search (protocol='loo', cv=None) alone "
                        "has a large-n path", not plan.exact_loo),
            "n_components": (f"the {len(plan.raw)} training series are searched on their "
                             f"exact Grams (at or below large_n)", not plan.large),
            "screen": ("the screening applies to the exact leave-one-out search on exact "
                       "Grams only", not plan.exact_loo or plan.large),
        }
        for name, (why, applies) in unused.items():
            value = getattr(self, name, defaults.get(name))
            if applies and name in defaults and not same_value(value, defaults[name]):
                warnings.warn(f"{name}={value!r} is not used: {why}", UserWarning,
                              stacklevel=6)  # the caller of fit

    def _protocol_parts(self, base, raw, y, groups, exact_loo, source):
        """Return the folds, and the fold scorer or the Gram scorer, of the protocol."""
        if exact_loo:
            if self.scoring is not None:
                raise ValueError(
                    "scoring is not available with the exact leave-one-out of "
                    "protocol='loo' and cv=None (it scores accuracy, or R^2 for a "
                    "regressor); give cv folds to use another scorer")
            n = len(raw)
            splits = [(np.arange(n), np.arange(n))]  # one column of scores: the LOO score
            scorer = source.scorer or RidgeLOOScorer(classification=not base._is_regressor)
            return splits, None, scorer
        cv = self.cv if self.cv is not None else self._default_folds(y, base)
        cv = check_cv(cv, y, classifier=base._is_regressor is False)
        splits = list(cv.split(np.zeros((len(raw), 1)), y, groups))
        fold_score = (self._fold_scorer(base) if self.scoring is None
                      else self._scoring_fold_score(base))
        return splits, fold_score, None

    def _say_plan(self, plan):
        if self.verbose <= 0:
            return
        n_cand, n_splits = len(plan.candidates), len(plan.splits)
        how = ("Scoring by exact leave-one-out (one eigendecomposition per kernel "
               "setting)" if plan.exact_loo else f"Fitting {n_splits} folds for")
        print(f"[{type(self).__name__}] {how} each of {n_cand} candidates "
              f"({len(plan.kernel_groups)} kernel settings)" + (
                  "" if plan.exact_loo else f", totalling {n_cand * n_splits} fits"),
              flush=True)

    def _default_rules(self, plan):
        """Set the default grid's priors, gates and settings that are one another."""
        if not (plan.exact_loo and self.param_grid is None):
            return
        if plan.base._is_regressor:
            names = _grids.DEFAULT_REGRESSION_SETTINGS
            plan.gated = gated_indices(plan.grid, names, _grids.DEFAULT_REGRESSION_GATED)
            plan.n_gated = sum(k in names for k in _grids.DEFAULT_REGRESSION_GATED)
            return
        names = list(_grids.default_settings(self.n_channels_in_))
        plan.prior = prior_indices(plan.grid, plan.candidates, names)
        raw = plan.raw
        if not _grids.DEFAULT_SAME:  # no twins in the grid: nothing to look for
            return
        if _grids._unit_rms_of(raw.rms) if plan.cluster else _grids.unit_rms(raw):
            plan.same_as, plan.redirect = same_settings(plan.grid, plan.candidates,
                                                        plan.kernel_groups, names)

    def _lazy_grams(self, plan, series, skip=()):
        """Yield the source's Grams of the groups to compute, ``None`` for the others."""
        lazy = [g in plan.same_as or g in skip for g in range(len(plan.kernel_groups))]
        source = plan.source.grams(plan.base, plan.candidates,
                                   [idxs for g, idxs in enumerate(plan.kernel_groups)
                                    if not lazy[g]], series)
        for g in range(len(plan.kernel_groups)):
            yield None if lazy[g] else next(source)

    def _score(self, plan):
        """Score every candidate (after a screening, if it applies); return the outcome."""
        classification = not plan.base._is_regressor

        def subsample_search(idx):  # the same search on a subsample of the series
            return search_grams(self._lazy_grams(plan, [plan.raw[i] for i in idx]),
                                plan.kernel_groups, plan.full, plan.y[idx],
                                [(np.arange(len(idx)),) * 2],
                                score_gram=RidgeLOOScorer(classification=classification),
                                same_as=plan.same_as, error_score=self.error_score)

        screen = (screen_settings(subsample_search, self, plan.y, plan.kernel_groups,
                                  plan.same_as, plan.n_average, classification,
                                  plan.gated)
                  if plan.exact_loo and not plan.large else None)
        skip = () if screen is None else screen.skip
        outcome = search_grams(
            self._lazy_grams(plan, plan.raw, skip), plan.kernel_groups, plan.full, plan.y,
            plan.splits, plan.fold_score, score_gram=plan.score_gram, keep=plan.keep,
            prior=plan.prior, same_as=plan.same_as,
            n_jobs=self.n_jobs if self.scoring is None else 1, error_score=self.error_score,
            progress=self._progress(len(plan.kernel_groups)), skip=skip)
        if outcome.failures:
            warnings.warn(
                f"\n{len(outcome.failures)} fits failed out of a total of "
                f"{len(plan.candidates) * len(plan.splits)}.\nThe score on these "
                f"train-test partitions for these parameters will be set to "
                f"{self.error_score}.\nFirst error: {outcome.failures[0]}",
                FitFailedWarning,
            )
        return outcome, screen

    def _record(self, plan, outcome, screen):
        """Set ``cv_results_`` and the ``best_*`` attributes from the outcome."""
        self.cv_results_ = results_dict(plan.candidates, outcome.scores, outcome.kernel_time,
                                        outcome.fit_time)
        if screen is not None:
            self.cv_results_["screen_test_score"] = screen.scores
        if outcome.best_index >= 0:  # the best score, then the tie-break, then grid order
            self.best_index_ = outcome.best_index
        else:
            self.best_index_ = int(self.cv_results_["rank_test_score"].argmin())
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.best_params_ = plan.candidates[self.best_index_]
        self.n_splits_ = len(plan.raw) if plan.exact_loo else len(plan.splits)

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
