"""Hyperparameter grids: the defaults of the leave-one-out protocol, and the RNTK paper's.

The paper's grids are those of Alemohammad et al., ICLR 2021, Appendix A. The default
grids were chosen by nested cross-validation on the training sets of 24 UCR datasets
(selection by leave-one-out inside 5 outer folds; the test sets were not used), see
``benchmarks/README.md``.
"""

import math

__all__ = ["DEFAULT_ALPHA", "DEFAULT_GRID", "DEFAULT_REGRESSION_ALPHA",
           "DEFAULT_REGRESSION_GRID", "LAST_STEP_GRID", "MEAN_BAND", "MEAN_BUDGET",
           "MEAN_NETWORK", "MEAN_POOL", "MEAN_READOUTS", "PAPER_ALPHA", "PAPER_C",
           "PAPER_GRID", "default_grid", "mean_readouts"]

#: Readouts per series of the pooled mean-readout setting of the default grid, at most:
#: fewer when its training Gram would cost more than ``MEAN_BUDGET`` pair-readout-steps
#: (``n_train^2 x readouts x T``, ``T`` the pooled length), at least 16; its
#: ``readout_stride`` is the pooled length divided by it, rounded (>= 1).
MEAN_READOUTS = 128
#: Cost cap of the pooled mean-readout setting (about 1 s of one core per 1e9 on the
#: machines here).
MEAN_BUDGET = 1e9
#: Steps averaged into one by the pooled mean-readout setting.
MEAN_POOL = 4
#: Band of the banded mean-readout setting (readouts, one per step).
MEAN_BAND = 8

#: The part of the default grid read out at the last step: the bidirectional two-layer
#: ReLU RNTK with and without difference channels, ``sigma_b = 2``, unit-norm series.
LAST_STEP_GRID = {"direction": ["bidirectional"], "n_layers": [2], "diff": [False, True],
                  "sigma_b": [2.0]}
#: The shared network of the mean-readout settings: forward, one layer, series scaled to
#: unit RMS per step, ``sigma_u = 0.5``, ``sigma_w = 1.2`` (a memory of a few tens of
#: steps), ``sigma_b = 0.1``.
MEAN_NETWORK = {"readout": ["mean"], "normalize": ["rms"], "sigma_u": [0.5],
                "sigma_b": [0.1], "sigma_w": [1.2]}

#: Kernel settings of the default (leave-one-out) classifier protocol (other parameters
#: keep the estimator's values):
#:
#: * ``LAST_STEP_GRID`` (2 settings);
#: * the banded mean readout: ``MEAN_NETWORK`` read out at every step, pairs of readouts
#:   at most ``MEAN_BAND`` steps apart (shapes compared up to small shifts);
#: * the pooled mean readout: ``MEAN_NETWORK`` on block means of ``MEAN_POOL`` steps,
#:   every pair of readouts (shapes compared at any shift, on a coarser time scale),
#:   with the readout stride of :func:`mean_readouts`.
#:
#: Chosen by nested cross-validation on the training sets of 24 UCR datasets
#: (selection by leave-one-out inside 5 outer folds; the test sets were not used) under
#: the time budget: mean nested accuracy 88.87%, against 86.27% for the previous
#: default (last step + one unpooled, unbanded mean readout), 84.12% for the 8
#: last-step settings before it, 89.01% with a band of 16 (1.3x the Gram time) and
#: 89.32% with the unpooled, unbanded mean readout added (2.5x the Gram time); see
#: ``benchmarks/README.md`` and ``benchmarks/tune_readout_grid.py``.
DEFAULT_GRID = [
    LAST_STEP_GRID,
    {**MEAN_NETWORK, "readout_band": [MEAN_BAND]},
    {**MEAN_NETWORK, "pool": [MEAN_POOL]},
]


def mean_readouts(lengths, pool=1):
    """Return the readouts per series of the default grid's pooled mean-readout setting.

    Parameters
    ----------
    lengths : array-like of int
        Lengths of the training series.
    pool : int, default=1
        Steps averaged into one before the kernel.

    Returns
    -------
    readouts : int
        ``MEAN_READOUTS``, or fewer (at least 16, at most the pooled length) when the
        training Gram would cost more than ``MEAN_BUDGET``.
    """
    n, t_max = len(lengths), -(-max(lengths) // pool)
    affordable = int(MEAN_BUDGET // (n * n * t_max))
    return min(MEAN_READOUTS, t_max, max(16, affordable))


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
        ``DEFAULT_GRID``, its pooled mean-readout setting with the ``readout_stride``
        ``ceil(max(lengths) / MEAN_POOL) / mean_readouts(lengths, MEAN_POOL)``, rounded,
        at least 1, moved where the rounding would give more than ``MEAN_READOUTS`` or
        fewer than 16 readouts (``ceil(pooled length / stride)``), and the ridges.
    """
    pooled = -(-max(lengths) // MEAN_POOL)
    stride = max(1, int(round(pooled / mean_readouts(lengths, MEAN_POOL))))
    if -(-pooled // stride) > MEAN_READOUTS:  # ceil(pooled / stride) readouts: <= 128
        stride = -(-pooled // MEAN_READOUTS)
    elif -(-pooled // stride) < min(16, pooled):  # and >= 16 (or every pooled step)
        stride = pooled // 16
    grid = []
    for g in DEFAULT_GRID:
        g = dict(g)
        if g.get("pool") == [MEAN_POOL]:
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
