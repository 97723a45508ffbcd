"""The RNTK family options (direction, first differences): slow reference and wide networks."""

import numpy as np
import pytest

from rntk import RNTKClassifier, RNTKClassifierCV, rntk_kernel
from rntk._kernels import rntk_diag
from tests.reference import family_gram
from tests.wide_networks import assert_wide_networks_converge

OPTIONS = [(d, f) for d in ("forward", "backward", "bidirectional") for f in (False, True)]


def _assert_matches_reference(X, Y, params):
    """K(X, X), K(X, Y) and the diagonal against the slow definition; return K(X, X)."""
    K = rntk_kernel(X, **params)
    np.testing.assert_allclose(K, family_gram(X, **params), rtol=1e-10)
    np.testing.assert_allclose(rntk_kernel(X, Y, **params), family_gram(X, Y, **params),
                               rtol=1e-10)
    np.testing.assert_allclose(rntk_diag(X, **params), np.diag(K), rtol=1e-12)
    np.testing.assert_array_equal(K, K.T)  # symmetric by construction
    return K


@pytest.mark.parametrize("direction, diff", OPTIONS)
@pytest.mark.parametrize("activation, n_layers", [("relu", 1), ("erf", 2)])
def test_family_matches_reference(rng, direction, diff, activation, n_layers):
    X = [rng.normal(size=(t, 2)) for t in (4, 7, 5)]
    Y = [rng.normal(size=(t, 2)) for t in (6, 3)]
    params = dict(n_layers=n_layers, activation=activation, sigma_b=0.3, sigma_h=0.4,
                  sigma_w=1.3, direction=direction, diff=diff)
    _assert_matches_reference(X, Y, params)


def test_family_options_are_validated(rng):
    X = rng.normal(size=(3, 5))
    with pytest.raises(ValueError, match="direction"):
        rntk_kernel(X, direction="both")
    with pytest.raises(TypeError, match="diff"):
        rntk_kernel(X, diff="yes")
    with pytest.raises(ValueError, match="direction"):
        RNTKClassifierCV(estimator=RNTKClassifier(direction="both")).fit(X, [0, 1, 0])


def test_bidirectional_is_the_sum_and_diff_doubles_the_channels(rng):
    X = [rng.normal(size=t) for t in (5, 9, 6)]
    fwd, bwd = rntk_kernel(X), rntk_kernel(X, direction="backward")
    np.testing.assert_allclose(rntk_kernel(X, direction="bidirectional"), fwd + bwd,
                               rtol=1e-14)
    np.testing.assert_allclose(bwd, rntk_kernel([x[::-1] for x in X]), rtol=1e-14)
    with_diff = [np.c_[x, np.r_[0.0, np.diff(x)]] for x in X]
    np.testing.assert_allclose(rntk_kernel(X, diff=True), rntk_kernel(with_diff), rtol=1e-14)


def test_family_estimator_selects_among_options(rng):
    t = np.linspace(0, 1, 20)
    X = np.r_[np.sin(6 * t) + 0.2 * rng.normal(size=(10, 20)),
              np.cos(6 * t) + 0.2 * rng.normal(size=(10, 20))]
    y = np.repeat([0, 1], 10)
    grid = {"direction": ["forward", "bidirectional"], "diff": [False, True],
            "alpha": [1e-3, 1e-1]}
    search = RNTKClassifierCV(grid).fit(X, y)
    assert len(search.cv_results_["params"]) == 8
    assert search.score(X, y) > 0.9


# --- the physics: wide networks of each architecture tend to its kernel ----------------
@pytest.mark.parametrize("direction, diff, activation", [
    ("bidirectional", True, "relu"), ("backward", False, "erf"), ("forward", True, "erf"),
])
def test_empirical_ntk_of_family_networks_converges(direction, diff, activation):
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork

    rng = np.random.default_rng(3)
    X = [rng.standard_normal(T) for T in (3, 6, 4)]  # mixed lengths
    params = dict(activation=activation, sigma_h=0.3, sigma_b=0.2,
                  sigma_w=2**0.5 if activation == "relu" else 1.2)
    K = rntk_kernel(X, direction=direction, diff=diff, **params)
    assert_wide_networks_converge(
        torch, K, X, lambda width: RNTKNetwork(1, width, direction=direction, diff=diff,
                                               **params))


