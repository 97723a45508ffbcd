"""The quantile representation (``quantiles=``): the transform, its kernel, wide networks."""

import numpy as np
import pytest

from rntk import RNTKClassifier, RNTKClassifierCV, rntk_kernel
from tests.reference import family_gram
from tests.transforms import value_quantiles
from tests.wide_networks import assert_wide_networks_converge


def _quantile_by_hand(v, n_levels):
    """Order statistics read at (k + 1/2) / n, interpolated between neighbours, by hand."""
    s = sorted(float(a) for a in v)
    out = []
    for k in range(n_levels):
        h = (len(s) - 1) * (k + 0.5) / n_levels  # the position among the order statistics
        lo = int(h)
        hi = min(lo + 1, len(s) - 1)
        out.append(s[lo] + (h - lo) * (s[hi] - s[lo]))
    out = np.array(out)
    rms = np.sqrt(np.mean(out**2))
    return out / rms if rms > 0 else out


def test_the_quantiles_are_the_interpolated_order_statistics_at_unit_rms(rng):
    X = [rng.normal(size=T) + 3.0 for T in (9, 30, 2)]
    Q = value_quantiles(X, n_levels=7)
    assert Q.shape == (3, 7, 2)
    for x, q in zip(X, Q):
        np.testing.assert_allclose(q[:, 0], _quantile_by_hand(x, 7), rtol=1e-12)
        np.testing.assert_allclose(q[:, 1], _quantile_by_hand(np.diff(x), 7), rtol=1e-12)
        np.testing.assert_allclose(np.mean(q**2, axis=0), 1.0, rtol=1e-12)
        assert np.all(np.diff(q, axis=0) >= 0)  # quantile functions do not decrease


def test_the_values_channel_ignores_the_order_of_the_steps_and_the_steps_channel_does_not(rng):
    x = rng.normal(size=40)
    shuffled = rng.permutation(x)
    Q = value_quantiles([x, shuffled, 5.0 * x], n_levels=16)
    np.testing.assert_allclose(Q[0, :, 0], Q[1, :, 0], rtol=1e-12)
    assert np.abs(Q[0, :, 1] - Q[1, :, 1]).max() > 0.1
    np.testing.assert_allclose(Q[0], Q[2], rtol=1e-12)  # a common factor is scaled away


def test_channels_lengths_and_degenerate_series(rng):
    Q = value_quantiles(rng.normal(size=(4, 10, 3)), n_levels=5)
    assert Q.shape == (4, 5, 6)  # values of the 3 channels, then their steps
    Q = value_quantiles([np.full(6, 2.0), np.zeros(4), np.array([7.0])], n_levels=3)
    np.testing.assert_allclose(Q[0], [[1.0, 0.0]] * 3)  # a constant: unit level, no steps
    np.testing.assert_array_equal(Q[1], 0.0)
    np.testing.assert_allclose(Q[2], [[1.0, 0.0]] * 3)  # one step: no differences
    tiny = value_quantiles([rng.normal(size=12) * 1e-200], n_levels=4)
    assert np.all(np.isfinite(tiny)) and np.allclose(np.mean(tiny**2, axis=1), 1.0)


SPEC = dict(readout="mean", readout_band=2, sigma_w=1.2, sigma_u=0.5, sigma_b=0.1)


def _rms_scaled(Q):
    return [q / np.sqrt(np.mean(np.sum(q**2, axis=1))) for q in Q]


def test_the_estimator_reads_the_rms_scaled_quantiles(rng):
    X = [rng.normal(size=T) for T in (9, 14, 11, 20)]
    y = [0, 1, 0, 1]
    clf = RNTKClassifier(quantiles=6, normalize="rms", model="ridge", **SPEC).fit(X, y)
    Q = _rms_scaled(value_quantiles(X, n_levels=6))  # unit root-mean-square per step
    np.testing.assert_allclose(clf._gram(clf.X_fit_), family_gram(Q, **SPEC), rtol=1e-10)
    Xn = [rng.normal(size=T) for T in (7, 30)]
    Qn = _rms_scaled(value_quantiles(Xn, n_levels=6))
    np.testing.assert_allclose(clf.decision_function(Xn),
                               clf.estimator_.decision_function(family_gram(Qn, Q, **SPEC)),
                               rtol=1e-10)
    # the quantiles are a kernel setting of the search: one Gram per value
    search = RNTKClassifierCV(param_grid={"quantiles": [None, 4], "alpha": [1e-3, 1.0]},
                              estimator=RNTKClassifier(normalize="rms", **SPEC)).fit(X, y)
    assert sorted(search.cv_results_["param_quantiles"], key=str) == [4, 4, None, None]


def test_the_quantile_kernel_tells_apart_distributions_that_the_spectrum_cannot(rng):
    # white noise of mean 0 and variance 1, uniform or two-valued: the same flat
    # spectrum, no shape in time; only the distribution of the values differs
    def series(n, kind):
        if kind == "uniform":
            return rng.uniform(-np.sqrt(3), np.sqrt(3), size=(n, 80))
        return rng.choice([-1.0, 1.0], size=(n, 80)) + 0.05 * rng.normal(size=(n, 80))
    X = np.r_[series(15, "uniform"), series(15, "two")]
    Xt = np.r_[series(20, "uniform"), series(20, "two")]
    y, yt = np.repeat([0, 1], 15), np.repeat([0, 1], 20)
    kw = dict(readout="mean", readout_band=8, sigma_w=1.2, sigma_u=0.5, sigma_b=0.1,
              normalize="rms", model="ridge", alpha=1e-2)
    assert RNTKClassifier(quantiles=16, **kw).fit(X, y).score(Xt, yt) >= 0.95
    assert RNTKClassifier(spectrum=16, **kw).fit(X, y).score(Xt, yt) <= 0.8


def test_wide_networks_reading_the_quantiles_tend_to_their_kernel(rng):
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork

    X = [rng.normal(size=T) for T in (8, 13, 10)]
    clf = RNTKClassifier(quantiles=5, normalize="rms", model="ridge", **SPEC).fit(X, [0, 1, 0])
    K = clf._gram(clf.X_fit_)
    Q = clf.X_fit_  # the network's inputs: the scaled quantiles, levels as steps
    np.testing.assert_allclose(K, rntk_kernel(Q, **SPEC), rtol=1e-12)
    # the two input channels make the width-2000 nets of 3 seeds too noisy
    assert_wide_networks_converge(
        torch, K, Q, lambda width: RNTKNetwork(2, width, max_length=5, **SPEC),
        widths=(100, 4000), seeds=4)
