"""Numerics of the RNTK engines at the edges (issue "Reliability, second pass").

* A series and its copy: ``K(x, x') == K(x, x)`` (sigma_h = 0) at any length, both
  activations, Numba and torch (the CUDA engine: ``test_numerics_cuda_sim.py``).
* Proportional and near-collinear series: the correlation of the hidden states is (close
  to) 1, where ``arccos`` / ``arcsin`` have infinite slopes; Grams stay PSD.
* Overflow: torch is finite where Numba is, or raises ``KernelOverflowError``; the slow
  reference is right or raises.
* The package's object arrays in every kernel function; ``RNTK.__repr__``.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rntk import RNTK, KernelOverflowError, as_object_array, rntk_kernel
from rntk._kernels import rntk_diag

sys.path.insert(0, str(Path(__file__).parent))
import reference as ref  # noqa: E402

try:
    import torch

    from rntk.nn import rntk_kernel_torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

EXACT = 1e-12  # relative: "equal" for a series and its copy


def _series(seed, length, amplitude=1.0, channels=1):
    x = np.random.default_rng(seed).normal(size=(length, channels)) * amplitude
    return x[:, 0] if channels == 1 else x


def _rel(a, b):
    # equal values are exact, zeros included (one-step series of opposite signs have a
    # ReLU kernel of exactly 0: a ratio would be 0 / 0)
    return 0.0 if a == b else abs(a / b - 1.0)


def _numba(X, **kw):
    return rntk_kernel(X, **kw)


def _torch(X, **kw):
    return rntk_kernel_torch(X, **kw).numpy()


ENGINES = [pytest.param(_numba, id="numba"),
           pytest.param(_torch, id="torch", marks=needs_torch)]


# -- item 1: a series and its copy ---------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("activation", ["relu", "erf"])
@pytest.mark.parametrize("length", [1, 100, 2000, 5000])
def test_a_copy_has_the_kernel_of_the_series_with_itself(engine, activation, length):
    # before: K[0, 1] / K[0, 0] - 1 was -2e-7 at T=100, -1.4e-5 at T=2000 (Numba, ReLU)
    if engine is _torch and length > 2000:
        length = 2000  # torch runs one Python step per time step
    x = _series(0, length)
    K = engine([x, x.copy()], activation=activation)
    assert _rel(K[0, 1], K[0, 0]) <= EXACT
    assert _rel(K[1, 1], K[0, 0]) <= EXACT


@pytest.mark.parametrize("engine", ENGINES)
def test_erf_in_its_chaotic_phase_keeps_a_series_on_correlation_one(engine):
    # erf with sigma_w^2 = 2 is in the chaotic phase: correlation 1 is an unstable fixed
    # point of the recursion, so a rounding that moves a series paired with itself off
    # c = 1 grows step by step. A V operator that did so (the previous form of 1 - c^2
    # without its near-copy test) put this diagonal 9.3e-6 from the reference at T = 150
    # (1.6e-4 with 12 series), while copies still equalled the diagonal.
    X = np.random.default_rng(0).normal(size=(2, 150))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    K = engine(X, activation="erf")
    R = ref.rntk_gram(X, activation="erf")
    assert np.max(np.abs(K - R) / np.abs(R)) <= 1e-10


@settings(database=None, max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), length=st.integers(1, 5000),
       log_amplitude=st.floats(-3.0, 3.0), activation=st.sampled_from(["relu", "erf"]),
       n_layers=st.integers(1, 2), channels=st.integers(1, 3))
def test_property_copies_are_exact(seed, length, log_amplitude, activation, n_layers,
                                   channels):
    x = _series(seed, length, 10.0**log_amplitude, channels)
    other = _series(seed + 1, max(1, length // 2), 10.0**log_amplitude, channels)
    K = rntk_kernel([other, x, x.copy()], activation=activation, n_layers=n_layers)
    assert _rel(K[1, 2], K[1, 1]) <= EXACT
    # the copy is the series for a third one too: each pair in the same order (a pair's
    # order may move its rounding, 1e-11 for erf at amplitude 1e3)
    assert _rel(K[0, 2], K[0, 1]) <= EXACT
    assert K[0, 1] ** 2 <= K[0, 0] * K[1, 1] * (1 + EXACT)


@settings(database=None, max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), length=st.integers(2, 300),
       stride=st.integers(1, 4), band=st.sampled_from([None, 0, 3]),
       activation=st.sampled_from(["relu", "erf"]),
       direction=st.sampled_from(["forward", "bidirectional"]))
def test_property_copies_are_exact_with_the_mean_readout(seed, length, stride, band,
                                                        activation, direction):
    x = _series(seed, length)
    K = rntk_kernel([x, x.copy()], activation=activation, readout="mean",
                    readout_stride=stride, readout_band=band, direction=direction)
    assert _rel(K[0, 1], K[0, 0]) <= EXACT


# -- item 1: proportional series ------------------------------------------------------
@settings(database=None, max_examples=10, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), length=st.integers(1, 5000), power=st.integers(-6, 6),
       n_layers=st.integers(1, 2))
def test_property_relu_is_homogeneous_for_proportional_series(seed, length, power, n_layers):
    # without bias the ReLU RNTK is positively homogeneous: K(x, a x) = a K(x, x)
    a = 2.0**power  # a power of two scales every covariance exactly
    x = _series(seed, length)
    K = rntk_kernel([x, a * x], n_layers=n_layers)
    assert _rel(K[0, 1], a * K[0, 0]) <= EXACT
    assert _rel(K[1, 1], a * a * K[0, 0]) <= EXACT


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("factor", [3.0, 0.7, 1e3])
@pytest.mark.parametrize("length", [100, 2000])
def test_unit_norm_makes_proportional_series_duplicates(engine, factor, length):
    # unit norm maps x and a x to the same series up to a rounding of each value
    x = _series(1, length)
    X = np.stack([x, factor * x])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    K = engine(X)
    assert _rel(K[0, 1], K[0, 0]) <= EXACT
    assert _rel(K[1, 1], K[0, 0]) <= EXACT


# -- items 1 and 3: near-collinear series, large amplitudes ----------------------------
@settings(database=None, max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), length=st.integers(2, 2000),
       log_eps=st.floats(-14.0, -4.0), log_amplitude=st.floats(-2.0, 4.0),
       activation=st.sampled_from(["relu", "erf"]), readout=st.sampled_from(["last", "mean"]))
def test_property_near_collinear_grams_are_psd(seed, length, log_eps, log_amplitude,
                                               activation, readout):
    if readout == "mean":
        length = min(length, 200)
    amp = 10.0**log_amplitude
    x = _series(seed, length, amp)
    near = x + 10.0**log_eps * amp * _series(seed + 1, length)
    X = np.stack([x, near, x, 2.0 * x, _series(seed + 2, length, amp)])
    K = rntk_kernel(X, activation=activation, readout=readout)
    d = np.sqrt(np.diag(K))
    C = K / np.outer(d, d)  # correlations: at most 1 (Cauchy-Schwarz)
    # the correlations of near-copies are 1 - O(eps^2): what is left is the rounding of
    # the entries. erf saturates at large amplitudes: a covariance k ~ amp^2 carries an
    # absolute rounding ~eps k, and 1 - c of a near-copy is ~1 / (1 + 2k), so the
    # correlations are good to ~eps amp^2 (measured on 300 random draws: 1e-8 at amplitude
    # 1e4, 7e-11 at 1e3, 1e-14 below 1; the same before the sum form of 1 - |c|).
    tol = 1e-11 + 1e-15 * amp**2
    assert C.max() <= 1 + tol
    assert np.linalg.eigvalsh(C).min() >= -tol
    assert abs(C[0, 2] - 1) <= EXACT  # the copy


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("amplitude, readout", [(3000.0, "last"), (1e4, "mean")])
def test_erf_grams_are_psd_at_large_amplitudes(engine, amplitude, readout):
    # before: min / max eigenvalue -3.9e-10 (3000, last) and -7.9e-9 (1e4, mean)
    t = np.arange(1, 21)
    x = amplitude * np.sin(t)
    X = np.stack([x, x, amplitude * np.cos(t)])
    K = engine(X, activation="erf", readout=readout)
    ev = np.linalg.eigvalsh(K)
    assert ev.min() >= -1e-14 * ev.max()
    assert _rel(K[0, 1], K[0, 0]) <= EXACT


@needs_torch
@pytest.mark.parametrize("amplitude", [3000.0])
def test_torch_equals_numba_for_erf_at_large_amplitudes(amplitude):
    # before: 3e-7 apart. (erf with sigma_w^2 = 2 amplifies a rounding ~2.5x per step:
    # the engines agree because they round alike, the slow reference only to ~1e-8 here)
    t = np.arange(1, 21)
    X = np.stack([amplitude * np.sin(t), amplitude * np.sin(t) + 1.0, amplitude * np.cos(t)])
    K = rntk_kernel(X, activation="erf")
    Kt = _torch(X, activation="erf")
    assert np.max(np.abs(Kt - K)) <= 1e-10 * np.max(np.abs(K))


# -- item 5: overflow -----------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("X, kw", [
    (np.array([[1e80, 1.0], [2.0, 1e80]]), {}),
    (np.random.default_rng(0).normal(size=(3, 80)), {"sigma_w": 16.0}),
    (np.array([[1e80, 1.0], [2.0, 1e80]]), {"activation": "erf", "n_layers": 2}),
])
def test_torch_is_finite_where_numba_is(X, kw):
    # before: all inf (torch formed k1 * k2)
    K = rntk_kernel(X, **kw)
    Kt = _torch(X, **kw)
    assert np.isfinite(Kt).all()
    assert np.max(np.abs(Kt - K)) <= 1e-12 * np.max(np.abs(K))


@needs_torch
def test_torch_raises_where_numba_raises():
    X = np.random.default_rng(0).normal(size=(2, 400))
    with pytest.raises(KernelOverflowError):
        rntk_kernel(X, sigma_w=16.0)
    with pytest.raises(KernelOverflowError, match="rntk_kernel_torch"):
        rntk_kernel_torch(X, sigma_w=16.0)


@needs_torch
def test_gp_gradient_is_finite_or_raises():
    # before: all NaN, without a warning
    X = np.array([[1e80, 1.0], [2.0, 1e80]])
    kernel = RNTK(**{f"sigma_{p}_bounds": (1e-3, 1e3) for p in "wubhv"})  # all free
    K, dK = kernel(X, eval_gradient=True)
    assert np.isfinite(K).all() and np.isfinite(dK).all()
    free = [h.name for h in kernel.hyperparameters if not h.fixed]
    v = free.index("sigma_v")
    np.testing.assert_allclose(dK[..., v], 2 * K, rtol=1e-12)  # d K / d log sigma_v
    with pytest.raises(KernelOverflowError):
        RNTK(sigma_w=16.0)(np.random.default_rng(0).normal(size=(2, 400)), eval_gradient=True)


def test_reference_is_right_or_raises():
    # before: the oracle's (1 + 2 k1)(1 + 2 k2) overflowed to inf: correlation 0, silently
    X = [np.array([[1e80], [1.0]]), np.array([[2.0], [1e80]])]
    np.testing.assert_allclose(ref.rntk_gram(X), rntk_kernel(X), rtol=1e-13)
    np.testing.assert_allclose(ref.rntk_gram(X, activation="erf", n_layers=2),
                               rntk_kernel(X, activation="erf", n_layers=2), rtol=1e-13)
    for kw in ({"sigma_w": 1e100, "activation": "erf"}, {"sigma_w": 1e100}):
        try:
            R = ref.rntk_gram([np.array([[1.0], [2.0]])] * 2, **kw)
        except OverflowError:
            continue
        np.testing.assert_allclose(R, rntk_kernel([np.array([1.0, 2.0])] * 2, **kw),
                                   rtol=1e-12)


# -- item 10: the package's object arrays everywhere --------------------------------------
@pytest.mark.parametrize("channels", [1, 2])
def test_kernel_functions_accept_object_arrays(channels):
    X = [_series(k, t, channels=channels) for k, t in enumerate((4, 6, 5))]
    O = as_object_array(X)
    np.testing.assert_array_equal(rntk_kernel(O), rntk_kernel(X))
    np.testing.assert_array_equal(rntk_kernel(O, O[:2]), rntk_kernel(X, X[:2]))
    np.testing.assert_array_equal(rntk_diag(O), rntk_diag(X))
    if torch is not None:
        np.testing.assert_allclose(_torch(O), rntk_kernel(X), rtol=1e-13)


def test_distributed_accepts_object_arrays():
    pytest.importorskip("distributed")
    from rntk.distributed import rntk_kernel as distributed_kernel

    O = as_object_array([np.arange(3.0), np.arange(4.0)])
    # read as two series (the shape check of ``out`` runs before any cluster starts)
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        distributed_kernel(O, out=np.zeros((3, 3)))


# -- item 12: the repr shows every option ------------------------------------------------
def test_repr_shows_the_family_and_readout_options():
    assert "readout='mean'" in repr(RNTK(readout="mean"))
    r = repr(RNTK(direction="bidirectional", diff=True, readout="mean", readout_stride=2,
                  readout_band=3))
    for part in ("direction='bidirectional'", "diff=True", "readout='mean'",
                 "readout_stride=2", "readout_band=3"):
        assert part in r
    assert repr(RNTK()) != repr(RNTK(readout="mean"))
    assert "readout" not in repr(RNTK())
