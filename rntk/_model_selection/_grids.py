"""Hyperparameter grids: the defaults of the leave-one-out protocol, and the RNTK paper's.

The paper's grids are those of Alemohammad et al., ICLR 2021, Appendix A. The default
classifier grid was chosen by nested cross-validation on the training sets of the 48 UCR
datasets of the development panel (selection by leave-one-out inside 5 outer folds, and
on draws of 1 and 2 training series per class; the test sets were not used), see
``benchmarks/README.md``.
"""

import math

import numpy as np
from sklearn.utils._param_validation import Interval

from .._representations import PREPARATION_CONSTRAINTS
from .._utils import fill_doc

__all__ = ["BAND_STEPS", "DATASET_NETWORK", "DEFAULT_ALPHA", "DEFAULT_GRID", "DEFAULT_SETTINGS",
           "INTERVALS", "DEFAULT_N_AVERAGE", "DEFAULT_PRIOR", "DEFAULT_REGRESSION_ALPHA",
           "DEFAULT_REGRESSION_GRID", "DEFAULT_REGRESSION_N_AVERAGE",
           "DEFAULT_REGRESSION_GATED", "DEFAULT_REGRESSION_SETTINGS", "GATE_STANDARD_ERRORS",
           "REGRESSION_SETTINGS", "default_regression_grid",
           "REGRESSION_BAND_STEPS", "REGRESSION_QUANTILE_LEVELS", "REGRESSION_SPECTRUM_BINS",
           "DEFAULT_SAME", "UNIT_RMS_SPREAD", "UNIT_RMS_TOL", "unit_rms",
           "LAST_STEP_GRID", "LEVEL_NETWORK", "MULTICHANNEL_LEFT_OUT", "default_settings",
           "LEVEL_POOL", "MEAN_BAND", "MEAN_BUDGET",
           "MEAN_NETWORK", "MEAN_POOL", "MEAN_READOUTS", "PAPER_ALPHA", "PAPER_C",
           "PAPER_GRID", "QUANTILE_LEVELS", "SHAPE_LEVELS", "OCTAVE_LEVELS", "SPECTRUM_BINS",
           "default_grid",
           "mean_readouts",
           "readout_stride"]

#: Readouts per series of the pooled mean-readout setting of the default grid, at most:
#: fewer when its training Gram would cost more than ``MEAN_BUDGET`` pair-readout-steps
#: (``n_train^2 x readouts x T``, ``T`` the pooled length), at least 16; its
#: ``readout_stride`` is the pooled length divided by it, rounded (>= 1).
MEAN_READOUTS = 128
#: Cost cap of the pooled mean-readout settings (about 1 s of one core per 1e9 on the
#: machines here).
MEAN_BUDGET = 1e9
#: Steps averaged into one by the pooled mean-readout setting on RMS-scaled series.
MEAN_POOL = 8
#: Steps averaged into one by the pooled mean-readout setting on the series as given.
LEVEL_POOL = 4
#: Band of the banded mean-readout settings (readouts, one per step).
MEAN_BAND = 8
#: Steps of the banded settings at most: longer training series are pooled by
#: ``ceil(longest / BAND_STEPS)`` (the band then counts pooled steps).
BAND_STEPS = 128
#: Frequencies of the spectral setting at most (fewer when the longest training series
#: has fewer: ``longest // 2 + 1``, those of its ``rfft``).
SPECTRUM_BINS = 128
#: Levels of the quantile setting at most (fewer when the longest training series has
#: fewer steps).
QUANTILE_LEVELS = 64
#: Levels of the shape setting at most (fewer when the longest training series has fewer
#: steps).
SHAPE_LEVELS = 64
#: Levels of the setting of the shapes at every octave at most (the same rule): as
#: accurate as 64 by nested CV on the development panels, in half its Gram time.
OCTAVE_LEVELS = 32
#: The finest cut of the interval-statistics setting (1, 2, 4 and 8 equal intervals;
#: fewer when the longest training series has fewer steps).
INTERVALS = 8

#: The network read out at the last step: the bidirectional two-layer ReLU RNTK,
#: ``sigma_b = 2``, unit-norm series (a setting of the regression grid; of the default
#: classifier grid until the shapes at every octave took its place).
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


