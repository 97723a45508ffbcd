"""Validation and conversion of the sequence inputs every kernel accepts.

Accepted layouts (all give the same sequences):

* 2-D array ``(n_samples, n_timesteps)``: univariate series;
* 3-D array ``(n_samples, n_timesteps, n_channels)``: multivariate, time-major
  (the tslearn / torch ``batch_first`` convention, *not* aeon's channel-major one,
  which :func:`rntk.from_aeon` converts);
* a list (or tuple) of arrays of shape ``(T_i,)`` or ``(T_i, n_channels)``.

Trailing NaN steps are padding (the UCR layout of variable-length data): a series
ends at its last step that holds a finite value. A NaN before that point, or a step
where only some channels are NaN, is a missing value: an error, unless the caller
asks for ``missing="interpolate"`` (:func:`interpolate_steps`).
"""

import numbers
import warnings

import numpy as np

from ._docs import fill_doc

__all__ = ["LOAD_MISSING", "MISSING", "as_sequences", "check_missing", "channel_statistics",
           "check_same_channels",
           "interpolate_steps", "standardize_channels",
           "flatten_padded", "pack_end_aligned",
           "unit_norm", "normalize_series", "NORMALIZATIONS", "log_scales", "signed_log",
           "pool_series", "TimeMajorArray"]


class TimeMajorArray(np.ndarray):
    """A 3-D array of series known to be time-major, ``(n_samples, n_timesteps, n_channels)``.

    The output of rntk's own transforms (quantile functions of many signals have more
    channels than levels): read without the warning about aeon's channel-major layout.
    A plain ``ndarray`` in every other respect.
    """


def _as_float_array(a, name):
    if isinstance(a, np.ma.MaskedArray):  # masked entries are missing: NaN (padding)
        a = np.ma.filled(np.ma.asarray(a, dtype=np.float64), np.nan)
    arr = np.asarray(a)
    if arr.dtype == object:
        if any(isinstance(v, (str, bytes)) for v in arr.ravel()):
            raise TypeError(f"{name} must hold numbers; got strings")
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must hold numbers; got an object array that cannot be read as float"
            ) from None
    if arr.dtype.kind == "b":
        return arr.astype(np.float64)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


#: The first entry of the docstrings below.
_SEQS = """Parameters
----------
seqs : list of ndarray of shape (T_i, m)
    The sequences."""

#: The ways to treat missing values inside a series (the estimators' ``missing``).
MISSING = ("raise", "interpolate")
#: The loaders' ``missing``: the estimators' ways, or the NaN kept for an estimator.
LOAD_MISSING = ("raise", "keep", "interpolate")


def check_missing(missing, choices=MISSING):
    """Validate a ``missing`` option against ``choices``; return it.

    ``choices`` is :data:`MISSING` (the estimators') or :data:`LOAD_MISSING` (the
    loaders').
    """
    if not isinstance(missing, str) or missing not in choices:
        raise ValueError(f"missing must be one of {', '.join(map(repr, choices))}; "
                         f"got {missing!r}")
    return missing


def interpolate_steps(s):
    """Fill the NaN of one series by linear interpolation in time, edge values at the ends.

    Each channel on its own (``numpy.interp`` over the step index): a NaN between two
    values becomes the straight line between them, a NaN before the first value (after
    the last) that value. This is how the UCR archive's adjusted versions of its
    datasets with missing values were made.

    Parameters
    ----------
    s : ndarray of shape (T,) or (T, n_channels)
        One series; every channel needs at least one finite value.

    Returns
    -------
    filled : ndarray of the same shape
        A float64 copy without NaN.

    Examples
    --------
    >>> import numpy as np
    >>> interpolate_steps(np.array([np.nan, 1.0, np.nan, np.nan, 4.0, np.nan]))
    array([1., 1., 2., 3., 4., 4.])
    """
    s = np.array(s, dtype=np.float64)
    flat = s[:, None] if s.ndim == 1 else s
    steps = np.arange(flat.shape[0], dtype=np.float64)
    for c in range(flat.shape[1]):
        nan = np.isnan(flat[:, c])
        if nan.all():
            raise ValueError(f"channel {c} has no value to interpolate from (all NaN)")
        if nan.any():
            flat[nan, c] = np.interp(steps[nan], steps[~nan], flat[~nan, c])
    return s


def _describe_steps(steps):
    shown = ", ".join(str(int(t)) for t in steps[:8])
    return shown + (f", ... ({len(steps)} steps)" if len(steps) > 8 else "")


