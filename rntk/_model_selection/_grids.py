"""Hyperparameter grids: the defaults of the leave-one-out protocol, and the RNTK paper's.

The paper's grids are those of Alemohammad et al., ICLR 2021, Appendix A. The default
grids were chosen by nested cross-validation on the training sets of 24 UCR datasets
(selection by leave-one-out inside 5 outer folds; the test sets were not used), see
``benchmarks/README.md``.
"""

import math

__all__ = ["DEFAULT_ALPHA", "DEFAULT_GRID", "DEFAULT_REGRESSION_ALPHA",
           "DEFAULT_REGRESSION_GRID", "PAPER_ALPHA", "PAPER_C", "PAPER_GRID"]

#: Kernel settings of the default (leave-one-out) classifier protocol, 8 of them: the
#: bidirectional two-layer ReLU RNTK with or without difference channels and 4 bias
#: scales; other parameters keep the estimator's values (``sigma_w = sqrt(2)``,
#: ``sigma_u = 1``). Mean nested-CV accuracy over the 24 training sets
#: (``benchmarks/tune_default_grid.py``): 84.09%, against 84.03% for the 32 settings
#: of forward or bidirectional x diff x 1 or 2 layers x sigma_b and 83.38% for sigma_b
#: alone with the forward one-layer kernel.
DEFAULT_GRID = {"direction": ["bidirectional"], "n_layers": [2], "diff": [False, True],
                "sigma_b": [0.0, 0.1, 0.5, 2.0]}

#: Kernel settings of the default regression protocol (not tuned: the bias scales).
DEFAULT_REGRESSION_GRID = {"sigma_b": [0.0, 0.1, 0.5, 2.0]}

#: Relative ridges (``x trace(K) / n``) of the default classifier protocol.
DEFAULT_ALPHA = [10.0 ** k for k in range(-6, 3)]

#: Ridges of the default regression protocol (absolute, as ``KernelRidge``'s).
DEFAULT_REGRESSION_ALPHA = [10.0 ** k for k in range(-4, 3)]

#: Kernel hyperparameter grid of Appendix A.1 (single-layer ReLU RNTK): 900 settings.
PAPER_GRID = {
    "sigma_w": [1.34, 1.35, 1.36, 1.37, 1.38, 1.39, 1.40, 1.41, 1.42, math.sqrt(2),
                1.43, 1.44, 1.45, 1.46, 1.47],
    "sigma_u": [1.0],
    "sigma_b": [0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0, 2.0],
    "sigma_h": [0.0, 0.01, 0.1, 0.5, 1.0],
}

#: C-SVM costs of Appendix A.1.
PAPER_C = [0.01, 0.1, 1.0, 10.0, 100.0]

#: Ridge values of Appendix A.2 (the paper lists 0.8 twice; it is kept once here).
PAPER_ALPHA = [0.0, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 2.0, 3.0, 4.0,
               5.0, 6.0, 7.0, 8.0, 10.0, 100.0]
