"""Per-series scaling of sequences: the standard preprocessing of time-series classification."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._utils import DOC, as_sequences, fill_doc, unit_norm
from ._utils._validation import _as_list, _check_not_1d, _is_2d_array, _reject_strings

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from typing import Self

    from ._utils._typing import Sequences

__all__ = ["SeriesScaler"]


def _as_array_like(X):
    """Return lists as lists, other array-likes as arrays; refuse bad layouts."""
    X = _as_list(X)
    if not isinstance(X, (list, tuple)) and not hasattr(X, "shape") and hasattr(X, "__array__"):
        X = np.asarray(X)
    _check_not_1d(X)
    _reject_strings(X)
    return X


@fill_doc(**DOC)
class SeriesScaler(TransformerMixin, BaseEstimator):
    """Scale every series on its own: z-normalisation or unit norm.

    ``StandardScaler`` scales each column across series, which mixes the series of a
    time-series data set (and cannot take series of different lengths). This
    transformer scales each series by its own statistics, as tslearn's
    ``TimeSeriesScalerMeanVariance`` and aeon's normalisers do, for any of the input
    layouts of :func:`rntk.rntk_kernel` (variable lengths, channels).

    Parameters
    ----------
    method : {"zscore", "unit"}, default="zscore"
        ``"zscore"``: every channel of every series to mean 0 and standard deviation 1
        over its own steps (a constant channel becomes 0); ``"unit"``: every series to
        unit Euclidean norm over all its steps and channels (what the RNTK estimators
        do with ``normalize=True``).

    Attributes
    ----------
    n_channels_in_ : int
        Channels per time step seen in fit.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import SeriesScaler
    >>> X = [np.array([1.0, 2.0, 3.0]), np.array([10.0, 10.0, 20.0, 40.0])]
    >>> Z = SeriesScaler().fit_transform(X)
    >>> [round(float(z.mean()), 12) for z in Z], [round(float(z.std()), 12) for z in Z]
    ([0.0, 0.0], [1.0, 1.0])
    """

    _parameter_constraints = {"method": [StrOptions({"zscore", "unit"})]}

    def __init__(self, method="zscore"):
        self.method = method

    def fit(self, X: Sequences, y: None = None) -> Self:
        """Check the series (the scaling has nothing to learn).

        {X_series}
        y : None
            Ignored.

        Returns
        -------
        self : SeriesScaler
            This transformer.
        """
        self._validate_params()
        X = _as_array_like(X)
        if _is_2d_array(X):
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        self.n_channels_in_ = as_sequences(X, "X")[0].shape[1]
        return self

    def transform(self, X: Sequences) -> np.ndarray | list:
        """Scale every series.

        {X_series}

        Returns
        -------
        X_scaled : ndarray or list of ndarray
            Series of equal lengths as an array, ``(n_samples, n_timesteps)`` for
            univariate input (a 2-D array or a list of 1-D series) and ``(n_samples,
            n_timesteps, n_channels)`` otherwise; series of different lengths as a list
            of ``(T_i, n_channels)`` arrays (trailing NaN padding removed).
        """
        check_is_fitted(self)
        X = _as_array_like(X)
        if _is_2d_array(X):  # names and values checked; the number of steps may differ
            X = validate_data(self, X, reset=False, ensure_2d=False, dtype=np.float64,
                              ensure_all_finite="allow-nan")
        seqs = as_sequences(X, "X")
        if seqs[0].shape[1] != self.n_channels_in_:
            raise ValueError(f"X has {seqs[0].shape[1]} channel(s) per time step, but "
                             f"SeriesScaler was fitted on {self.n_channels_in_}")
        if self.method == "unit":
            out = unit_norm(seqs)
        else:
            out = []
            for s in seqs:
                std = s.std(axis=0)
                out.append((s - s.mean(axis=0)) / np.where(std > 0, std, 1.0))
        if len({len(s) for s in out}) > 1:
            return out
        arr = np.stack(out)
        univariate = (X.ndim == 2 if isinstance(X, np.ndarray)
                      else all(np.ndim(s) == 1 for s in X))
        return arr[:, :, 0] if univariate else arr

