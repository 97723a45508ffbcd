"""Every constructor argument of every public estimator is used, refused or warned about.

For each parameter of each public estimator (of ``rntk`` and ``rntk.model_selection``)
the table below gives a valid value other than the default and what a fit with it must
show: ``"changes"`` (what the fitted estimator computes differs from the fit of the
default), ``"refused"`` (a ``ValueError`` or ``TypeError`` that names the parameter),
``"warns"`` (a warning that names it), or a check of its own where the value cannot show
in the output (threads, verbosity, the handling of missing values, ...). A parameter
without a row fails the coverage test: a new one must say how it is used.
"""

import inspect
import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from sklearn.base import is_regressor

import rntk
import rntk.model_selection as ms
from rntk import (
    RNTK,
    AmplitudeSpectrum,
    BlockMeans,
    IntervalStatistics,
    RNTKClassifier,
    RNTKClassifierCV,
    RNTKNystroem,
    RNTKRegressor,
    RNTKRegressorCV,
    ScaledConvNTKRegressor,
    SeriesImputer,
    SeriesScaler,
    ShapeQuantiles,
    ValueQuantiles,
)

_rng = np.random.default_rng(0)
X = _rng.normal(size=(12, 16))
X[:6] += np.sin(np.arange(16))
X_NEW = _rng.normal(size=(5, 16))
Y_CLASS = np.r_[np.zeros(8, int), np.ones(4, int)]  # unbalanced: class_weight shows
Y_REAL = X[:, -1] + 0.3 * X[:, -2]
#: Series with a missing value inside one of them.
X_NAN = X.copy()
X_NAN[2, 5] = np.nan
#: The grids the searches' rows start from (the default grid for ``param_grid``).
GRID = {"sigma_b": [0.0, 0.5], "alpha": [1e-3, 1.0]}
PAPER = {"sigma_b": [0.0, 0.5], "C": [0.1, 10.0]}


def _members():
    return [RNTKClassifier(model="ridge", sigma_b=b).fit(X, Y_CLASS) for b in (0.0, 1.0)]


def _regressors():
    return [RNTKRegressor(model="ridge", sigma_b=b, alpha=0.1).fit(X, Y_REAL)
            for b in (0.0, 1.0)]


#: How each estimator is built for its rows (its required arguments, a small grid).
BASE = {
    RNTKClassifier: {}, RNTKRegressor: {}, ScaledConvNTKRegressor: {},
    RNTKClassifierCV: {"param_grid": GRID}, RNTKRegressorCV: {"param_grid": GRID},
    RNTKNystroem: {"n_components": 6, "random_state": 0}, RNTK: {},
    SeriesScaler: {}, SeriesImputer: {}, AmplitudeSpectrum: {}, ValueQuantiles: {},
    ShapeQuantiles: {}, IntervalStatistics: {}, BlockMeans: {},
    ms.AveragedClassifier: {"estimators": _members()[:1]},
    ms.AveragedRegressor: {"estimators": _regressors()[:1]},
    ms.KernelRidgeClassifier: {}, ms.KernelRidgeRegressor: {},
}


def _observe(est):
    """Fit ``est`` on the data of its kind; return what it computes on new series."""
    if isinstance(est, RNTK):
        K = est(X[:4])
        return [K, est.theta, est.bounds]
    if isinstance(est, (ms.KernelRidgeClassifier, ms.KernelRidgeRegressor)):
        K = rntk.rntk_kernel(X)
        reg = isinstance(est, ms.KernelRidgeRegressor)
        est.fit(K, Y_REAL if reg else Y_CLASS)
        Knew = rntk.rntk_kernel(X_NEW, X) * 3.0  # beyond the training range: clip shows
        return est.predict(Knew) if reg else est.decision_function(Knew)
    if isinstance(est, (ms.AveragedClassifier, ms.AveragedRegressor)):
        est.fit()
        if isinstance(est, ms.AveragedRegressor):
            return est.predict(X_NEW)
        return est.decision_function(X_NEW)
    if hasattr(est, "transform"):
        out = est.fit(X).transform(X_NEW)
        return np.asarray(out, dtype=float)
    if is_regressor(est):
        return est.fit(X, Y_REAL).predict(X_NEW)
    est.fit(X, Y_CLASS)
    return est.decision_function(X_NEW)


def _same(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=0)


def _make(cls, **params):
    return cls(**{**BASE[cls], **params})