def _readouts(network):
    """Return a network's mean-readout settings, unsized (:func:`default_grid` sizes them).

    Banded (``MEAN_BAND``), pooled to ``MEAN_POOL`` or ``LEVEL_POOL`` steps, and banded
    on amplitude spectra, on quantile functions of values and steps, or on those of
    values, slopes and curvatures (at three scales, or at five); and on one step of
    statistics over intervals.
    """
    band = {**network, "readout_band": [MEAN_BAND]}
    return {"band": band, "pool8": {**network, "pool": [MEAN_POOL]},
            "pool4": {**network, "pool": [LEVEL_POOL]},
            "spectrum": {**band, "spectrum": [SPECTRUM_BINS]},
            "quantiles": {**band, "quantiles": [QUANTILE_LEVELS]},
            "shapes": {**band, "shapes": [SHAPE_LEVELS]},
            "octave_shapes": {**band, "octave_shapes": [OCTAVE_LEVELS]},
            "intervals": {**network, "intervals": [INTERVALS]}}


_MEAN, _LEVEL = _readouts(MEAN_NETWORK), _readouts(LEVEL_NETWORK)

#: Kernel settings of the default (leave-one-out) classifier protocol, by name (other
#: parameters keep the estimator's values):
#:
#: * the banded mean readout: ``MEAN_NETWORK`` read out at every step, pairs of readouts
#:   at most ``MEAN_BAND`` steps apart (shapes compared up to small shifts);
#: * the pooled mean readout: ``MEAN_NETWORK`` on block means of ``MEAN_POOL`` steps,
#:   every pair of readouts (shapes compared at any shift, on a coarse time scale);
#: * the level-and-scale mean readouts: ``LEVEL_NETWORK`` read out at every step with
#:   the band ``MEAN_BAND``, and on block means of ``LEVEL_POOL`` steps, every pair of
#:   readouts;
#: * the spectral setting: ``MEAN_NETWORK`` with the band ``MEAN_BAND`` reading each
#:   series' amplitude spectrum (``spectrum``: at most ``SPECTRUM_BINS`` frequencies,
#:   see :class:`rntk.AmplitudeSpectrum`), scaled to unit RMS;
#: * the two shape settings: ``MEAN_NETWORK`` with the band ``MEAN_BAND`` reading the
#:   quantile functions of each series' values, and of its slopes and curvatures at 1,
#:   4 and 16 steps (``shapes``: at most ``SHAPE_LEVELS`` levels, see
#:   :class:`rntk.ShapeQuantiles`), and at every octave from 1 to 16 steps
#:   (``octave_shapes``: at most ``OCTAVE_LEVELS`` levels, see
#:   :class:`rntk.ShapeQuantiles` at 1, 2, 4, 8 and 16 steps), each scaled to unit RMS:
#:   the distribution of the values and of the local shapes, whatever their place in
#:   time;
#:
#: the pooled ones with the readout stride of :func:`mean_readouts`, the banded ones
#: on series pooled to at most ``BAND_STEPS`` steps. The refitted model averages the
#: best candidates of the ``DEFAULT_N_AVERAGE`` best settings; when every candidate has
#: the same leave-one-out accuracy (one training series per class) it averages the
#: candidates of ``DEFAULT_PRIOR``.
#:
#: Chosen by nested cross-validation on the training sets of the 48 UCR datasets of the
#: development panel (selection by leave-one-out inside 5 outer folds, and on draws of 1
#: and 2 training series per class; the test sets were not used) under the time budget:
#: mean nested accuracy 83.57% against 83.35% for the previous default (the same
#: settings without the spectrum, bands on every step, two settings averaged, one
#: prior), with 1 and 2 series per class 55.80% and 63.94% against 54.49% and 62.79%,
#: in 0.80x its Gram time. Every cheaper variant measured had a lower nested accuracy
#: (half the cost cap of the pooled settings: 83.34% in 0.62x); see
#: ``benchmarks/README.md`` and ``benchmarks/studies/tune_panel_grid.py``. The quantile setting
#: was added later by the same protocol (``benchmarks/studies/tune_panel_ensembles.py
#: --replace``): 84.05% against 83.57% (+0.49 +- 0.25, the mean and standard error of
#: the per-set differences), with 1 and 2 series per class 55.83% and 64.02%; 64
#: levels rather than 32 (83.94%), and beside the last-step setting rather than in its
#: place (83.88%). 0.4.0 reads the local shapes in its place (``shapes``, by the same
#: protocol, ``benchmarks/studies/tune_local_shapes.py``, with ``precision="auto"``), and the
#: shapes at every octave in place of the last-step setting (``LAST_STEP_GRID``, the
#: bidirectional two-layer RNTK read out at the last step: ``tune_local_shapes.py
#: --replace``, +0.47 +- 0.21 nested on the UCR panel, -0.08 +- 1.66 on the 7 UEA sets,
#: in about the same time); see ``benchmarks/README.md`` for the nested figures.
DEFAULT_SETTINGS = {
    "band": _MEAN["band"],
    "pool": _MEAN["pool8"],
    "level_band": _LEVEL["band"],
    "level_pool": _LEVEL["pool4"],
    "spectrum": _MEAN["spectrum"],
    "shapes": _MEAN["shapes"],
    "octave_shapes": _MEAN["octave_shapes"],
}
#: ``DEFAULT_SETTINGS`` as a grid (a list, in the order of the names).
DEFAULT_GRID = list(DEFAULT_SETTINGS.values())

