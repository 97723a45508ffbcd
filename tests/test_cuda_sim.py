"""The fused CUDA engine against the CPU engine, on numba's CUDA simulator (or a GPU).

The simulator is set up by ``tests/cuda_sim.py`` (the rest of the suite is unaffected);
without numba-cuda, or with numba.cuda imported for an unusable GPU, the module is
skipped.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.cuda_sim import simulated_cuda

cuda = simulated_cuda(module_level=True)

from rntk import KernelOverflowError, rntk_kernel  # noqa: E402
from rntk._kernels import _cuda  # noqa: E402
from rntk._kernels._cuda import (  # noqa: E402
    cuda_available,
    rntk_kernel_cuda,
    rntk_kernel_cuda_batched,
)
from tests.reference import family_gram  # noqa: E402


def _data(seed=0, lengths=(3, 5, 1, 4), m=2):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(t, m)) / np.sqrt(t) for t in lengths]


X = _data(0)
Y = _data(1, (2, 6, 4))


def _close(got, want, rtol):
    want = np.asarray(want)
    assert got.shape == want.shape
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert err <= rtol, f"max relative difference {err:.3g} > {rtol:g}"


CONFIGS = [
    dict(),
    dict(kind="nngp", n_layers=2, sigma_h=0.7, sigma_b=0.2),
    dict(activation="erf", n_layers=2, sigma_h=0.5, sigma_w=[1.2, 0.9], sigma_u=[1.0, 1.5]),
    dict(activation="erf", kind="nngp", sigma_b=0.3),
    dict(activation="linear", sigma_h=0.4, sigma_w=0.9),
    dict(activation="linear", kind="nngp", n_layers=2),
    dict(direction="backward", diff=True, sigma_h=0.3),
    dict(direction="bidirectional", n_layers=2, activation="erf", sigma_b=0.1),
]


@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: ",".join(f"{k}={v}" for k, v in
                                                                   p.items()) or "default")
@pytest.mark.parametrize("symmetric", [True, False], ids=["XX", "XY"])
def test_float64_matches_cpu_engine(params, symmetric):
    Yv = None if symmetric else Y
    K = rntk_kernel_cuda(X, Yv, **params)
    assert K.dtype == np.float64
    _close(K, rntk_kernel(X, Yv, **params), 1e-12)
    if symmetric:
        np.testing.assert_array_equal(K, K.T)


@pytest.mark.parametrize("params", [CONFIGS[0], CONFIGS[2], CONFIGS[5]])
def test_float32_matches_cpu_engine(params):
    for Yv in (None, Y):
        K = rntk_kernel_cuda(X, Yv, dtype=np.float32, **params)
        assert K.dtype == np.float32
        _close(K, rntk_kernel(X, Yv, **params), 1e-5)


READOUT_CONFIGS = [
    (1, dict()),
    (2, dict(sigma_h=0.5, n_layers=2)),
    (1, dict(activation="erf", kind="nngp", sigma_h=0.3)),
    (2, dict(direction="bidirectional", diff=True, activation="linear")),
    (1, dict(readout_band=2, sigma_h=0.4)),
    (2, dict(readout_band=0, n_layers=2, activation="erf")),
]


@pytest.mark.parametrize("stride,params", READOUT_CONFIGS)
@pytest.mark.parametrize("symmetric", [True, False], ids=["XX", "XY"])
def test_mean_readout(stride, params, symmetric):
    Yv = None if symmetric else Y
    K = rntk_kernel_cuda(X, Yv, readout="mean", readout_stride=stride, **params)
    _close(K, family_gram(X, Yv, readout="mean", readout_stride=stride, **params), 1e-12)
    _close(K, rntk_kernel(X, Yv, readout="mean", readout_stride=stride, **params), 1e-12)


def test_mean_readout_stride_ignored_by_last():
    np.testing.assert_array_equal(rntk_kernel_cuda(X, readout_stride=3), rntk_kernel_cuda(X))


def test_batched_equals_separate():
    settings = [
        dict(),
        dict(sigma_w=1.3, sigma_b=0.2, sigma_h=0.1),
        dict(sigma_v=2.0),  # shares the per-series factors of the default
        dict(kind="nngp"),
        dict(activation="erf", n_layers=2, sigma_u=[1.0, 0.7]),
        dict(activation="linear", sigma_h=1.0),
        dict(direction="bidirectional"),  # another data layout: a second launch
        dict(readout="mean", readout_stride=2),
    ]
    for Yv in (None, Y):
        K = rntk_kernel_cuda_batched(X, Yv, settings, sigma_u=1.1)
        assert K.shape == (len(settings), len(X), len(X if Yv is None else Yv))
        for k, s in enumerate(settings):
            np.testing.assert_array_equal(K[k], rntk_kernel_cuda(X, Yv, **{"sigma_u": 1.1,
                                                                         **s}))
    K32 = rntk_kernel_cuda_batched(X, None, settings[:3], dtype=np.float32)
    assert K32.dtype == np.float32
    _close(K32[1], rntk_kernel(X, **settings[1]), 1e-5)


def test_layouts_and_univariate():
    rng = np.random.default_rng(3)
    U = rng.normal(size=(3, 5))  # (n, T) univariate array
    _close(rntk_kernel_cuda(U), rntk_kernel(U), 1e-12)
    _close(rntk_kernel_cuda(U, block=(2, 1)), rntk_kernel(U), 1e-12)


def test_validation():
    with pytest.raises(ValueError, match="n_layers <= 4"):
        rntk_kernel_cuda(X, n_layers=5)
    with pytest.raises(ValueError, match="dtype"):
        rntk_kernel_cuda(X, dtype=np.int32)
    with pytest.raises(ValueError, match="readout"):
        rntk_kernel_cuda(X, readout="max")
    with pytest.raises(ValueError, match="readout_stride"):
        rntk_kernel_cuda(X, readout="mean", readout_stride=0)
    with pytest.raises(ValueError, match="unknown kernel parameter"):
        rntk_kernel_cuda_batched(X, None, [dict(sigma_x=1.0)])
    with pytest.raises(ValueError, match="empty"):
        rntk_kernel_cuda_batched(X, None, [])
    with pytest.raises(ValueError, match="activation"):
        rntk_kernel_cuda_batched(X, None, [dict(), dict(activation="tanh")])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_overflow_is_reported():
    with pytest.raises(KernelOverflowError, match="rntk_kernel_cuda"):
        rntk_kernel_cuda(X, sigma_w=1e12, dtype=np.float32)


def test_missing_package_error(monkeypatch):
    monkeypatch.setattr(_cuda, "_NUMBA_CUDA", "no_such_numba_cuda_package")
    with pytest.raises(ImportError, match=r"pip install 'rntk\[cuda\]'"):
        rntk_kernel_cuda(X)
    assert not cuda_available()


def test_no_gpu_error(monkeypatch):
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="no usable CUDA GPU"):
        rntk_kernel_cuda(X)
    assert not cuda_available()
    assert cuda_available() is False


def test_import_is_cuda_free():
    code = ("import sys, rntk, rntk._kernels._cuda; "
            "assert 'numba.cuda' not in sys.modules, 'numba.cuda imported'")
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


def test_benchmark_smoke(tmp_path):
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_gpu.py"
    spec = importlib.util.spec_from_file_location("bench_gpu", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.main(["--smoke", "--out", str(tmp_path)])
    assert result["agreement"]["float64"]["max_rel_diff"] < 1e-12
    assert (tmp_path / "bench_gpu.json").exists() and (tmp_path / "bench_gpu.csv").exists()


def test_rntk_kernel_device_cuda_routes_to_the_fused_engine():
    params = dict(direction="bidirectional", diff=True, readout="mean", readout_stride=2)
    K = rntk_kernel(X, Y, device="cuda", **params)
    _close(K, rntk_kernel(X, Y, **params), 1e-12)
    out = np.zeros(K.shape)
    assert rntk_kernel(X, Y, device="cuda", out=out, **params) is out
    np.testing.assert_array_equal(out, K)
    with pytest.raises(ValueError, match="device"):
        rntk_kernel(X, device="tpu")


def test_search_on_the_gpu_selects_as_on_the_cpu(monkeypatch):
    """``device="cuda"``: the search's Grams come from batched launches, same selection."""
    from rntk import RNTKClassifier, RNTKClassifierCV
    from rntk._model_selection import _sources

    monkeypatch.setattr(_sources, "CUDA_BATCH", 2)  # several launches, one per 2 settings
    rng = np.random.default_rng(3)
    Xs = [rng.normal(size=(t, 2)) + (i % 2) for i, t in enumerate((4, 5, 3, 5, 4, 6))]
    y = np.arange(6) % 2
    grid = [{"sigma_b": [0.0, 0.5], "alpha": [1e-3, 1.0]},
            {"readout": ["mean"], "normalize": ["rms"], "sigma_w": [1.2], "alpha": [1e-3]}]
    cpu = RNTKClassifierCV(grid).fit(Xs, y)
    gpu = RNTKClassifierCV(grid, estimator=RNTKClassifier(device="cuda")).fit(Xs, y)
    assert gpu.best_params_ == cpu.best_params_
    np.testing.assert_allclose(gpu.cv_results_["mean_test_score"],
                               cpu.cv_results_["mean_test_score"])
    # new series: a series paired with its own copy in K(X, Y) has correlation 1, where
    # arccos amplifies the last bit of rounding to ~1e-8 in any two implementations
    new = [rng.normal(size=(t, 2)) for t in (3, 6)]
    np.testing.assert_allclose(gpu.decision_function(new), cpu.decision_function(new),
                               rtol=1e-10)


