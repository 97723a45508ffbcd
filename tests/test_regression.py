"""The regressor on real data: the ridge with an intercept, the mean as a candidate, the
data set's channel map, the averaged default grid and its large-n path."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.kernel_ridge import KernelRidge

from rntk import RNTKRegressor, RNTKRegressorCV, rntk_kernel
from rntk._model_selection import DEFAULT_REGRESSION_N_AVERAGE, DEFAULT_REGRESSION_SETTINGS
from rntk._model_selection._refit import gated_top
from rntk._utils import as_sequences
from rntk._utils._sequences import channel_statistics, standardize_channels
from rntk.model_selection import (
    DEFAULT_REGRESSION_ALPHA,
    AveragedRegressor,
    KernelRidgeRegressor,
    default_regression_grid,
)
from tests.reference import rntk_gram


def _data(rng, n=24, T=10, m=2, level=100.0):
    X = level + rng.normal(size=(n, T, m)) * [1.0, 50.0][:m]
    y = X[:, -1, 0] - X[:, :, -1].mean(axis=1) / 50 + 0.1 * rng.normal(size=n)
    return X, y


# -- the ridge regressor -----------------------------------------------------------------


def test_the_intercept_against_a_refit(rng):
    """``dual_coef_`` and ``intercept_`` solve the bordered system of ridge + intercept."""
    X, y = _data(rng)
    K = rntk_kernel(X)
    alpha = 1e-2
    reg = KernelRidgeRegressor(alpha=alpha, clip=False).fit(K, y)
    n = len(y)
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = K + alpha * np.trace(K) / n * np.eye(n)
    sol = np.linalg.solve(A, np.r_[0.0, y])
    np.testing.assert_allclose(reg.intercept_, sol[0], rtol=1e-8)
    np.testing.assert_allclose(reg.dual_coef_, sol[1:], rtol=1e-6, atol=1e-10)
    assert abs(reg.dual_coef_.sum()) < 1e-8 * np.abs(reg.dual_coef_).sum()
    # the estimator on series: the same model
    est = RNTKRegressor(model="ridge", alpha=alpha).fit(X, y)
    np.testing.assert_allclose(est.predict(X[:5]),
                               np.clip(K[:5] @ sol[1:] + sol[0], y.min(), y.max()), rtol=1e-8)


def test_a_large_ridge_tends_to_the_mean_not_to_zero(rng):
    X, y = _data(rng)
    y = y + 1000.0
    K = rntk_kernel(X)
    far = KernelRidgeRegressor(alpha=1e8).fit(K, y).predict(K[:4])
    np.testing.assert_allclose(far, y.mean(), rtol=1e-6)
    assert np.all(KernelRidge(alpha=1e8 * np.trace(K) / len(K), kernel="precomputed")
                  .fit(K, y).predict(K[:4]) < 0.01 * y.mean())  # scikit-learn's: to zero
    inf = RNTKRegressor(model="ridge", alpha=np.inf).fit(X, y)
    np.testing.assert_allclose(inf.predict(X[:4]), y.mean())
    assert not inf.dual_coef_.any()


def test_the_mean_computes_no_kernel(rng, monkeypatch):
    X, y = _data(rng)
    reg = RNTKRegressor(model="ridge", alpha=np.inf).fit(X, y)
    monkeypatch.setattr(type(reg), "_gram", lambda *a, **k: pytest.fail("a Gram"))
    np.testing.assert_allclose(reg.predict(X[:3]), y.mean())


def test_predictions_are_clipped_to_the_training_range(rng):
    X, y = _data(rng)
    reg = RNTKRegressor(model="ridge", alpha=1e-4, normalize="dataset").fit(X, y)
    far = X[:3] * 5.0  # far outside the training inputs
    pred = reg.predict(far)
    assert np.all(pred >= y.min()) and np.all(pred <= y.max())
    unclipped = KernelRidgeRegressor(alpha=1e-4, clip=False).fit(
        reg._gram(reg.X_fit_), y).predict(reg._gram(reg._prepare(list(far), fitted=True),
                                                    reg.X_fit_))
    assert np.any((unclipped < y.min()) | (unclipped > y.max()))  # the clip acted
    # multi-output: per target
    Y = np.c_[y, -3 * y]
    pred = RNTKRegressor(model="ridge", alpha=1e-4).fit(X, Y).predict(far)
    assert pred.shape == (3, 2)
    assert np.all((pred >= Y.min(axis=0)) & (pred <= Y.max(axis=0)))


@pytest.mark.parametrize("kw, message", [
    ({"model": "ridge", "alpha": 0.0}, "alpha must be > 0"),
    ({"alpha": np.inf}, "alpha=inf .* needs model='ridge'"),
])
def test_bad_ridges_are_refused(rng, kw, message):
    X, y = _data(rng)
    with pytest.raises(ValueError, match=message):
        RNTKRegressor(**kw).fit(X, y)


# -- the data set's channel map -----------------------------------------------------------


def test_normalize_dataset_is_the_kernel_of_the_standardised_series(rng):
    """Each channel standardised with the training statistics, then the RNTK (reference)."""
    X, y = _data(rng, n=6, T=5)
    reg = RNTKRegressor(model="ridge", normalize="dataset", sigma_b=0.3).fit(X, y)
    flat = X.reshape(-1, 2)
    np.testing.assert_allclose(reg.channel_mean_, flat.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(reg.channel_scale_, flat.std(axis=0), rtol=1e-12)
    Z = [(x - flat.mean(axis=0)) / flat.std(axis=0) for x in X]
    np.testing.assert_allclose(reg._gram(reg.X_fit_), rntk_gram(Z, sigma_b=0.3), rtol=1e-9)
    # predict reads new series with the training statistics, not their own
    Xt = X[:2] + 30.0
    Zt = [(x - flat.mean(axis=0)) / flat.std(axis=0) for x in Xt]
    np.testing.assert_allclose(reg._test_gram(Xt), rntk_gram(Zt, Z, sigma_b=0.3), rtol=1e-9)


def test_normalize_dataset_ignores_a_common_affine_map_of_each_channel(rng):
    X, y = _data(rng)
    a, b = np.array([3.0, 0.01]), np.array([-7.0, 1e4])
    one = RNTKRegressor(model="ridge", alpha=1e-3, normalize="dataset").fit(X[:18], y[:18])
    two = RNTKRegressor(model="ridge", alpha=1e-3, normalize="dataset").fit(
        X[:18] * a + b, y[:18])
    np.testing.assert_allclose(two.predict(X[18:] * a + b), one.predict(X[18:]), rtol=1e-7)


def _signed_log_by_hand(x, s):
    return np.array([[np.copysign(np.log(1.0 + abs(v) / s[c]), v) if v else 0.0
                      for c, v in enumerate(row)] for row in x])


def test_normalize_log_is_the_kernel_of_the_signed_log_of_the_series(rng):
    """Each value x read as sign(x) log(1 + |x| / s), s the median |x| of its channel over
    the training values; then the RNTK (reference); new series with the training scale."""
    counts = rng.lognormal(3.0, 1.5, size=(6, 5, 2)) * rng.choice([-1.0, 1.0], (6, 5, 2))
    y = rng.normal(size=6)
    reg = RNTKRegressor(model="ridge", normalize="log", sigma_b=0.3).fit(counts, y)
    s = np.median(np.abs(counts.reshape(-1, 2)), axis=0)
    np.testing.assert_allclose(reg.log_scale_, s, rtol=1e-15)
    Z = [_signed_log_by_hand(x, s) for x in counts]
    np.testing.assert_allclose(reg._gram(reg.X_fit_), rntk_gram(Z, sigma_b=0.3), rtol=1e-9)
    new = counts[:2] * 100.0
    Zt = [_signed_log_by_hand(x, s) for x in new]
    np.testing.assert_allclose(reg._test_gram(new), rntk_gram(Zt, Z, sigma_b=0.3), rtol=1e-9)
    # a common factor of every series changes only the scale: the same Gram
    again = RNTKRegressor(model="ridge", normalize="log", sigma_b=0.3).fit(counts * 1e-5, y)
    np.testing.assert_allclose(again._gram(again.X_fit_), reg._gram(reg.X_fit_), rtol=1e-9)
    # a refit without the map drops its scale
    reg.set_params(normalize=False).fit(counts, y)
    assert not hasattr(reg, "log_scale_")


def test_the_log_scale_of_channels_mostly_or_all_zeros():
    from rntk._utils._sequences import log_scales, signed_log

    xs = [np.array([[0.0, 0.0, 2.0], [0.0, 0.0, -6.0]]), np.array([[3.0, 0.0, 4.0]])]
    s = log_scales(xs)
    np.testing.assert_allclose(s, [1.0, 1.0, 4.0])  # median 0: the mean |x| (1); none: 1
    out = signed_log(xs, s)
    assert np.all(np.isfinite(np.concatenate(out)))
    np.testing.assert_allclose(out[0][:, 2], [np.log(1.5), -np.log(2.5)], rtol=1e-15)
    assert not np.concatenate(out)[:, 1].any()


def test_a_search_refits_the_log_map_with_its_scale(rng):
    counts = rng.lognormal(3.0, 1.5, size=(12, 8))
    y = np.log(counts).mean(axis=1)
    search = RNTKRegressorCV({"normalize": ["log"], "alpha": [1e-2, 1e-1]}).fit(counts, y)
    best = search.best_estimator_
    np.testing.assert_allclose(best.log_scale_, [np.median(counts)], rtol=1e-15)
    one = clone(best).fit(counts, y)  # the best candidate fitted alone
    assert one.get_params()["normalize"] == "log"
    np.testing.assert_allclose(search.predict(counts[:3] * 2), one.predict(counts[:3] * 2),
                               rtol=1e-8)


def test_channel_statistics_near_the_float_limits_and_constant_channels():
    xs = [np.array([[1e300, 5.0], [-1e300, 5.0]]), np.array([[3e299, 5.0]])]
    mean, scale = channel_statistics(xs)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(scale)) and scale[0] > 1e299
    assert scale[1] == 1.0  # a constant channel becomes zeros, not NaN
    Z = standardize_channels(xs, mean, scale)
    assert np.all(np.isfinite(np.concatenate(Z))) and not np.concatenate(Z)[:, 1].any()


# -- the search ---------------------------------------------------------------------------


def test_the_default_grid(rng):
    X, y = _data(rng, T=150)
    lengths = [len(x) for x in X]
    grid = default_regression_grid(lengths, DEFAULT_REGRESSION_ALPHA)
    assert len(grid) == len(DEFAULT_REGRESSION_SETTINGS) == 4
    assert grid[0]["spectrum"] == [64] and "pool" not in grid[0]  # 150 steps: 64 bins
    assert grid[1]["pool"] == [3] and grid[2]["quantiles"] == [32]  # at most 64 steps
    assert grid[3]["intervals"] == [8]
    assert all(g["normalize"] == ["dataset"] for g in grid)
    assert grid[0]["alpha"][-1] == np.inf
    search = RNTKRegressorCV().fit(X, y)
    assert len(search.cv_results_["params"]) == 4 * len(DEFAULT_REGRESSION_ALPHA)
    assert isinstance(search.best_estimator_, AveragedRegressor)
    assert len(search.averaged_params_) == DEFAULT_REGRESSION_N_AVERAGE
    assert search.averaged_params_[0] == search.best_params_


class _LOOScorer:
    """The members' LOO predictions are given (``loo_of``): nothing is scored."""

    def regression_loo(self, K, y, alphas):  # pragma: no cover - never reached
        raise AssertionError("gated_top reads loo_of")


