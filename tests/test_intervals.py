"""The interval-statistics representation (``intervals=``, :class:`rntk.IntervalStatistics`)."""

import numpy as np
import pytest

from rntk import IntervalStatistics, RNTKRegressor, RNTKRegressorCV
from rntk._representations._algorithms import interval_series
from rntk.model_selection import default_regression_grid


def slow_statistics(series, n_intervals):
    """Independent reference: one series ``(T, m)`` at a time, numpy's own statistics."""
    series = np.asarray(series, dtype=float).reshape(len(series), -1)
    steps = np.diff(series, axis=0) if len(series) > 1 else np.zeros((1, series.shape[1]))
    counts = [k for k in (1, 2, 4, 8, 16, 32, 64) if k <= n_intervals]
    out = []
    for signal in (series, steps):
        n = len(signal)
        for k in counts:
            for i in range(k):
                lo = min(int(np.floor(i * n / k)), n - 1)
                hi = max(int(np.floor((i + 1) * n / k)), lo + 1)
                z = signal[lo:hi]
                if len(z) > 1:
                    slope = np.array([np.polyfit(np.arange(len(z)), z[:, c], 1)[0]
                                      for c in range(z.shape[1])]) * (len(z) - 1)
                else:
                    slope = np.zeros(z.shape[1])
                q1, med, q3 = np.quantile(z, [0.25, 0.5, 0.75], axis=0)
                out += [z.mean(axis=0), z.std(axis=0), slope, z.min(axis=0),
                        z.max(axis=0), np.median(z, axis=0), q3 - q1]
                assert np.allclose(med, out[-2])
    return np.concatenate(out)  # statistic-major, channel-minor: channel k * m + c


@pytest.mark.parametrize("n_intervals", [2, 5, 8])
def test_interval_statistics_match_a_slow_reference(rng, n_intervals):
    seqs = [rng.normal(size=(t, m)) for t, m in ((23, 1), (23, 1), (9, 1), (3, 1))]
    seqs += [rng.normal(size=(17, 3)), rng.normal(size=(1, 3)), rng.normal(size=(6, 3))]
    got = interval_series(seqs, n_intervals)
    for s, g in zip(seqs, got):
        want = slow_statistics(s, n_intervals)
        assert g.shape == (1, want.size)
        np.testing.assert_allclose(g[0], want, rtol=1e-10, atol=1e-12)


def test_the_statistics_say_where_a_level_is():
    """A step up early and one late: the same extremes, the halves' means apart, and
    the one step up seen in the half of the differences where it is."""
    up_early = np.r_[np.zeros(4), np.ones(12)]
    up_late = np.r_[np.zeros(12), np.ones(4)]
    t = IntervalStatistics(n_intervals=2).fit([up_early])
    f = t.transform([up_early, up_late])[:, 0]
    names = list(t.get_feature_names_out())
    assert len(names) == f.shape[1] == 2 * 3 * 7
    half1 = names.index("value_1of2_mean_x0")
    assert f[0, half1] == 0.5 and f[1, half1] == 0.0
    whole_max = names.index("value_1of1_max_x0")
    assert f[0, whole_max] == f[1, whole_max] == 1.0
    jump1, jump2 = names.index("diff_1of2_max_x0"), names.index("diff_2of2_max_x0")
    assert (f[0, jump1], f[0, jump2], f[1, jump1], f[1, jump2]) == (1.0, 0.0, 0.0, 1.0)


def test_statistics_scale_with_the_series_and_survive_huge_values(rng):
    x = rng.normal(size=(20, 2))
    base = interval_series([x], 4)[0]
    np.testing.assert_allclose(interval_series([3.0 * x], 4)[0], 3.0 * base, rtol=1e-12)
    huge = interval_series([1e300 * x], 4)[0]  # squares of 1e300 would overflow
    assert np.all(np.isfinite(huge))
    np.testing.assert_allclose(huge / 1e300, base, rtol=1e-10)


