"""The series preparations of the estimators, stated once: the counterpart of ``RNTK_PARAMS``.

A *preparation* is an estimator parameter that changes the series the kernel reads
(``normalize``, ``spectrum``, ``quantiles``, ``pool``), not the kernel. Each row of
:data:`PREPARATIONS` gives its name, default, scikit-learn constraint, docstring entry,
exclusion group (preparations of one group replace the series by different
representations: at most one of them is set), what it learns from the training series
(``fit``) and how it transforms series at each stage of the preparation. From the table
come the estimators' constraints and documentation, their ``_prepare`` (a loop over the
stages and the rows), the parameters a search treats as changing the Gram, and the
validation of the public transforms.

A new representation is a row here and its algorithm (in :mod:`._algorithms`): the
estimators, the searches and the grids then take it as a parameter that changes the Gram.
"""

import numbers
from functools import partial
from typing import Callable, NamedTuple

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._utils._sequences import (
    MISSING,
    NORMALIZATIONS,
    channel_statistics,
    log_scales,
    normalize_series,
    pool_series,
    signed_log,
    standardize_channels,
)
from ._algorithms import (
    OCTAVE_DILATIONS,
    interval_series,
    quantile_series,
    shape_quantile_series,
    spectrum_series,
)

__all__ = ["MISSING_CONSTRAINT", "PREPARATIONS", "PREPARATION_CONSTRAINTS",
           "PREPARATION_DEFAULTS", "PREPARATION_NAMES", "REPRESENTATIONS", "STAGES",
           "Preparation",
           "check_preparation", "fit_preparations", "preparation_doc", "prepare_series"]

#: The stages of the preparation, in order: the data set's input map, the representation
#: that replaces each series, the per-series scale, the block means.
STAGES = ("input", "representation", "scale", "pool")

#: The constraint of every ``missing`` parameter of the estimators and transformers.
MISSING_CONSTRAINT = [StrOptions(set(MISSING))]


class Preparation(NamedTuple):
    """One series preparation of the estimators (one row of :data:`PREPARATIONS`)."""

    name: str
    default: object
    constraint: list
    doc: str  # numpydoc entry; ``{default}`` stands for the estimator's default
    steps: dict  # {stage: step(seqs, value, state) -> seqs}, run unless the value is off
    group: str = None  # at most one preparation of a group is set
    fit: Callable = None  # fit(seqs, value) -> {attribute: value} learnt from training
    fitted: tuple = ()  # the attributes ``fit`` may set

    def off(self, value):
        """Whether ``value`` leaves the series unchanged (the preparation is not set)."""
        if value is None or (isinstance(value, (bool, np.bool_)) and not value):
            return True
        return self.name == "pool" and value == 1


def _dataset_map(seqs, value, state):
    if value == "log":
        return signed_log(seqs, state["log_scale_"])
    if value != "dataset":
        return seqs
    return standardize_channels(seqs, state["channel_mean_"], state["channel_scale_"])


def _per_series_scale(seqs, value, state):
    return seqs if value in ("dataset", "log") else normalize_series(seqs, value)


def _fit_dataset_map(seqs, value):
    if value == "log":
        return {"log_scale_": log_scales(seqs)}
    if value != "dataset":
        return {}
    mean, scale = channel_statistics(seqs)
    return {"channel_mean_": mean, "channel_scale_": scale}


def _representation(name, transform, what):
    """Return the row of a representation: an int size >= 2, the series replaced."""
    return Preparation(
        name, None, [Interval(numbers.Integral, 2, None, closed="left"), None],
        f"{name} : int, default=None\n    Before the per-series scaling, {what}\n"
        "    series of any length give the same number of steps.",
        {"representation": lambda seqs, value, state: transform(seqs, value)},
        group="representation")