def test_batched_search_leaves_the_same_as_groups_uncomputed(monkeypatch):
    """Unit-RMS series: the default grid's level band (``DEFAULT_SAME``) is not launched."""
    from rntk import RNTKClassifier, RNTKClassifierCV
    from rntk._model_selection import DEFAULT_SAME, default_grid

    rng = np.random.default_rng(4)
    X = rng.normal(size=(6, 6)) + np.repeat([[0.0], [1.0]], 3, axis=0) * np.arange(6)
    X /= np.sqrt(np.mean(X ** 2, axis=1, keepdims=True))  # every series at unit RMS
    y = np.repeat([0, 1], 3)
    launched = []
    real = _cuda.rntk_kernel_cuda_batched

    def counted(xs, ys, params):
        launched.append(len(params))
        return real(xs, ys, params)

    monkeypatch.setattr(_cuda, "rntk_kernel_cuda_batched", counted)
    gpu = RNTKClassifierCV(estimator=RNTKClassifier(device="cuda")).fit(X, y)
    assert sum(launched) == len(default_grid([6] * 6)) - len(DEFAULT_SAME)
    cpu = RNTKClassifierCV().fit(X, y)
    assert gpu.averaged_params_ == cpu.averaged_params_
    np.testing.assert_allclose(gpu.cv_results_["mean_test_score"],
                               cpu.cv_results_["mean_test_score"])
