"""Hyperparameter grids: the defaults of the leave-one-out protocol, and the RNTK paper's.

The paper's grids are those of Alemohammad et al., ICLR 2021, Appendix A. The default
classifier grid was chosen by nested cross-validation on the training sets of the 48 UCR
datasets of the development panel (selection by leave-one-out inside 5 outer folds, and
on draws of 1 and 2 training series per class; the test sets were not used), see
``benchmarks/README.md``.
"""

import math

__all__ = ["DEFAULT_ALPHA", "DEFAULT_GRID", "DEFAULT_N_AVERAGE", "DEFAULT_PRIOR",
           "DEFAULT_REGRESSION_ALPHA", "DEFAULT_REGRESSION_GRID", "LAST_STEP_GRID",
           "LEVEL_NETWORK", "LEVEL_POOL", "MEAN_BAND", "MEAN_BUDGET", "MEAN_NETWORK",
           "MEAN_POOL", "MEAN_READOUTS", "PAPER_ALPHA", "PAPER_C", "PAPER_GRID",
           "default_grid", "mean_readouts"]

#: Readouts per series of the pooled mean-readout setting of the default grid, at most:
#: fewer when its training Gram would cost more than ``MEAN_BUDGET`` pair-readout-steps
#: (``n_train^2 x readouts x T``, ``T`` the pooled length), at least 16; its
#: ``readout_stride`` is the pooled length divided by it, rounded (>= 1).
MEAN_READOUTS = 128
#: Cost cap of the pooled mean-readout setting (about 1 s of one core per 1e9 on the
#: machines here).
MEAN_BUDGET = 1e9
#: Steps averaged into one by the pooled mean-readout setting on RMS-scaled series.
MEAN_POOL = 8
#: Steps averaged into one by the pooled mean-readout setting on the series as given.
LEVEL_POOL = 4
#: Band of the banded mean-readout setting (readouts, one per step).
MEAN_BAND = 8

#: The part of the default grid read out at the last step: the bidirectional two-layer
#: ReLU RNTK, ``sigma_b = 2``, unit-norm series.
LAST_STEP_GRID = {"direction": ["bidirectional"], "n_layers": [2], "diff": [False],
                  "sigma_b": [2.0]}
#: The shared network of the mean-readout settings: forward, one layer, series scaled to
#: unit RMS per step, ``sigma_u = 0.5``, ``sigma_w = 1.2`` (a memory of a few tens of
#: steps), ``sigma_b = 0.1``.
MEAN_NETWORK = {"readout": ["mean"], "normalize": ["rms"], "sigma_u": [0.5],
                "sigma_b": [0.1], "sigma_w": [1.2]}
#: The level-and-scale network: ``MEAN_NETWORK`` on the series as given
#: (``normalize=False``), which keeps each series' offset and amplitude (the ridge is
#: relative to the Gram's mean diagonal, so a dataset-wide factor of the series changes
#: only the weight of the biases).
LEVEL_NETWORK = {**MEAN_NETWORK, "normalize": [False]}

#: Kernel settings of the default (leave-one-out) classifier protocol (other parameters
#: keep the estimator's values):
#:
#: * ``LAST_STEP_GRID`` (1 setting);
#: * the banded mean readout: ``MEAN_NETWORK`` read out at every step, pairs of readouts
#:   at most ``MEAN_BAND`` steps apart (shapes compared up to small shifts);
#: * the pooled mean readout: ``MEAN_NETWORK`` on block means of ``MEAN_POOL`` steps,
#:   every pair of readouts (shapes compared at any shift, on a coarse time scale);
#: * the level-and-scale mean readouts: ``LEVEL_NETWORK`` read out at every step with
#:   the band ``MEAN_BAND``, and on block means of ``LEVEL_POOL`` steps, every pair of
#:   readouts;
#:
#: the pooled ones with the readout stride of :func:`mean_readouts`. The refitted model
#: averages the best candidates of the ``DEFAULT_N_AVERAGE`` best settings; when every
#: candidate has the same leave-one-out accuracy (one training series per class) the
#: first is ``DEFAULT_PRIOR``.
#:
#: Chosen by nested cross-validation on the training sets of the 48 UCR datasets of the
#: development panel (selection by leave-one-out inside 5 outer folds, and on draws of 1
#: and 2 training series per class; the test sets were not used) under the time budget:
#: mean nested accuracy 83.35% against 82.26% for the previous default (2 last-step
#: settings, the banded and the 4-step pooled mean readouts, the best candidate alone);
#: with 1 and 2 series per class 54.51% and 62.79% against 50.12% and 60.20%; see
#: ``benchmarks/README.md`` and ``benchmarks/tune_panel_grid.py``.
DEFAULT_GRID = [
    LAST_STEP_GRID,
    {**MEAN_NETWORK, "readout_band": [MEAN_BAND]},
    {**MEAN_NETWORK, "pool": [MEAN_POOL]},
    {**LEVEL_NETWORK, "readout_band": [MEAN_BAND]},
    {**LEVEL_NETWORK, "pool": [LEVEL_POOL]},
]

#: Kernel settings whose best candidates the default classifier averages (the decision
#: functions of their ridge classifiers, refitted on all series; see
#: ``RNTKClassifierCV(n_average=...)``).
DEFAULT_N_AVERAGE = 2

#: The candidate of the default grid taken first when the leave-one-out accuracy cannot
#: tell the candidates apart (all equal, as with one training series per class): the
#: level-and-scale setting with the relative ridge ``1e-2`` (the best fixed candidate
#: of the grid with 1 training series per class, in the nested study).
DEFAULT_PRIOR = {"normalize": False, "pool": LEVEL_POOL, "alpha": 1e-2}


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
        ``DEFAULT_GRID``, each pooled mean-readout setting with the ``readout_stride``
        ``ceil(max(lengths) / pool) / mean_readouts(lengths, pool)``, rounded, at least
        1, moved where the rounding would give more than ``MEAN_READOUTS`` or fewer
        than 16 readouts (``ceil(pooled length / stride)``), and the ridges.
    """
    grid = []
    for g in DEFAULT_GRID:
        g = dict(g)
        if "pool" in g:
            pool = g["pool"][0]
            pooled = -(-max(lengths) // pool)
            stride = max(1, int(round(pooled / mean_readouts(lengths, pool))))
            if -(-pooled // stride) > MEAN_READOUTS:  # ceil(pooled / stride) readouts <= 128
                stride = -(-pooled // MEAN_READOUTS)
            elif -(-pooled // stride) < min(16, pooled):  # and >= 16 (or every pooled step)
                stride = pooled // 16
            g["readout_stride"] = [stride]
        if alphas is not None:
            g["alpha"] = list(alphas)
        grid.append(g)
    return grid


#: Kernel settings whose best candidates the default classifier averages (the decision
#: functions of their ridge classifiers, refitted on all series; see
#: ``RNTKClassifierCV(n_average=...)``).
DEFAULT_N_AVERAGE = 2

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
