"""Building blocks of the hyperparameter search over precomputed Gram matrices.

:class:`rntk.RNTKClassifierCV` and :class:`rntk.RNTKRegressorCV` select a kernel setting
and a ridge (or ``C``) with the engine below; these are its public pieces, for a search
of one's own, as :mod:`sklearn.model_selection` exposes the parts of ``GridSearchCV``.

Search
    :func:`search_grams` cross-validates candidates that share Grams (tie-breaks
    within :data:`TIE_RTOL` of each other are ties, decided by candidate order);
    :class:`RidgeLOOScorer` scores every ridge of a Gram by exact leave-one-out;
    :class:`SVCFoldScorer` scores an SVC on one fold.
Classifier, regressor and ridge algebra
    :class:`KernelRidgeClassifier` (one-vs-all least squares on a precomputed kernel),
    :class:`KernelRidgeRegressor` (with an intercept, clipped), :func:`loo_r2`,
    :func:`constant_loo_predictions`, :func:`clip_loo_predictions`;
    probabilities from decision values: :func:`fit_temperature`, :func:`decision_proba`,
    :func:`decision_log_proba`,
    :func:`relative_ridge`, :func:`eigh_gram`, :func:`ridge_dual_fit`,
    :func:`ridge_loo_predictions`, :func:`loo_classification_scores`,
    :func:`one_vs_all_targets`, :func:`decision_to_labels`.
Grids
    :data:`DEFAULT_GRID`, :data:`DEFAULT_ALPHA`, :data:`LAST_STEP_GRID`,
    :data:`MEAN_NETWORK`, :data:`PAPER_GRID`, :data:`DEFAULT_SAME`, :func:`default_grid`,
    :func:`mean_readouts`, :func:`readout_stride`, :func:`unit_rms`;
    :data:`REGRESSION_SETTINGS`, :data:`DEFAULT_REGRESSION_SETTINGS`,
    :data:`DEFAULT_REGRESSION_ALPHA`, :data:`DEFAULT_REGRESSION_N_AVERAGE`,
    :func:`default_regression_grid`.
Series preparation
    :func:`as_sequences`, :func:`normalize_series`, :func:`pool_series`,
    :func:`channel_statistics`, :func:`standardize_channels`: the layout the kernels
    take and the estimators' ``normalize`` and ``pool`` parameters.

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

from ._estimators._ridge import KernelRidgeClassifier, KernelRidgeRegressor, relative_ridge
from ._model_selection import (
    DEFAULT_ALPHA,
    DEFAULT_GRID,
    DEFAULT_REGRESSION_ALPHA,
    DEFAULT_REGRESSION_N_AVERAGE,
    DEFAULT_REGRESSION_SETTINGS,
    DEFAULT_SAME,
    LAST_STEP_GRID,
    MEAN_NETWORK,
    PAPER_GRID,
    REGRESSION_SETTINGS,
    TIE_RTOL,
    RidgeLOOScorer,
    SVCFoldScorer,
    default_grid,
    default_regression_grid,
    mean_readouts,
    readout_stride,
    search_grams,
    unit_rms,
)
from ._model_selection._calibration import decision_log_proba, decision_proba, fit_temperature
from ._model_selection._features import LARGE_N, LARGE_N_COMPONENTS
from ._model_selection._loo import (
    clip_loo_predictions,
    constant_loo_predictions,
    decision_to_labels,
    eigh_gram,
    loo_classification_scores,
    one_vs_all_targets,
    ridge_dual_fit,
    ridge_loo_predictions,
)
from ._model_selection._scorers import loo_r2
from ._utils import as_sequences, normalize_series, pool_series
from ._utils._sequences import channel_statistics, standardize_channels

__all__ = ["DEFAULT_ALPHA", "DEFAULT_GRID", "DEFAULT_SAME", "LAST_STEP_GRID", "LARGE_N",
           "DEFAULT_REGRESSION_ALPHA", "DEFAULT_REGRESSION_N_AVERAGE",
           "DEFAULT_REGRESSION_SETTINGS", "REGRESSION_SETTINGS", "default_regression_grid",
           "KernelRidgeRegressor", "clip_loo_predictions", "constant_loo_predictions", "loo_r2",
           "channel_statistics", "standardize_channels", "fit_temperature",
           "decision_proba", "decision_log_proba",
           "LARGE_N_COMPONENTS",
           "MEAN_NETWORK", "PAPER_GRID",
           "KernelRidgeClassifier", "RidgeLOOScorer", "SVCFoldScorer", "as_sequences",
           "decision_to_labels", "default_grid", "eigh_gram", "loo_classification_scores",
           "mean_readouts",
           "normalize_series", "one_vs_all_targets", "pool_series", "readout_stride",
           "relative_ridge",
           "ridge_dual_fit", "ridge_loo_predictions", "search_grams", "TIE_RTOL", "unit_rms"]
