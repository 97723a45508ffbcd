"""Validation of hyperparameters and of the data handed to the estimators.

Shared by the kernels, the scikit-learn estimators and the finite-width models of
:mod:`rntk.nn`: one message for one mistake, wherever it is made.
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._docs import fill_doc
from ._sequences import as_sequences

__all__ = ["check_int", "check_n_jobs", "check_nonnegative", "validate_fit_data",
           "validate_fit_series", "validate_predict_data"]


def check_int(value, name, minimum=1):
    """Validate an integer setting: a true integer (not a bool) ``>= minimum``.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Its name, for the error message.
    minimum : int, default=1
        Smallest valid value.

    Returns
    -------
    value : int
        The value as a Python int.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return int(value)


def check_n_jobs(n_jobs):
    """Validate ``n_jobs``: None or a non-zero integer.

    Parameters
    ----------
    n_jobs : object
        The value to check.
    """
    if n_jobs is not None and (not isinstance(n_jobs, (int, np.integer))
                               or isinstance(n_jobs, bool) or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")


def check_nonnegative(value, name, n_layers=None):
    """Validate a variance hyperparameter: finite and >= 0, scalar or one per layer.

    Parameters
    ----------
    value : float or array-like of float
        The hyperparameter.
    name : str
        Its name, for error messages.
    n_layers : int, optional
        If given, broadcast a scalar to ``n_layers`` values and require a sequence
        to have exactly that length.

    Returns
    -------
    value : float or ndarray of shape (n_layers,)
        A float when ``n_layers`` is None, else a float64 array.
    """
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a non-negative number, got {value!r}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a non-negative number, got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative, got {value!r}")
    if n_layers is None:
        if arr.ndim != 0:
            raise ValueError(f"{name} must be a scalar, got {value!r}")
        return float(arr)
    if arr.ndim == 0:
        return np.full(n_layers, float(arr))
    if arr.shape != (n_layers,):
        raise ValueError(
            f"{name} must be a scalar or have one value per layer ({n_layers}); "
            f"got shape {arr.shape}"
        )
    return arr.copy()


def _is_2d_array(X):
    if isinstance(X, (list, tuple)):
        return False
    if sp.issparse(X):
        return True
    return hasattr(X, "shape") and len(X.shape) == 2


def _check_not_1d(X):
    if not isinstance(X, (list, tuple)) and hasattr(X, "shape") and len(X.shape) == 1:
        if not (isinstance(X, np.ndarray) and X.dtype == object):
            raise ValueError(
                "Expected a 2-D array (n_samples, n_timesteps), a 3-D array (n_samples, "
                "n_timesteps, n_channels) or a list of series; got a 1-D array. Reshape "
                "your data: X[None, :] holds a single series."
            )


def _reject_strings(X):
    """Refuse text before scikit-learn's validation would parse numeric strings."""
    if isinstance(X, (list, tuple)) or sp.issparse(X) or not hasattr(X, "__array__"):
        return
    arr = np.asarray(X)
    if arr.dtype.kind in ("U", "S") or (arr.dtype.kind == "O" and any(
            isinstance(v, (str, bytes)) for v in arr.ravel())):
        raise TypeError("X must hold numbers; got strings")


def _as_list(X):
    if isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1:
        return list(X)
    return X


_EST_X = """est : estimator
    The estimator being fitted (receives the ``*_in_`` attributes); its
    ``missing`` (``"raise"`` if it has none) decides NaN inside a series.
X : array-like or list of arrays
    Training series, in any layout of :func:`as_sequences`."""


def as_array_like(X):
    """Return lists as lists, other array-likes as arrays (an output keeps the layout)."""
    X = _as_list(X)
    if not isinstance(X, (list, tuple)) and not hasattr(X, "shape") and hasattr(X, "__array__"):
        X = np.asarray(X)
    return X


def _validate_data(est, *args, **kwargs):
    """scikit-learn's ``validate_data``, quiet about values near the float maximum.

    Its finiteness check sums ``X`` first; finite values near the maximum overflow that
    sum (a warning about valid input) before the exact check runs.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return validate_data(est, *args, **kwargs)


def _fit_sequences(est, X, validate_2d):
    """Check the layout of training series and return them as a list of 2-D arrays.

    A 2-D array goes through ``validate_2d(X)`` (scikit-learn's ``validate_data``, which
    sets ``n_features_in_``); for other layouts stale ``*_in_`` attributes are removed.
    """
    X = _as_list(X)
    _check_not_1d(X)
    _reject_strings(X)
    if _is_2d_array(X):
        X = validate_2d(X)
    else:
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(est, attr):
                delattr(est, attr)
    return as_sequences(X, "X", getattr(est, "missing", "raise"))


@fill_doc(est_X=_EST_X)
def validate_fit_data(est, X, y, regressor, check_targets=None):
    """Validate training series and targets, setting ``n_channels_in_`` on ``est``.

    For a 2-D array input, ``validate_data`` also sets ``n_features_in_`` (and
    ``feature_names_in_``); for other layouts, stale ones are removed.

    Parameters
    ----------
    {est_X}
    y : array-like
        Targets.
    regressor : bool
        Numeric (possibly 2-D) targets rather than class labels.
    check_targets : callable, optional
        ``check_targets(y, xs)`` replaces the built-in checks of ``y`` (an estimator
        with its own target layout); it gets ``y`` once its length matches.

    Returns
    -------
    xs : list of ndarray of shape (T_i, n_channels)
        The series.
    y : ndarray
        The validated targets.
    """
    if y is None:
        raise ValueError(
            f"This {type(est).__name__} estimator requires y to be passed, but the "
            "target y is None."
        )

    def validate_2d(X):
        nonlocal y
        if check_targets is not None:
            return _validate_data(est, X, dtype=np.float64, ensure_all_finite="allow-nan")
        X, y = _validate_data(est, X, y, dtype=np.float64, ensure_all_finite="allow-nan",
                              multi_output=regressor, y_numeric=regressor)
        return X

    xs = _fit_sequences(est, X, validate_2d)
    if check_targets is not None:
        check_consistent_length(xs, y)
        y = check_targets(y, xs)
    else:
        if regressor:
            y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
            if y.ndim not in (1, 2):
                raise ValueError(f"y must be 1-D or 2-D, got {y.ndim} dimensions")
        else:
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
        check_consistent_length(xs, y)
    est.n_channels_in_ = xs[0].shape[1]
    return xs, y


@fill_doc(est_X=_EST_X)
def validate_fit_series(est, X):
    """Validate training series without targets (a transformer's ``fit``).

    Sets ``n_channels_in_`` on ``est``; for a 2-D array input, ``validate_data`` also
    sets ``n_features_in_`` (and ``feature_names_in_``), for other layouts stale ones
    are removed.

    Parameters
    ----------
    {est_X}

    Returns
    -------
    xs : list of ndarray of shape (T_i, n_channels)
        The series.
    """
    xs = _fit_sequences(est, X, lambda X: _validate_data(
        est, X, dtype=np.float64, ensure_all_finite="allow-nan"))
    est.n_channels_in_ = xs[0].shape[1]
    return xs


def validate_predict_data(est, X):
    """Validate series given to a fitted estimator against what it saw in ``fit``.

    Parameters
    ----------
    est : estimator
        A fitted estimator with ``n_channels_in_``; its ``missing`` (``"raise"`` if
        it has none) decides NaN inside a series.
    X : array-like or list of arrays
        Series, in any layout of :func:`as_sequences`; a 2-D array may have another
        number of time steps than in fit (only column names and values are checked).

    Returns
    -------
    xs : list of ndarray of shape (T_i, n_channels)
        The series.
    """
    check_is_fitted(est)
    X = _as_list(X)
    _check_not_1d(X)
    _reject_strings(X)
    if _is_2d_array(X):
        X = _validate_data(est, X, reset=False, ensure_2d=False, dtype=np.float64,
                           ensure_all_finite="allow-nan")
    xs = as_sequences(X, "X", getattr(est, "missing", "raise"))
    m = xs[0].shape[1]
    if m != est.n_channels_in_:
        raise ValueError(
            f"X has {m} channel(s) per time step, but {type(est).__name__} was "
            f"fitted on series with {est.n_channels_in_} channel(s)"
        )
    return xs


def store_init_params(est, params):
    """Store every argument of an estimator's ``__init__`` as an attribute, unchanged.

    The scikit-learn contract: ``__init__`` only records its arguments (validation
    happens in ``fit``). Call it as ``store_init_params(self, locals())``.

    Parameters
    ----------
    est : object
        The estimator being constructed.
    params : dict
        ``locals()`` of its ``__init__``.
    """
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


class KernelOverflowError(ValueError, OverflowError):
    """A kernel's values overflow float64 for the given inputs and hyperparameters."""


def check_finite_kernel(K, kernel, settings):
    """Raise :class:`KernelOverflowError` if a computed kernel holds inf or NaN.

    Every kernel function calls this on its result: an overflow is reported with the
    settings that caused it, never returned as a silent inf/NaN Gram.

    Parameters
    ----------
    K : ndarray
        The computed kernel values.
    kernel : str
        The function's name, for the message.
    settings : dict
        The hyperparameters (and sizes) to name in the message.

    Returns
    -------
    K : ndarray
        The same array, when every value is finite.
    """
    finite = np.isfinite(K)
    if finite.all():
        return K
    shown = ", ".join(f"{k}={v!r}" for k, v in settings.items())
    raise KernelOverflowError(
        f"{kernel} overflows float64: {K.size - int(finite.sum())} of {K.size} values are "
        f"not finite ({shown}). The variances of the recursion grow with the number of "
        "steps when sigma_w is large (ReLU is stable up to sqrt(2), linear and erf up to "
        "1), and the inputs' squares overflow beyond about 1e154: use smaller scales, "
        "shorter series, or unit-norm series (normalize=True)")


def finite_square(value, name):
    """Square of a validated scale, refusing one whose square overflows float64.

    Parameters
    ----------
    value : float or ndarray
        A non-negative scale (validated by :func:`check_nonnegative`).
    name : str
        Its name, for the message.

    Returns
    -------
    square : float or ndarray
        ``value ** 2``.
    """
    with np.errstate(over="ignore"):
        sq = np.square(np.asarray(value, dtype=np.float64))
    if not np.all(np.isfinite(sq)):
        raise ValueError(f"{name}={value!r} is too large: its square overflows float64")
    return float(sq) if sq.ndim == 0 else sq


#: Files read by :func:`check_memory` (module constants, so tests can point them at fakes).
_MEMINFO = "/proc/meminfo"
_PROC_CGROUP = "/proc/self/cgroup"
_CGROUP_ROOT = "/sys/fs/cgroup"
#: cgroup v1 writes "no limit" as a huge number (2^63 rounded down to a page).
_NO_LIMIT = 2**60


def _read_int(path):
    """Read the integer of a one-line file; None if missing, unreadable or not a number."""
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stat_value(path, key):
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _cgroup_available(proc_cgroup, root):
    """Bytes the memory limits of this process's cgroups leave, None without a limit.

    cgroup v2 (``memory.max``, ``memory.current``) and v1 (``memory/memory.limit_in_bytes``,
    ``memory.usage_in_bytes``), for the process's own cgroup (``/proc/self/cgroup``) and
    every ancestor up to the mount point (a limit may be set on any of them; the
    tightest wins). The inactive page cache counts as available, as in ``MemAvailable``.
    """
    from pathlib import Path

    try:
        with open(proc_cgroup, encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    layouts = []  # (mount folder, path inside, limit file, usage file, stat key)
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            layouts.append((Path(root), path, "memory.max", "memory.current",
                            "inactive_file"))
        elif "memory" in controllers.split(","):
            layouts.append((Path(root) / "memory", path, "memory.limit_in_bytes",
                            "memory.usage_in_bytes", "total_inactive_file"))
    best = None
    for mount, path, limit_file, usage_file, key in layouts:
        folder = mount / path.strip("/")
        folders = [folder, *folder.parents]
        for d in folders[: len(folders) - len(mount.parents)]:  # up to the mount point
            limit = _read_int(d / limit_file)
            if limit is None or limit >= _NO_LIMIT:
                continue
            usage = _read_int(d / usage_file) or 0
            left = max(0, limit - usage + _stat_value(d / "memory.stat", key))
            best = left if best is None else min(best, left)
    return best


def _available_memory(meminfo=None, proc_cgroup=None, cgroup_root=None):
    """Bytes of memory available to this process, None when unknown.

    The smaller of what the system has (``MemAvailable + SwapFree`` of
    ``/proc/meminfo``) and what the memory limit of the process's cgroup (v1 or v2)
    leaves: inside a container the system's memory is not the process's.

    Parameters
    ----------
    meminfo, proc_cgroup, cgroup_root : str or path-like, optional
        The files read (defaults: ``/proc/meminfo``, ``/proc/self/cgroup``,
        ``/sys/fs/cgroup``).

    Returns
    -------
    available : int or None
        Bytes.
    """
    system = None
    try:
        with open(meminfo or _MEMINFO, encoding="ascii") as f:
            info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f}
        system = info["MemAvailable"] + info.get("SwapFree", 0)
    except (OSError, KeyError, ValueError, IndexError):
        try:
            import os

            system = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            pass
    limited = _cgroup_available(proc_cgroup or _PROC_CGROUP, cgroup_root or _CGROUP_ROOT)
    if limited is None:
        return system
    return limited if system is None else min(system, limited)


def check_memory(n_bytes, what):
    """Refuse up front an allocation larger than the memory available.

    Parameters
    ----------
    n_bytes : int
        Size of the allocation.
    what : str
        What it is, for the message.
    """
    available = _available_memory()
    if available is not None and n_bytes > available:
        raise MemoryError(
            f"{what} needs {n_bytes / 2**30:.1f} GiB but only {available / 2**30:.1f} GiB of "
            "memory is available: write it in blocks of rows into an array on disk "
            "(rntk_kernel(X, out=numpy.memmap(...), block_rows=...)), use low-rank "
            "features (rntk.RNTKNystroem), or use fewer series")
