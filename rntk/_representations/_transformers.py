"""The series transforms as scikit-learn transformers, for pipelines.

Each transforms every series on its own (nothing is learnt from the training series but
their channel count), in any input layout of :func:`rntk.rntk_kernel`, and returns an
array when the output series have one length, a list of arrays otherwise.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
from sklearn import get_config
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils import DOC, fill_doc, unit_norm, validate_fit_series, validate_predict_data
from .._utils._sequences import TimeMajorArray, pool_series
from .._utils._validation import as_array_like
from ._algorithms import (
    INTERVAL_STATISTICS,
    SHAPE_DILATIONS,
    interval_counts,
    interval_series,
    peak_scaled,
    quantile_series,
    shape_quantile_series,
    spectrum_series,
)
from ._table import MISSING_CONSTRAINT, PREPARATION_CONSTRAINTS, check_preparation

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from typing import Self

    from .._utils._typing import Sequences

#: The attributes every transformer of this module has.
_ATTRIBUTES = """Attributes
----------
n_channels_in_ : int
    Channels per time step seen in fit."""

__all__ = ["AmplitudeSpectrum", "BlockMeans", "IntervalStatistics", "SeriesImputer",
           "SeriesScaler", "ShapeQuantiles", "ValueQuantiles"]


class _SeriesTransformer(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Base: check the series in ``fit``, transform each in ``transform``.

    Subclasses name the signals each input channel becomes (``_signals``: one name per
    signal, ``None`` for the channel itself), in the order of the output's channels
    (channel ``k m + c`` is signal ``k`` of input channel ``c``).
    """

    _parameter_constraints = {"missing": MISSING_CONSTRAINT}
    _signals = (None,)

    @fill_doc(**DOC)
    def fit(self, X: Sequences, y: None = None) -> Self:
        """Check the series (nothing is learnt but their channel count).

        {X_series}
        y : None
            Ignored.

        Returns
        -------
        self : object
            This transformer.
        """
        self._validate_params()
        validate_fit_series(self, as_array_like(X))
        return self

    @fill_doc(**DOC)
    def transform(self, X: Sequences) -> np.ndarray | list:
        """Transform every series.

        {X_series}

        Returns
        -------
        X_new : ndarray or list of ndarray
            Output series of one length as an array, ``(n_samples, n_steps)`` when the
            input was univariate (a 2-D array or a list of 1-D series) and the output
            has one channel, ``(n_samples, n_steps, n_channels)`` otherwise; output
            series of different lengths as a list of ``(T_i, n_channels)`` arrays.
        """
        X = as_array_like(X)
        out = self._transform(validate_predict_data(self, X))  # any number of steps
        container = get_config()["transform_output"]
        if container != "default":  # set_output refuses it; the global setting is warned of
            warnings.warn(
                f"sklearn.set_config(transform_output={container!r}) does not apply to "
                f"{type(self).__name__}: it returns series (arrays or lists), not tables",
                UserWarning, stacklevel=2)
        if len({len(s) for s in out}) > 1:
            return out
        arr = np.stack(out)
        univariate = (len(X.shape) == 2 if hasattr(X, "shape")  # arrays, DataFrames
                      else all(np.ndim(s) == 1 for s in X))
        if univariate and arr.shape[2] == 1:
            return arr[:, :, 0]
        # time-major by construction: estimators read it without the layout warning
        # that a 3-D array of more channels than steps gets
        return arr.view(TimeMajorArray)

    def get_feature_names_out(self, input_features=None):
        """Names of the output's channels (the last axis of its series).

        Parameters
        ----------
        input_features : array-like of str, default=None
            Names of the input's channels, one per channel seen in ``fit``
            (``None``: ``x0``, ``x1``, ...). The columns of a 2-D input are its time
            steps, not channels, and are not named here.

        Returns
        -------
        names : ndarray of str
            One name per output channel: the input channel's name, prefixed by the
            signal it became (``value_x0``, ``diff4_x0``, ...) where the transform
            makes several signals of each channel.
        """
        check_is_fitted(self, "n_channels_in_")
        m = self.n_channels_in_
        if input_features is None:
            input_features = [f"x{c}" for c in range(m)]
        input_features = [str(f) for f in input_features]
        if len(input_features) != m:
            raise ValueError(f"input_features has {len(input_features)} names, but "
                             f"{type(self).__name__} was fitted on {m} channel(s)")
        return np.asarray([f if k is None else f"{k}_{f}" for k in self._signals
                           for f in input_features], dtype=object)

    def set_output(self, *, transform=None):
        """Set the output container: only the default one (arrays or lists of series).

        Parameters
        ----------
        transform : {"default"} or None, default=None
            ``"default"`` or ``None`` (unchanged): arrays of series, as documented in
            :meth:`transform`. Tables (``"pandas"``, ``"polars"``) are refused: the
            output is series of time steps and channels, not one row of features per
            sample.

        Returns
        -------
        self : object
            This transformer.
        """
        if transform not in (None, "default"):
            raise ValueError(
                f"{type(self).__name__} returns series ((n_samples, n_timesteps) or "
                "(n_samples, n_timesteps, n_channels) arrays, or lists of series of "
                f"different lengths), not tables: set_output(transform={transform!r}) "
                "is not available; use 'default'")
        return self