def _trim_series(s, name, i, missing="raise"):
    """Strip trailing NaN steps of one (T, m) series, check the rest, fill NaN if asked."""
    if s.shape[0] and np.isfinite(s).all():  # most series: nothing to strip or to say
        return np.ascontiguousarray(s)
    nan_steps = np.isnan(s)
    if np.isinf(s).any():
        raise ValueError(f"{name}: series {i} contains infinite values")
    step_nan = nan_steps.any(axis=1)
    if step_nan.any():
        valid = np.flatnonzero(~nan_steps.all(axis=1))  # steps holding some value
        if valid.size == 0:
            raise ValueError(f"{name}: series {i} is empty (all values are NaN)")
        end = valid[-1] + 1
        inside = np.flatnonzero(step_nan[:end])
        if inside.size and missing != "interpolate":
            partial = nan_steps.all(axis=1) != step_nan
            what = ("has a time step where only some channels are NaN" if partial.any()
                    else "has NaN inside the series")
            raise ValueError(
                f"{name}: series {i} {what}, at step(s) {_describe_steps(inside)} of "
                f"{end} (NaN is only allowed as trailing padding, where a series ends). "
                "These are missing values: impute them, e.g. by linear interpolation with "
                "missing='interpolate' in the estimators and SeriesScaler, or "
                "rntk.SeriesImputer(X)")
        s = s[:end]
        if inside.size:
            try:
                s = interpolate_steps(s)
            except ValueError as exc:
                raise ValueError(f"{name}: series {i}: {exc}") from None
    if s.shape[0] == 0:
        raise ValueError(f"{name}: series {i} is empty")
    return np.ascontiguousarray(s)


def series_2d(a, name):
    """Return one series as a ``(T, m)`` array (or tensor): ``(T,)`` gets one channel.

    Parameters
    ----------
    a : ndarray or tensor
        The series.
    name : str
        Its name, for error messages.

    Returns
    -------
    a : ndarray or tensor of shape (T, m)
        The series with a channel axis.
    """
    if a.ndim == 0:
        raise ValueError(
            f"{name} is a scalar; each series must be an array of shape (T,) or (T, n_channels)"
        )
    if a.ndim == 1:
        return a[:, None]
    if a.ndim != 2:
        raise ValueError(
            f"{name} has {a.ndim} dimensions; each series must have shape (T,) or "
            "(T, n_channels)"
        )
    return a


def as_sequences(X, name="X", missing="raise"):
    """Convert any accepted input layout into a list of ``(T_i, m)`` float64 arrays.

    Parameters
    ----------
    X : array-like or list of array-like
        The sequences, in one of the layouts described in the module docstring.
    name : str, default="X"
        Name used in error messages.
    missing : {"raise", "interpolate"}, default="raise"
        NaN inside a series (before its last finite step), or in some channels of a
        step: an error naming the series and steps, or filled by
        :func:`interpolate_steps`.

    Returns
    -------
    seqs : list of ndarray of shape (T_i, n_channels)
        C-contiguous float64 arrays, trailing NaN padding removed.

    Raises
    ------
    TypeError
        If the values are not real numbers.
    ValueError
        For an empty set, empty series, NaN inside a series (unless interpolated),
        infinite values or series with different channel counts.
    """
    if type(X).__name__ == "SeriesBlocks":
        raise TypeError(
            f"{name} is a rntk.distributed.SeriesBlocks (series on a Dask cluster): "
            "RNTKClassifierCV's fit and the predictions of the fitted search estimators "
            "take it; elsewhere give the series in memory")
    if isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1 and not any(
            isinstance(s, numbers.Number) for s in X):  # one series per item
        X = list(X)  # (rntk.as_object_array, the form GP estimators accept)
    if isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError(f"{name} is empty: at least one series is needed")
        raw = [series_2d(_as_float_array(s, f"{name}[{i}]"), f"{name}[{i}]")
               for i, s in enumerate(X)]
        finite = False  # checked series by series
    else:
        if hasattr(X, "__array__") or isinstance(X, np.ndarray):
            time_major = isinstance(X, TimeMajorArray)
            a = _as_float_array(X, name)
        elif isinstance(X, (numbers.Number, str)) or X is None:
            raise TypeError(f"{name} must be an array or a list of arrays; got {type(X)!r}")
        else:
            time_major = False
            a = _as_float_array(X, name)
        if a.ndim == 2:
            raw = list(a[:, :, None])
        elif a.ndim == 3:
            if a.shape[2] > a.shape[1] and not time_major:
                warnings.warn(
                    f"{name} has shape {a.shape}: {a.shape[0]} series of {a.shape[1]} time "
                    f"step(s) with {a.shape[2]} channels each. rntk reads 3-D arrays as "
                    "(n_samples, n_timesteps, n_channels), time-major like tslearn and torch; "
                    "aeon and sktime use (n_samples, n_channels, n_timesteps). If yours is "
                    "aeon's layout, pass rntk.from_aeon(X).", UserWarning, stacklevel=3)
            raw = list(a)
        else:
            raise ValueError(
                f"{name} must be 2-D (n_samples, n_timesteps), 3-D (n_samples, "
                f"n_timesteps, n_channels) or a list of series; got an array with "
                f"{a.ndim} dimension(s). Reshape a single series with x[None, :]."
            )
        if len(raw) == 0:
            raise ValueError(f"{name} is empty: at least one series is needed")
        # one array of finite values: nothing to strip or to say, series by series
        finite = bool(a.shape[1]) and bool(np.isfinite(a).all())
    check_missing(missing)
    if finite:
        seqs = [np.ascontiguousarray(s) for s in raw]
    else:
        seqs = [_trim_series(s, name, i, missing) for i, s in enumerate(raw)]
    check_same_channels(seqs, name=name)
    return seqs