# -- checks of their own ------------------------------------------------------------------
def _missing_is_read(cls, value):
    """``missing="interpolate"`` fits series with a NaN inside, which the default refuses."""
    reg = is_regressor(_make(cls))

    def fit(est):
        if hasattr(est, "transform") and not hasattr(est, "predict"):
            return est.fit(X_NAN).transform(X_NAN)
        return est.fit(X_NAN, Y_REAL if reg else Y_CLASS)

    with pytest.raises(ValueError, match="NaN|missing"):
        fit(_make(cls))
    fit(_make(cls, missing=value))


def _threads_are_read(cls, value):
    """``n_jobs``: the same result with other threads; a bad count is refused by name."""
    assert _same(_observe(_make(cls, n_jobs=value)), _observe(_make(cls)))
    with pytest.raises((ValueError, TypeError), match="n_jobs"):
        _observe(_make(cls, n_jobs=0))


def _device_is_read(cls, value, monkeypatch):
    """``device="cuda"`` goes to the GPU engine: its result, or its error without a GPU."""
    try:
        from rntk._kernels import _cuda
    except ImportError:  # the engine's module itself needs numba-cuda
        with pytest.raises(ImportError, match="(?i)cuda"):
            _observe(_make(cls, device=value))
        return
    called = []
    real = _cuda.rntk_kernel_cuda
    monkeypatch.setattr(_cuda, "rntk_kernel_cuda",
                        lambda *a, **k: called.append(1) or real(*a, **k))
    try:
        got = _observe(_make(cls, device=value))
    except (ImportError, RuntimeError) as exc:  # no numba-cuda, or no usable GPU
        assert called, "the CPU engine ran"
        assert "cuda" in str(exc).lower() or "gpu" in str(exc).lower(), exc
        return
    assert called  # the GPU engine (or numba's simulator of it) computed the Grams
    np.testing.assert_allclose(got, _observe(_make(cls)), rtol=1e-8, atol=1e-10)


def _precision_is_read(cls, value):
    """float32 arithmetic: the values move by rounding, not more."""
    a, b = _observe(_make(cls, precision=value)), _observe(_make(cls))
    assert not np.array_equal(a, b)
    np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-6)


def _verbose_prints(cls, value):
    out = io.StringIO()
    with redirect_stdout(out):
        _observe(_make(cls, verbose=value))
    assert "kernel settings" in out.getvalue()


def _refit_false_keeps_scores_only(cls, value):
    est = _make(cls, refit=value)
    est.fit(X, Y_REAL if cls is RNTKRegressorCV else Y_CLASS)
    assert hasattr(est, "cv_results_") and not hasattr(est, "best_estimator_")


def _error_score_is_read(cls, value):
    """A failing candidate (``alpha=0`` under the exact leave-one-out) raises, or scores."""
    y = Y_REAL if cls is RNTKRegressorCV else Y_CLASS
    grid = [{"alpha": [0.0], "sigma_b": [0.0]}, {"alpha": [1.0], "sigma_b": [0.5]}]
    with pytest.raises(ValueError, match="alpha"):
        _make(cls, param_grid=grid, error_score=value).fit(X, y)
    with pytest.warns(Warning, match="fits failed"):
        _make(cls, param_grid=grid, error_score=-1.0).fit(X, y)


def _n_average_averages(cls, value):
    est = _make(cls, n_average=value)
    est.fit(X, Y_REAL if cls is RNTKRegressorCV else Y_CLASS)
    assert len(est.averaged_params_) == value


def _large_n_runs_the_feature_path(cls, value):
    """Above ``large_n`` the refitted model computes in float64 (the features' arithmetic)."""
    est = _make(cls, large_n=value, param_grid={**GRID, "readout": ["mean"]})
    est.fit(X, Y_REAL if cls is RNTKRegressorCV else Y_CLASS)
    assert est.best_estimator_.precision == "float64"
    default = _make(cls, param_grid={**GRID, "readout": ["mean"]})
    default.fit(X, Y_REAL if cls is RNTKRegressorCV else Y_CLASS)
    assert default.best_estimator_.precision == "auto"


def _screen_scores_a_subsample(cls, value):
    est = _make(cls, screen=value)
    est.fit(X, Y_REAL if cls is RNTKRegressorCV else Y_CLASS)
    assert "screen_test_score" in est.cv_results_
    assert "screen_test_score" not in _make(cls).fit(
        X, Y_REAL if cls is RNTKRegressorCV else Y_CLASS).cv_results_