#: Settings of ``DEFAULT_SETTINGS`` the default classifier leaves out on series of more
#: than one channel: the banded setting on unit-RMS series (``band``; the level-and-scale
#: band stays). By the nested protocol on the 7 UEA sets of the development panel: 77.44%
#: against 75.20% (+2.24 +- 1.09, 6 sets up, none down; ``benchmarks/studies/tune_beside.py``),
#: and in six sevenths of the Gram time; on the UCR panel it stays (-0.13 +- 0.12 without
#: it).
MULTICHANNEL_LEFT_OUT = ("band",)


def default_settings(n_channels=1):
    """Return the default classifier's kernel settings, by name, for series of this width."""
    if n_channels > 1:
        return {k: v for k, v in DEFAULT_SETTINGS.items() if k not in MULTICHANNEL_LEFT_OUT}
    return dict(DEFAULT_SETTINGS)


#: Kernel settings whose best candidates the default classifier averages (the decision
#: functions of their ridge classifiers, refitted on all series; see
#: ``RNTKClassifierCV(n_average=...)``).
DEFAULT_N_AVERAGE = 3

#: The candidates of the default grid averaged when the leave-one-out accuracy cannot
#: tell the candidates apart (all equal, as with one training series per class), as
#: ``(name in DEFAULT_SETTINGS, relative ridge)``: the banded level-and-scale setting,
#: the spectral setting and the shape setting, each with the ridge ``1e-1``. The best
#: fixed set of one to three of the default's settings (at the ridge ``1e-2``, ``1e-1``
#: or ``1``) on draws of 1 training series per class of the 48 UCR training sets: 58.92%
#: of the rest of each training set against 56.12% for the first two alone (the prior
#: before the shape settings existed; +2.80 +- 0.66, 32 sets up, 12 down; chosen
#: without each set in turn, +2.55 +- 0.75), and on the 7 UEA sets -1.15 +- 1.71 (all
#: of it ``StandWalkJump``: 3 of 27 held-out series; ``benchmarks/studies/tune_beside.py
#: --priors``).
DEFAULT_PRIOR = [("level_band", 1e-1), ("spectrum", 1e-1), ("shapes", 1e-1)]


