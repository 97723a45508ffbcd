"""Tests of rntk.mlp_ntk_kernel: slow reference, empirical NTK of a wide MLP, errors."""

import math

import numpy as np
import pytest

from rntk import mlp_ntk_kernel


def _relu_pair(k1, k2, k3, deriv_scale=2.0):
    s = math.sqrt(k1 * k2)
    c = 0.0 if s == 0 else max(-1.0, min(1.0, k3 / s))
    th = math.acos(c)
    v = s * (math.sqrt(1 - c * c) + (math.pi - th) * c) / (2 * math.pi)
    dv = (math.pi - th) / (deriv_scale * math.pi)
    return v, dv


def slow_mlp_ntk(x, y, n_layers, sw, sb, sv, deriv_scale=2.0):
    """Textbook per-pair recursion (Jacot et al.; Arora et al.) written independently."""
    d = x.size
    sxx = sw**2 * float(x @ x) / d + sb**2
    syy = sw**2 * float(y @ y) / d + sb**2
    sxy = sw**2 * float(x @ y) / d + sb**2
    sigmas, derivs = [sxy], []
    for layer in range(n_layers):
        v, dv = _relu_pair(sxx, syy, sxy, deriv_scale)
        vxx, _ = _relu_pair(sxx, sxx, sxx, deriv_scale)
        vyy, _ = _relu_pair(syy, syy, syy, deriv_scale)
        derivs.append(dv)
        if layer + 1 < n_layers:
            sxy = sw**2 * v + sb**2
            sxx = sw**2 * vxx + sb**2
            syy = sw**2 * vyy + sb**2
            sigmas.append(sxy)
    theta = sv**2 * v
    for layer in range(n_layers):
        prod = sv**2 * derivs[-1]
        for later in range(layer, n_layers - 1):
            prod *= sw**2 * derivs[later]
        theta += sigmas[layer] * prod
    return theta


@pytest.mark.parametrize("n_layers,sw,sb,sv", [(1, 2**0.5, 0.0, 1.0), (3, 1.3, 0.4, 0.8),
                                               (5, 2.0, 1.0, 1.0)])
def test_matches_slow_reference(rng, n_layers, sw, sb, sv):
    X = rng.standard_normal((5, 7))
    Y = rng.standard_normal((3, 7))
    K = mlp_ntk_kernel(X, Y, n_layers=n_layers, sigma_w=sw, sigma_b=sb, sigma_v=sv)
    ref = np.array([[slow_mlp_ntk(x, y, n_layers, sw, sb, sv) for y in Y] for x in X])
    np.testing.assert_allclose(K, ref, rtol=1e-10, atol=1e-12)
    Kxx = mlp_ntk_kernel(X, n_layers=n_layers, sigma_w=sw, sigma_b=sb, sigma_v=sv)
    ref = np.array([[slow_mlp_ntk(x, y, n_layers, sw, sb, sv) for y in X] for x in X])
    np.testing.assert_allclose(Kxx, ref, rtol=1e-7, atol=1e-12)
    np.testing.assert_array_equal(Kxx, Kxx.T)


def test_nngp_is_the_readout_term(rng):
    X = rng.standard_normal((4, 5))
    K1 = mlp_ntk_kernel(X, n_layers=1, kind="nngp", sigma_b=0.3)
    # one hidden layer: NNGP = sigma_v^2 V_phi[K^1]; arc-cosine kernel of degree 1 (Cho & Saul)
    sig = 2 * X @ X.T / 5 + 0.09
    d = np.sqrt(np.diag(sig))
    c = np.clip(sig / np.outer(d, d), -1, 1)
    th = np.arccos(c)
    ref = np.outer(d, d) * (np.sin(th) + (np.pi - th) * np.cos(th)) / (2 * np.pi)
    np.testing.assert_allclose(K1, ref, rtol=1e-7)


def test_input_layouts_and_padding():
    X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])
    K2 = mlp_ntk_kernel(X)
    np.testing.assert_allclose(mlp_ntk_kernel(X[:, :, None]), K2)
    np.testing.assert_allclose(mlp_ntk_kernel(list(X)), K2)
    # variable lengths: NaN tail padding and a list give the same zero-padded kernel
    ragged = [np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])]
    padded = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])
    nanpad = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, np.nan]])
    np.testing.assert_allclose(mlp_ntk_kernel(ragged, pad="zero"), mlp_ntk_kernel(padded))
    np.testing.assert_allclose(mlp_ntk_kernel(nanpad, pad="zero"), mlp_ntk_kernel(padded))
    # a fixed pad length keeps the scale of K(X, X) and K(X, Y) consistent
    K = mlp_ntk_kernel(ragged, pad=5)
    np.testing.assert_allclose(K, mlp_ntk_kernel(np.hstack([padded, np.zeros((2, 2))])))


def test_errors():
    with pytest.raises(ValueError, match="pad='zero'"):
        mlp_ntk_kernel([np.ones(3), np.ones(2)])
    with pytest.raises(ValueError, match="shorter than the longest"):
        mlp_ntk_kernel([np.ones(3), np.ones(2)], pad=2)
    with pytest.raises(ValueError, match="pad must be"):
        mlp_ntk_kernel(np.ones((2, 3)), pad="edge")
    with pytest.raises(ValueError, match="n_layers"):
        mlp_ntk_kernel(np.ones((2, 3)), n_layers=0)
    with pytest.raises(ValueError, match="non-negative"):
        mlp_ntk_kernel(np.ones((2, 3)), sigma_w=-1.0)
    with pytest.raises(ValueError, match="channel"):
        mlp_ntk_kernel(np.ones((2, 3, 2)), np.ones((2, 3, 1)))
    with pytest.raises(ValueError, match="NaN inside"):
        mlp_ntk_kernel(np.array([[1.0, np.nan, 2.0]]))
    with pytest.raises(ValueError, match="kind"):
        mlp_ntk_kernel(np.ones((2, 3)), kind="gp")


def test_matches_empirical_ntk_of_wide_mlp():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((4, 6))
    n_layers, sw, sb, sv, width, d = 2, 1.3, 0.3, 0.8, 2048, 6
    Ws = [torch.randn(width, d, dtype=torch.float64, requires_grad=True)]
    Ws += [torch.randn(width, width, dtype=torch.float64, requires_grad=True)
           for _ in range(n_layers - 1)]
    bs = [torch.randn(width, dtype=torch.float64, requires_grad=True) for _ in range(n_layers)]
    v = torch.randn(width, dtype=torch.float64, requires_grad=True)
    params = Ws + bs + [v]

    def f(x):
        h = sw / d**0.5 * Ws[0] @ x + sb * bs[0]
        for layer in range(1, n_layers):
            h = sw / width**0.5 * Ws[layer] @ torch.relu(h) + sb * bs[layer]
        return sv / width**0.5 * v @ torch.relu(h)

    grads = []
    for x in X:
        g = torch.autograd.grad(f(torch.tensor(x)), params)
        grads.append(torch.cat([gi.reshape(-1) for gi in g]))
    G = torch.stack(grads)
    emp = (G @ G.T).numpy()
    K = mlp_ntk_kernel(X, n_layers=n_layers, sigma_w=sw, sigma_b=sb, sigma_v=sv)
    err = np.abs(emp - K).max() / np.abs(K).max()
    assert err < 0.12
    # the paper's printed ReLU derivative 1/pi (a misprint) is clearly further away
    wrong = np.array([[slow_mlp_ntk(x, y, n_layers, sw, sb, sv, deriv_scale=1.0) for y in X]
                      for x in X])
    assert np.abs(emp - wrong).max() / np.abs(K).max() > 2 * err