def _gate(gained, n_average=2):
    """``gated_top`` with gated member 0 and members 1, 2; member 0 gains ``gained``."""
    y = np.zeros(len(gained))
    # members 1 and 2 err by 1 everywhere, member 0 by e0: member 0 alone errs by e0, the
    # average of (0, 1) by (1 + e0) / 2; their squared errors fall by ``gained``
    root = np.sqrt(1.0 - gained)
    e0 = root if n_average == 1 else 2.0 * root - 1.0
    loo_of = {0: e0[:, None], 1: np.ones((len(y), 1)), 2: np.ones((len(y), 1))}
    top = [(0, None), (1, None), (2, None)]
    candidates = [{"alpha": 1.0}] * 3
    return [i for i, _ in gated_top(top[:n_average + 1], frozenset({0}), n_average,
                                   candidates, y, _LOOScorer(), loo_of)]


def test_a_gated_setting_enters_only_beyond_two_standard_errors(rng):
    """The gate against the z statistic of the paired LOO gain, computed here."""
    n = 40
    noise = rng.normal(size=n)
    noise = (noise - noise.mean()) / noise.std(ddof=1)  # mean 0, standard deviation 1
    se = 0.1 / np.sqrt(n)
    for z, entered in [(1.0, False), (1.9, False), (2.1, True), (5.0, True)]:
        gained = z * se + 0.1 * noise  # a mean gain of z standard errors
        assert _gate(gained) == ([0, 1] if entered else [1, 2]), z
        assert _gate(gained, n_average=1) == ([0] if entered else [1]), z
    assert _gate(np.full(n, 0.01)) == [0, 1]  # a gain without spread: clear
    assert _gate(np.full(n, -0.01)) == [1, 2]  # a loss