def _cv_gives_folds(cls, value):
    est = _make(cls, cv=value).fit(X, Y_REAL if cls is RNTKRegressorCV else Y_CLASS)
    assert est.n_splits_ == value


def _batch_size_is_read(cls, value):
    assert _same(_observe(_make(cls, batch_size=value)), _observe(_make(cls)))
    with pytest.raises((ValueError, TypeError), match="batch_size"):
        _observe(_make(cls, batch_size=0))


def _random_state_draws_landmarks(cls, value):
    a = _make(cls, random_state=value).fit(X).components_
    b = _make(cls).fit(X).components_
    assert not all(np.array_equal(u, v) for u, v in zip(a, b))


def _search_precision_is_read(cls, value):
    """On mean readouts ``"auto"`` computes in float32, ``"float64"`` does not."""
    grid = {**GRID, "readout": ["mean"]}
    a = _observe(_make(cls, param_grid=grid, precision=value))
    b = _observe(_make(cls, param_grid=grid))
    assert not np.array_equal(a, b)
    np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-6)


def _sequence_output_predicts_every_step(cls, value):
    Y = np.cumsum(X, axis=1) * 0.1
    pred = _make(cls, output=value).fit(X, Y).predict(X_NEW)
    assert pred.shape == X_NEW.shape
    assert _make(cls).fit(X, Y_REAL).predict(X_NEW).shape == (len(X_NEW),)


def _sigma_v_scales(cls, value):
    """``sigma_v`` scales the Gram: it shows where the SVC's box constraint binds."""
    a = _observe(_make(cls, sigma_v=value, C=0.01))
    b = _observe(_make(cls, C=0.01))
    assert not _same(a, b)


def _c_shows(cls, value):
    """``C`` shows where the box constraint binds at one of the two values."""
    assert not _same(_observe(_make(cls, C=value)), _observe(_make(cls, C=0.01)))


def _class_weight_shows(cls, value):
    assert not _same(_observe(_make(cls, C=0.01, class_weight=value)),
                     _observe(_make(cls, C=0.01)))


#: The kernel's parameters on the estimators that read them, with values that show.
KERNEL = {"n_layers": (2, "changes"), "sigma_w": (1.0, "changes"),
          "sigma_u": (0.5, "changes"), "sigma_b": (0.5, "changes"),
          "sigma_h": (0.5, "changes"), "sigma_v": (2.0, "changes"),
          "activation": ("erf", "changes"), "kind": ("nngp", "changes"),
          "direction": ("backward", "changes"), "diff": (True, "changes"),
          "readout": ("mean", "changes"), "readout_stride": (2, "warns"),
          "readout_band": (2, "warns")}  # not used with readout="last", the default
#: The series preparations of the estimators.
PREPARATION = {"spectrum": (4, "changes"), "quantiles": (4, "changes"),
               "shapes": (4, "changes"), "octave_shapes": (4, "changes"),
               "intervals": (4, "changes"),
               "pool": (2, "changes"), "missing": ("interpolate", _missing_is_read),
               "n_jobs": (1, _threads_are_read), "device": ("cuda", _device_is_read),
               "precision": ("float32", _precision_is_read)}
#: The searches' own parameters.
SEARCH = {"param_grid": ({"alpha": [1.0]}, "changes"),
          "estimator": (RNTKClassifier(n_layers=2), "changes"),
          "protocol": ("paper", "refused"),  # the ridges of GRID: no C for the SVC
          "cv": (3, _cv_gives_folds), "scoring": ("accuracy", "refused"),
          "n_average": (2, _n_average_averages),
          "large_n": (5, _large_n_runs_the_feature_path),
          "n_components": (4, "warns"), "screen": (4, _screen_scores_a_subsample),
          "precision": ("float64", _search_precision_is_read),
          "missing": ("interpolate", _missing_is_read),
          "refit": (False, _refit_false_keeps_scores_only), "n_jobs": (2, _threads_are_read),
          "verbose": (1, _verbose_prints), "error_score": ("raise", _error_score_is_read)}