def _is_constant(mean, std, n):
    """Channels whose standard deviation is only the rounding error of their mean.

    The bound of scikit-learn's ``StandardScaler`` (``var <= n eps var + (n mean
    eps)^2``): the computed standard deviation of a constant channel is a few ulp of
    its mean, not 0, and dividing by it would blow the rounding up to +-1.
    """
    eps = np.finfo(np.float64).eps
    var = std * std
    return var <= n * eps * var + (n * mean * eps) ** 2


@fill_doc(transformer_attributes=_ATTRIBUTES, **DOC)
class SeriesScaler(_SeriesTransformer):
    """Scale every series on its own: z-normalisation or unit norm.

    ``StandardScaler`` scales each column across series, which mixes the series of a
    time-series data set (and cannot take series of different lengths). This
    transformer scales each series by its own statistics, as tslearn's
    ``TimeSeriesScalerMeanVariance`` and aeon's normalisers do, for any of the input
    layouts of :func:`rntk.rntk_kernel` (variable lengths, channels).

    Parameters
    ----------
    method : {{"zscore", "unit"}}, default="zscore"
        ``"zscore"``: every channel of every series to mean 0 and standard deviation 1
        over its own steps (a constant channel becomes 0); ``"unit"``: every series to
        unit Euclidean norm over all its steps and channels (what the RNTK estimators
        do with ``normalize=True``).

    {missing}

    {transformer_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import SeriesScaler
    >>> X = [np.array([1.0, 2.0, 3.0]), np.array([10.0, 10.0, 20.0, 40.0])]
    >>> Z = SeriesScaler().fit_transform(X)
    >>> [round(float(z.mean()), 12) for z in Z], [round(float(z.std()), 12) for z in Z]
    ([0.0, 0.0], [1.0, 1.0])
    """

    _parameter_constraints = {**_SeriesTransformer._parameter_constraints,
                              "method": [StrOptions({"zscore", "unit"})]}

    def __init__(self, method="zscore", *, missing="raise"):
        self.method = method
        self.missing = missing

    def _transform(self, seqs):
        if self.method == "unit":
            return unit_norm(seqs)
        out = []
        for s in seqs:
            s = peak_scaled(s)[0]  # std ** 2 under/overflows far from 1
            mean, std = s.mean(axis=0), s.std(axis=0)
            out.append(np.where(_is_constant(mean, std, len(s)), 0.0,
                                (s - mean) / np.where(std > 0, std, 1.0)))
        return out


@fill_doc(transformer_attributes=_ATTRIBUTES, **DOC)
class SeriesImputer(_SeriesTransformer):
    """Fill missing values inside series by linear interpolation in time.

    A NaN between two values of a
    channel becomes the straight line between them, one before the first value (after
    the last) takes that value; trailing steps where every channel is NaN are padding
    and end the series. As the archive's adjusted datasets were made, and as the
    estimators do with ``missing="interpolate"``.

    {transformer_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import SeriesImputer
    >>> SeriesImputer().fit_transform(np.array([[1.0, np.nan, 3.0], [2.0, 2.0, np.nan]]))
    [array([[1.],
           [2.],
           [3.]]), array([[2.],
           [2.]])]
    """

    _parameter_constraints = {}
    missing = "interpolate"  # the series are read with their missing values filled

    def __init__(self):
        pass

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # its purpose; infinite values are refused
        return tags

    def _transform(self, seqs):
        return seqs


