"""The representations' algorithms: spectra, quantile functions and interval statistics.

Each takes the sequences (a list of ``(T_i, m)`` float arrays, as
:func:`rntk._utils.as_sequences` gives them) and returns new sequences that the network
reads in place of the series: the amplitude spectrum from the lowest frequency to the
highest, quantile functions from the lowest value to the highest, or one step of
summary statistics over intervals. The table
(:mod:`._table`) names them, the functions (:mod:`._functions`) and transformers
(:mod:`._transformers`) are their public faces.
"""

import numpy as np

from .._utils._docs import fill_doc
from .._utils._sequences import _SEQS, _per_shape

__all__ = ["INTERVAL_STATISTICS", "OCTAVE_DILATIONS", "SHAPE_DILATIONS",
           "interval_counts", "interval_series", "peak_scaled", "quantile_series",
           "shape_quantile_series", "spectrum_series"]


@fill_doc(seqs=_SEQS)
def spectrum_series(seqs, n_bins):
    """Replace each series by its amplitude spectrum on ``n_bins`` common frequencies.

    {seqs}
    n_bins : int
        Frequencies of the common grid, evenly spaced from 0 to 1/2 cycle per step.

    Returns
    -------
    spectra : list of ndarray of shape (n_bins, m)
        Per channel, ``|rfft(x - mean(x))| / T_i`` at the frequencies
        ``rfftfreq(T_i)``, linearly interpolated onto the grid (the value of the
        highest frequency beyond it), so that series of any length give the same bins.
    """
    grid = np.linspace(0.0, 0.5, n_bins)
    out = []
    for s in seqs:
        T = s.shape[0]
        s, peak = peak_scaled(s)  # a mean of values near the float maximum overflows
        amp = np.abs(np.fft.rfft(s - s.mean(axis=0), axis=0)) / T * peak
        f = np.fft.rfftfreq(T)
        out.append(np.stack([np.interp(grid, f, a) for a in amp.T], axis=1))
    return out


# Peaks outside [1 / _SAFE_PEAK, _SAFE_PEAK] are scaled to 1 before statistics whose
# squares, sums or differences would under- or overflow (1e150 squared is 1e300, and a
# sum of a million of those is still finite).
_SAFE_PEAK = 1e150


def peak_scaled(a, axis=0):
    """Divide ``a`` by its peak along ``axis`` where that peak is out of the safe range.

    Parameters
    ----------
    a : ndarray
        Values (finite).
    axis : int, default=0
        Axis of the peak (the time axis of a series: one peak per channel).

    Returns
    -------
    scaled : ndarray
        ``a / peak`` where the peak ``max |a|`` is above ``1e150`` or below ``1e-150``
        (and not 0), ``a`` unchanged elsewhere (so that ordinary series keep their exact
        values and results).
    peak : ndarray
        The factor applied (1 where unchanged), with ``axis`` kept of size 1.
    """
    peak = np.max(np.abs(a), axis=axis, keepdims=True, initial=0.0)
    factor = np.where((peak > _SAFE_PEAK) | ((peak < 1 / _SAFE_PEAK) & (peak > 0)), peak, 1.0)
    if np.all(factor == 1.0):
        return a, factor
    return a / factor, factor


def _unit_rms_columns(a):
    """Scale ``a`` to unit root-mean-square along its first axis (zeros stay zeros)."""
    peak = np.max(np.abs(a), axis=0)  # first, so that the squares cannot under/overflow
    a = a / np.where(peak > 0, peak, 1.0)
    rms = np.sqrt(np.mean(a * a, axis=0))
    return a / np.where(rms > 0, rms, 1.0)


@fill_doc(seqs=_SEQS)
def quantile_series(seqs, n_levels):
    """Replace each series by the quantile functions of its values and of its steps.

    {seqs}
    n_levels : int
        Levels of the common grid, ``(k + 1/2) / n_levels`` for ``k < n_levels``.

    Returns
    -------
    quantiles : list of ndarray of shape (n_levels, 2 m)
        Per channel, the quantiles of the values (``numpy.quantile``, linear
        interpolation) then, in channels ``m`` to ``2 m``, those of the first
        differences (zeros for a series of one step); each channel scaled to unit
        root-mean-square (a constant channel of zeros stays zeros).
    """
    return _signal_quantiles(seqs, n_levels, ((0, 1), (1, 1)))


