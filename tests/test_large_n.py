"""The large-n path of RNTKClassifierCV: exact leave-one-out of ridge on Nystroem features."""

import tracemalloc

import numpy as np
import pytest
from scipy import linalg

from rntk import RNTKClassifier, RNTKClassifierCV, RNTKNystroem
from rntk._model_selection import RidgeLOOScorer, _features
from rntk._model_selection._features import (
    FeatureLOOScorer,
    FeatureStats,
    combine_r,
    feature_block_r,
    feature_stats,
)
from rntk._model_selection._loo import eigh_gram, one_vs_all_targets, ridge_loo_predictions

ALPHAS = [1e-6, 1e-3, 1e-1, 1.0, 10.0]
# a small grid (two kernel settings) keeps the end-to-end tests fast
GRID = {"direction": ["bidirectional"], "n_layers": [2], "diff": [False, True],
        "sigma_b": [2.0], "alpha": [1e-4, 1e-2, 1.0]}


def _waves(rng, n_per_class, T=20, n_classes=3, noise=0.4):
    t = np.linspace(0, 1, T)
    X, y = [], []
    for c in range(n_classes):
        shift = rng.uniform(0, 2 * np.pi, size=(n_per_class, 1))
        X.append(np.sin(2 * np.pi * (c + 1) * t + shift)
                 + noise * rng.normal(size=(n_per_class, T)))
        y += [c] * n_per_class
    return np.concatenate(X), np.array(y)


@pytest.mark.parametrize("n, m", [(40, 7), (30, 30), (20, 45)])
def test_feature_loo_equals_the_exact_loo_of_the_gram(rng, n, m):
    """More samples than features, as many, and fewer: the Gram LOO, to 1e-8."""
    Phi = rng.normal(size=(n, m)) + 2.0  # an offset: the intercept matters
    Y = one_vs_all_targets(rng.integers(0, 3, size=n))[1]
    scale = np.trace(Phi @ Phi.T) / n
    alphas = np.array(ALPHAS) * scale
    exact = ridge_loo_predictions(eigh_gram(Phi @ Phi.T, fit_intercept=True), Y, alphas)
    stats = feature_stats(Phi, Y, block=8)  # several blocks, two levels of the tree
    np.testing.assert_allclose(stats.scale, scale, rtol=1e-12)
    loo = stats.loo(Phi, Y, alphas)
    assert loo.shape == exact.shape == (len(ALPHAS), n, Y.shape[1])
    np.testing.assert_allclose(loo, exact, rtol=0, atol=1e-8)
    # any block of rows gets its own rows' predictions
    np.testing.assert_allclose(stats.loo(Phi[3:9], Y[3:9], alphas), loo[:, 3:9], rtol=0,
                               atol=1e-9)