#: Settings of ``DEFAULT_GRID`` that are another of its settings when every training
#: series has the same RMS per step, close to 1 (z-normalised series, as most of the UCR
#: archive, or series scaled to unit RMS; see :func:`unit_rms`), as ``{name: name}`` of
#: ``DEFAULT_SETTINGS``: the banded level-and-scale setting reads the series as given, which are
#: then the banded setting's unit-RMS series times one common factor (an input scale
#: within ``UNIT_RMS_TOL`` of 1, identical at 1). The default classifier then computes,
#: scores and refits the second in place of the first, which still takes its place in
#: the average: the banded setting counts twice there, as it did. On the 48 panel
#: datasets (31 of them z-normalised) every nested-CV and test prediction stayed the same.
DEFAULT_SAME = {"level_band": "band"}
#: Largest relative spread of the training series' RMS values for :func:`unit_rms`.
UNIT_RMS_SPREAD = 1e-3
#: Largest distance from 1 of the training series' common RMS for :func:`unit_rms`
#: (z-normalisation with ``ddof=1`` gives ``sqrt((T - 1) / T)``: >= 0.95 from 10 steps).
UNIT_RMS_TOL = 0.05


def unit_rms(series):
    """Return whether every series has the same RMS per step, close to 1.

    The RMS per step of a series ``x`` of shape ``(T, m)`` is ``sqrt(sum(x ** 2) / T)``,
    the factor ``normalize="rms"`` divides it by.

    Parameters
    ----------
    series : list of ndarray of shape (T_i, m)
        Training series (finite, not empty).

    Returns
    -------
    same : bool
        Whether the RMS values are within ``UNIT_RMS_SPREAD`` (relative) of each other
        and within ``UNIT_RMS_TOL`` of 1, so that ``normalize=False`` and
        ``normalize="rms"`` give the same network's kernel up to that common factor
        of the inputs (``DEFAULT_SAME``).
    """
    return _unit_rms_of(np.array([math.sqrt(float(np.vdot(s, s)) / len(s)) for s in series]))


def _unit_rms_of(rms):
    """:func:`unit_rms` from the series' RMS values per step (a cluster computes them)."""
    rms = np.asarray(rms, dtype=np.float64)
    return bool(rms.max() <= rms.min() * (1 + UNIT_RMS_SPREAD)
                and np.abs(rms - 1).max() <= UNIT_RMS_TOL)


#: The parameters of :func:`mean_readouts` and :func:`readout_stride`.
_SIZING = """Parameters
----------
lengths : array-like of int
    Lengths of the training series.
pool : int, default=1
    Steps averaged into one before the kernel.
max_readouts : int, default=MEAN_READOUTS
    Readouts at most.
budget : float, default=MEAN_BUDGET
    Cost cap of the training Gram, in pair-readout-steps."""


