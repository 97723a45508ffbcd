"""Per-series transforms of sequences as functions.

Spectra, quantiles, missing values and aeon's layout; their transformers are in
:mod:`rntk._transformers`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._utils import as_sequences, fill_doc
from ._utils._preparations import check_preparation
from ._utils._sequences import (
    octave_shape_quantile_series,
    quantile_series,
    shape_quantile_series,
    spectrum_series,
)
from ._utils._validation import _as_list, _check_not_1d, _reject_strings, as_array_like

if TYPE_CHECKING:  # pragma: no cover - annotations only

    from ._utils._typing import Sequences

__all__ = ["amplitude_spectrum", "from_aeon", "interpolate_missing", "octave_shape_quantiles",
           "shape_quantiles", "value_quantiles"]


def _read_series(X, missing="raise"):
    """Return ``X`` as an array-like (its layout kept) and its checked sequences."""
    X = as_array_like(X)
    _check_not_1d(X)
    _reject_strings(X)
    return X, as_sequences(X, "X", missing=missing)


def _quantile_functions(name, series, X, n_levels):
    """Return ``series(seqs, n_levels)`` of the checked ``X``, stacked (preparation ``name``)."""
    n_levels = check_preparation(name, n_levels, "n_levels")
    _, seqs = _read_series(X)
    return np.stack(series(seqs, int(n_levels)))


def _same_layout(X, seqs):
    """Sequences back in the layout of the input ``X`` (NaN padding where it had it)."""
    def padded(shape, s):
        out = np.full(shape, np.nan)
        out[: len(s)] = s[:, 0] if len(shape) == 1 else s
        return out

    if isinstance(X, (list, tuple)):
        return [padded(np.shape(x), s) for x, s in zip(X, seqs)]
    return np.stack([padded(np.shape(X)[1:], s) for s in seqs])


def from_aeon(X) -> np.ndarray | list:
    """Convert series from aeon's (and sktime's) channel-major layout to rntk's.

    aeon stores a collection as ``(n_samples, n_channels, n_timesteps)``, or a list of
    ``(n_channels, T_i)`` arrays for unequal lengths; rntk reads 3-D arrays time-major,
    as ``(n_samples, n_timesteps, n_channels)`` (tslearn's and torch's ``batch_first``
    layout). A 3-D array's layout cannot be told from its shape, so rntk reads every
    one time-major (with a warning only when it has more channels than steps): convert
    aeon data with this function first.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_channels, n_timesteps), or list
        Series in aeon's layout: a 3-D array, or a list of 2-D ``(n_channels, T_i)``
        arrays. A 2-D array ``(n_samples, n_timesteps)`` or a list of 1-D series is
        univariate in both layouts and comes back as an array or list of the same
        series.

    Returns
    -------
    X_rntk : ndarray of shape (n_samples, n_timesteps, n_channels), or list
        The same values in rntk's layout: an array for array input, a list of
        ``(T_i, n_channels)`` arrays for a list.

    Raises
    ------
    ValueError
        For arrays of another dimension, or list items of mixed dimensions.

    See Also
    --------
    rntk.rntk_kernel : The input layouts every kernel and estimator accepts.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import from_aeon
    >>> X_aeon = np.zeros((20, 3, 40))  # 20 series, 3 channels, 40 steps
    >>> from_aeon(X_aeon).shape
    (20, 40, 3)
    >>> [x.shape for x in from_aeon([np.zeros((3, 40)), np.zeros((3, 25))])]
    [(40, 3), (25, 3)]
    """
    X = _as_list(X)
    _reject_strings(X)
    if isinstance(X, (list, tuple)):
        items = [_keep_mask(x) for x in X]
        dims = {x.ndim for x in items}
        if not dims <= {1, 2} or len(dims) > 1:
            raise ValueError(
                "from_aeon takes a list of 2-D (n_channels, T_i) arrays or of 1-D series; "
                f"got items of {sorted(dims)} dimension(s)")
        return [_transposed(x, (1, 0)) for x in items]
    X = _keep_mask(X)
    if X.ndim == 2:
        return X
    if X.ndim != 3:
        raise ValueError("from_aeon takes a 3-D (n_samples, n_channels, n_timesteps) array, "
                         f"a 2-D univariate one or a list; got {X.ndim} dimension(s)")
    return _transposed(X, (0, 2, 1))


def _keep_mask(x):
    """``np.asarray``, except that a masked array stays one (its mask marks padding)."""
    return np.ma.asarray(x) if np.ma.isMaskedArray(x) else np.asarray(x)


def _transposed(x, axes):
    """Return a C-contiguous transpose of ``x`` (of its mask too, for a masked array)."""
    if not np.ma.isMaskedArray(x):
        return np.ascontiguousarray(x.transpose(axes))
    return np.ma.MaskedArray(np.ascontiguousarray(x.data.transpose(axes)),
                             mask=np.ascontiguousarray(np.ma.getmaskarray(x).transpose(axes)))


def interpolate_missing(X: Sequences) -> np.ndarray | list:
    """Fill missing values inside series by linear interpolation in time.

    A NaN between two values of a channel becomes the straight line between them; a
    NaN before the first value of a channel takes that first value (after its last
    value, the last one). This is how the UCR archive made the adjusted versions of
    its datasets with missing values (e.g. ``DodgerLoopWeekend``). Trailing steps
    where every channel is NaN are padding (the end of a shorter series, the UCR
    layout of variable-length data) and stay NaN. The same filling is applied by the
    estimators and :class:`SeriesScaler` with ``missing="interpolate"`` and by
    ``rntk.datasets.load_ucr(..., missing="interpolate")``.

    Parameters
    ----------
    X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
        Series, in any layout of :func:`rntk.rntk_kernel`; NaN marks missing values.

    Returns
    -------
    X_filled : ndarray or list of ndarray
        The series in the same layout and shape, as float64, NaN only in trailing
        padding.

    Raises
    ------
    ValueError
        For a series (or a channel of it) without any value, or infinite values.

    See Also
    --------
    SeriesScaler : Per-series scaling, with the same ``missing`` option.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import interpolate_missing
    >>> X = np.array([[np.nan, 1.0, np.nan, 3.0, 4.0],
    ...               [2.0, np.nan, np.nan, 8.0, np.nan]])
    >>> interpolate_missing(X)
    array([[ 1.,  1.,  2.,  3.,  4.],
           [ 2.,  4.,  6.,  8., nan]])
    """
    X, seqs = _read_series(X, missing="interpolate")
    return _same_layout(X, seqs)


def _parameters(size, default, what):
    """Return the parameters of a transform of this module: the series, the grid's size."""
    return ("Parameters\n----------\n"
            "X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list\n"
            "    Series, in any layout of :func:`rntk.rntk_kernel` (no missing values).\n"
            f"{size} : int, default={default}\n    {what} of the grid, at least 2.")