def test_family_network_forward_and_generic_ntk_agree():
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork, empirical_ntk

    torch.manual_seed(0)
    net = RNTKNetwork(2, 8, n_out=1, direction="bidirectional", diff=True).double()
    X = [torch.randn(4, 2, dtype=torch.float64), torch.randn(6, 2, dtype=torch.float64)]
    assert net(X).shape == (2, 1)
    np.testing.assert_allclose(net.ntk(X, seed=None), empirical_ntk(net, X, seed=None),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="direction"):
        RNTKNetwork(1, 4, direction="sideways")


# --- the mean readout -------------------------------------------------------------------
@pytest.mark.parametrize("direction, diff, activation, n_layers, stride, band", [
    ("forward", False, "relu", 1, 1, None), ("forward", True, "erf", 2, 2, None),
    ("backward", False, "relu", 2, 3, None), ("bidirectional", True, "relu", 1, 2, None),
    ("forward", False, "linear", 1, 1, None),
    # a band of B readouts: only pairs at most B apart, weighted 1 - |k| / (B + 1)
    ("forward", False, "relu", 1, 1, 0), ("forward", False, "relu", 1, 1, 2),
    ("forward", True, "erf", 2, 2, 1), ("backward", False, "relu", 2, 1, 3),
    ("bidirectional", True, "linear", 1, 2, 1),
])
@pytest.mark.parametrize("kind", ["ntk", "nngp"])
def test_mean_readout_matches_reference(rng, direction, diff, activation, n_layers, stride,
                                        band, kind):
    X = [rng.normal(size=(t, 2)) for t in (4, 7, 1, 5)]
    Y = [rng.normal(size=(t, 2)) for t in (6, 3)]
    params = dict(n_layers=n_layers, activation=activation, sigma_b=0.3, sigma_h=0.4,
                  sigma_w=1.3, direction=direction, diff=diff, kind=kind, readout="mean",
                  readout_stride=stride, readout_band=band)
    K = _assert_matches_reference(X, Y, params)
    assert np.linalg.eigvalsh(K).min() > -1e-10 * np.abs(K).max()


def test_mean_readout_limits(rng):
    X = [rng.normal(size=t) for t in (5, 9, 6)]
    Y = [rng.normal(size=t) for t in (7, 2)]
    # one readout per series (stride >= the longest series): the last-step kernel
    np.testing.assert_allclose(rntk_kernel(X, Y, readout="mean", readout_stride=9),
                               rntk_kernel(X, Y), rtol=1e-13)
    # the stride is ignored by the last-step readout
    np.testing.assert_array_equal(rntk_kernel(X, readout_stride=3), rntk_kernel(X))
    # a series of constant steps: every readout pair sees shifted copies of the same
    # input, so the mean kernel differs from the last-step one
    assert not np.allclose(rntk_kernel(X, readout="mean"), rntk_kernel(X))


def test_mean_readout_options_are_validated(rng):
    X = rng.normal(size=(3, 5))
    with pytest.raises(ValueError, match="readout"):
        rntk_kernel(X, readout="max")
    with pytest.raises(ValueError, match="readout_stride"):
        rntk_kernel(X, readout="mean", readout_stride=0)
    with pytest.raises(ValueError, match="readout_stride"):
        rntk_kernel(X, readout="mean", readout_stride=1.5)
    with pytest.raises(ValueError, match="readout"):
        RNTKClassifierCV(estimator=RNTKClassifier(readout="max")).fit(X, [0, 1, 0])