CASES = {
    RNTKClassifier: {**KERNEL, **PREPARATION, "sigma_v": (2.0, _sigma_v_scales),
                     "model": ("ridge", "changes"), "C": (10.0, _c_shows),
                     "class_weight": ("balanced", _class_weight_shows),
                     "alpha": (0.1, "refused"),  # the SVC has no alpha
                     "normalize": (False, "changes")},
    RNTKRegressor: {**KERNEL, **PREPARATION, "model": ("ridge", "changes"),
                    "alpha": (0.1, "changes"), "normalize": ("rms", "changes")},
    RNTKClassifierCV: {**SEARCH},
    RNTKRegressorCV: {**SEARCH, "estimator": (RNTKRegressor(n_layers=2), "changes"),
                      "protocol": ("paper", "changes")},  # absolute ridges, 5 folds
    ScaledConvNTKRegressor: {"alpha": (0.1, "changes"), "nu_w": (0.6, "changes"),
                             "nu_f": (0.5, "changes"), "nu_c": (0.5, "changes"),
                             "rho": (np.linspace(1.0, 0.1, 16), "changes"),
                             "output": ("sequence", _sequence_output_predicts_every_step),
                             "missing": ("interpolate", _missing_is_read),
                             "n_jobs": (1, _threads_are_read)},
    RNTKNystroem: {**KERNEL, "n_components": (4, "changes"),
                   "landmarks": ("kmeans++", "changes"),
                   "random_state": (1, _random_state_draws_landmarks),
                   "normalize": (False, "changes"), "n_jobs": (1, _threads_are_read),
                   "batch_size": (3, _batch_size_is_read)},
    RNTK: {**KERNEL, **{f"{k}_bounds": ((0.1, 10.0), "changes") for k in ("sigma_w", "sigma_u")},
           # bounds on a scale at 0 (the default of these two) warn: theta is its log
           **{f"{k}_bounds": ((0.1, 10.0), "warns") for k in ("sigma_b", "sigma_h")},
           "sigma_v_bounds": ("fixed", "changes"), "n_jobs": (1, _threads_are_read)},
    SeriesScaler: {"method": ("unit", "changes"), "missing": ("interpolate", _missing_is_read)},
    SeriesImputer: {},
    AmplitudeSpectrum: {"n_bins": (8, "changes"), "missing": ("interpolate", _missing_is_read)},
    ValueQuantiles: {"n_levels": (8, "changes"), "missing": ("interpolate", _missing_is_read)},
    ShapeQuantiles: {"n_levels": (8, "changes"), "dilations": ((1, 2), "changes"),
                     "missing": ("interpolate", _missing_is_read)},
    IntervalStatistics: {"n_intervals": (2, "changes"),
                         "missing": ("interpolate", _missing_is_read)},
    BlockMeans: {"pool": (3, "changes"), "missing": ("interpolate", _missing_is_read)},
    ms.AveragedClassifier: {"estimators": (_members(), "changes")},
    ms.AveragedRegressor: {"estimators": (_regressors(), "changes")},
    ms.KernelRidgeClassifier: {"alpha": (10.0, "changes")},
    ms.KernelRidgeRegressor: {"alpha": (10.0, "changes"), "clip": (False, "changes")},
}


def _public_estimators():
    found = {}
    for module in (rntk, ms):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and hasattr(obj, "get_params"):
                found[obj] = module
    return found


def test_every_parameter_of_every_public_estimator_has_a_row():
    public = _public_estimators()
    assert set(public) == set(CASES), set(public) ^ set(CASES)
    for cls in public:
        params = [p for p in inspect.signature(cls).parameters if p != "self"]
        assert sorted(params) == sorted(CASES[cls]), (cls.__name__,
                                                      set(params) ^ set(CASES[cls]))


@pytest.mark.parametrize("cls, name", [(cls, name) for cls, rows in CASES.items()
                                       for name in rows],
                         ids=lambda v: v.__name__ if isinstance(v, type) else str(v))
def test_the_value_is_used_refused_or_warned_about(cls, name, monkeypatch):
    value, how = CASES[cls][name]
    default = inspect.signature(cls).parameters[name].default
    if default is not inspect.Parameter.empty:
        assert not _same_default(value, default), (cls.__name__, name)
    if how is _device_is_read:
        how(cls, value, monkeypatch)
    elif callable(how):
        how(cls, value)
    elif how == "changes":
        assert not _same(_observe(_make(cls, **{name: value})), _observe(_make(cls)))
    elif how == "refused":
        with pytest.raises((ValueError, TypeError), match=name):
            _observe(_make(cls, **{name: value}))
    else:
        assert how == "warns"
        with pytest.warns(UserWarning, match=name):
            _observe(_make(cls, **{name: value}))


def _same_default(value, default):
    try:
        return bool(np.all(np.asarray(value == default)))
    except (TypeError, ValueError):
        return False