@fill_doc(transformer_attributes=_ATTRIBUTES, **DOC)
class AmplitudeSpectrum(_SeriesTransformer):
    """Amplitude spectra of series on a common grid of frequencies, as a transformer.

    Each channel of each series, its mean removed, is Fourier transformed
    (``numpy.fft.rfft``); its amplitude divided by the length, ``|rfft| / T``, is read at
    the frequencies ``numpy.fft.rfftfreq(T)`` and linearly interpolated onto ``n_bins``
    frequencies evenly spaced from 0 to 1/2 cycle per step, so that series of any length
    get the same bins. What the estimators read with ``spectrum=n_bins``: the network
    then runs over frequencies, lowest first, and its kernel compares the frequency
    content of series whatever their phase.

    Parameters
    ----------
    n_bins : int, default=128
        Frequencies of the grid, at least 2.

    {missing}

    {transformer_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import AmplitudeSpectrum
    >>> t = np.arange(16)
    >>> AmplitudeSpectrum(n_bins=5).fit_transform([np.cos(2 * np.pi * t / 4)]).round(3)
    array([[0. , 0. , 0.5, 0. , 0. ]])
    """

    _parameter_constraints = {**_SeriesTransformer._parameter_constraints,
                              "n_bins": PREPARATION_CONSTRAINTS["spectrum"][:1]}

    def __init__(self, n_bins=128, *, missing="raise"):
        self.n_bins = n_bins
        self.missing = missing

    _signals = ("spectrum",)

    def _transform(self, seqs):
        return spectrum_series(seqs, check_preparation("spectrum", self.n_bins, "n_bins"))


@fill_doc(transformer_attributes=_ATTRIBUTES, **DOC)
class ValueQuantiles(_SeriesTransformer):
    """Quantile functions of the values and steps of series, as a transformer.

    For each channel of each series, the quantiles of its values and of its steps (first
    differences) at the levels ``(k + 1/2) / n_levels``, ``k < n_levels``
    (:func:`numpy.quantile`, linear interpolation), each scaled to unit root-mean-square
    (a channel of zeros stays zeros; the steps of a series of one step are zeros). What
    the estimators read with ``quantiles=n_levels``: the kernel compares the
    distributions of the values and of the steps, whatever their order in time.

    Parameters
    ----------
    n_levels : int, default=64
        Levels of the grid, at least 2.

    {missing}

    {transformer_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import ValueQuantiles
    >>> ValueQuantiles(n_levels=4).fit_transform([np.array([0.0, 2.0, 1.0, 3.0])]).shape
    (1, 4, 2)
    """

    _parameter_constraints = {**_SeriesTransformer._parameter_constraints,
                              "n_levels": PREPARATION_CONSTRAINTS["quantiles"][:1]}
    _signals = ("value", "step")

    def __init__(self, n_levels=64, *, missing="raise"):
        self.n_levels = n_levels
        self.missing = missing

    def _transform(self, seqs):
        return quantile_series(seqs, check_preparation("quantiles", self.n_levels, "n_levels"))


@fill_doc(transformer_attributes=_ATTRIBUTES, **DOC)
class ShapeQuantiles(_SeriesTransformer):
    """Quantile functions of the values, slopes and curvatures of series, as a transformer.

    For each channel of each series, the quantiles at the levels ``(k + 1/2) / n_levels``
    (:func:`numpy.quantile`, linear interpolation) of its values, of its differences
    ``x_t - x_{{t-d}}`` and of its curvatures ``x_{{t+d}} - 2 x_t + x_{{t-d}}`` for each
    ``d`` of ``dilations``, each scaled to unit root-mean-square: how often each slope
    and each curvature occurs at each scale, wherever it occurs in time (the
    distribution of local shapes, as MiniRocket's proportions of positive values of
    dilated convolutions count it). What the estimators read with ``shapes=n_levels``
    (``dilations`` 1, 4 and 16) and ``octave_shapes=n_levels`` (1, 2, 4, 8 and 16).

    Parameters
    ----------
    n_levels : int, default=64
        Levels of the grid, at least 2.
    dilations : tuple of int, default=(1, 4, 16)
        Steps apart ``d`` of the differences and curvatures, each at least 1; the
        estimators' ``octave_shapes`` reads ``(1, 2, 4, 8, 16)``.

    {missing}

    {transformer_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import ShapeQuantiles
    >>> t = np.arange(40.0)
    >>> X = [np.abs(t - 20), np.abs(t - 5)]  # one V shape, at two places
    >>> q = ShapeQuantiles(n_levels=8).fit_transform(X)
    >>> q.shape  # the values, then the differences and curvatures at 1, 4 and 16 steps
    (2, 8, 7)
    >>> bool(np.allclose(q[0, :, 4], q[1, :, 4]))  # the same curvatures (one kink each)
    True
    >>> ShapeQuantiles(n_levels=8, dilations=(1, 2, 4, 8, 16)).fit_transform(X).shape
    (2, 8, 11)
    """

    _parameter_constraints = {**_SeriesTransformer._parameter_constraints,
                              "n_levels": PREPARATION_CONSTRAINTS["shapes"][:1],
                              "dilations": [tuple, list]}

    def __init__(self, n_levels=64, *, dilations=SHAPE_DILATIONS, missing="raise"):
        self.n_levels = n_levels
        self.dilations = dilations
        self.missing = missing

    def _checked_dilations(self):
        d = tuple(self.dilations)
        if not d or not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool)
                            and k >= 1 for k in d):
            raise ValueError(f"dilations must be a non-empty tuple of ints >= 1, got "
                             f"{self.dilations!r}")
        return tuple(int(k) for k in d)

    @property
    def _signals(self):
        d = self._checked_dilations()
        return ("value", *(f"diff{k}" for k in d), *(f"curv{k}" for k in d))

    def _transform(self, seqs):
        levels = check_preparation("shapes", self.n_levels, "n_levels")
        return shape_quantile_series(seqs, levels, self._checked_dilations())