#: The errors of the transforms of this module.
_TRANSFORM_DOC = {
    "raises_transform": (
        "Raises\n------\nTypeError\n    For a size that is not an int.\nValueError\n"
        "    For a size below 2, or series the estimators refuse (NaN inside, infinite\n"
        "    values, empty series, mismatched channels)."),
}


@fill_doc(parameters=_parameters("n_bins", 128, "Frequencies"), **_TRANSFORM_DOC)
def amplitude_spectrum(X: Sequences, n_bins: int = 128) -> np.ndarray:
    """Amplitude spectra of series on a common grid of frequencies.

    Each channel of each series, its mean removed, is Fourier transformed
    (``numpy.fft.rfft``); its amplitude divided by the length, ``|rfft| / T``, is
    read at the frequencies ``numpy.fft.rfftfreq(T)`` and linearly interpolated onto
    ``n_bins`` frequencies evenly spaced from 0 to 1/2 cycle per step, so that series
    of any length get the same bins. This is what the estimators read with
    ``spectrum=n_bins`` (one of the settings of the default classifier grid): the
    network then runs over frequencies, lowest first, and its kernel compares the
    frequency content of series whatever their phase.

    {parameters}

    Returns
    -------
    spectra : ndarray of shape (n_samples, n_bins) or (n_samples, n_bins, n_channels)
        The amplitudes, one row per series; 2-D input (or a list of 1-D series)
        gives 2-D output.

    {raises_transform}

    See Also
    --------
    interpolate_missing : Fill missing values first.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import amplitude_spectrum
    >>> t = np.arange(16)
    >>> X = [np.cos(2 * np.pi * t / 4), np.cos(2 * np.pi * t[:8] / 4)]
    >>> amplitude_spectrum(X, n_bins=5).round(3)  # a cosine: half its amplitude at 1/4
    array([[0. , 0. , 0.5, 0. , 0. ],
           [0. , 0. , 0.5, 0. , 0. ]])
    """
    n_bins = check_preparation("spectrum", n_bins, "n_bins")
    X, seqs = _read_series(X)
    out = np.stack(spectrum_series(seqs, int(n_bins)))
    flat = (np.ndim(X) == 2 if not isinstance(X, (list, tuple))
            else all(np.ndim(x) == 1 for x in X))
    return out[:, :, 0] if flat else out


