"""Series functions: aeon's layout converted, missing values filled.

The representations (spectra, quantile functions) are in :mod:`rntk._representations`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._utils import as_sequences
from ._utils._validation import _as_list, _check_not_1d, _reject_strings, as_array_like

if TYPE_CHECKING:  # pragma: no cover - annotations only

    from ._utils._typing import Sequences

__all__ = ["from_aeon", "interpolate_missing"]


def _read_series(X, missing="raise"):
    """Return ``X`` as an array-like (its layout kept) and its checked sequences."""
    X = as_array_like(X)
    _check_not_1d(X)
    _reject_strings(X)
    return X, as_sequences(X, "X", missing=missing)


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
    >>> from rntk._preprocessing import interpolate_missing
    >>> X = np.array([[np.nan, 1.0, np.nan, 3.0, 4.0],
    ...               [2.0, np.nan, np.nan, 8.0, np.nan]])
    >>> interpolate_missing(X)
    array([[ 1.,  1.,  2.,  3.,  4.],
           [ 2.,  4.,  6.,  8., nan]])
    """
    X, seqs = _read_series(X, missing="interpolate")
    return _same_layout(X, seqs)