@fill_doc(transformer_attributes=_ATTRIBUTES, **DOC)
class IntervalStatistics(_SeriesTransformer):
    """Summary statistics of series over intervals, as a transformer.

    Each series and its first differences are cut into 1, 2, 4, ... equal intervals
    (powers of two up to ``n_intervals``); on every interval, per channel, the mean,
    the standard deviation, the slope (the change along the least-squares line from the
    interval's first step to its last), the minimum, the maximum, the median and the
    interquartile range, in the series' units: where in a series its level, spread and
    trend are, the features that interval methods (TSF, DrCIF, FreshPRINCE) read. What
    the estimators read with ``intervals=n_intervals``: each series becomes one step
    whose channels are these statistics.

    Parameters
    ----------
    n_intervals : int, default=8
        The finest cut, at least 2 (8: the whole series, its halves, quarters and
        eighths, 15 intervals). An interval has at least one step.

    {missing}

    {transformer_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import IntervalStatistics
    >>> X = [np.r_[np.zeros(8), np.ones(8)]]  # a step up halfway
    >>> f = IntervalStatistics(n_intervals=2).fit_transform(X)
    >>> f.shape  # one step: 7 statistics of 3 intervals of the values, then of the steps
    (1, 1, 42)
    >>> names = IntervalStatistics(n_intervals=2).fit(X).get_feature_names_out()
    >>> [str(n) for n in names[7:9]], f[0, 0, 7:9].tolist()  # the first half's
    (['value_1of2_mean_x0', 'value_1of2_std_x0'], [0.0, 0.0])
    """

    _parameter_constraints = {**_SeriesTransformer._parameter_constraints,
                              "n_intervals": PREPARATION_CONSTRAINTS["intervals"][:1]}

    def __init__(self, n_intervals=8, *, missing="raise"):
        self.n_intervals = n_intervals
        self.missing = missing

    @property
    def _signals(self):
        counts = interval_counts(check_preparation("intervals", self.n_intervals,
                                                   "n_intervals"))
        return tuple(f"{signal}_{i + 1}of{k}_{stat}" for signal in ("value", "diff")
                     for k in counts for i in range(k) for stat in INTERVAL_STATISTICS)

    def _transform(self, seqs):
        return interval_series(seqs, check_preparation("intervals", self.n_intervals,
                                                       "n_intervals"))


@fill_doc(transformer_attributes=_ATTRIBUTES, **DOC)
class BlockMeans(_SeriesTransformer):
    """Average each series over blocks of ``pool`` steps, as a transformer.

    What the estimators do with ``pool=``: blocks counted from the end of each series (a
    first, shorter block averages the remaining steps), so that series ``pool`` times
    shorter keep their last step aligned.

    Parameters
    ----------
    pool : int, default=2
        Steps per block, at least 1.

    {missing}

    {transformer_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import BlockMeans
    >>> BlockMeans(pool=2).fit_transform(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]))
    array([[1. , 2.5, 4.5]])
    """

    _parameter_constraints = {**_SeriesTransformer._parameter_constraints,
                              "pool": PREPARATION_CONSTRAINTS["pool"]}

    def __init__(self, pool=2, *, missing="raise"):
        self.pool = pool
        self.missing = missing

    def _transform(self, seqs):
        return pool_series(seqs, check_preparation("pool", self.pool))
