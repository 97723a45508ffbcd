"""Hyperparameter grids: the defaults of the leave-one-out protocol, and the RNTK paper's.

The paper's grids are those of Alemohammad et al., ICLR 2021, Appendix A. The default
grids were chosen by nested cross-validation on the training sets of 24 UCR datasets
(selection by leave-one-out inside 5 outer folds; the test sets were not used), see
``benchmarks/README.md``.
"""

import math

__all__ = ["DEFAULT_ALPHA", "DEFAULT_GRID", "DEFAULT_REGRESSION_ALPHA",
           "DEFAULT_REGRESSION_GRID", "MEAN_BUDGET", "MEAN_READOUTS", "PAPER_ALPHA",
           "PAPER_C", "PAPER_GRID", "default_grid", "mean_readouts"]

#: Readouts per series of the mean-readout setting of the default grid, at most: the
#: largest of 128, 64, 32, 16 whose training Gram costs at most ``MEAN_BUDGET``
#: pair-readout-steps (``n_train^2 x readouts x T``), at least 16; its
#: ``readout_stride`` is the longest training series divided by it, rounded (>= 1).
MEAN_READOUTS = 128
#: Cost cap of the mean-readout setting (about 1 s of one core per 1e9 on the machines
#: here): it keeps the default search within 5x MiniRocket's time on the UCR sets
#: (4.5x measured; 1e9 gave 5.5x).
MEAN_BUDGET = 5e8

#: Kernel settings of the default (leave-one-out) classifier protocol, two families
#: (other parameters keep the estimator's values, ``sigma_w = sqrt(2)``, ``sigma_u = 1``
#: unless set here):
#:
#: * the last-step readout: the bidirectional two-layer ReLU RNTK with and without
#:   difference channels, ``sigma_b = 2``, unit-norm series (2 settings);
#: * the mean readout (up to ``MEAN_READOUTS`` readouts per series), forward, one layer,
#:   series scaled to unit RMS per step, ``sigma_u = 0.5``, ``sigma_w = 1.2`` (a memory
#:   of a few tens of steps), ``sigma_b = 0.1`` (1 setting).
#:
#: Chosen by nested cross-validation on the training sets of 24 UCR datasets
#: (selection by leave-one-out inside 5 outer folds; the test sets were not used) under
#: the time budget: mean nested accuracy 86.27%, against 84.12% for the 8 last-step
#: settings of the previous default, 86.61% with ``MEAN_BUDGET = 1e9`` and 87.20% with
#: 128 readouts everywhere, and 86.30% for the 8 last-step settings plus 3 mean settings
#: of 32 readouts (all three over the budget); see ``benchmarks/README.md``.
DEFAULT_GRID = [
    {"direction": ["bidirectional"], "n_layers": [2], "diff": [False, True],
     "sigma_b": [2.0]},
    {"readout": ["mean"], "normalize": ["rms"], "sigma_u": [0.5], "sigma_b": [0.1],
     "sigma_w": [1.2]},
]


def mean_readouts(lengths):
    """Return the readouts per series of the default grid's mean-readout setting.

    Parameters
    ----------
    lengths : array-like of int
        Lengths of the training series.

    Returns
    -------
    readouts : int
        The largest of ``MEAN_READOUTS``, its halves down to 16, whose training Gram
        costs at most ``MEAN_BUDGET`` (16 when none does).
    """
    n, t_max = len(lengths), max(lengths)
    readouts = MEAN_READOUTS
    while readouts > 16 and n * n * min(readouts, t_max) * t_max > MEAN_BUDGET:
        readouts //= 2
    return readouts


def default_grid(lengths, alphas=None):
    """Return the default classifier grid for training series of the given lengths.

    Parameters
    ----------
    lengths : array-like of int
        Lengths of the training series.
    alphas : list of float, default=None
        Ridges to add as ``"alpha"`` (``None``: none).

    Returns
    -------
    grid : list of dict
        ``DEFAULT_GRID`` with the ``readout_stride`` of its mean-readout setting
        (``max(lengths) / mean_readouts(lengths)``, rounded, at least 1) and the ridges.
    """
    stride = max(1, int(round(max(lengths) / mean_readouts(lengths))))
    grid = []
    for g in DEFAULT_GRID:
        g = dict(g)
        if g.get("readout") == ["mean"]:
            g["readout_stride"] = [stride]
        if alphas is not None:
            g["alpha"] = list(alphas)
        grid.append(g)
    return grid


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