#: Steps apart of the differences and curvatures of :func:`shape_quantile_series`.
SHAPE_DILATIONS = (1, 4, 16)
#: Steps apart of the differences and curvatures of :func:`shape_quantile_series` for the
#: ``octave_shapes`` representation: every octave from 1 to 16 steps.
OCTAVE_DILATIONS = (1, 2, 4, 8, 16)


def _dilated(a, d, order):
    """First (``order`` 1) or second (2) differences of ``a`` ``(n, T, m)`` at dilation ``d``.

    ``x_t - x_{t-d}``, or ``x_{t+d} - 2 x_t + x_{t-d}``, over the steps where they exist;
    a single zero per series where the series is too short for one.
    """
    n, t, m = a.shape
    if t <= order * d:
        return np.zeros((n, 1, m))
    if order == 1:
        return a[:, d:] - a[:, :-d]
    return (a[:, 2 * d:] - a[:, d:-d]) - (a[:, d:-d] - a[:, :-2 * d])


@fill_doc(seqs=_SEQS)
def shape_quantile_series(seqs, n_levels, dilations=SHAPE_DILATIONS):
    """Replace each series by the quantile functions of its values and local shapes.

    {seqs}
    n_levels : int
        Levels of the common grid, ``(k + 1/2) / n_levels`` for ``k < n_levels``.
    dilations : tuple of int, default=SHAPE_DILATIONS
        Steps apart ``d`` of the differences and curvatures.

    Returns
    -------
    quantiles : list of ndarray of shape (n_levels, (1 + 2 len(dilations)) m)
        Per channel, the quantiles (``numpy.quantile``, linear interpolation) of the
        values; then, for each ``d``, of the differences ``x_t - x_{{t-d}}``; then, for
        each ``d``, of the curvatures ``x_{{t+d}} - 2 x_t + x_{{t-d}}`` (zeros for a series
        too short for one); each channel scaled to unit root-mean-square (a channel
        of zeros stays zeros). Channel ``k m + c`` is the ``k``-th signal of channel
        ``c``.
    """
    signals = ((0, 1), *((1, d) for d in dilations), *((2, d) for d in dilations))
    return _signal_quantiles(seqs, n_levels, signals)


def _signal_quantiles(seqs, n_levels, signals):
    """Return the unit-RMS quantile functions of ``signals`` of each series.

    ``signals``: ``(order, d)`` pairs, the values (order 0) or the differences of order 1
    or 2 at dilation ``d`` (:func:`_dilated`); channel ``k m + c`` of the result is signal
    ``k`` of channel ``c``, each on the levels ``(j + 1/2) / n_levels``.
    """
    levels = (np.arange(n_levels) + 0.5) / n_levels

    def quantiles(a, lengths=None):
        if lengths is None:
            a = peak_scaled(a, axis=1)[0]  # differences of values near the float maximum
        n, _, m = a.shape
        out = np.empty((n, n_levels, len(signals) * m))
        for k, (order, d) in enumerate(signals):
            if order == 0:  # one signal at a time
                z, count = a, lengths
            elif lengths is None:
                z, count = _dilated(a, d, order), None
            else:  # NaN past each series' own differences; one zero where it has none
                z = _dilated(a, d, order)
                count = np.maximum(lengths - order * d, 1)
                z[lengths <= order * d, 0] = 0.0
            q = _unit_rms_columns(_linear_quantiles(z, levels, count))
            out[:, :, k * m:(k + 1) * m] = q.transpose(1, 0, 2)
        return out

    lengths = np.array([s.shape[0] for s in seqs])
    if len(set(lengths.tolist())) > 1:  # several lengths: one NaN-padded stack
        padded = np.full((len(seqs), int(lengths.max()), seqs[0].shape[1]), np.nan)
        for i, s in enumerate(seqs):
            padded[i, :len(s)] = s
        if np.all(peak_scaled(np.nan_to_num(padded), axis=1)[1] == 1.0):
            out = quantiles(padded, lengths)
            return [out[i] for i in range(len(seqs))]
    return _per_shape(seqs, quantiles)


