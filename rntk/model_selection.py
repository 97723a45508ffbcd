"""Building blocks of the hyperparameter search over precomputed Gram matrices.

:class:`rntk.RNTKClassifierCV` and :class:`rntk.RNTKRegressorCV` select a kernel setting
and a ridge (or ``C``) with the engine below; these are its public pieces, for a search
of one's own, as :mod:`sklearn.model_selection` exposes the parts of ``GridSearchCV``.

Search
    :func:`search_grams` cross-validates candidates that share Grams;
    :class:`RidgeLOOScorer` scores every ridge of a Gram by exact leave-one-out;
    :class:`SVCFoldScorer` scores an SVC on one fold.
Models on a precomputed kernel
    :class:`KernelRidgeClassifier` (one-vs-all least squares with an unpenalised
    intercept), :class:`KernelRidgeRegressor` (with an intercept, clipped);
    :class:`AveragedClassifier` and :class:`AveragedRegressor`, what the searches refit
    with ``n_average > 1``.
Grids
    :func:`default_grid` and :func:`default_regression_grid` (the searches' default
    grids for given series lengths), :data:`DEFAULT_ALPHA` and
    :data:`DEFAULT_REGRESSION_ALPHA` (their ridges), :data:`PAPER_GRID` (the RNTK
    paper's kernel grid).

Examples
--------
>>> import numpy as np
>>> from rntk import rntk_kernel
>>> from rntk.model_selection import DEFAULT_ALPHA, RidgeLOOScorer, search_grams
>>> rng = np.random.default_rng(0)
>>> X, y = rng.normal(size=(20, 8)), np.repeat([0, 1], 10)
>>> grams = [rntk_kernel(X, sigma_b=b) for b in (0.0, 1.0)]
>>> candidates = [{"sigma_b": b, "alpha": a} for b in (0.0, 1.0) for a in DEFAULT_ALPHA]
>>> n_a = len(DEFAULT_ALPHA)
>>> groups = [list(range(n_a)), list(range(n_a, 2 * n_a))]
>>> loo = [(np.arange(20), np.arange(20))]  # exact leave-one-out: one "split"
>>> out = search_grams(iter(grams), groups, candidates, y, loo,
...                    score_gram=RidgeLOOScorer(classification=True))
>>> sorted(candidates[out.best_index])
['alpha', 'sigma_b']
"""

from ._estimators._ridge import KernelRidgeClassifier, KernelRidgeRegressor
from ._model_selection import (
    DEFAULT_ALPHA,
    DEFAULT_REGRESSION_ALPHA,
    PAPER_GRID,
    AveragedClassifier,
    AveragedRegressor,
    RidgeLOOScorer,
    SVCFoldScorer,
    default_grid,
    default_regression_grid,
    search_grams,
)
from ._utils._removed import removed_attribute

__all__ = ["AveragedClassifier", "AveragedRegressor", "DEFAULT_ALPHA",
           "DEFAULT_REGRESSION_ALPHA", "KernelRidgeClassifier", "KernelRidgeRegressor",
           "PAPER_GRID", "RidgeLOOScorer", "SVCFoldScorer", "default_grid",
           "default_regression_grid", "search_grams"]

#: Internals of the search public until 0.4 (what the benchmark studies read). They are
#: in ``rntk._model_selection`` and ``rntk._utils``, which are not API and may change.
_INTERNALS = ("DEFAULT_GRID", "DEFAULT_SAME", "LAST_STEP_GRID", "LARGE_N", "LARGE_N_COMPONENTS",
              "DEFAULT_REGRESSION_N_AVERAGE", "DEFAULT_REGRESSION_SETTINGS",
              "REGRESSION_SETTINGS", "MEAN_NETWORK", "TIE_RTOL", "clip_loo_predictions",
              "constant_loo_predictions", "loo_r2", "fit_temperature", "decision_proba",
              "decision_log_proba", "relative_ridge", "eigh_gram", "ridge_dual_fit",
              "ridge_loo_predictions", "loo_classification_scores", "one_vs_all_targets",
              "decision_to_labels", "mean_readouts", "readout_stride", "unit_rms",
              "as_sequences", "normalize_series", "pool_series", "channel_statistics",
              "standardize_channels")
_REMOVED = {name: "the search's parameters and attributes instead (it is an internal of "
                  "the search, no longer API)" for name in _INTERNALS}
_REMOVED.update({
    "DEFAULT_GRID": "default_grid(lengths) (the default grid depends on the series lengths)",
    "LARGE_N": "the searches' large_n='auto' (documented there)",
    "LARGE_N_COMPONENTS": "the searches' n_components",
    "loo_r2": "the search's best_score_ (the leave-one-out R^2) or sklearn.metrics.r2_score",
    "decision_proba": "predict_proba of the estimators",
    "decision_log_proba": "predict_log_proba of the estimators",
    "unit_rms": "rntk.SeriesScaler('rms') to scale series to unit RMS",
    "as_sequences": "the estimators, which take every layout; rntk.from_aeon for aeon's",
})


def __getattr__(name):
    raise removed_attribute(__name__, name, _REMOVED)
