"""Hyperparameter grids of the RNTK paper (Alemohammad et al., ICLR 2021, Appendix A)."""

import math

__all__ = ["PAPER_ALPHA", "PAPER_C", "PAPER_GRID"]

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