def _linear_quantiles(z, levels, count=None):
    """``numpy.quantile(z, levels, axis=1)`` (linear interpolation), from one sort.

    numpy's virtual indices, neighbours and interpolation (``_lerp``), on the array
    sorted once along its steps instead of partitioned at twice as many points as there
    are levels (several times faster for 64 levels); the same values to a few units in
    the last place (numpy 2.3 rounds its interpolation in another order).
    ``count``: per row of ``z``, the number of its first steps that are values (the
    rest is NaN padding, sorted after them); None: every step.
    """
    s = np.sort(z, axis=1)
    t = np.full(len(z), z.shape[1]) if count is None else count
    virtual = t[:, None] * levels + (1 + levels * (1 - 1 - 1)) - 1  # numpy's, alpha = beta = 1
    prev = np.floor(virtual)
    gamma = virtual - prev
    last = t[:, None] - 1
    lo = np.where(virtual >= last, last, np.clip(prev, 0, last).astype(np.intp))
    hi = np.clip(prev + 1, 0, last).astype(np.intp)
    a = np.moveaxis(np.take_along_axis(s, lo[:, :, None], axis=1), 1, 0)
    b = np.moveaxis(np.take_along_axis(s, hi[:, :, None], axis=1), 1, 0)
    gamma = gamma.T[:, :, None]
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


#: The statistics of :func:`interval_series`, in the order of its channels.
INTERVAL_STATISTICS = ("mean", "std", "slope", "min", "max", "median", "iqr")


def interval_counts(n_intervals):
    """Return the numbers of equal intervals :func:`interval_series` cuts a series into.

    The powers of two up to ``n_intervals``: ``(1, 2, 4, 8)`` for 8 (or for 9 to 15).
    """
    return tuple(2 ** k for k in range(int(n_intervals).bit_length()))


def _interval_statistics(z):
    """Return the :data:`INTERVAL_STATISTICS` of ``z`` ``(n, L, m)`` along its steps.

    ``slope`` is the least-squares slope times ``L - 1``: the change along the fitted
    line from the first step to the last (0 for one step), in the series' units.
    """
    length = z.shape[1]
    t = np.arange(length) - (length - 1) / 2
    tt = float(t @ t)
    slope = np.einsum("t,ntm->nm", t, z) / tt * (length - 1) if tt > 0 \
        else np.zeros(z.shape[::2])
    q = _linear_quantiles(z, np.array([0.25, 0.5, 0.75]))
    return np.stack([z.mean(axis=1), z.std(axis=1), slope, z.min(axis=1), z.max(axis=1),
                     q[1], q[2] - q[0]], axis=1)


@fill_doc(seqs=_SEQS)
def interval_series(seqs, n_intervals):
    """Replace each series by one step of statistics over intervals of it.

    {seqs}
    n_intervals : int
        The finest cut: each series and its first differences are cut into 1, 2, 4,
        ... equal intervals, powers of two up to ``n_intervals``
        (:func:`interval_counts`).

    Returns
    -------
    statistics : list of ndarray of shape (1, 2 * 7 * n_cuts * m)
        Per series one step whose channels are the :data:`INTERVAL_STATISTICS` (mean,
        standard deviation, slope as the change along the least-squares line, minimum,
        maximum, median, interquartile range) of every interval, of the values then of
        the first differences, each interval in the series' units: channel
        ``((s * n_cuts_total + j) * 7 + k) * m + c`` is statistic ``k`` of interval
        ``j`` (the whole series first, then the halves, ...) of signal ``s`` of channel
        ``c``. An interval has at least one step (a series shorter than the cut
        repeats steps); the differences of a series of one step are zeros.
    """
    counts = interval_counts(n_intervals)

    def statistics(a):
        a, peak = peak_scaled(a, axis=1)  # squares of values near the float maximum
        blocks = []
        for z in (a, _dilated(a, 1, 1)):  # the values, the first differences
            steps = z.shape[1]
            for k in counts:
                edges = np.floor(np.linspace(0, steps, k + 1)).astype(int)
                for lo, hi in zip(edges[:-1], edges[1:]):
                    lo = min(lo, steps - 1)
                    blocks.append(_interval_statistics(z[:, lo:max(hi, lo + 1)]))
        out = np.concatenate(blocks, axis=1) * peak  # (n, 2 * 7 * cuts, m)
        return np.ascontiguousarray(out.reshape(len(a), 1, -1))

    return _per_shape(seqs, statistics)
