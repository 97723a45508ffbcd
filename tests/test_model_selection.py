"""The fast model selection: exact leave-one-out against explicit refits, the paper protocol
unchanged, overflowing Grams never selected."""

import warnings

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import LeaveOneOut

from rntk import RNTKClassifier, RNTKClassifierCV, RNTKRegressor, RNTKRegressorCV, rntk_kernel
from rntk._estimators._ridge import KernelRidgeClassifier
from rntk._model_selection import MEAN_POOL, default_grid, mean_readouts


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


def test_loo_regressor_equals_brute_force_refits(rng):
    X = [rng.normal(size=t) for t in rng.integers(5, 12, size=18)]
    y = np.array([x[-1] + 0.5 * x[-2] for x in X])
    grid = {"sigma_b": [0.0, 0.3], "alpha": [1e-3, 0.1, 2.0]}
    search = RNTKRegressorCV(grid).fit(X, y)
    for j, params in enumerate(search.cv_results_["params"]):
        K = rntk_kernel(X, sigma_b=params["sigma_b"])
        press = 0.0
        for i in range(len(y)):
            keep = np.arange(len(y)) != i
            kr = KernelRidge(alpha=params["alpha"], kernel="precomputed")
            kr.fit(K[np.ix_(keep, keep)], y[keep])
            press += (kr.predict(K[i:i + 1, keep])[0] - y[i]) ** 2
        r2 = 1 - press / np.sum((y - y.mean()) ** 2)
        assert search.cv_results_["mean_test_score"][j] == pytest.approx(r2, rel=1e-8)
    best = RNTKRegressor(**search.best_params_).fit(X, y)
    np.testing.assert_allclose(search.predict(X[:5]), best.predict(X[:5]), rtol=1e-10)


def test_default_search_is_the_ridge_classifier(rng):
    X, y = _waves(rng)
    search = RNTKClassifierCV().fit(X, y)
    best = search.best_estimator_
    grid = default_grid([len(x) for x in X], [1.0])
    assert best.model == "ridge"
    assert set(search.best_params_) in [{*g} for g in grid]
    # the pooled mean-readout setting reads out every round(T / pool / readouts) steps
    pooled = -(-X.shape[1] // MEAN_POOL)
    strides = {p.get("readout_stride") for p in search.cv_results_["params"]}
    assert strides == {None, max(1, round(pooled / mean_readouts([X.shape[1]] * len(X),
                                                                 MEAN_POOL)))}
    refit = RNTKClassifier(model="ridge", **search.best_params_).fit(X, y)
    np.testing.assert_allclose(search.decision_function(X), refit.decision_function(X),
                               rtol=1e-10, atol=1e-12)
    assert search.score(X, y) > 0.9
    # ties in LOO accuracy go to the lower LOO squared error, then to grid order
    res = search.cv_results_
    top = np.flatnonzero(res["mean_test_score"] == res["mean_test_score"].max())
    assert search.best_index_ in top


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
        RNTKClassifierCV(class_weight="balanced").fit(X, y)


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
def test_grid_keys_the_protocol_ignores_warn(rng, protocol, grid, ignored):
    X, y = _waves(rng, n_per_class=4, n_classes=2)
    cv = None if protocol == "loo" else 2
    with pytest.warns(UserWarning, match=f"sets {ignored}, which protocol='{protocol}' "
                                         "ignores") as record:
        RNTKClassifierCV(grid, protocol=protocol, cv=cv).fit(X, y)
    assert any(w.filename == __file__ for w in record)  # points at the caller
    with warnings.catch_warnings():  # the keys each protocol uses: no warning
        warnings.simplefilter("error")
        RNTKClassifierCV({"alpha": [1.0]}).fit(X, y)
        RNTKClassifierCV({"C": [1.0]}, protocol="paper", cv=2).fit(X, y)


def _pooled_readouts(n, T):
    grid = default_grid([T] * n)
    stride = next(g for g in grid if g.get("pool") == [MEAN_POOL])["readout_stride"][0]
    pooled = -(-T // MEAN_POOL)
    return stride, pooled, -(-pooled // stride)  # readouts at every stride-th pooled step


@pytest.mark.parametrize("n", [10, 50, 100, 300, 1000, 2500, 5000, 10000])
@pytest.mark.parametrize("T", [8, 30, 60, 100, 150, 512, 600, 764, 1000, 2000, 3000])
def test_default_grid_keeps_its_readout_bounds(n, T):
    # documented: up to 128 readouts, at least 16 (or every pooled step); the rounding of
    # the stride gave 191 at n=100, T=764 and 13 at n=5000, T=100
    from rntk._model_selection import MEAN_READOUTS

    stride, pooled, k = _pooled_readouts(n, T)
    assert min(16, pooled) <= k <= MEAN_READOUTS
    old = max(1, round(pooled / mean_readouts([T] * n, MEAN_POOL)))
    if min(16, pooled) <= -(-pooled // old) <= MEAN_READOUTS:
        assert stride == old  # unchanged where the bounds held: the same selection


def test_default_grid_readouts_of_the_reported_cases():
    assert _pooled_readouts(100, 764)[2] == 96  # was 191
    assert _pooled_readouts(100, 600)[2] == 75  # was 150
    assert _pooled_readouts(5000, 100)[2] == 25  # was 13
