"""Tests of rntk.cntk_kernel: the slow reference, wide convolutional networks, errors."""

import numpy as np
import pytest

from rntk import cntk_kernel, mlp_ntk_kernel
from tests.reference import cntk_gram
from tests.wide_networks import assert_wide_networks_converge

SETTINGS = [
    dict(),
    dict(n_layers=2, dilation=(1, 2), sigma_b=0.3),
    dict(n_layers=3, taps=5, dilation=2, sigma_w=1.3, sigma_v=0.7),
    dict(n_layers=2, kind="nngp", sigma_b=0.5),
]


@pytest.mark.parametrize("params", SETTINGS)
def test_matches_slow_reference(rng, params):
    X = [rng.standard_normal((T, 2)) for T in (5, 7, 4)]  # mixed lengths
    Y = [rng.standard_normal((T, 2)) for T in (6, 3)]
    np.testing.assert_allclose(cntk_kernel(X, Y, **params), cntk_gram(X, Y, **params),
                               rtol=1e-10)
    K = cntk_kernel(X, **params)
    np.testing.assert_allclose(K, cntk_gram(X, **params), rtol=1e-10)
    np.testing.assert_array_equal(K, K.T)
    # a Gram's diagonal takes c = 1 for a step with itself; given twice, c is computed
    # and rounds near 1, where the ReLU's derivative (pi - arccos c) / 2 pi moves by
    # sqrt(2 eps): about 1e-9
    np.testing.assert_allclose(cntk_kernel(X, X, **params), K, rtol=1e-7)


def test_a_shape_counts_wherever_it_occurs():
    bump = np.array([1.0, 3.0, -2.0])
    x = np.zeros((3, 20))
    for i, at in enumerate((4, 9, 14)):  # far from the ends for 2 layers of 3 taps
        x[i, at:at + 3] = bump
    K = cntk_kernel(x, n_layers=2)
    np.testing.assert_allclose(K, K[0, 0], rtol=1e-7)  # c rounds near 1 off the diagonal
    # a network reading the series flattened (no weights shared over time) does not see it
    M = mlp_ntk_kernel(x, n_layers=2)
    assert M[0, 1] < 0.9 * M[0, 0]


def test_one_layer_nngp_is_the_mean_arc_cosine_kernel_of_the_windows(rng):
    X = rng.standard_normal((3, 6))
    K = cntk_kernel(X, kind="nngp", taps=1, sigma_b=0.4)
    # one tap: the mean, over pairs of steps, of the degree-1 arc-cosine kernel of the
    # steps' covariances (Cho & Saul)
    S = 2.0 * X[:, :, None, None] * X[None, None] + 0.16  # (n, T, n, T)
    d = np.sqrt(2.0 * X**2 + 0.16)
    norm = d[:, :, None, None] * d[None, None]
    c = np.clip(S / norm, -1, 1)
    th = np.arccos(c)
    ref = (norm * (np.sin(th) + (np.pi - th) * c) / (2 * np.pi)).mean(axis=(1, 3))
    np.testing.assert_allclose(K, ref, rtol=1e-10)


def test_input_layouts():
    X = np.array([[1.0, 2.0, 3.0, 0.5], [0.5, -1.0, 0.0, 2.0]])
    K = cntk_kernel(X, n_layers=2)
    np.testing.assert_allclose(cntk_kernel(X[:, :, None], n_layers=2), K)
    np.testing.assert_allclose(cntk_kernel(list(X), n_layers=2), K)
    ragged = [np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])]
    nanpad = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, np.nan]])
    np.testing.assert_allclose(cntk_kernel(nanpad), cntk_kernel(ragged))
    np.testing.assert_allclose(cntk_kernel(ragged, n_jobs=1), cntk_kernel(ragged, n_jobs=2))


@pytest.mark.parametrize("kwargs, match", [
    (dict(taps=2), "odd"),
    (dict(taps=0), "taps"),
    (dict(n_layers=0), "n_layers"),
    (dict(dilation=0), "dilation"),
    (dict(n_layers=2, dilation=(1, 2, 4)), "one per layer"),
    (dict(dilation="wide"), "dilation"),
    (dict(sigma_w=-1.0), "non-negative"),
    (dict(kind="gp"), "kind"),
    (dict(n_jobs=0), "n_jobs"),
])
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        cntk_kernel(np.ones((2, 5)), **kwargs)


def test_overflow_is_an_error_not_a_kernel():
    from rntk import KernelOverflowError

    with pytest.raises(KernelOverflowError, match="cntk_kernel"):
        cntk_kernel(np.array([[1.0, -2.0, 3.0], [0.5, 1.0, -1.0]]) * 1e160, n_layers=2)


def test_input_errors():
    with pytest.raises(ValueError, match="channel"):
        cntk_kernel(np.ones((2, 3, 2)), np.ones((2, 3, 1)))
    with pytest.raises(ValueError, match="NaN inside"):
        cntk_kernel(np.array([[1.0, np.nan, 2.0]]))
    with pytest.raises(ValueError, match="infinite|inf"):
        cntk_kernel(np.array([[1.0, np.inf, 2.0]]))


def _conv_net(torch, m, width, n_layers, taps, dilations, sw, sb, sv):
    """A finite network of the kernel, in the NTK parameterisation (module docstring)."""
    from rntk.nn import empirical_ntk

    class WideConv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            fans = [m] + [width] * (n_layers - 1)
            self.Ws = torch.nn.ParameterList(
                [torch.nn.Parameter(torch.randn(width, fan, taps)) for fan in fans])
            self.bs = torch.nn.ParameterList(
                [torch.nn.Parameter(torch.randn(width)) for _ in range(n_layers)])
            self.v = torch.nn.Parameter(torch.randn(width))

        def forward(self, X):
            out = []
            for x in X:  # (T, m): one series at a time, each averaged over its own steps
                h = x.T[None]
                for W, b, d in zip(self.Ws, self.bs, dilations):
                    h = sw / (taps * W.shape[1]) ** 0.5 * torch.nn.functional.conv1d(
                        h, W, padding=(taps - 1) // 2 * d, dilation=d) + sb * b[None, :, None]
                    h = torch.relu(h)
                out.append(sv / width**0.5 * self.v @ h[0].mean(dim=-1))
            return torch.stack(out)

        def ntk(self, X, seed=None):
            return empirical_ntk(self, X, seed=None)

    return WideConv()


def test_empirical_ntk_of_wide_conv_networks_converges():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    X = [rng.standard_normal((T, 2)) for T in (5, 8, 6)]  # mixed lengths
    params = dict(n_layers=2, taps=3, dilation=(1, 2), sigma_w=1.4, sigma_b=0.3,
                  sigma_v=0.9)
    K = cntk_kernel(X, **params)
    assert_wide_networks_converge(
        torch, K, X, lambda width: _conv_net(torch, 2, width, 2, 3, (1, 2), 1.4, 0.3, 0.9),
        widths=(64, 1024))