@fill_doc(sizing=_SIZING)
def mean_readouts(lengths, pool=1, *, max_readouts=MEAN_READOUTS, budget=MEAN_BUDGET):
    """Return the readouts per series of the default grid's pooled mean-readout setting.

    {sizing}

    Returns
    -------
    readouts : int
        ``max_readouts``, or fewer (at least 16, at most the pooled length) when the
        training Gram would cost more than ``budget``.
    """
    n, t_max = len(lengths), -(-max(lengths) // pool)
    affordable = int(budget // (n * n * t_max))
    return min(max_readouts, t_max, max(16, affordable))


@fill_doc(sizing=_SIZING)
def readout_stride(lengths, pool=1, *, max_readouts=MEAN_READOUTS, budget=MEAN_BUDGET):
    """Return the ``readout_stride`` of the default grid's pooled mean-readout settings.

    {sizing}

    Returns
    -------
    stride : int
        ``ceil(max(lengths) / pool) / mean_readouts(...)``, rounded, at least 1, moved
        where the rounding would give more than ``max_readouts`` or fewer than 16
        readouts (``ceil(pooled length / stride)``; every pooled step when shorter).
    """
    pooled = -(-max(lengths) // pool)
    readouts = mean_readouts(lengths, pool, max_readouts=max_readouts, budget=budget)
    stride = max(1, int(round(pooled / readouts)))
    if -(-pooled // stride) > max_readouts:
        stride = -(-pooled // max_readouts)
    elif -(-pooled // stride) < min(16, pooled):
        stride = pooled // 16
    return stride


#: The parameters shared by :func:`default_grid` and :func:`default_regression_grid`.
_LENGTHS_ALPHAS = """lengths : array-like of int
    Lengths of the training series.
alphas : list of float, default=None
    Ridges to add as ``"alpha"`` (``None``: none)."""


@fill_doc(lengths_alphas=_LENGTHS_ALPHAS)
def default_grid(lengths, alphas=None, n_channels=1):
    """Return the default classifier grid for training series of the given lengths.

    Parameters
    ----------
    {lengths_alphas}
    n_channels : int, default=1
        Channels of the series: with more than one, the settings of
        ``MULTICHANNEL_LEFT_OUT`` are left out.

    Returns
    -------
    grid : list of dict
        ``DEFAULT_GRID`` (less ``MULTICHANNEL_LEFT_OUT`` on several channels), each
        pooled mean-readout setting with the stride of :func:`readout_stride`; each
        banded setting on series with the ``pool`` ``ceil(max(lengths) / BAND_STEPS)``;
        the spectral setting with ``min(SPECTRUM_BINS, max(lengths) // 2 + 1)`` frequencies (at
        least 2); the shape settings with ``min(SHAPE_LEVELS, max(lengths))`` and
        ``min(OCTAVE_LEVELS, max(lengths))`` levels (at least 2); and the ridges.
    """
    return [_sized(g, lengths, alphas) for g in default_settings(n_channels).values()]


def _least(name):
    """Return the least value of a preparation, from its constraint in the table."""
    return next(c.left for c in PREPARATION_CONSTRAINTS[name] if isinstance(c, Interval))


def _sized(setting, lengths, alphas, bins=None, levels=None, band_steps=None):
    """Return a setting of a default grid sized for training series of these lengths.

    ``bins``, ``levels`` and ``band_steps`` default to the classifier's sizes
    (``SPECTRUM_BINS``, ``QUANTILE_LEVELS``, ``BAND_STEPS``).
    """
    longest = max(lengths)
    g = dict(setting)
    if "spectrum" in g:
        g["spectrum"] = [max(_least("spectrum"), min(bins or SPECTRUM_BINS, longest // 2 + 1))]
    elif "quantiles" in g:
        g["quantiles"] = [max(_least("quantiles"), min(levels or QUANTILE_LEVELS, longest))]
    elif "shapes" in g or "octave_shapes" in g:
        name = "shapes" if "shapes" in g else "octave_shapes"
        top = SHAPE_LEVELS if name == "shapes" else OCTAVE_LEVELS
        g[name] = [max(_least(name), min(top, longest))]
    elif "intervals" in g:
        g["intervals"] = [max(_least("intervals"), min(g["intervals"][0], longest))]
    elif "readout_band" in g:
        g["pool"] = [max(1, -(-longest // (band_steps or BAND_STEPS)))]
    if "pool" in g and "readout_band" not in g:
        g["readout_stride"] = [readout_stride(lengths, g["pool"][0])]
    if alphas is not None:
        g["alpha"] = list(alphas)
    return g


#: Relative ridges (``x trace(K) / n``) of the default classifier protocol.
DEFAULT_ALPHA = [10.0 ** k for k in range(-6, 3)]

#: ``MEAN_NETWORK`` on series standardised channel by channel with the training set's
#: statistics (``normalize="dataset"``): one affine map for all series, which keeps the
#: level and scale of each series relative to the others and makes channels of
#: different units comparable; the network of the regression settings.
DATASET_NETWORK = {**MEAN_NETWORK, "normalize": ["dataset"]}

#: The candidate settings of the regression grid, by name (``DATASET_NETWORK`` read out
#: at every step with the band ``MEAN_BAND``, on block means of ``MEAN_POOL`` or
#: ``LEVEL_POOL`` steps, on amplitude spectra or on quantile functions; and the
#: last-step network of ``LAST_STEP_GRID`` on the standardised series), each sized as
#: the classifier's by :func:`default_regression_grid`.
REGRESSION_SETTINGS = {"last": {**LAST_STEP_GRID, "normalize": ["dataset"]},
                       **_readouts(DATASET_NETWORK)}

#: Settings of the default regression protocol, by name in ``REGRESSION_SETTINGS``,
#: chosen by nested cross-validation on the training sets of the 6-set extrinsic
#: regression panel (``benchmarks/studies/tune_regression_grid.py``, 5 outer folds x 5 shuffles):
#: the geometric mean over the sets of the outer-test RMSE over the mean predictor's is
#: 0.854 with the first three settings and 2 averaged members, the same as the spectrum and
#: the band alone (0.854), and 0.844 for the three at the classifier's sizes, which cost
#: 1.7x the Gram time (outside the time budget); a single setting reaches 0.855
#: (spectrum) to 0.939.
#:
#: With them, the interval statistics (``"intervals"``, added in 0.4), gated
#: (``DEFAULT_REGRESSION_GATED``): on 10 resamples of each of the 6 sets at the
#: official sizes (``benchmarks/studies/tune_regression_resamples.py``, MiniRocket
#: on the same splits) the geometric mean RMSE ratio to MiniRocket is 0.887 against
#: 0.913 for the three alone (by nested CV 0.855 against 0.872), the same on the
#: sets where the statistics do not help (half 0 of the panel 0.888 against 0.888)
#: and lower where they do (FloodModeling1 0.828 against 0.984); a fourth setting
#: without the gate costs 0.2-1.2% on the other five sets.
DEFAULT_REGRESSION_SETTINGS = ("spectrum", "band", "quantiles", "intervals")
#: Settings of ``DEFAULT_REGRESSION_SETTINGS`` that enter what the default regressor
#: refits only on clear leave-one-out evidence: the ``n_average`` best settings
#: replace the ``n_average`` best of the others only where the paired leave-one-out
#: squared errors of the two averages differ by more than ``GATE_STANDARD_ERRORS``
#: standard errors (the simpler model within the noise, as a rule of thumb).
DEFAULT_REGRESSION_GATED = ("intervals",)
#: Standard errors of the mean leave-one-out gain a gated setting must exceed.
GATE_STANDARD_ERRORS = 2.0
#: Sizes of the regression settings: frequencies of the spectral setting, levels of the
#: quantile setting, steps of the banded setting at most (series pooled to that length);
#: half the classifier's, at the same nested score (see ``DEFAULT_REGRESSION_SETTINGS``).
REGRESSION_SPECTRUM_BINS = 64
REGRESSION_QUANTILE_LEVELS = 32
REGRESSION_BAND_STEPS = 64

#: Kernel settings of the default regression protocol (``DEFAULT_REGRESSION_SETTINGS``).
DEFAULT_REGRESSION_GRID = [REGRESSION_SETTINGS[k] for k in DEFAULT_REGRESSION_SETTINGS]

#: Relative ridges of the default regression protocol: ``DEFAULT_ALPHA`` and ``inf``, the
#: mean of the training targets (the limit of an infinite ridge with an unpenalised
#: intercept), so that the search never picks a model whose leave-one-out error is
#: above the mean's.
DEFAULT_REGRESSION_ALPHA = DEFAULT_ALPHA + [math.inf]

#: Kernel settings whose best candidates the default regressor averages.
DEFAULT_REGRESSION_N_AVERAGE = 2


@fill_doc(lengths_alphas=_LENGTHS_ALPHAS)
def default_regression_grid(lengths, alphas=None, settings=None):
    """Return the default regression grid for training series of the given lengths.

    Parameters
    ----------
    {lengths_alphas}
    settings : sequence of str, default=None
        Names in ``REGRESSION_SETTINGS`` (``None``: ``DEFAULT_REGRESSION_SETTINGS``).

    Returns
    -------
    grid : list of dict
        The settings, sized as :func:`default_grid` sizes the classifier's but with
        at most ``REGRESSION_SPECTRUM_BINS`` frequencies, ``REGRESSION_QUANTILE_LEVELS``
        levels and ``REGRESSION_BAND_STEPS`` banded steps; the interval setting cut at
        most into as many parts as the longest series has steps.
    """
    names = DEFAULT_REGRESSION_SETTINGS if settings is None else settings
    unknown = [k for k in names if k not in REGRESSION_SETTINGS]
    if unknown:
        raise ValueError(f"unknown regression settings {unknown}; known: "
                         f"{sorted(REGRESSION_SETTINGS)}")
    return [_sized(REGRESSION_SETTINGS[k], lengths, alphas, bins=REGRESSION_SPECTRUM_BINS,
                   levels=REGRESSION_QUANTILE_LEVELS, band_steps=REGRESSION_BAND_STEPS)
            for k in names]


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