def check_same_channels(seqs, other=None, name="X", other_name="Y"):
    """Check that every series (of one or two sets) has the same channel count.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        Sequences returned by :func:`as_sequences`.
    other : list of ndarray, optional
        A second set that must have the same channel count.
    name, other_name : str
        Names used in error messages.

    Returns
    -------
    n_channels : int
        The common channel count.
    """
    m = seqs[0].shape[1]
    for i, s in enumerate(seqs):
        if s.shape[1] != m:
            raise ValueError(
                f"{name}: series {i} has {s.shape[1]} channels but series 0 has {m}; all "
                "series must have the same number of channels"
            )
    if other is not None:
        m2 = other[0].shape[1]
        if m2 != m:
            raise ValueError(
                f"{name} has {m} channels but {other_name} has {m2}; they must match"
            )
    return m


@fill_doc(seqs=_SEQS)
def pack_end_aligned(seqs, fill=0.0):
    """Stack sequences into one array, aligned at their end (padding in front).

    {seqs}
    fill : float, default=0.0
        Value of the padding in front of shorter sequences.

    Returns
    -------
    data : ndarray of shape (T_max, n, m)
        Time-major stack: ``data[T_max - T_i:, i]`` is series ``i``.
    starts : ndarray of shape (n,), dtype int64
        First valid index of each series, ``T_max - T_i``.
    """
    lengths = np.array([s.shape[0] for s in seqs], dtype=np.int64)
    t_max = int(lengths.max())
    m = seqs[0].shape[1]
    data = np.full((t_max, len(seqs), m), fill, dtype=np.float64)
    for i, s in enumerate(seqs):
        data[t_max - s.shape[0]:, i] = s
    return data, t_max - lengths


# Norms below this are recomputed after scaling by the peak: their squares underflow
# (below about 1e-154 an entry's square is subnormal; 1e-140 leaves a margin).
_SMALL_NORM = 1e-140


@fill_doc(seqs=_SEQS)
def unit_norm(seqs):
    """Scale each series to unit Euclidean norm (over all its steps and channels).

    {seqs}

    Returns
    -------
    scaled : list of ndarray of shape (T_i, m)
        Each series divided by its norm (a series of zeros is left as it is).
    """
    out = []
    with np.errstate(over="ignore", under="ignore"):
        for s in seqs:
            flat = s.ravel(order="K")
            norm = np.sqrt(flat.dot(flat))  # numpy.linalg.norm's, without its checks
            if not np.isfinite(norm) or norm < _SMALL_NORM:
                # the squares overflow or underflow: scale by the peak first
                peak = np.max(np.abs(s), initial=0.0)
                if peak > 0:
                    s = s / peak
                    norm = np.linalg.norm(s)
            out.append(s / norm if norm > 0 else s)
    return out


#: The scalings of the estimators' ``normalize``: per series (``"norm"``, ``"rms"``), or
#: one map per channel for the whole data set (``"dataset"``: affine; ``"log"``: a signed
#: logarithm).
NORMALIZATIONS = ("norm", "rms", "dataset", "log")


def channel_statistics(seqs):
    """Mean and standard deviation of each channel over every step of every series.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The (training) sequences.

    Returns
    -------
    mean : ndarray of shape (m,)
        Per channel, the mean of its values.
    scale : ndarray of shape (m,)
        Per channel, their standard deviation (1 for a constant channel, so that it
        becomes zeros), computed after scaling by the channel's peak so that values
        near the float limits neither under- nor overflow.
    """
    values = np.concatenate(seqs)
    peak = np.max(np.abs(values), axis=0)
    peak = np.where(peak > 0, peak, 1.0)
    scaled = values / peak
    mean = scaled.mean(axis=0)
    std = np.sqrt(np.mean((scaled - mean) ** 2, axis=0))
    constant = std <= 8 * np.finfo(np.float64).eps * np.abs(mean)
    return mean * peak, np.where(constant | (std == 0), 1.0, std * peak)