PREPARATIONS = (
    Preparation(
        "normalize", True, ["boolean", StrOptions(set(NORMALIZATIONS))],
        'normalize : bool or {{"norm", "rms", "dataset", "log"}}, default={default}\n'
        "    Scale the series before the kernel. ``True`` or ``\"norm\"``: each to unit\n"
        "    Euclidean norm (over all its steps and channels), as the RNTK paper does;\n"
        "    ``\"rms\"``: each to unit root-mean-square per step (the unit-norm series\n"
        "    times ``sqrt(T_i)``: each step O(1) whatever the length); ``\"dataset\"``:\n"
        "    each channel standardised with the mean and standard deviation of its values\n"
        "    over the training series (one affine map for all series, stored as\n"
        "    ``channel_mean_`` and ``channel_scale_``, applied before ``spectrum`` or\n"
        "    ``quantiles``: the level and scale of each series relative to the others are\n"
        "    kept, and channels of different units weigh alike); ``\"log\"``: each value\n"
        "    ``x`` replaced by ``sign(x) log(1 + |x| / s)``, ``s`` the median of ``|x|``\n"
        "    over the training values of its channel (the mean where the median is 0;\n"
        "    stored as ``log_scale_``): one map for all series, near ``x / s`` below\n"
        "    ``s`` and logarithmic above, for counts and powers spread over decades (a\n"
        "    few large values no longer dominate every inner product); ``False``: as\n"
        "    given.",
        {"input": _dataset_map, "scale": _per_series_scale}, fit=_fit_dataset_map,
        fitted=("channel_mean_", "channel_scale_", "log_scale_")),
    _representation(
        "spectrum", spectrum_series,
        "replace each series by its amplitude spectrum\n"
        "    on ``spectrum`` frequencies evenly spaced from 0 to 1/2 cycle per step\n"
        "    (:class:`rntk.AmplitudeSpectrum`; ``None``: the series itself). The network\n"
        "    then reads the spectrum from the lowest frequency to the highest, so that\n"
        "    the kernel compares the frequency content of series whatever the phase;"),
    _representation(
        "quantiles", quantile_series,
        "replace each series by the quantile functions\n"
        "    of its values and of its steps (first differences), read at ``quantiles``\n"
        "    levels ``(k + 1/2) / quantiles``, each channel scaled to unit\n"
        "    root-mean-square (:class:`rntk.ValueQuantiles`; ``None``: the series itself;\n"
        "    not with ``spectrum``). The network then reads each distribution from its\n"
        "    lowest value to its highest, so that the kernel compares the distributions\n"
        "    of values and of steps whatever their order in time;"),
    _representation(
        "shapes", shape_quantile_series,
        "replace each series by the quantile functions\n"
        "    of its values, of its differences ``x_t - x_{{t-d}}`` and of its curvatures\n"
        "    ``x_{{t+d}} - 2 x_t + x_{{t-d}}`` for ``d`` = 1, 4 and 16 steps, read at\n"
        "    ``shapes`` levels ``(k + 1/2) / shapes``, each channel scaled to unit\n"
        "    root-mean-square (:class:`rntk.ShapeQuantiles`; ``None``: the series itself;\n"
        "    not with another representation). The kernel then compares the distributions\n"
        "    of local slopes and curvatures at three scales (of local shapes), wherever\n"
        "    they occur in time;"),
    _representation(
        "octave_shapes", partial(shape_quantile_series, dilations=OCTAVE_DILATIONS),
        "replace each series by the quantile functions\n"
        "    of ``shapes``, with the differences and curvatures at every octave, ``d`` =\n"
        "    1, 2, 4, 8 and 16 steps (:class:`rntk.ShapeQuantiles` with these\n"
        "    ``dilations``; ``None``: the series itself; not with another\n"
        "    representation): local shapes at five scales;"),
    _representation(
        "intervals", interval_series,
        "replace each series by one step of summary\n"
        "    statistics (mean, standard deviation, slope, minimum, maximum, median,\n"
        "    interquartile range) of the series and of its first differences over the\n"
        "    whole series, its halves, quarters, ... down to ``intervals`` equal parts\n"
        "    (powers of two; :class:`rntk.IntervalStatistics`; ``None``: the series\n"
        "    itself; not with another representation). The network reads the statistics\n"
        "    as one input vector, as interval-based methods (DrCIF, FreshPRINCE) read\n"
        "    theirs: where in the series a level, a spread or a trend is;"),
    Preparation(
        "pool", 1, [Interval(numbers.Integral, 1, None, closed="left")],
        "pool : int, default=1\n"
        "    After the scaling, average each series over blocks of ``pool`` steps\n"
        "    (counted from its end; a first, shorter block averages the remaining\n"
        "    steps): the network reads a series ``pool`` times shorter, at a coarser time\n"
        "    scale, and a mean-readout Gram costs about ``pool**2`` times less. Strides\n"
        "    and bands count pooled steps.",
        {"pool": lambda seqs, value, state: pool_series(seqs, value)}),
)