@pytest.mark.parametrize("stride, band", [(1, None), (2, None), (1, 2)])
def test_mean_readout_torch_equals_numba(rng, stride, band):
    pytest.importorskip("torch")
    from rntk.nn import rntk_kernel_torch

    X = [rng.normal(size=(t, 2)) for t in (4, 7, 1, 5)]
    Y = [rng.normal(size=(t, 2)) for t in (6, 3, 4, 2)]
    params = dict(n_layers=2, activation="erf", sigma_b=0.3, sigma_h=0.4, diff=True,
                  direction="bidirectional", readout="mean", readout_stride=stride,
                  readout_band=band)
    np.testing.assert_allclose(rntk_kernel_torch(X, **params).numpy(),
                               rntk_kernel(X, **params), rtol=1e-12)
    np.testing.assert_allclose(rntk_kernel_torch(X, Y, **params).numpy(),
                               rntk_kernel(X, Y, **params), rtol=1e-12)
    np.testing.assert_allclose(rntk_kernel_torch(X, Y, paired=True, **params).numpy(),
                               np.diag(rntk_kernel(X, Y, **params)), rtol=1e-12)


@pytest.mark.parametrize("direction, activation, stride", [
    ("forward", "relu", 1), ("bidirectional", "erf", 2),
])
def test_empirical_ntk_of_mean_readout_networks_converges(direction, activation, stride):
    """Wide networks whose readout averages the hidden states tend to the mean kernel."""
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork

    rng = np.random.default_rng(5)
    X = [rng.standard_normal(T) for T in (3, 6, 4)]
    params = dict(activation=activation, sigma_h=0.3, sigma_b=0.2, readout="mean",
                  readout_stride=stride, sigma_w=2**0.5 if activation == "relu" else 1.2)
    K = rntk_kernel(X, direction=direction, **params)
    assert not np.allclose(K, rntk_kernel(X, direction=direction,
                                          **{**params, "readout": "last"}), rtol=0.05)
    assert_wide_networks_converge(
        torch, K, X, lambda width: RNTKNetwork(1, width, direction=direction, **params))