@fill_doc(seqs=_SEQS)
def log_scales(seqs):
    """Per channel, the median of ``|x|`` over every step of every (training) series.

    {seqs}

    Returns
    -------
    scale : ndarray of shape (m,)
        The scale ``s`` of :func:`signed_log` for each channel: the median of its
        absolute values; the mean where the median is 0 (a channel mostly of zeros),
        1 for a channel of zeros.
    """
    values = np.abs(np.concatenate(seqs))
    median = np.median(values, axis=0)
    mean = values.mean(axis=0)
    return np.where(median > 0, median, np.where(mean > 0, mean, 1.0))


@fill_doc(seqs=_SEQS)
def signed_log(seqs, scale):
    """Replace every value ``x`` by ``sign(x) log(1 + |x| / s)``, ``s`` its channel's scale.

    {seqs}
    scale : ndarray of shape (m,)
        Per channel, from :func:`log_scales` of the training sequences.

    Returns
    -------
    mapped : list of ndarray of shape (T_i, m)
        The series on a signed logarithmic scale: near ``x / s`` for ``|x|`` below
        ``s``, logarithmic above (counts and powers spread over decades no longer let
        a few large values dominate every inner product); the same map for every
        series, so that their levels relative to one another are kept in order.
    """
    return [np.sign(x) * np.log1p(np.abs(x) / scale) for x in seqs]


@fill_doc(seqs=_SEQS)
def standardize_channels(seqs, mean, scale):
    """Subtract ``mean`` from and divide by ``scale`` each channel of every series.

    {seqs}
    mean, scale : ndarray of shape (m,)
        Per channel, from :func:`channel_statistics` of the training sequences.

    Returns
    -------
    standardized : list of ndarray of shape (T_i, m)
        ``(s - mean) / scale`` per series: one affine map for the whole data set, so
        that the level and the scale of each series relative to the others are kept.
    """
    return [(s - mean) / scale for s in seqs]


@fill_doc(seqs=_SEQS)
def normalize_series(seqs, how):
    """Scale each series as an estimator's ``normalize`` asks.

    {seqs}
    how : bool or {"norm", "rms", "dataset", "log"}
        ``True`` or ``"norm"``: unit Euclidean norm over all steps and channels;
        ``"rms"``: unit root-mean-square per step (the unit-norm series times
        ``sqrt(T_i)``), so that each step is O(1) whatever the length; ``False``,
        ``"dataset"`` and ``"log"`` (maps fitted on the training set, applied by the
        estimators with :func:`standardize_channels` and :func:`signed_log`):
        unchanged.

    Returns
    -------
    scaled : list of ndarray of shape (T_i, m)
        The scaled series (``seqs`` itself for ``False``).
    """
    if how is False or how is None or how in ("dataset", "log"):
        return seqs
    out = unit_norm(seqs)
    if how == "rms":
        out = [s * np.sqrt(s.shape[0]) for s in out]
    return out


@fill_doc(seqs=_SEQS)
def pool_series(seqs, pool):
    """Average each series over blocks of ``pool`` consecutive steps, counted from its end.

    {seqs}
    pool : int
        Steps per block; a first, shorter block keeps the ``T_i mod pool`` earliest
        steps (averaged over them).

    Returns
    -------
    pooled : list of ndarray of shape (ceil(T_i / pool), m)
        The block means (``seqs`` itself for ``pool == 1``).
    """
    if pool == 1:
        return seqs

    def block_means(a):
        n, t, m = a.shape
        head = t % pool
        pooled = a[:, head:].reshape(n, -1, pool, m).mean(axis=2)
        if head:
            pooled = np.concatenate([a[:, :head].mean(axis=1, keepdims=True), pooled], axis=1)
        return pooled

    return _per_shape(seqs, block_means)


def _per_shape(seqs, transform):
    """Apply ``transform`` to the series of each shape stacked as one array.

    ``transform`` maps an array of shape ``(n, T, m)`` to one of ``n`` C-contiguous rows;
    row ``k`` of the series of each shape takes their ``k``-th series' place.
    """
    out = [None] * len(seqs)
    by_shape = {}
    for i, s in enumerate(seqs):
        by_shape.setdefault(s.shape, []).append(i)
    for index in by_shape.values():
        rows = transform(np.stack([seqs[i] for i in index]))
        for k, i in enumerate(index):
            out[i] = rows[k]
    return out


def flatten_padded(seqs, length):
    """Flatten sequences into rows of one matrix, zero-padded at their end.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The sequences, ``T_i <= length``.
    length : int
        Number of time steps of every row.

    Returns
    -------
    A : ndarray of shape (n, length * m)
        Row ``i`` holds series ``i`` step after step, then zeros.
    """
    m = seqs[0].shape[1]
    A = np.zeros((len(seqs), length * m))
    for i, s in enumerate(seqs):
        A[i, : s.size] = s.ravel()
    return A
