"""Property-based tests: every Gram is finite or refused clearly, symmetric, PSD, and equal to
the torch kernel, over lengths, channels, activations, kinds, depths and scales."""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch")

from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rntk import KernelOverflowError, rntk_kernel  # noqa: E402
from rntk.nn import rntk_kernel_torch  # noqa: E402

# the documented bounds of the GP kernel's scales are (1e-3, 1e3)
WIDE = st.one_of(st.sampled_from([1e-3, 1.0, 2**0.5, 1e3]), st.floats(1e-3, 3.0))
# where arccos is well conditioned: inputs that count against the bias (a correlation
# within 1e-12 of +-1 moves the derivative kernel by ~1e-8 in any implementation)
MODERATE = st.floats(0.1, 2.0)


@st.composite
def problems(draw, scales, input_scales):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 3))
    lengths = draw(st.lists(st.integers(1, 200), min_size=n, max_size=n))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = [rng.normal(size=(t, m)) * draw(st.sampled_from(input_scales)) for t in lengths]
    params = dict(
        n_layers=draw(st.integers(1, 4)),
        activation=draw(st.sampled_from(["relu", "erf", "linear"])),
        kind=draw(st.sampled_from(["ntk", "nngp"])), sigma_w=draw(scales),
        sigma_u=draw(scales), sigma_b=draw(st.one_of(st.just(0.0), scales)),
        sigma_h=draw(st.one_of(st.just(0.0), scales)), sigma_v=draw(scales),
        direction=draw(st.sampled_from(["forward", "bidirectional"])),
        diff=draw(st.booleans()))
    return X, params


def _parallel(X):
    """Two (anti)parallel series (two one-step univariate ones always are)."""
    def cos(a, b):
        t = min(len(a), len(b))
        a, b = a[-t:].ravel(), b[-t:].ravel()
        return abs(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))

    return any(cos(a, b) > 1 - 1e-6 for i, a in enumerate(X) for b in X[:i])


def _check(X, params, torch_rtol):
    try:
        K = rntk_kernel(X, **params)
    except KernelOverflowError as exc:
        assert "overflows float64" in str(exc)
        return
    assert np.isfinite(K).all()
    np.testing.assert_array_equal(K, K.T)  # symmetric by construction
    ev = np.linalg.eigvalsh(K)
    assert ev.min() >= -1e-10 * max(ev.max(), np.finfo(float).tiny)
    with np.errstate(all="ignore"):
        Kt = rntk_kernel_torch(X, **params).numpy()
    assert np.abs(K - Kt).max() <= torch_rtol * np.abs(K).max()


@settings(database=None, max_examples=50, deadline=None, derandomize=True)
@given(problems(MODERATE, [1.0, 10.0]))
def test_gram_is_finite_symmetric_psd_and_equals_torch(problem):
    X, params = problem
    assume(not _parallel(X))
    _check(X, params, torch_rtol=1e-9)


@settings(database=None, max_examples=40, deadline=None, derandomize=True)
@given(problems(WIDE, [1e-3, 1.0, 10.0]))
def test_gram_over_the_documented_bounds(problem):
    """Scales from 1e-3 to 1e3: finite or refused, symmetric, PSD; torch within 1e-7
    (near-unit correlations and long unstable recursions amplify rounding)."""
    X, params = problem
    assume(not _parallel(X))
    _check(X, params, torch_rtol=1e-7)


def test_nearly_equal_relu_series_give_a_psd_gram():
    rng = np.random.default_rng(0)
    for eps in (0.0, 1e-12, 1e-9, 1e-7):
        x = rng.normal(size=(150, 1))
        X = [x, x + eps * rng.normal(size=x.shape), rng.normal(size=(150, 1))]
        for sigma_b in (0.0, 0.1, 1.0):
            ev = np.linalg.eigvalsh(rntk_kernel(X, sigma_b=sigma_b))
            assert ev.min() >= -1e-10 * ev.max()
