"""Private model-selection engine: grids, fold scorers, the search over Grams."""

from ._grids import PAPER_ALPHA, PAPER_C, PAPER_GRID
from ._scorers import SVM_MAX_ITER, FastSVC, SVCFoldScorer, kernel_ridge_score
from ._search import BaseKernelSearchCV, group_by_kernel, results_dict, search_grams

__all__ = ["PAPER_ALPHA", "PAPER_C", "PAPER_GRID", "SVM_MAX_ITER", "BaseKernelSearchCV",
           "FastSVC", "SVCFoldScorer", "group_by_kernel", "kernel_ridge_score",
           "results_dict", "search_grams"]