def test_mean_readout_network_forward_and_generic_ntk_agree():
    torch = pytest.importorskip("torch")
    from rntk.nn import ElmanRNN, empirical_ntk

    torch.manual_seed(0)
    net = ElmanRNN(2, 8, readout="mean", readout_stride=2).double()
    X = [torch.randn(4, 2, dtype=torch.float64), torch.randn(7, 2, dtype=torch.float64)]
    # the readout by hand: steps T, T - 2, ... of each series
    with torch.no_grad():
        h = [torch.stack([_hidden(net, x)[t] for t in range(len(x) - 1, -1, -2)]).mean(0)
             for x in X]
        expected = torch.stack([net.sigma_v / 8**0.5 * hx @ net.V.T for hx in h])
        np.testing.assert_allclose(net(X).numpy(), expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(net.ntk(X, seed=None), empirical_ntk(net, X, seed=None),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="readout"):
        ElmanRNN(1, 4, readout="max")


def _hidden(net, x):
    """The hidden states of a one-layer ElmanRNN over one series, by hand."""
    import torch

    h = torch.zeros(net.hidden_size, dtype=x.dtype)
    out = []
    for t in range(len(x)):
        g = (net.sigma_w[0] / net.hidden_size**0.5 * net.W[0] @ h
             + net.sigma_u[0] / x.shape[1]**0.5 * net.U[0] @ x[t] + net.sigma_b[0] * net.b[0])
        h = torch.relu(g)
        out.append(h)
    return out


# --- the banded mean readout --------------------------------------------------------------
def test_banded_mean_readout_limits(rng):
    X = [rng.normal(size=t) for t in (5, 9, 6)]
    Y = [rng.normal(size=t) for t in (7, 2)]
    mean = dict(readout="mean", readout_stride=1)
    # a band far wider than the series: every pair weighs almost 1, the plain mean
    np.testing.assert_allclose(rntk_kernel(X, Y, readout_band=10**7, **mean),
                               rntk_kernel(X, Y, **mean), rtol=1e-5)
    # one readout per series: the last-step kernel, whatever the band
    np.testing.assert_allclose(rntk_kernel(X, Y, readout="mean", readout_stride=9,
                                           readout_band=0), rntk_kernel(X, Y), rtol=1e-13)
    # the band compares fewer pairs: it differs from the plain mean
    assert not np.allclose(rntk_kernel(X, readout_band=1, **mean), rntk_kernel(X, **mean),
                           rtol=0.05)
    # ignored by the last-step readout
    np.testing.assert_array_equal(rntk_kernel(X, readout_band=2), rntk_kernel(X))


def test_banded_mean_readout_is_validated(rng):
    X = rng.normal(size=(3, 5))
    for bad in (-1, 1.5, "2"):
        with pytest.raises(ValueError, match="readout_band"):
            rntk_kernel(X, readout="mean", readout_band=bad)
    pytest.importorskip("torch")
    from rntk.nn import ElmanRNN

    with pytest.raises(ValueError, match="max_length"):
        ElmanRNN(1, 4, readout="mean", readout_band=2)
    net = ElmanRNN(1, 4, readout="mean", readout_band=2, max_length=5).double()
    with pytest.raises(ValueError, match="max_length"):
        net(np.zeros((1, 6)))


@pytest.mark.parametrize("direction, activation, stride, band", [
    ("forward", "relu", 1, 2), ("bidirectional", "erf", 2, 1),
])
def test_empirical_ntk_of_banded_readout_networks_converges(direction, activation, stride,
                                                            band):
    """Wide networks with time-correlated readout weights tend to the banded kernel."""
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork

    rng = np.random.default_rng(5)
    X = [rng.standard_normal(T) for T in (3, 6, 4)]
    params = dict(activation=activation, sigma_h=0.3, sigma_b=0.2, readout="mean",
                  readout_stride=stride, readout_band=band,
                  sigma_w=2**0.5 if activation == "relu" else 1.2)
    K = rntk_kernel(X, direction=direction, **params)
    assert not np.allclose(K, rntk_kernel(X, direction=direction,
                                          **{**params, "readout_band": None}), rtol=0.05)
    assert_wide_networks_converge(
        torch, K, X,
        lambda width: RNTKNetwork(1, width, direction=direction, max_length=6, **params))


def test_banded_readout_network_forward_and_generic_ntk_agree():
    torch = pytest.importorskip("torch")
    from rntk.nn import ElmanRNN, empirical_ntk

    torch.manual_seed(0)
    band = 1
    net = ElmanRNN(2, 8, readout="mean", readout_stride=2, readout_band=band,
                   max_length=7).double()
    assert tuple(net.V.shape) == (4 + band, 1, 8)
    X = [torch.randn(4, 2, dtype=torch.float64), torch.randn(7, 2, dtype=torch.float64)]
    # by hand: readout k (from the end) has weights (Z_k + ... + Z_{k+B}) / sqrt(B + 1)
    with torch.no_grad():
        expected = []
        for x in X:
            steps = list(range(len(x) - 1, -1, -2))
            h = _hidden(net, x)
            f = sum(net.V[k:k + band + 1].sum(0) / (band + 1) ** 0.5 @ h[t]
                    for k, t in enumerate(steps))
            expected.append(net.sigma_v / 8**0.5 * f / len(steps))
        np.testing.assert_allclose(net(X).numpy(), torch.stack(expected).numpy(), rtol=1e-12)
    np.testing.assert_allclose(net.ntk(X, seed=None), empirical_ntk(net, X, seed=None),
                               rtol=1e-10)


def test_rms_normalisation_scales_each_step(rng):
    from rntk import RNTKClassifier

    X = [rng.normal(size=t) * s for t, s in ((5, 3.0), (9, 0.1), (6, 1.0), (7, 20.0))]
    y = [0, 1, 0, 1]
    clf = RNTKClassifier(normalize="rms", readout="mean", model="ridge").fit(X, y)
    scaled = [x / np.sqrt(np.mean(x**2)) for x in X]  # unit root-mean-square
    # (univariate pairs start at correlation +-1, where rounding is amplified: 1e-8)
    np.testing.assert_allclose(clf._gram(clf.X_fit_), rntk_kernel(scaled, readout="mean"),
                               rtol=1e-8)
    with pytest.raises(ValueError, match="normalize"):
        RNTKClassifier(normalize="z").fit(X, y)


def test_pool_series_of_mixed_shapes_keeps_each_series_and_its_order(rng):
    from rntk._utils import pool_series

    # lengths with and without a short first block, two of each shape, two channels
    X = [rng.normal(size=(t, 2)) for t in (7, 9, 7, 3, 9, 1)]
    pooled = pool_series(X, 3)

    def by_hand(s):
        head = len(s) % 3
        blocks = [s[head + k:head + k + 3].mean(axis=0) for k in range(0, len(s) - head, 3)]
        return np.array(([s[:head].mean(axis=0)] if head else []) + blocks)

    assert [p.shape for p in pooled] == [(3, 2), (3, 2), (3, 2), (1, 2), (3, 2), (1, 2)]
    for p, s in zip(pooled, X):
        np.testing.assert_allclose(p, by_hand(s), rtol=1e-14)
        assert p.flags.c_contiguous

def test_pooling_averages_blocks_of_steps_from_the_end(rng):
    from rntk import RNTKClassifier, RNTKClassifierCV

    # 7 steps in blocks of 3 from the end: (x1), (x2 x3 x4), (x5 x6 x7)
    X = [np.arange(1.0, 8.0), rng.normal(size=6), rng.normal(size=(2, 1)), rng.normal(size=4)]
    y = [0, 1, 0, 1]
    clf = RNTKClassifier(normalize=False, pool=3, readout="mean", model="ridge").fit(X, y)
    np.testing.assert_allclose(clf.X_fit_[0].ravel(), [1.0, 3.0, 6.0])
    by_hand = [np.array([1.0, 3.0, 6.0]), X[1].reshape(2, 3).mean(1),
               X[2].mean(keepdims=True), np.r_[X[3][0], X[3][1:].mean()]]
    np.testing.assert_allclose(clf._gram(clf.X_fit_), rntk_kernel(by_hand, readout="mean"),
                               rtol=1e-12)
    np.testing.assert_allclose(clf.decision_function(X[:2]),
                               clf.estimator_.decision_function(
                                   rntk_kernel(by_hand[:2], by_hand, readout="mean")),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="pool"):
        RNTKClassifier(pool=0).fit(X, y)
    # the pooling is a kernel setting of the search: one Gram per pool
    search = RNTKClassifierCV(param_grid={"pool": [1, 2], "alpha": [1e-3, 1.0]}).fit(X, y)
    assert sorted(search.cv_results_["param_pool"]) == [1, 1, 2, 2]
    best = RNTKClassifier(model="ridge", **search.best_params_).fit(X, y)
    np.testing.assert_allclose(search.decision_function(X), best.decision_function(X),
                               rtol=1e-10)


def test_sums_of_family_kernels_are_kernel_objects_sums(rng):
    """A weighted sum of two networks' kernels (scikit-learn kernel algebra on RNTK)."""
    from sklearn.gaussian_process.kernels import ConstantKernel

    from rntk import RNTK, as_object_array

    X = [rng.normal(size=t) for t in (5, 7, 3, 6)]
    last = dict(direction="bidirectional", n_layers=2, diff=True)
    mean = dict(readout="mean", readout_band=2, sigma_w=1.2)
    k = RNTK(**last) + ConstantKernel(0.5, "fixed") * RNTK(**mean)
    np.testing.assert_allclose(k(as_object_array(X)),
                               rntk_kernel(X, **last) + 0.5 * rntk_kernel(X, **mean),
                               rtol=1e-12)