PREPARATION_NAMES = tuple(p.name for p in PREPARATIONS)
PREPARATION_DEFAULTS = {p.name: p.default for p in PREPARATIONS}
PREPARATION_CONSTRAINTS = {p.name: p.constraint for p in PREPARATIONS}
#: The preparations that replace each series by another representation (at most one).
REPRESENTATIONS = tuple(p.name for p in PREPARATIONS if p.group == "representation")
_BY_NAME = {p.name: p for p in PREPARATIONS}


def preparation_doc(**defaults):
    """Return the numpydoc entries of the preparations, with an estimator's defaults.

    Parameters
    ----------
    **defaults
        Defaults that differ from the table's, by name.

    Returns
    -------
    doc : str
        The entries, in the table's order.
    """
    return "\n".join(p.doc.format(default=repr(defaults.get(p.name, p.default)))
                     for p in PREPARATIONS)


def check_preparation(name, value, caller=None):
    """Validate the size of an integer preparation with the table's constraint.

    Parameters
    ----------
    name : str
        The preparation (``spectrum``, ``quantiles``, ``pool``).
    value : object
        Its value.
    caller : str, default=None
        The name the value goes by where it was given (``n_bins`` of
        :class:`rntk.AmplitudeSpectrum`, say); ``None``: ``name``.

    Returns
    -------
    value : int
        The value.

    Raises
    ------
    TypeError
        If the value is not an integer (a bool is not).
    ValueError
        If it is below the constraint's lower bound.
    """
    label = caller or name
    bound = next(c for c in _BY_NAME[name].constraint if isinstance(c, Interval))
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{label} must be an int, got {type(value).__name__}")
    if value < bound.left:
        raise ValueError(f"{label} must be at least {bound.left}, got {value}")
    return int(value)


def _check_values(values):
    """Refuse bad sizes (a bool is no size) and two set preparations of one group."""
    for name, value in values.items():
        if value is not None and any(isinstance(c, Interval) for c in _BY_NAME[name].constraint
                                     ) and "boolean" not in _BY_NAME[name].constraint:
            check_preparation(name, value)
    groups = {}
    for p in PREPARATIONS:
        if p.group is not None and not p.off(values.get(p.name)):
            groups.setdefault(p.group, []).append(p.name)
    for group, names in groups.items():
        if len(names) > 1:
            said = " and ".join(f"{n}={values[n]!r}" for n in names)
            raise ValueError(f"{' and '.join(names)} replace the series by two different "
                             f"representations: give one of them, got {said}")


def fit_preparations(seqs, values):
    """Return what the preparations ``values`` learn from the training series ``seqs``.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The training series, as given.
    values : dict
        Preparation values by name (a missing one is not applied: an estimator
        without that parameter).

    Returns
    -------
    state : dict
        Fitted attributes by name (``channel_mean_``, ``channel_scale_`` for
        ``normalize="dataset"``); empty when nothing is learnt.
    """
    state = {}
    for p in PREPARATIONS:
        value = values.get(p.name)
        if p.fit is not None and not p.off(value):
            state.update(p.fit(seqs, value))
    return state


def prepare_series(seqs, values, state):
    """Return the series as the kernel reads them, the preparations applied in order.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The series, as given.
    values : dict
        Preparation values by name (a missing one is not applied).
    state : dict
        What :func:`fit_preparations` learnt from the training series.

    Returns
    -------
    prepared : list of ndarray
        The series after every stage of :data:`STAGES`.
    """
    _check_values(values)
    for stage in STAGES:
        for p in PREPARATIONS:
            value = values.get(p.name)
            if stage in p.steps and not p.off(value):
                seqs = p.steps[stage](seqs, value, state)
    return seqs
