"""The Numba RNTK engine against the slow scalar reference of tests/reference.py."""

import numpy as np
import pytest

from rntk import rntk_kernel
from rntk._kernels import _rntk as engine
from rntk._kernels import rntk_diag

from .reference import mean_readout_gram, rntk_gram


def _mixed(rng, n, m, lengths=(3, 7)):
    return [rng.normal(size=(int(rng.integers(*lengths)), m)) for _ in range(n)]


CASES = [
    dict(activation="relu"),
    dict(activation="relu", n_layers=3, sigma_w=[1.2, 1.5, 1.4], sigma_u=[1.0, 0.7, 1.3],
         sigma_b=0.3, sigma_h=0.5, sigma_v=0.8),
    dict(activation="erf", sigma_w=1.0, sigma_u=0.6, sigma_b=0.05, sigma_h=0.2),
    dict(activation="erf", n_layers=3, sigma_w=1.1, sigma_u=1.5, sigma_b=[0.0, 0.1, 0.2],
         sigma_h=1.0),
    dict(activation="linear", sigma_w=0.9, sigma_b=0.1, sigma_h=0.3),
    dict(activation="linear", n_layers=3, sigma_w=0.8, sigma_u=1.1, sigma_h=0.1),
    dict(activation="relu", sigma_w=1.38, sigma_b=2.0, sigma_h=1.0),
]


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@pytest.mark.parametrize("kind", ["ntk", "nngp"])
@pytest.mark.parametrize("params", CASES)
def test_gram_matches_reference(params, kind):
    rng = np.random.default_rng(len(str(params)))
    X = _mixed(rng, 5, 2)
    Y = _mixed(rng, 4, 2)
    K = rntk_kernel(X, **params, kind=kind)
    K_ref = rntk_gram(X, **params, kind=kind)
    assert _rel(K, K_ref) < 1e-10
    KY = rntk_kernel(X, Y, **params, kind=kind)
    assert _rel(KY, rntk_gram(X, Y, **params, kind=kind)) < 1e-10
    assert _rel(rntk_diag(X, **params, kind=kind), np.diag(K_ref)) < 1e-10


def test_sigma_h_only_on_the_diagonal_of_k_xx(rng):
    X = _mixed(rng, 4, 1)
    K_xx = rntk_kernel(X, sigma_h=0.7)
    K_xy = rntk_kernel(X, X, sigma_h=0.7)
    off = ~np.eye(4, dtype=bool)
    assert np.allclose(K_xx[off], K_xy[off], rtol=1e-13)
    # a series paired with a copy of itself has no shared initial state
    assert np.all(np.diag(K_xx) > np.diag(K_xy))
    assert _rel(np.diag(K_xy), np.diag(rntk_gram(X, [x.copy() for x in X], sigma_h=0.7))) < 1e-10


def test_many_columns_span_several_tiles(rng):
    # more columns than one work tile, rows of both lengths, and an odd count
    X = [rng.normal(size=(int(rng.integers(2, 6)), 1)) for _ in range(300)]
    K = rntk_kernel(X, sigma_b=0.1, sigma_h=0.2)
    idx = [0, 1, 150, 257, 299]
    sub = rntk_gram([X[i] for i in idx], sigma_b=0.1, sigma_h=0.2)
    assert _rel(K[np.ix_(idx, idx)], sub) < 1e-10
    KY = rntk_kernel(X[:7], X, sigma_b=0.1)
    assert _rel(KY[:, 280:], rntk_gram(X[:7], X[280:], sigma_b=0.1)) < 1e-10


@pytest.mark.parametrize("stride, band", [(1, 2), (2, None), (1, None)])
def test_mean_readout_of_several_channels_matches_reference(rng, stride, band):
    # several channels: the engine computes the input products of a group of chains
    # in one pass, then runs each chain; series of mixed lengths on both sides
    X = _mixed(rng, 5, 3, lengths=(2, 9))
    Y = _mixed(rng, 3, 3, lengths=(2, 9))
    params = dict(sigma_w=1.2, sigma_u=0.8, sigma_b=0.1, sigma_h=0.4)
    kw = dict(readout="mean", readout_stride=stride, readout_band=band)
    K = rntk_kernel(X, **params, **kw)
    assert _rel(K, mean_readout_gram(X, stride=stride, band=band, **params)) < 1e-10
    KY = rntk_kernel(X, Y, **params, **kw)
    assert _rel(KY, mean_readout_gram(X, Y, stride=stride, band=band, **params)) < 1e-10


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_chains_in_groups_give_the_same_gram(rng, monkeypatch, precision):
    # a buffer of input products smaller than a work item's chains: the chains run in
    # groups (of 1, of 3), each product computed alike, so the Gram is the same bitwise
    X = _mixed(rng, 7, 4, lengths=(3, 12))
    kw = dict(readout="mean", readout_stride=1, readout_band=4, precision=precision)
    K = rntk_kernel(X, **kw)
    KY = rntk_kernel(X[:3], X, **kw)
    for products in (1, 3 * 11 * 7):
        monkeypatch.setattr(engine, "_PRODUCTS", products)
        np.testing.assert_array_equal(rntk_kernel(X, **kw), K)
        np.testing.assert_array_equal(rntk_kernel(X[:3], X, **kw), KY)
