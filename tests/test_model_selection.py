"""The fast model selection: exact leave-one-out against explicit refits, the paper protocol
unchanged, overflowing Grams never selected."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import LeaveOneOut

from rntk import RNTKClassifier, RNTKClassifierCV, RNTKRegressor, RNTKRegressorCV, rntk_kernel
from rntk._estimators._ridge import KernelRidgeClassifier
from rntk._model_selection import (
    DEFAULT_ALPHA,
    DEFAULT_N_AVERAGE,
    DEFAULT_PRIOR,
    DEFAULT_SAME,
    DEFAULT_SETTINGS,
    LEVEL_POOL,
    MEAN_POOL,
    MULTICHANNEL_LEFT_OUT,
    AveragedClassifier,
    RidgeLOOScorer,
    default_grid,
    mean_readouts,
    search_grams,
    unit_rms,
)
from tests.reference import ridge_loo_by_refits


def _waves(rng, n_per_class=8, T=12, noise=0.4, n_classes=3):
    t = np.linspace(0, 1, T)
    X = np.concatenate([np.sin((3 + 2 * c) * t) + noise * rng.normal(size=(n_per_class, T))
                        for c in range(n_classes)])
    return X, np.repeat(np.arange(n_classes), n_per_class)


def test_loo_classifier_scores_equal_explicit_refits(rng):
    X, y = _waves(rng)
    grid = {"sigma_b": [0.0, 0.5], "alpha": [1e-4, 1e-2, 1.0]}
    exact = RNTKClassifierCV(grid).fit(X, y)
    explicit = RNTKClassifierCV(grid, cv=LeaveOneOut()).fit(X, y)
    assert exact.n_splits_ == explicit.n_splits_ == len(y)
    np.testing.assert_allclose(exact.cv_results_["mean_test_score"],
                               explicit.cv_results_["mean_test_score"], rtol=0, atol=1e-12)
    # and by hand: refit the ridge classifier without each sample
    K = rntk_kernel([x / np.linalg.norm(x) for x in X], sigma_b=0.5)
    for a in grid["alpha"]:
        hits = []
        for i in range(len(y)):
            keep = np.arange(len(y)) != i
            clf = KernelRidgeClassifier(alpha=a).fit(K[np.ix_(keep, keep)], y[keep])
            hits.append(clf.predict(K[i:i + 1, keep])[0] == y[i])
        j = exact.cv_results_["params"].index({"sigma_b": 0.5, "alpha": a})
        assert exact.cv_results_["mean_test_score"][j] == pytest.approx(np.mean(hits))


def _brute_force_loo(K, y, alpha, clip=True):
    """LOO predictions of the ridge regressor by explicit refits on the other samples.

    Kernel ridge with an unpenalised intercept by the bordered system, the ridge relative
    to the whole Gram's scale (one ridge per candidate, as the search's); ``alpha=inf``:
    the mean of the others; each prediction clipped to the range of the others' targets.
    """
    n, out = len(y), np.empty(len(y))
    ridge = alpha * np.trace(K) / n
    for i in range(n):
        keep = np.arange(n) != i
        if np.isinf(alpha):
            pred = y[keep].mean()
        else:
            A = np.zeros((n, n))
            A[0, 1:] = A[1:, 0] = 1.0
            A[1:, 1:] = K[np.ix_(keep, keep)] + ridge * np.eye(n - 1)
            sol = np.linalg.solve(A, np.r_[0.0, y[keep]])
            pred = sol[0] + K[i, keep] @ sol[1:]
        out[i] = np.clip(pred, y[keep].min(), y[keep].max()) if clip else pred
    return out


def test_loo_regressor_equals_brute_force_refits(rng):
    """Every candidate's LOO R^2, the mean's (alpha=inf) included, against explicit refits."""
    X = [rng.normal(size=t) for t in rng.integers(5, 12, size=18)]
    y = np.array([x[-1] + 0.5 * x[-2] for x in X])
    X[3] = 8.0 * X[3]  # an input outlier with an ordinary target: its LOO extrapolates
    y[3] = np.median(y)
    grid = {"sigma_b": [0.0, 0.3], "alpha": [1e-3, 0.1, 2.0, np.inf]}
    search = RNTKRegressorCV(grid).fit(X, y)
    clipped = 0
    for j, params in enumerate(search.cv_results_["params"]):
        K = rntk_kernel(X, sigma_b=params["sigma_b"])
        loo = _brute_force_loo(K, y, params["alpha"])
        r2 = 1 - np.sum((loo - y) ** 2) / np.sum((y - y.mean()) ** 2)
        assert search.cv_results_["mean_test_score"][j] == pytest.approx(r2, rel=1e-8)
        clipped += int(np.any(loo != _brute_force_loo(K, y, params["alpha"], clip=False)))
    assert clipped  # the clipping was exercised
    n = len(y)  # the mean's LOO in closed form: R^2 = 1 - (n / (n - 1))^2
    means = [j for j, p in enumerate(search.cv_results_["params"]) if np.isinf(p["alpha"])]
    mean_r2 = search.cv_results_["mean_test_score"][means[0]]
    assert mean_r2 == pytest.approx(1 - (n / (n - 1)) ** 2, rel=1e-12)
    best = RNTKRegressor(model="ridge", **search.best_params_).fit(X, y)
    np.testing.assert_allclose(search.predict(X[:5]), best.predict(X[:5]), rtol=1e-10)


def test_the_mean_is_refitted_where_nothing_beats_it(rng):
    """Targets unrelated to the series: the search refits the mean of the targets."""
    X = rng.normal(size=(30, 8))
    y = rng.normal(size=30)
    search = RNTKRegressorCV({"sigma_b": [0.1], "alpha": [1e-6, 1e-3, np.inf]}).fit(X, y)
    assert search.best_params_["alpha"] == np.inf or search.loo_score_ > 1 - (30 / 29) ** 2
    if search.best_params_["alpha"] == np.inf:
        np.testing.assert_allclose(search.predict(X[:3]), y.mean())


def test_the_selected_models_loo_is_never_worse_than_the_means():
    """Property: whatever the data, the refitted model's LOO MSE is at most the mean's."""
    hypothesis = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")

    @hypothesis.settings(max_examples=15, deadline=None)
    @hypothesis.given(seed=st.integers(0, 10_000), n=st.integers(4, 14),
                      heavy=st.booleans())
    def check(seed, n, heavy):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, 6))
        y = rng.standard_cauchy(n) if heavy else X[:, -1] + rng.normal(size=n)
        search = RNTKRegressorCV(n_average=2, param_grid=[
            {"sigma_b": [0.1], "alpha": [1e-4, 1e-1, np.inf]},
            {"sigma_b": [1.0], "normalize": ["dataset"], "alpha": [1e-2, np.inf]}]).fit(X, y)
        mean_r2 = 1 - (n / (n - 1)) ** 2
        assert search.loo_score_ >= mean_r2 - 1e-12

    check()


def test_default_search_is_the_ridge_classifier(rng):
    X, y = _waves(rng)
    search = RNTKClassifierCV().fit(X, y)
    members = search.best_estimator_.estimators_
    grid = default_grid([len(x) for x in X], [1.0])
    assert len(members) == DEFAULT_N_AVERAGE == len(search.averaged_params_)
    assert search.averaged_params_[0] == search.best_params_
    assert all(m.model == "ridge" for m in members)
    for p in search.averaged_params_:
        assert set(p) in [{*g} for g in grid]
    # each pooled mean-readout setting reads out every round(T / pool / readouts) steps;
    # the banded ones (the spectral one too) read every step of series of <= 128 steps
    strides = {(p.get("pool"), p.get("readout_stride")) for p in search.cv_results_["params"]}
    expected = {(None, None), (1, None)} | {
        (pool, max(1, round(-(-X.shape[1] // pool) / mean_readouts([X.shape[1]] * len(X),
                                                                    pool))))
        for pool in (MEAN_POOL, LEVEL_POOL)}
    assert strides == expected
    assert {p.get("spectrum") for p in search.cv_results_["params"]} == {
        None, X.shape[1] // 2 + 1}
    refits = [RNTKClassifier(model="ridge", precision="auto", **p).fit(X, y)
              for p in search.averaged_params_]
    np.testing.assert_allclose(search.decision_function(X),
                               np.mean([r.decision_function(X) for r in refits], axis=0),
                               rtol=1e-10, atol=1e-12)
    assert search.score(X, y) > 0.9
    # ties in LOO accuracy go to the lower LOO squared error, then to grid order
    res = search.cv_results_
    top = np.flatnonzero(res["mean_test_score"] == res["mean_test_score"].max())
    assert search.best_index_ in top


def _loo_squared_error(K, Y, a):
    """LOO squared error of one-vs-all ridge with intercept, by explicit refits."""
    return np.sum((ridge_loo_by_refits(K, Y, a) - Y) ** 2) / Y.size


def test_one_series_per_class_takes_the_priors_then_the_lower_loo_error(rng):
    X, y = _waves(rng, n_per_class=1, n_classes=5, T=16)
    # one member more than the priors, to see the tie-break pick it
    search = RNTKClassifierCV(n_average=len(DEFAULT_PRIOR) + 1).fit(X, y)
    # leaving a series out removes its class: every LOO accuracy is 0
    assert np.all(search.cv_results_["mean_test_score"] == 0)
    # the priors: the banded level-and-scale, the spectral and the shape settings, ridge
    # 1e-1
    grid = default_grid([len(x) for x in X])
    names = list(DEFAULT_SETTINGS)
    assert [name for name, _ in DEFAULT_PRIOR] == ["level_band", "spectrum", "shapes"]
    for (setting, alpha), p in zip(DEFAULT_PRIOR, search.averaged_params_):
        assert p == {**{k: v[0] for k, v in grid[names.index(setting)].items()},
                     "alpha": alpha}
    assert search.best_params_ == search.averaged_params_[0]
    assert "spectrum" in search.averaged_params_[1]
    assert "shapes" in search.averaged_params_[2]
    assert search.averaged_params_[0]["normalize"] is False
    # the default averages the priors alone
    default = RNTKClassifierCV().fit(X, y)
    assert default.averaged_params_ == search.averaged_params_[:len(DEFAULT_PRIOR)]
    # the next member: the lowest LOO squared error among the other settings
    Y = np.where(y[:, None] == np.unique(y)[None], 1.0, -1.0)
    prior_settings = [grid[names.index(setting)] for setting, _ in DEFAULT_PRIOR]
    best = None
    for p in search.cv_results_["params"]:
        if any(all(p.get(k) == v[0] for k, v in g.items()) for g in prior_settings):
            continue  # the priors' settings
        est = RNTKClassifier(model="ridge", **p)
        xs = est._prepare([np.asarray(x, float)[:, None] for x in X])
        K = est._gram(xs)
        e = _loo_squared_error(K, Y, p["alpha"] * np.trace(K) / len(K))
        if best is None or e < best[0] - 1e-12:
            best = (e, p)
    assert search.averaged_params_[len(DEFAULT_PRIOR)] == best[1]


def test_a_default_grid_without_some_settings_keeps_the_priors_and_rules_it_has(
        rng, monkeypatch):
    # the studies' smaller defaults: a prior or a unit-RMS twin whose setting is left
    # out is dropped, the others stand
    from rntk._model_selection import _grids

    kept = {k: v for k, v in DEFAULT_SETTINGS.items() if k not in ("level_band", "shapes")}
    monkeypatch.setattr(_grids, "DEFAULT_SETTINGS", kept)
    X, y = _waves(rng, n_per_class=1, n_classes=5, T=16)
    search = RNTKClassifierCV().fit(_unit_rms(X), y)
    first = search.averaged_params_[0]  # the one prior left, then the tie-break's
    assert "spectrum" in first and first["alpha"] == dict(DEFAULT_PRIOR)["spectrum"]
    assert not any("shapes" in p for p in search.averaged_params_)
    X, y = _waves(rng)
    assert RNTKClassifierCV().fit(_unit_rms(X), y).score(X, y) > 0.5


def test_ridge_classifier_with_two_classes_and_an_intercept(rng):
    X, y = _waves(rng, n_classes=2)
    clf = RNTKClassifier(model="ridge", alpha=1e-3).fit(X, y + 5)  # labels 5 and 6
    d = clf.decision_function(X)
    assert d.shape == (len(y),)
    np.testing.assert_array_equal(clf.predict(X), np.where(d > 0, 6, 5))
    assert not hasattr(clf, "support_")
    with pytest.raises(ValueError, match="class_weight"):
        RNTKClassifier(model="ridge", class_weight="balanced").fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        RNTKClassifierCV(estimator=RNTKClassifier(class_weight="balanced")).fit(X, y)


def test_loo_rejects_alpha_zero_and_scoring(rng):
    X, y = _waves(rng)
    with pytest.raises(ValueError, match="alpha > 0"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            RNTKRegressorCV({"alpha": [0.0, 1.0]}, error_score="raise").fit(X, y.astype(float))
    with pytest.raises(ValueError, match="scoring"):
        RNTKClassifierCV(scoring="accuracy").fit(X, y)
    # with folds, scoring works as in GridSearchCV
    cv = RNTKClassifierCV({"alpha": [1e-3]}, cv=3, scoring="balanced_accuracy").fit(X, y)
    assert 0 <= cv.best_score_ <= 1


def test_small_classes_need_no_stratified_folds(rng):
    # 16 series in 4 classes of 4: the default (leave-one-out) needs no class count per fold
    X, y = _waves(rng, n_per_class=4, n_classes=4)
    search = RNTKClassifierCV().fit(X, y)
    assert search.n_splits_ == 16 and search.score(X, y) > 0.5


def test_overflowing_gram_is_never_selected(rng):
    X = rng.normal(size=(30, 3000))
    y = np.r_[np.zeros(24), np.ones(6)]
    grid = {"sigma_w": [3.0, 1.0], "C": [0.01]}
    with pytest.warns(RuntimeWarning, match="non-finite"):
        search = RNTKClassifierCV(grid, protocol="paper", cv=3).fit(X, y)
    assert np.isnan(search.cv_results_["mean_test_score"][0])
    assert search.best_params_["sigma_w"] == 1.0
    with pytest.warns(RuntimeWarning, match="non-finite"):
        loo = RNTKClassifierCV({"sigma_w": [3.0, 1.0]}).fit(X, y)
    assert loo.best_params_["sigma_w"] == 1.0 and np.isfinite(loo.best_score_)


def test_paper_protocol_falls_back_to_kfold_on_small_classes(rng):
    # 16 series in 4 classes of 4: stratified 10-fold CV is impossible, as in the benchmark
    X, y = _waves(rng, n_per_class=4, n_classes=4)
    with pytest.warns(UserWarning, match="KFold"):
        search = RNTKClassifierCV({"C": [1.0]}, protocol="paper").fit(X, y)
    assert search.n_splits_ == 10


def test_mean_readouts_respect_the_cost_cap():
    from rntk._model_selection import MEAN_BUDGET, MEAN_READOUTS

    assert mean_readouts([150] * 50) == MEAN_READOUTS  # small: every readout affordable
    assert mean_readouts([40] * 50) == 40  # at most one readout per step
    assert mean_readouts([150] * 50, pool=4) == 38  # per pooled step
    for n, t in [(400, 200), (500, 128), (322, 512), (5000, 1000)]:
        k = mean_readouts([t] * n)
        assert 16 <= k <= MEAN_READOUTS
        assert k == 16 or n * n * k * t <= MEAN_BUDGET
        assert k == MEAN_READOUTS or n * n * (k + 1) * t > MEAN_BUDGET


@pytest.mark.parametrize("protocol,grid", [
    ("loo", {"model": ["svc"], "C": [0.01, 100.0]}),
    ("paper", {"model": ["ridge"], "C": [1.0]}),
    ("loo", [{"alpha": [1.0]}, {"model": ["ridge"]}]),
])
def test_model_in_the_grid_is_refused(rng, protocol, grid):
    # the search scored one model and refitted another (an SVC never scored under LOO)
    X, y = _waves(rng, n_per_class=4, n_classes=2)
    with pytest.raises(ValueError, match="must not set 'model'.*protocol"):
        RNTKClassifierCV(grid, protocol=protocol, cv=None if protocol == "loo" else 2).fit(X, y)


@pytest.mark.parametrize("protocol,grid,ignored", [
    ("loo", {"C": [0.01, 100.0]}, "'C'"),
    ("loo", {"sigma_b": [0.0], "C": [1.0], "alpha": [1.0]}, "'C'"),
    ("paper", {"alpha": [0.01, 1.0], "C": [1.0]}, "'alpha'"),
])
def test_grid_keys_the_protocol_ignores_are_refused(rng, protocol, grid, ignored):
    X, y = _waves(rng, n_per_class=4, n_classes=2)
    cv = None if protocol == "loo" else 2
    with pytest.raises(ValueError, match=f"sets {ignored}, which protocol='{protocol}' "
                                         "does not use"):
        RNTKClassifierCV(grid, protocol=protocol, cv=cv).fit(X, y)
    with warnings.catch_warnings():  # the keys each protocol uses: no warning
        warnings.simplefilter("error")
        RNTKClassifierCV({"alpha": [1.0]}).fit(X, y)
        RNTKClassifierCV({"C": [1.0]}, protocol="paper", cv=2).fit(X, y)


def _pooled_readouts(n, T):
    """(pool, stride, pooled length, readouts) of each pooled setting of the default grid."""
    out = []
    for g in default_grid([T] * n):
        if "readout_stride" in g:
            pool, stride = g["pool"][0], g["readout_stride"][0]
            pooled = -(-T // pool)
            out.append((pool, stride, pooled, -(-pooled // stride)))
    assert {p for p, *_ in out} == {MEAN_POOL, LEVEL_POOL}
    return out


@pytest.mark.parametrize("n", [10, 50, 100, 300, 1000, 2500, 5000, 10000])
@pytest.mark.parametrize("T", [8, 30, 60, 100, 150, 512, 600, 764, 1000, 2000, 3000])
def test_default_grid_keeps_its_readout_bounds(n, T):
    # documented: up to MEAN_READOUTS, at least 16 (or every pooled step); the rounding of
    # the stride gave 191 at n=100, T=764 and 13 at n=5000, T=100 (blocks of 4)
    from rntk._model_selection import MEAN_READOUTS

    for pool, stride, pooled, k in _pooled_readouts(n, T):
        assert min(16, pooled) <= k <= MEAN_READOUTS
        old = max(1, round(pooled / mean_readouts([T] * n, pool)))
        if min(16, pooled) <= -(-pooled // old) <= MEAN_READOUTS:
            assert stride == old  # unchanged where the bounds held: the same selection


def test_default_grid_readouts_of_the_reported_cases():
    # blocks of 4 steps (the setting the report was made on): 191, 150 and 13 readouts
    by_pool = {(n, T): {p: k for p, _, _, k in _pooled_readouts(n, T)}
               for n, T in [(100, 764), (100, 600), (5000, 100)]}
    assert by_pool[(100, 764)][LEVEL_POOL] == 96  # was 191
    assert by_pool[(100, 600)][LEVEL_POOL] == 75  # was 150
    assert by_pool[(5000, 100)][LEVEL_POOL] == 25  # was 13


@pytest.mark.parametrize("T, band_pool, bins", [
    (1, 1, 2), (5, 1, 3), (128, 1, 65), (129, 2, 65), (300, 3, 128), (1344, 11, 128)])
def test_default_grid_pools_long_bands_and_sizes_the_spectrum(T, band_pool, bins):
    from rntk._model_selection import BAND_STEPS, SPECTRUM_BINS

    grid = default_grid([T, max(1, T // 2)])
    banded = [g for g in grid if "readout_band" in g and "spectrum" not in g
              and "shapes" not in g and "octave_shapes" not in g]
    spectral = [g for g in grid if "spectrum" in g]
    assert len(banded) == 2 and len(spectral) == 1
    assert all(g["pool"] == [band_pool] for g in banded)
    assert -(-T // band_pool) <= BAND_STEPS  # the banded settings run <= 128 steps
    assert spectral[0]["spectrum"] == [bins] and bins <= SPECTRUM_BINS
    assert "pool" not in spectral[0]  # frequencies are not pooled


def _loo_by_refits(K, y, alpha):
    """LOO accuracy and squared error of the ridge classifier, by explicit refits."""
    hits, sq = [], []
    classes = np.unique(y)
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        clf = KernelRidgeClassifier(alpha=alpha).fit(K[np.ix_(keep, keep)], y[keep])
        d = np.atleast_1d(clf.decision_function(K[i:i + 1, keep])[0])
        target = (np.where(classes == y[i], 1.0, -1.0) if len(classes) > 2
                  else np.array([1.0 if y[i] == classes[1] else -1.0]))
        hits.append(clf.predict(K[i:i + 1, keep])[0] == y[i])
        sq.append(np.mean((d - target) ** 2))
    return np.mean(hits), np.mean(sq)


def test_n_average_refits_the_best_settings_ranked_by_explicit_loo(rng):
    X, y = _waves(rng, n_per_class=6, noise=0.8)
    grid = {"sigma_b": [0.0, 0.5, 2.0], "n_layers": [1, 2], "alpha": [1e-3, 0.1]}
    search = RNTKClassifierCV(grid, n_average=3).fit(X, y)
    # rank the kernel settings by their best candidate: LOO accuracy, then the lower LOO
    # squared error, both from explicit refits without each sample
    xs = [x / np.linalg.norm(x) for x in X]
    ranked = []
    for sb in grid["sigma_b"]:
        for nl in grid["n_layers"]:
            K = rntk_kernel(xs, sigma_b=sb, n_layers=nl)
            keys = [(*_loo_by_refits(K, y, a), a) for a in grid["alpha"]]
            acc, sq, a = max(keys, key=lambda k: (k[0], -k[1]))
            ranked.append(((acc, -sq), {"alpha": a, "n_layers": nl, "sigma_b": sb}))
    ranked.sort(key=lambda r: r[0], reverse=True)
    assert ranked[2][0] > ranked[3][0]  # the data tell the third from the fourth apart
    assert search.averaged_params_ == [p for _, p in ranked[:3]]
    assert search.best_params_ == ranked[0][1]
    # the refitted model is the mean of the three refitted classifiers' decisions
    members = [RNTKClassifier(model="ridge", **p).fit(X, y) for _, p in ranked[:3]]
    d = np.mean([m.decision_function(X) for m in members], axis=0)
    np.testing.assert_allclose(search.decision_function(X), d, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(search.predict(X), search.classes_[np.argmax(d, axis=1)])
    # a given grid keeps the single best candidate unless asked
    single = RNTKClassifierCV(grid).fit(X, y)
    assert isinstance(single.best_estimator_, RNTKClassifier)
    assert not hasattr(single, "averaged_params_")


def test_n_average_with_two_classes_and_bad_values(rng):
    X, y = _waves(rng, n_classes=2)
    grid = {"sigma_b": [0.0, 0.5], "alpha": [1e-3]}
    search = RNTKClassifierCV(grid, n_average=2).fit(X, y + 5)
    members = [RNTKClassifier(model="ridge", **p).fit(X, y + 5)
               for p in search.averaged_params_]
    d = np.mean([m.decision_function(X) for m in members], axis=0)
    assert d.ndim == 1
    np.testing.assert_allclose(search.decision_function(X), d, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(search.predict(X), np.where(d > 0, 6, 5))
    with pytest.raises(ValueError, match="n_average"):
        RNTKClassifierCV(grid, n_average=0).fit(X, y)
    with pytest.raises(ValueError, match="protocol='loo'"):
        RNTKClassifierCV({"C": [1.0]}, protocol="paper", cv=2, n_average=2).fit(X, y)
    # more settings asked than the grid has: all of them
    assert len(RNTKClassifierCV(grid, n_average=5).fit(X, y).averaged_params_) == 2


def _unit_rms(X):
    """Each series divided by its RMS per step (``normalize="rms"`` done beforehand)."""
    return X / np.sqrt(np.mean(X ** 2, axis=1, keepdims=True))


def test_unit_rms_recognises_z_normalised_series(rng):
    X = rng.normal(size=(6, 20)) * 3 + 1
    Z = (X - X.mean(1, keepdims=True)) / X.std(1, ddof=1, keepdims=True)  # UCR's layout
    assert unit_rms(list(Z[:, :, None]))  # common RMS sqrt(19 / 20), within 5% of 1
    assert unit_rms([_unit_rms(X)[0][:, None], _unit_rms(X[:, :13])[1][:, None]])
    assert not unit_rms(list(3 * Z[:, :, None]))  # one common factor far from 1
    Z[2] *= 1.01  # one series' scale differs: level and scale carry something
    assert not unit_rms(list(Z[:, :, None]))
    two = rng.normal(size=(4, 30, 2))  # channels: the RMS over steps of the norm per step
    two /= np.sqrt(np.sum(two ** 2, axis=(1, 2), keepdims=True) / 30)
    assert unit_rms(list(two))


def test_level_setting_on_unit_rms_series_is_the_banded_one(rng):
    X, y = _waves(rng, T=20)
    X = _unit_rms(X)
    grid = default_grid([X.shape[1]] * len(X))
    names = list(DEFAULT_SETTINGS)
    (band, level), = [(grid[names.index(h)], grid[names.index(g)])
                      for g, h in DEFAULT_SAME.items()]
    assert level["normalize"] == [False] and band["normalize"] == ["rms"]
    ests = [RNTKClassifier(model="ridge", **{k: v[0] for k, v in g.items()})
            for g in (band, level)]
    Kb, Kl = (e._gram(e._prepare(list(X[:, :, None]))) for e in ests)
    np.testing.assert_allclose(Kl, Kb, rtol=1e-12, atol=0)  # the same network by construction


def _count_grams(monkeypatch):
    from rntk._estimators import _base

    calls = []

    def counted(*args, **kwargs):
        calls.append(args[1] is None if len(args) > 1 else True)
        return rntk_kernel(*args, **kwargs)

    monkeypatch.setattr(_base, "rntk_kernel", counted)
    return calls


def test_unit_rms_series_compute_the_banded_gram_once(rng, monkeypatch):
    X, y = _waves(rng, T=20)
    X = _unit_rms(X)
    calls = _count_grams(monkeypatch)
    search = RNTKClassifierCV().fit(X, y)
    grid = default_grid([X.shape[1]] * len(X))
    assert calls.count(True) == len(grid) - len(DEFAULT_SAME)  # one training Gram fewer
    res, n_a = search.cv_results_, len(search.cv_results_["params"]) // len(grid)
    names = list(DEFAULT_SETTINGS)
    for g, h in DEFAULT_SAME.items():  # the same scores, candidate by candidate
        g, h = names.index(g), names.index(h)
        np.testing.assert_array_equal(res["mean_test_score"][g * n_a:(g + 1) * n_a],
                                      res["mean_test_score"][h * n_a:(h + 1) * n_a])
    # the members are the settings actually fitted: the banded one stands for the other
    level = {k: v[0] for k, v in grid[names.index("level_band")].items()}
    assert not any(p.items() >= level.items() for p in search.averaged_params_)
    refits = [RNTKClassifier(model="ridge", precision="auto", **p).fit(X, y)
              for p in search.averaged_params_]
    np.testing.assert_allclose(search.decision_function(X),
                               np.mean([r.decision_function(X) for r in refits], axis=0),
                               rtol=1e-10, atol=1e-12)
    # prediction: one test Gram per distinct member
    members = search.best_estimator_.estimators_
    del calls[:]
    search.predict(X[:4])
    assert len(calls) == len({id(m) for m in members})
    # the same series 3 times larger are another network's inputs: every setting computed
    del calls[:]
    RNTKClassifierCV().fit(3 * X, y)
    assert calls.count(True) == len(grid)


@pytest.mark.parametrize("screen", [None, 12])
def test_the_refit_reuses_the_series_prepared_for_the_search(rng, monkeypatch, screen):
    """The members are fitted on the training series as the search prepared them (of all
    of them, not of a screening's subsample): no preparation again, the same model."""
    from rntk._estimators._base import PrecomputedSequenceEstimator
    from rntk._model_selection import _sources

    X, y = _waves(rng, n_per_class=9, T=18)
    prepared = []
    real = PrecomputedSequenceEstimator._prepare

    def counted(self, xs, fitted=False):
        prepared.append((len(xs), fitted))
        return real(self, xs, fitted)

    monkeypatch.setattr(PrecomputedSequenceEstimator, "_prepare", counted)
    search = RNTKClassifierCV(screen=screen).fit(X, y)
    kept = prepared.count((len(X), False))
    # without the kept series: every member prepared again, the same decision values
    monkeypatch.setattr(_sources.GramSource, "_keep", lambda self, est, xs: None)
    del prepared[:]
    again = RNTKClassifierCV(screen=screen).fit(X, y)
    members = search.best_estimator_.estimators_
    assert prepared.count((len(X), False)) - kept == len({id(m) for m in members}) == 3
    np.testing.assert_allclose(search.decision_function(X), again.decision_function(X),
                               rtol=1e-12, atol=1e-12)


def test_search_grams_same_as(rng):
    X, y = _waves(rng)
    grams = [rntk_kernel(X, sigma_b=b) for b in (0.0, 1.0)]
    alphas = [1e-3, 1e-1]
    cands = [{"sigma_b": b, "alpha": a} for b in (0.0, 1.0, 0.0) for a in alphas]
    groups = [[0, 1], [2, 3], [4, 5]]
    loo = [(np.arange(len(y)), np.arange(len(y)))]
    score = RidgeLOOScorer(classification=True)
    out = search_grams(iter(grams + [None]), groups, cands, y, loo, score_gram=score,
                       keep=3, same_as={2: 0})
    np.testing.assert_array_equal(out.scores[4:], out.scores[:2])
    np.testing.assert_array_equal(out.tiebreak[4:], out.tiebreak[:2])
    assert {i for i, _ in out.top} >= {out.best_index}
    for i, K in out.top:  # the third group is given the first one's Gram
        assert K is grams[0 if i in (0, 1, 4, 5) else 1]
    for bad in ({0: 1}, {2: 2}, {1: 0, 2: 1}):
        with pytest.raises(ValueError, match="same_as"):
            search_grams(iter(grams + [None]), groups, cands, y, loo, score_gram=score,
                         same_as=bad)


def test_averaged_member_listed_twice_is_evaluated_once(rng):
    X, y = _waves(rng)
    a, b = (RNTKClassifier(model="ridge", sigma_b=s).fit(X, y) for s in (0.0, 1.0))
    calls = []
    real = a.decision_function
    a.decision_function = lambda Z: calls.append(1) or real(Z)
    avg = AveragedClassifier([a, a, b]).fit()
    np.testing.assert_allclose(avg.decision_function(X),
                               (2 * real(X) + b.decision_function(X)) / 3, rtol=1e-12)
    assert len(calls) == 1


def test_several_channels_leave_out_the_unit_rms_band(rng, monkeypatch):
    X, y = _waves(rng, n_per_class=1, n_classes=4, T=16)
    lengths = [X.shape[1]] * len(X)
    names = [k for k in DEFAULT_SETTINGS if k not in MULTICHANNEL_LEFT_OUT]
    assert len(names) == len(DEFAULT_SETTINGS) - 1 and "band" not in names
    one = dict(zip(DEFAULT_SETTINGS, default_grid(lengths)))
    assert default_grid(lengths, n_channels=2) == [one[k] for k in names]
    # two channels, each unit RMS over both (the level band is then the band's network,
    # which the grid no longer has: it is computed itself)
    X2 = np.stack([X, X[:, ::-1]], axis=2)
    X2 /= np.sqrt(np.sum(X2 ** 2, axis=(1, 2), keepdims=True) / X2.shape[1])
    assert unit_rms(list(X2))
    calls = _count_grams(monkeypatch)
    search = RNTKClassifierCV().fit(X2, y)
    grid = default_grid(lengths, DEFAULT_ALPHA, n_channels=2)
    assert calls.count(True) == len(grid) == len(names)
    assert len(search.cv_results_["params"]) == len(grid) * len(DEFAULT_ALPHA)
    # one series per class: the prior pair, found by name in the shorter grid
    for (setting, alpha), p in zip(DEFAULT_PRIOR, search.averaged_params_):
        assert p == {**{k: v[0] for k, v in grid[names.index(setting)].items()},
                     "alpha": alpha}