def test_the_transformer_refuses_bad_sizes_and_bad_series(rng):
    X = rng.normal(size=(3, 8))
    for bad, error in ((1, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(error, match="n_intervals"):
            IntervalStatistics(n_intervals=bad).fit_transform(X)
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN|missing"):
        IntervalStatistics().fit_transform(X)


def test_the_estimators_read_the_statistics(rng):
    """``intervals`` changes the Gram, and a level in one half is learnt from it."""
    X = rng.normal(size=(60, 32))
    y = X[:, :16].mean(axis=1) + 0.02 * rng.normal(size=60)
    common = dict(normalize="dataset", readout="mean", model="ridge", alpha=1e-4)
    with_stats = RNTKRegressor(intervals=8, **common).fit(X[:45], y[:45])
    plain = RNTKRegressor(**common).fit(X[:45], y[:45])
    err = [np.sqrt(np.mean((m.predict(X[45:]) - y[45:]) ** 2)) for m in (with_stats, plain)]
    assert err[0] < 0.5 * y.std() and err[0] < err[1]


def test_the_grid_caps_the_cut_at_the_longest_series():
    grid = default_regression_grid([5, 4], [1.0], settings=["intervals"])
    assert grid[0]["intervals"] == [5] and "pool" not in grid[0]
    assert default_regression_grid([300], None, settings=["intervals"])[0]["intervals"] == [8]


def test_a_search_over_intervals_and_another_setting(rng):
    X = [rng.normal(size=t) for t in rng.integers(10, 20, size=30)]
    y = np.array([x[: len(x) // 2].mean() for x in X])
    grid = default_regression_grid([len(x) for x in X], [1e-3, np.inf],
                                   settings=["intervals", "quantiles"])
    search = RNTKRegressorCV(grid, n_average=2).fit(X, y)
    assert search.predict(X[:4]).shape == (4,)
    assert any("intervals" in p for p in search.averaged_params_)


def test_the_estimators_gram_is_the_rntk_of_the_statistics(rng):
    """The regressor's Gram: the reference RNTK of the standardised series' statistics."""
    from rntk._utils._sequences import channel_statistics, standardize_channels
    from tests.reference import family_gram
    from tests.test_quantiles import SPEC

    X = [rng.normal(size=(T, 2)) + 3.0 for T in (30, 44, 21, 60)]
    reg = RNTKRegressor(intervals=4, normalize="dataset", model="ridge", alpha=1e-2,
                        **SPEC).fit(X, [0.0, 1.0, 0.5, 2.0])
    mean, scale = channel_statistics(X)
    F = np.stack(interval_series(standardize_channels(X, mean, scale), 4))
    np.testing.assert_allclose(reg.channel_mean_, mean)
    np.testing.assert_allclose(reg._gram(reg.X_fit_), family_gram(F, **SPEC), rtol=1e-10)


def test_wide_networks_reading_the_statistics_tend_to_their_kernel(rng):
    torch = pytest.importorskip("torch")
    from rntk import rntk_kernel
    from rntk.nn import RNTKNetwork
    from tests.test_quantiles import SPEC
    from tests.wide_networks import assert_wide_networks_converge

    X = [rng.normal(size=T) for T in (20, 26, 23)]
    reg = RNTKRegressor(intervals=2, normalize="dataset", model="ridge", alpha=1e-2,
                        **SPEC).fit(X, [0.0, 1.0, 0.5])
    F = reg.X_fit_  # the network's inputs: one step of 42 statistics
    assert F[0].shape == (1, 42)
    K = reg._gram(F)
    np.testing.assert_allclose(K, rntk_kernel(F, **SPEC), rtol=1e-12)
    assert_wide_networks_converge(
        torch, K, F, lambda width: RNTKNetwork(42, width, max_length=1, **SPEC),
        widths=(100, 4000), seeds=4)