def test_the_gate_opens_where_the_interval_statistics_explain_the_targets(rng):
    """Targets an interval statistic (the spread of the first half over the second's)."""
    n, T = 40, 256
    X = rng.normal(size=(n, T))
    y = X[:, :T // 2].std(axis=1) - X[:, T // 2:].std(axis=1)
    search = RNTKRegressorCV().fit(X, y)
    assert any("intervals" in p for p in search.averaged_params_)
    three = RNTKRegressorCV(default_regression_grid(
        [T] * n, DEFAULT_REGRESSION_ALPHA, DEFAULT_REGRESSION_SETTINGS[:3]),
        n_average=2).fit(X, y)
    assert search.loo_score_ > three.loo_score_ + 0.2


def test_a_closed_gate_is_the_search_of_the_three_settings(rng):
    """Where the statistics do not pay, the default is the three settings' search."""
    n, T = 30, 32
    y = rng.uniform(1.0, 6.0, size=n)  # the frequency of a sine: the spectrum's
    X = np.sin(2 * np.pi * y[:, None] * np.arange(T) / T + rng.uniform(0, 6, size=(n, 1)))
    search = RNTKRegressorCV().fit(X, y)
    assert not any("intervals" in p for p in search.averaged_params_)
    lengths = [len(x) for x in X]
    three = RNTKRegressorCV(default_regression_grid(
        lengths, DEFAULT_REGRESSION_ALPHA, DEFAULT_REGRESSION_SETTINGS[:3]),
        n_average=2).fit(X, y)
    assert search.averaged_params_ == three.averaged_params_
    np.testing.assert_allclose(search.predict(X[:6]), three.predict(X[:6]), rtol=1e-10)


def test_the_averages_loo_is_the_average_of_the_members_loo(rng):
    """``loo_score_``: the LOO R^2 of the average, from the members' brute-force LOO."""
    from tests.test_model_selection import _brute_force_loo

    X, y = _data(rng, n=16, T=8)
    grid = [{"sigma_b": [0.1], "alpha": [1e-3, 1e-1, np.inf]},
            {"sigma_b": [1.0], "normalize": ["dataset"], "alpha": [1e-3, 1e-1, np.inf]}]
    search = RNTKRegressorCV(grid, n_average=2).fit(X, y)
    loo = []
    for params in search.averaged_params_:
        est = RNTKRegressor(model="ridge", **params)
        xs = est._prepare([np.asarray(x, float) for x in X])
        loo.append(_brute_force_loo(est._gram(xs), y, params["alpha"]))
    avg = np.mean(loo, axis=0)
    r2 = 1 - np.sum((avg - y) ** 2) / np.sum((y - y.mean()) ** 2)
    assert search.loo_score_ == pytest.approx(r2, rel=1e-8)
    members = [RNTKRegressor(model="ridge", **p).fit(X, y) for p in search.averaged_params_]
    np.testing.assert_allclose(search.predict(X[:4]),
                               np.mean([m.predict(X[:4]) for m in members], axis=0),
                               rtol=1e-10)


def test_multi_output_and_missing_values(rng):
    X, y = _data(rng, n=20, T=12)
    X = X.copy()
    X[3, 4, 1] = np.nan
    Y = np.c_[y, y ** 2 / 100]
    with pytest.raises(ValueError, match="missing"):
        RNTKRegressorCV().fit(X, Y)
    search = RNTKRegressorCV(missing="interpolate").fit(X, Y)
    assert search.predict(X[:5]).shape == (5, 2)
    assert np.isfinite(search.loo_score_)


def test_representations_with_the_default_regression_grid_are_refused(rng):
    X, y = _data(rng)
    with pytest.raises(ValueError, match="quantiles=8 is set on the estimator of "
                                         "RNTKRegressorCV"):
        RNTKRegressorCV(estimator=RNTKRegressor(quantiles=8)).fit(X, y)


def test_large_n_with_every_series_a_landmark_is_the_exact_search(rng):
    """Above ``large_n`` the search runs on Nystroem features; with m = n, exactly."""
    X, y = _data(rng, n=30, T=12)
    exact = RNTKRegressorCV(large_n=None, precision="float64").fit(X, y)
    features = RNTKRegressorCV(large_n=10, n_components=30).fit(X, y)
    np.testing.assert_allclose(features.cv_results_["mean_test_score"],
                               exact.cv_results_["mean_test_score"], rtol=1e-6, atol=1e-9)
    assert features.averaged_params_ == exact.averaged_params_
    np.testing.assert_allclose(features.predict(X[:6]), exact.predict(X[:6]), rtol=1e-6)
    few = RNTKRegressorCV(large_n=10, n_components=12).fit(X, y)
    assert all(len(m.X_fit_) == 12 for m in few.best_estimator_.estimators_)
    assert few.score(X, y) > 0.5


def test_the_regressor_beats_the_mean_on_a_level_and_scale_task(rng):
    """The target is the level of one channel and the scale of another: the default,
    whose series keep their level and scale, finds it; a per-series scaling could not."""
    n, T = 60, 20
    level = rng.uniform(-2, 2, size=n)
    scale = rng.uniform(0.5, 3, size=n)
    X = np.stack([level[:, None] + 0.3 * rng.normal(size=(n, T)),
                  scale[:, None] * rng.normal(size=(n, T))], axis=2)
    y = level + scale
    search = RNTKRegressorCV().fit(X[:45], y[:45])
    rmse = np.sqrt(np.mean((search.predict(X[45:]) - y[45:]) ** 2))
    assert rmse < 0.5 * np.std(y[45:])
    assert search.loo_score_ > 0.5


def test_gram_of_the_tuning_script_matches_the_estimator(rng):
    """``benchmarks/studies/tune_regression_grid.py`` prepares series as the estimator does."""
    import importlib.util
    from pathlib import Path

    path = (Path(__file__).resolve().parents[1] / "benchmarks" / "studies"
            / "tune_regression_grid.py")
    spec = importlib.util.spec_from_file_location("tune_regression_grid", path)
    tune = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tune)
    X, y = _data(rng, n=8, T=40)
    xs = as_sequences(X)
    stats = channel_statistics(xs)
    for key in ("spectrum64", "band64", "quantiles32", "pool8", "band64_rms", "pool4_raw",
                "band64_diff"):
        params = tune._setting(key, [len(x) for x in xs])
        est = RNTKRegressor(model="ridge", **params)
        kernel = {k: v for k, v in params.items()
                  if k not in ("normalize", "pool", "spectrum", "quantiles")}
        np.testing.assert_allclose(rntk_kernel(tune._prepare(params, xs, stats), **kernel),
                                   est._gram(est._prepare(xs)), rtol=1e-12)


def test_the_targets_scale_and_offset_change_nothing(rng):
    """The search is equivariant to an affine map of the targets: standardising them, or
    measuring them in other units, selects the same model and maps the predictions."""
    X, y = _data(rng, n=20, T=12)
    one = RNTKRegressorCV().fit(X, y)
    two = RNTKRegressorCV().fit(X, 1e4 * y - 3e5)
    assert two.averaged_params_ == one.averaged_params_
    np.testing.assert_allclose(two.cv_results_["mean_test_score"],
                               one.cv_results_["mean_test_score"], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(two.predict(X[:5]), 1e4 * one.predict(X[:5]) - 3e5,
                               rtol=1e-8)
