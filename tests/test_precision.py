"""The float32 engine (``precision="float32"``): the same kernel to float32's rounding."""

import numpy as np
import pytest

import rntk
from rntk import RNTKClassifier, RNTKClassifierCV, rntk_kernel
from rntk._kernels._shared import SINGLE_RANGE
from tests.reference import family_gram
from tests.test_parity import CASES, _data, _id, _reference
from tests.wide_networks import assert_wide_networks_converge

#: float32's rounding (6e-8) carried through a few tens of recursion steps, relative to
#: the largest entry; float64 agrees with the reference to 1e-10 (``test_parity``)
TOL = 2e-5


def _close_single(got, want, what, tol=TOL):
    assert got.dtype == np.float64, what  # the Gram is float64 whatever the arithmetic
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)
    return np.abs(got - want).max() / scale


@pytest.mark.parametrize("k", range(len(CASES)), ids=[_id(c) for c in CASES])
def test_float32_engine_against_the_reference(k):
    params, m = CASES[k]
    X, Y = _data(m, k)
    KXX, KXY = _reference(k)
    K = rntk_kernel(X, precision="float32", **params)
    np.testing.assert_array_equal(K, K.T)  # symmetric by construction
    err = _close_single(K, KXX, "rntk_kernel(X, precision='float32')")
    _close_single(rntk_kernel(X, Y, precision="float32", **params), KXY,
                  "rntk_kernel(X, Y, precision='float32')")
    # float32 arithmetic indeed: not the float64 engine's 1e-10 (unless exact by chance:
    # the linear NNGP of one step, or a kernel of zeros)
    if err == 0.0:
        assert params["activation"] == "linear" or not np.any(KXX)


@pytest.mark.parametrize("params", [
    dict(readout="mean", readout_band=8, sigma_w=1.2, sigma_u=0.5, sigma_b=0.1),
    dict(readout="mean", readout_stride=3, sigma_w=1.2),
    dict(n_layers=2, direction="bidirectional", sigma_b=2.0),
    dict(activation="erf", n_layers=2, diff=True),
], ids=["band", "stride", "two-layers", "erf"])
def test_float32_on_long_series_of_several_channels(params):
    # the precision that matters: long recursions (up to 120 steps), 3 channels, rows of
    # every length against the float64 engine (itself the reference's to 1e-10)
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(int(t), 3)) for t in rng.integers(60, 121, size=12)]
    K64 = rntk_kernel(X, **params)
    _close_single(rntk_kernel(X, precision="float32", **params), K64, "long series", 1e-4)
    # a series and its copy: the copy's row is the series' own, up to float32's rounding
    Xc = X + [X[0].copy()]
    K = rntk_kernel(Xc, precision="float32", **params)
    np.testing.assert_allclose(K[-1], K[0], rtol=1e-5, atol=1e-5 * np.abs(K).max())


def test_float32_against_the_slow_mean_readout_reference():
    rng = np.random.default_rng(1)
    X = [rng.normal(size=t) for t in (30, 17, 25)]
    Y = [rng.normal(size=t) for t in (22, 30)]
    params = dict(readout="mean", readout_band=4, sigma_w=1.2, sigma_u=0.5, sigma_b=0.1)
    _close_single(rntk_kernel(X, Y, precision="float32", **params), family_gram(X, Y, **params),
                  "mean readout, band 4")


def test_values_beyond_the_single_range_are_computed_in_float64():
    rng = np.random.default_rng(2)
    for scale in (10 * SINGLE_RANGE[1], 1e-20):  # products overflow / variances vanish
        X = [scale * rng.normal(size=t) for t in (8, 5, 7)]
        K64 = rntk_kernel(X, sigma_b=0.0)
        # the same engine runs, on the same inputs: the same values, bitwise
        np.testing.assert_array_equal(rntk_kernel(X, sigma_b=0.0, precision="float32"), K64)
        assert np.all(np.isfinite(K64))
    # within the range, float32 it is
    X = [rng.normal(size=t) for t in (8, 5, 7)]
    assert not np.array_equal(rntk_kernel(X, precision="float32"), rntk_kernel(X))


def test_wide_networks_tend_to_the_float32_kernel():
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork

    rng = np.random.default_rng(3)
    X = [rng.standard_normal(T) for T in (3, 6, 4)]
    params = dict(sigma_h=0.3, sigma_b=0.2)
    K = rntk_kernel(X, direction="bidirectional", precision="float32", **params)
    assert_wide_networks_converge(
        torch, K, X, lambda width: RNTKNetwork(1, width, direction="bidirectional", **params))


@pytest.mark.parametrize("bad", ["float16", "single", 32, None])
def test_unknown_precision_is_refused(bad):
    X = [np.ones(3), np.ones(4)]
    with pytest.raises(ValueError, match="precision"):
        rntk_kernel(X, precision=bad)
    with pytest.raises(ValueError, match="precision"):
        RNTKClassifier(precision=bad).fit(X, [0, 1])


def test_cuda_device_keeps_float64_whatever_the_precision(monkeypatch):
    from rntk._kernels import _cuda

    seen = {}

    def fake(X, Y=None, **options):
        seen.update(options)
        return np.zeros((len(X), len(X if Y is None else Y)))

    monkeypatch.setattr(_cuda, "rntk_kernel_cuda", fake)
    rntk_kernel([np.ones(3)], device="cuda", precision="float32")
    assert "precision" not in seen  # the CUDA engine has one arithmetic: float64


def test_estimators_pass_the_precision_to_the_engine(monkeypatch):
    from rntk._estimators import _base

    calls = []
    real = _base.rntk_kernel

    def spy(*args, **kwargs):
        calls.append(kwargs["precision"])
        return real(*args, **kwargs)

    monkeypatch.setattr(_base, "rntk_kernel", spy)
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(20, 15)), np.repeat([0, 1], 10)
    X[y == 1, 5:9] += 2.0
    clf = RNTKClassifierCV({"sigma_b": [0.0, 0.5], "alpha": [1e-3, 1e-1]},
                           precision="float32").fit(X, y)
    clf.predict(X)
    assert calls and set(calls) == {"float32"}
    calls.clear()
    ref = RNTKClassifierCV({"sigma_b": [0.0, 0.5], "alpha": [1e-3, 1e-1]},
                           precision="float64").fit(X, y)
    assert set(calls) == {"float64"}
    # the same choice, and decisions within float32's rounding of float64's
    assert clf.best_params_ == ref.best_params_
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X),
                               rtol=1e-3, atol=1e-4)
    assert rntk.RNTKClassifier().get_params()["precision"] == "float64"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_lanes_arcsin_to_an_ulp_or_two(dtype):
    # each precision has its own polynomial (5 coefficients in float32, 12 in float64):
    # both must give the arcsin to the rounding of their type, on the whole of [-1, 1]
    from numba import njit

    from rntk._kernels._shared import _asin

    asin = njit(lambda x, om: _asin(x, om))
    x = np.r_[np.linspace(-1, 1, 20001), np.geomspace(1e-6, 1, 2000)].astype(dtype)
    got = np.array([asin(v, dtype(1) - abs(v)) for v in x], dtype=np.float64)
    want = np.arcsin(x.astype(np.float64))
    ulps = np.abs(got - want) / (np.finfo(dtype).eps * np.maximum(np.abs(want), 1e-300))
    assert ulps.max() < 3, f"{ulps.max():.2f} ulps at x = {x[ulps.argmax()]!r}"
