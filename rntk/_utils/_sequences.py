"""Validation and conversion of the sequence inputs every kernel accepts.

Accepted layouts (all give the same sequences):

* 2-D array ``(n_samples, n_timesteps)``: univariate series;
* 3-D array ``(n_samples, n_timesteps, n_channels)``: multivariate, time-major
  (the tslearn / torch ``batch_first`` convention, *not* aeon's channel-major one);
* a list (or tuple) of arrays of shape ``(T_i,)`` or ``(T_i, n_channels)``.

Trailing NaN steps are padding (the UCR layout of variable-length data): a series
ends at its last step that holds a finite value. A NaN before that point, or a step
where only some channels are NaN, is an error.
"""

import numbers
import warnings

import numpy as np

__all__ = ["as_sequences", "check_same_channels", "flatten_padded", "pack_end_aligned",
           "unit_norm", "normalize_series", "NORMALIZATIONS", "pool_series"]


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


def _trim_series(s, name, i):
    """Strip trailing NaN steps of one (T, m) series and check the rest."""
    nan_steps = np.isnan(s)
    if np.isinf(s).any():
        raise ValueError(f"{name}: series {i} contains infinite values")
    step_nan = nan_steps.any(axis=1)
    if step_nan.any():
        if not (nan_steps.all(axis=1) == step_nan).all():
            raise ValueError(
                f"{name}: series {i} has a time step where only some channels are NaN"
            )
        valid = np.flatnonzero(~step_nan)
        if valid.size == 0:
            raise ValueError(f"{name}: series {i} is empty (all values are NaN)")
        end = valid[-1] + 1
        if step_nan[:end].any():
            raise ValueError(
                f"{name}: series {i} has NaN inside the series (NaN is only allowed as "
                "trailing padding)"
            )
        s = s[:end]
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


def as_sequences(X, name="X"):
    """Convert any accepted input layout into a list of ``(T_i, m)`` float64 arrays.

    Parameters
    ----------
    X : array-like or list of array-like
        The sequences, in one of the layouts described in the module docstring.
    name : str, default="X"
        Name used in error messages.

    Returns
    -------
    seqs : list of ndarray of shape (T_i, n_channels)
        C-contiguous float64 arrays, trailing NaN padding removed.

    Raises
    ------
    TypeError
        If the values are not real numbers.
    ValueError
        For an empty set, empty series, NaN inside a series, infinite values or
        series with different channel counts.
    """
    if isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1 and not any(
            isinstance(s, numbers.Number) for s in X):  # one series per item
        X = list(X)  # (rntk.as_object_array, the form GP estimators accept)
    if isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError(f"{name} is empty: at least one series is needed")
        raw = [series_2d(_as_float_array(s, f"{name}[{i}]"), f"{name}[{i}]")
               for i, s in enumerate(X)]
    else:
        if hasattr(X, "__array__") or isinstance(X, np.ndarray):
            a = _as_float_array(X, name)
        elif isinstance(X, (numbers.Number, str)) or X is None:
            raise TypeError(f"{name} must be an array or a list of arrays; got {type(X)!r}")
        else:
            a = _as_float_array(X, name)
        if a.ndim == 2:
            raw = list(a[:, :, None])
        elif a.ndim == 3:
            if a.shape[2] > a.shape[1]:
                warnings.warn(
                    f"{name} has shape {a.shape}: {a.shape[0]} series of {a.shape[1]} time "
                    f"step(s) with {a.shape[2]} channels each. rntk reads 3-D arrays as "
                    "(n_samples, n_timesteps, n_channels), time-major like tslearn and torch; "
                    "aeon and sktime use (n_samples, n_channels, n_timesteps). If yours is "
                    "aeon's layout, pass X.transpose(0, 2, 1).", UserWarning, stacklevel=3)
            raw = list(a)
        else:
            raise ValueError(
                f"{name} must be 2-D (n_samples, n_timesteps), 3-D (n_samples, "
                f"n_timesteps, n_channels) or a list of series; got an array with "
                f"{a.ndim} dimension(s). Reshape a single series with x[None, :]."
            )
        if len(raw) == 0:
            raise ValueError(f"{name} is empty: at least one series is needed")
    seqs = [_trim_series(s, name, i) for i, s in enumerate(raw)]
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


def pack_end_aligned(seqs, fill=0.0):
    """Stack sequences into one array, aligned at their end (padding in front).

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The sequences.
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


def unit_norm(seqs):
    """Scale each series to unit Euclidean norm (over all its steps and channels).

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The sequences.

    Returns
    -------
    scaled : list of ndarray of shape (T_i, m)
        Each series divided by its norm (a series of zeros is left as it is).
    """
    out = []
    for s in seqs:
        with np.errstate(over="ignore"):
            norm = np.linalg.norm(s)
        if not np.isfinite(norm):  # the squares overflow: scale by the peak first (exact)
            s = s / np.max(np.abs(s))
            norm = np.linalg.norm(s)
        out.append(s / norm if norm > 0 else s)
    return out


#: The per-series scalings of the estimators' ``normalize``.
NORMALIZATIONS = ("norm", "rms")


def normalize_series(seqs, how):
    """Scale each series as an estimator's ``normalize`` asks.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The sequences.
    how : bool or {"norm", "rms"}
        ``True`` or ``"norm"``: unit Euclidean norm over all steps and channels;
        ``"rms"``: unit root-mean-square per step (the unit-norm series times
        ``sqrt(T_i)``), so that each step is O(1) whatever the length; ``False``:
        unchanged.

    Returns
    -------
    scaled : list of ndarray of shape (T_i, m)
        The scaled series (``seqs`` itself for ``False``).
    """
    if how is False or how is None:
        return seqs
    out = unit_norm(seqs)
    if how == "rms":
        out = [s * np.sqrt(s.shape[0]) for s in out]
    return out


def pool_series(seqs, pool):
    """Average each series over blocks of ``pool`` consecutive steps, counted from its end.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The sequences.
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
    out = []
    for s in seqs:
        head = s.shape[0] % pool
        blocks = s[head:].reshape(-1, pool, s.shape[1]).mean(axis=1)
        out.append(np.concatenate([s[:head].mean(axis=0, keepdims=True), blocks])
                   if head else blocks)
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
