"""Private model-selection engine: grids, scorers, the search over Grams."""

from ._ensemble import AveragedClassifier
from ._grids import (
    BAND_STEPS,
    DEFAULT_ALPHA,
    DEFAULT_GRID,
    DEFAULT_N_AVERAGE,
    DEFAULT_PRIOR,
    DEFAULT_REGRESSION_ALPHA,
    DEFAULT_REGRESSION_GRID,
    DEFAULT_SAME,
    LAST_STEP_GRID,
    LEVEL_NETWORK,
    LEVEL_POOL,
    MEAN_BAND,
    MEAN_BUDGET,
    MEAN_NETWORK,
    MEAN_POOL,
    MEAN_READOUTS,
    PAPER_ALPHA,
    PAPER_C,
    PAPER_GRID,
    QUANTILE_LEVELS,
    SPECTRUM_BINS,
    UNIT_RMS_SPREAD,
    UNIT_RMS_TOL,
    default_grid,
    mean_readouts,
    readout_stride,
    unit_rms,
)
from ._scorers import SVM_MAX_ITER, FastSVC, RidgeLOOScorer, SVCFoldScorer, kernel_ridge_score
from ._search import TIE_RTOL, BaseKernelSearchCV, group_by_kernel, results_dict, search_grams

__all__ = ["BAND_STEPS", "QUANTILE_LEVELS", "SPECTRUM_BINS", "DEFAULT_ALPHA", "DEFAULT_GRID",
           "DEFAULT_N_AVERAGE",
           "DEFAULT_PRIOR", "DEFAULT_SAME", "UNIT_RMS_SPREAD", "UNIT_RMS_TOL", "unit_rms",
           "AveragedClassifier", "LEVEL_NETWORK", "LEVEL_POOL",
           "DEFAULT_REGRESSION_ALPHA",
           "DEFAULT_REGRESSION_GRID", "LAST_STEP_GRID", "MEAN_BAND", "MEAN_BUDGET",
           "MEAN_NETWORK", "MEAN_POOL", "MEAN_READOUTS", "PAPER_ALPHA",
           "PAPER_C", "PAPER_GRID", "SVM_MAX_ITER", "BaseKernelSearchCV", "FastSVC",
           "RidgeLOOScorer", "SVCFoldScorer", "default_grid", "mean_readouts", "readout_stride",
           "group_by_kernel", "kernel_ridge_score", "results_dict", "search_grams", "TIE_RTOL"]