def test_block_factors_combine_to_the_factor_of_all_rows(rng):
    """``R^T R`` is ``A^T A`` whatever the blocks; the means are in the first row."""
    Phi, Y = rng.normal(size=(70, 5)) + 3.0, rng.normal(size=(70, 2))
    A = np.c_[np.ones(70), Phi, Y]
    for block in (1, 3, 70):  # 70 factors of one row: three levels of the tree
        R = combine_r([feature_block_r(Phi[i:i + block], Y[i:i + block])
                       for i in range(0, 70, block)])
        assert R.shape == (8, 8)
        np.testing.assert_allclose(R.T @ R, A.T @ A, rtol=1e-12, atol=1e-9)
        stats = FeatureStats(R, 70, 5)
        np.testing.assert_allclose(stats.mean, Phi.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(stats.y_mean, Y.mean(axis=0), rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="no block"):
        combine_r([])


def test_feature_loo_is_the_refit_without_each_sample(rng):
    """An independent check: refit the intercept ridge without sample i, predict it."""
    n, m, alpha = 15, 4, 0.3
    Phi, Y = rng.normal(size=(n, m)), rng.normal(size=(n, 2))
    loo = feature_stats(Phi, Y).loo(Phi, Y, [alpha])[0]
    for i in range(n):
        keep = np.arange(n) != i
        P, T = Phi[keep], Y[keep]
        Pc = P - P.mean(axis=0)
        w = linalg.solve(Pc.T @ Pc + alpha * np.eye(m), Pc.T @ (T - T.mean(axis=0)))
        b = T.mean(axis=0) - P.mean(axis=0) @ w
        np.testing.assert_allclose(loo[i], Phi[i] @ w + b, rtol=1e-10, atol=1e-10)


def test_feature_ridge_fit_solves_the_normal_equations(rng):
    n, m, alpha = 30, 6, 0.5
    Phi, Y = rng.normal(size=(n, m)) + 1.0, rng.normal(size=(n, 2))
    coef, b = feature_stats(Phi, Y).ridge(alpha)
    Pc = Phi - Phi.mean(axis=0)
    np.testing.assert_allclose(Pc.T @ Pc @ coef + alpha * coef,
                               Pc.T @ (Y - Y.mean(axis=0)), atol=1e-10)
    np.testing.assert_allclose((Phi @ coef + b).mean(axis=0), Y.mean(axis=0), atol=1e-12)


def test_feature_stats_refuse_bad_features():
    with pytest.raises(ValueError, match="NaN or infinite"):
        feature_stats(np.array([[1.0, np.nan], [0.0, 1.0]]), [0.0, 1.0])
    with pytest.raises(ValueError, match="at least 2 samples"):
        feature_stats(np.ones((1, 3)), [1.0])
    with pytest.raises(ValueError, match="2 rows"):
        feature_stats(np.ones((2, 3)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="alpha"):
        FeatureLOOScorer()(np.eye(3), [0, 1, 1], [{"alpha": 0.0}])


def test_scorer_at_full_rank_equals_the_exact_scorer(rng):
    """All series as landmarks: the same LOO accuracy and squared error as the Gram's."""
    X, y = _waves(rng, 8)
    params = [{"alpha": a} for a in ALPHAS]
    nys = RNTKNystroem(n_components=len(X), random_state=0, direction="bidirectional",
                       n_layers=2, sigma_b=2.0)
    Phi = nys.fit_transform(X)
    K = nys._kernel(nys._prepare(list(X[:, :, None])))
    acc_f, tb_f, loo_f = FeatureLOOScorer()(Phi, y, params)
    acc_e, tb_e, loo_e = RidgeLOOScorer(classification=True)(K, y, params)
    np.testing.assert_allclose(loo_f, loo_e, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(acc_f, acc_e)
    np.testing.assert_allclose(tb_f, tb_e, rtol=1e-8, atol=1e-10)


def test_forced_path_with_every_landmark_matches_the_exact_search(rng):
    """large_n=0 and n_components >= n: the exact search, selection and decisions."""
    X, y = _waves(rng, 10)
    X_test, _ = _waves(np.random.default_rng(1), 5)
    exact = RNTKClassifierCV(param_grid=GRID, large_n=None).fit(X, y)
    path = RNTKClassifierCV(param_grid=GRID, large_n=0, n_components=100).fit(X, y)
    assert len(path.best_estimator_.X_fit_) == len(X)
    assert path.best_params_ == exact.best_params_
    np.testing.assert_array_equal(path.cv_results_["mean_test_score"],
                                  exact.cv_results_["mean_test_score"])
    np.testing.assert_allclose(path.decision_function(X_test),
                               exact.decision_function(X_test), rtol=1e-6, atol=1e-8)


def test_forced_path_with_few_landmarks(rng):
    """Fewer landmarks than series: a sensible classifier with the usual interface."""
    X, y = _waves(rng, 30)
    X_test, y_test = _waves(np.random.default_rng(1), 30)
    clf = RNTKClassifierCV(param_grid=GRID, large_n=50, n_components=20).fit(X, y)
    assert isinstance(clf.best_estimator_, RNTKClassifier)
    assert len(clf.best_estimator_.X_fit_) == 20  # the landmarks
    assert set(clf.best_params_) == set(GRID)
    assert len(clf.cv_results_["params"]) == 6
    assert 0.8 <= clf.best_score_ <= 1.0
    assert clf.score(X_test, y_test) > 0.6  # chance: 1/3
    D = clf.decision_function(X_test)
    assert D.shape == (90, 3)
    np.testing.assert_array_equal(clf.predict(X_test), clf.classes_[D.argmax(axis=1)])
    # the refitted model is the linear model on the features of the chosen setting
    best = clf.best_estimator_
    kw = best._kernel_params()
    nys = RNTKNystroem(n_components=20, random_state=_features.LANDMARK_SEED, **kw)
    Phi = nys.fit_transform(X)
    Y = one_vs_all_targets(y)[1]
    alpha = best.alpha * np.einsum("ij,ij->", Phi, Phi) / len(X)
    Pc = Phi - Phi.mean(axis=0)  # the normal equations, independently of the code
    coef = linalg.solve(Pc.T @ Pc + alpha * np.eye(20), Pc.T @ (Y - Y.mean(axis=0)))
    b = Y.mean(axis=0) - Phi.mean(axis=0) @ coef
    np.testing.assert_allclose(D, nys.transform(X_test) @ coef + b, rtol=1e-6, atol=1e-8)


def test_below_the_threshold_the_search_is_exact(rng):
    X, y = _waves(rng, 6)
    clf = RNTKClassifierCV(param_grid=GRID, large_n=len(X)).fit(X, y)
    assert len(clf.best_estimator_.X_fit_) == len(X)
    assert RNTKClassifierCV().large_n == "auto"
    assert _features.resolve_large_n("auto") == _features.LARGE_N


@pytest.mark.parametrize("kw", [{"large_n": "big"}, {"large_n": -1}, {"n_components": 0}])
def test_bad_large_n_options(rng, kw):
    X, y = _waves(rng, 4)
    with pytest.raises(ValueError, match="large_n|n_components"):
        RNTKClassifierCV(param_grid=GRID, **kw).fit(X, y)


@pytest.mark.slow
def test_the_path_allocates_no_n_by_n_matrix(rng, monkeypatch):
    """The default grid on 2000 short series and 10 landmarks: no Gram, memory ~ n m."""
    n, m = 2001, 10
    X, y = _waves(rng, n // 3, T=8)

    def no_gram(*args, **kwargs):  # pragma: no cover - fails the test if reached
        raise AssertionError("the large-n path decomposed a Gram")

    monkeypatch.setattr("rntk._model_selection._loo.eigh_gram", no_gram)
    # compile the kernels first: the compiler's allocations are traced too
    RNTKClassifierCV(large_n=0, n_components=m).fit(X[::50], y[::50])
    tracemalloc.start()
    try:
        clf = RNTKClassifierCV(large_n=1000, n_components=m).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the default averages the best settings: every member is fitted on the landmarks
    members = clf.best_estimator_.estimators_
    assert len(members) == 3 and all(len(est.X_fit_) == m for est in members)
    # an n x n float64 matrix is 32 MB; this is 8 MB, for what is linear in n: the shape
    # setting's 7 channels x 8 levels of every series, packed for the engine (6.2 MB)
    assert peak < n * n * 8 / 4
    assert clf.score(X, y) > 0.5


def test_path_on_unit_rms_series_computes_the_banded_features_once(rng, monkeypatch):
    """The default grid's unit-RMS rule on the feature path: one setting fewer, same model."""
    from rntk._model_selection import DEFAULT_SAME, default_grid

    X, y = _waves(rng, 8)
    X = X / np.sqrt(np.mean(X ** 2, axis=1, keepdims=True))  # every series at unit RMS
    fits = []
    real = RNTKNystroem.fit_transform
    monkeypatch.setattr(RNTKNystroem, "fit_transform",
                        lambda self, *a, **k: fits.append(1) or real(self, *a, **k))
    path = RNTKClassifierCV(large_n=0, n_components=len(X)).fit(X, y)
    assert len(fits) == len(default_grid([X.shape[1]] * len(X))) - len(DEFAULT_SAME)
    exact = RNTKClassifierCV(large_n=None, precision="float64").fit(X, y)
    assert path.averaged_params_ == exact.averaged_params_
    X_test, _ = _waves(np.random.default_rng(1), 3)
    np.testing.assert_allclose(path.decision_function(X_test),
                               exact.decision_function(X_test), rtol=1e-6, atol=1e-8)