@fill_doc(parameters=_parameters("n_levels", 64, "Levels"), **_TRANSFORM_DOC)
def value_quantiles(X: Sequences, n_levels: int = 64) -> np.ndarray:
    """Quantile functions of the values and of the steps of series, on common levels.

    For each channel of each series, the quantiles of its values and of its steps (first
    differences) at the levels ``(k + 1/2) / n_levels``, ``k < n_levels``
    (:func:`numpy.quantile`, linear interpolation between the order statistics), each
    scaled to unit root-mean-square. This is what the estimators read with
    ``quantiles=n_levels`` (one of the settings of the default classifier grid): the
    network then runs over the levels, lowest value first, and its kernel compares
    the distribution of the values (how long a series spends at which level, its
    offset relative to its amplitude) and of the steps (how often it jumps, and how
    far), whatever their order in time.

    {parameters}

    Returns
    -------
    quantiles : ndarray of shape (n_samples, n_levels, 2 * n_channels)
        Per series, the values' quantile functions (channels ``0 .. n_channels - 1``)
        then the steps' (the others; zeros for a series of one step). A channel of
        zeros stays zeros.

    {raises_transform}

    See Also
    --------
    amplitude_spectrum : The other representation of the default grid.
    interpolate_missing : Fill missing values first.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import value_quantiles
    >>> X = [np.array([0.0, 2.0, 1.0, 3.0]), np.array([3.0, 0.0, 2.0, 1.0])]
    >>> q = value_quantiles(X, n_levels=4)
    >>> bool(np.allclose(q[0, :, 0], q[1, :, 0]))  # the same values, in another order
    True
    >>> bool(np.allclose(q[0, :, 1], q[1, :, 1]))  # but other steps
    False
    """
    return _quantile_functions("quantiles", quantile_series, X, n_levels)


@fill_doc(parameters=_parameters("n_levels", 64, "Levels"), **_TRANSFORM_DOC)
def shape_quantiles(X: Sequences, n_levels: int = 64) -> np.ndarray:
    """Quantile functions of the values, slopes and curvatures of series at three scales.

    For each channel of each series, the quantiles at the levels ``(k + 1/2) / n_levels``
    (:func:`numpy.quantile`, linear interpolation) of seven signals: its values; its
    differences ``x_t - x_{{t-d}}`` and its curvatures ``x_{{t+d}} - 2 x_t + x_{{t-d}}``
    for ``d`` = 1, 4 and 16 steps (``SHAPE_DILATIONS``); each scaled to unit
    root-mean-square. This is what the estimators read with ``shapes=n_levels`` (one of
    the settings of the default classifier grid): the network runs over the levels,
    lowest value first, and its kernel compares how often each slope and each curvature
    occurs at each scale, wherever it occurs in time (the distribution of local shapes,
    as MiniRocket's proportions of positive values of dilated convolutions count it:
    each quantile function holds those proportions at every threshold).

    {parameters}

    Returns
    -------
    quantiles : ndarray of shape (n_samples, n_levels, 7 * n_channels)
        Per series, the quantile functions of the values (channels ``0 .. m - 1``,
        ``m = n_channels``), of the differences at 1, 4 and 16 steps (``m .. 4 m - 1``)
        and of the curvatures at 1, 4 and 16 steps (``4 m .. 7 m - 1``); a signal a
        series is too short for is zeros, as is a channel of zeros.

    {raises_transform}

    See Also
    --------
    value_quantiles : The values and first differences alone.
    octave_shape_quantiles : The same at every octave from 1 to 16 steps.
    amplitude_spectrum : The other representation of the default grid.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import shape_quantiles
    >>> t = np.arange(40.0)
    >>> X = [np.abs(t - 20), np.abs(t - 5)]  # one V shape, at two places
    >>> q = shape_quantiles(X, n_levels=8)
    >>> q.shape
    (2, 8, 7)
    >>> bool(np.allclose(q[0, :, 4], q[1, :, 4]))  # the same curvatures (one kink each)
    True
    """
    return _quantile_functions("shapes", shape_quantile_series, X, n_levels)


@fill_doc(parameters=_parameters("n_levels", 64, "Levels"), **_TRANSFORM_DOC)
def octave_shape_quantiles(X: Sequences, n_levels: int = 64) -> np.ndarray:
    """Quantile functions of the values, slopes and curvatures of series at five scales.

    :func:`shape_quantiles` with the differences and curvatures at every octave, ``d`` =
    1, 2, 4, 8 and 16 steps (``OCTAVE_DILATIONS``): eleven signals per channel, each
    scaled to unit root-mean-square. This is what the estimators read with
    ``octave_shapes=n_levels`` (a setting of the default classifier grid, on at most 32
    levels, beside ``shapes``).

    {parameters}

    Returns
    -------
    quantiles : ndarray of shape (n_samples, n_levels, 11 * n_channels)
        Per series, the quantile functions of the values (channels ``0 .. m - 1``,
        ``m = n_channels``), of the differences at 1, 2, 4, 8 and 16 steps
        (``m .. 6 m - 1``) and of the curvatures at the same steps (``6 m .. 11 m - 1``);
        a signal a series is too short for is zeros, as is a channel of zeros.

    {raises_transform}

    See Also
    --------
    shape_quantiles : Three scales, 1, 4 and 16 steps.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import octave_shape_quantiles
    >>> t = np.arange(40.0)
    >>> X = [np.abs(t - 20), np.abs(t - 5)]  # one V shape, at two places
    >>> q = octave_shape_quantiles(X, n_levels=8)
    >>> q.shape
    (2, 8, 11)
    >>> bool(np.allclose(q[0, :, 7], q[1, :, 7]))  # the same curvatures at 2 steps
    True
    """
    return _quantile_functions("octave_shapes", octave_shape_quantile_series, X, n_levels)
