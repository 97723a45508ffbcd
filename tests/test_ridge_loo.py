"""The closed-form LOO of rntk._model_selection._loo against explicit refits."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge

from rntk._model_selection import _loo as loo_mod

RTOL = 1e-8


def _gram(n, rank=None, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, rank or n + 3)) + 0.5
    return A @ A.T, A


def _alphas(K):
    return np.array([1e-6, 1e-3, 0.1, 1.0, 30.0]) * np.trace(K) / K.shape[0]


def _lssvm_refit(K, Y, alpha, train, test):
    """Unpenalised-intercept kernel ridge, ``[[0, 1^T], [1, K + a I]] [b; c] = [0; Y]``."""
    m = train.size
    A = np.zeros((m + 1, m + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = K[np.ix_(train, train)] + alpha * np.eye(m)
    sol = np.linalg.solve(A, np.vstack([np.zeros((1, Y.shape[1])), Y[train]]))
    return K[np.ix_(test, train)] @ sol[1:] + sol[0]


def _explicit_loo(K, Y, alphas, fit_intercept, Phi=None):
    n = K.shape[0]
    out = np.empty((len(alphas), n, Y.shape[1]))
    for a, alpha in enumerate(alphas):
        for i in range(n):
            tr = np.delete(np.arange(n), i)
            if fit_intercept and Phi is not None:
                model = Ridge(alpha=alpha, fit_intercept=True, solver="svd")
                model.fit(Phi[tr], Y[tr])
                out[a, i] = model.predict(Phi[i:i + 1]).reshape(-1)
            elif fit_intercept:
                out[a, i] = _lssvm_refit(K, Y, alpha, tr, np.array([i]))[0]
            else:
                model = KernelRidge(alpha=alpha, kernel="precomputed")
                model.fit(K[np.ix_(tr, tr)], Y[tr])
                out[a, i] = model.predict(K[i:i + 1, tr]).reshape(-1)
    return out


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("n_targets", [1, 3])
def test_loo_predictions_match_refits(fit_intercept, n_targets):
    K, _ = _gram(20, seed=n_targets)
    Y = np.random.default_rng(1).normal(size=(20, n_targets)) + 2.0
    alphas = _alphas(K)
    eig = loo_mod.eigh_gram(K, fit_intercept=fit_intercept)
    got = loo_mod.ridge_loo_predictions(eig, Y, alphas, fit_intercept=fit_intercept)
    assert got.shape == (alphas.size, 20, n_targets)
    _close(got, _explicit_loo(K, Y, alphas, fit_intercept))


def test_intercept_matches_sklearn_ridge_on_features():
    K, Phi = _gram(16, rank=6, seed=3)
    Y = np.random.default_rng(2).normal(size=(16, 2)) * 3.0 + 5.0
    alphas = np.array([1e-3, 0.5, 10.0])
    got = loo_mod.ridge_loo_predictions(loo_mod.eigh_gram(K, True), Y, alphas)
    _close(got, _explicit_loo(K, Y, alphas, True, Phi=Phi))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_almost_singular_gram(fit_intercept):
    K, _ = _gram(25, rank=4, seed=5)
    K = K + 1e-13 * np.trace(K) * np.diag(np.random.default_rng(0).random(25))
    Y = np.random.default_rng(4).normal(size=(25, 2))
    alphas = np.array([1e-6, 1e-2, 1.0]) * np.trace(K) / 25
    eig = loo_mod.eigh_gram(K, fit_intercept=fit_intercept)
    assert eig[0].min() >= 0.0
    got = loo_mod.ridge_loo_predictions(eig, Y, alphas)
    _close(got, _explicit_loo(K, Y, alphas, fit_intercept))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_classification_scores_match_refits(n_classes, fit_intercept):
    n = 24
    K, _ = _gram(n, seed=7 + n_classes)
    y = np.array(["a", "b", "c"][:n_classes] * n)[:n]
    alphas = _alphas(K)
    classes, Y = loo_mod.one_vs_all_targets(y)
    assert Y.shape[1] == (1 if n_classes == 2 else n_classes)
    assert set(np.unique(Y)) == {-1.0, 1.0}
    want_pred = _explicit_loo(K, Y, alphas, fit_intercept)
    labels = loo_mod.decision_to_labels(classes, want_pred)
    want_acc = (labels == y).mean(axis=1)
    want_mse = ((want_pred - Y) ** 2).mean(axis=(1, 2))
    eig = loo_mod.eigh_gram(K, fit_intercept=fit_intercept)
    acc, mse = loo_mod.ridge_loo_scores_classification(eig, y, alphas, return_mse=True)
    np.testing.assert_array_equal(acc, want_acc)
    _close(mse, want_mse)
    if n_classes == 2:  # the single +-1 column decides as the two-column argmax
        two = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
        pred2 = loo_mod.ridge_loo_predictions(eig, two, alphas)
        np.testing.assert_array_equal(loo_mod.decision_to_labels(classes, pred2), labels)


def test_regression_scores():
    K, _ = _gram(18, seed=11)
    Y = np.random.default_rng(5).normal(size=(18, 2))
    alphas = _alphas(K)
    eig = loo_mod.eigh_gram(K, fit_intercept=True)
    pred = _explicit_loo(K, Y, alphas, True)
    sse = ((pred - Y) ** 2).sum(axis=1)
    sst = ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)
    _close(loo_mod.ridge_loo_scores_regression(eig, Y, alphas), (1 - sse / sst).mean(axis=1))
    _close(loo_mod.ridge_loo_scores_regression(eig, Y, alphas, scoring="neg_mean_squared_error"),
           -sse.mean(axis=1) / 18)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dual_fit_predicts_like_refit(fit_intercept):
    K, _ = _gram(20, seed=13)
    Y = np.random.default_rng(6).normal(size=(20, 2)) + 1.0
    tr, te = np.arange(15), np.arange(15, 20)
    Ktr = K[np.ix_(tr, tr)]
    alpha = 0.3 * np.trace(Ktr) / 15
    eig = loo_mod.eigh_gram(Ktr, fit_intercept=fit_intercept)
    c, b = loo_mod.ridge_dual_fit(eig, Y[tr], alpha, K=Ktr)
    got = K[np.ix_(te, tr)] @ c + b
    if fit_intercept:
        want = _lssvm_refit(K, Y, alpha, tr, te)
    else:
        want = KernelRidge(alpha=alpha, kernel="precomputed").fit(Ktr, Y[tr]).predict(
            K[np.ix_(te, tr)])
    _close(got, want)


def test_input_checks():
    K, _ = _gram(6)
    eig = loo_mod.eigh_gram(K)
    with pytest.raises(ValueError, match="alpha"):
        loo_mod.ridge_loo_predictions(eig, np.ones(6), [0.0])
    with pytest.raises(ValueError, match="fit_intercept"):
        loo_mod.ridge_loo_predictions(eig, np.ones(6), [1.0], fit_intercept=True)
    with pytest.raises(ValueError, match="square"):
        loo_mod.eigh_gram(np.ones((3, 4)))


@pytest.mark.parametrize("n, rel_alpha", [(2, 1e-3), (7, 1e-6), (60, 1e-2), (60, 10.0)])
def test_the_cholesky_refit_is_the_bordered_ridge_system(rng, n, rel_alpha):
    """c, b of kernel ridge with a free intercept: [[0, 1^T], [1, K + a I]] [b; c] = [0; Y]."""
    A = rng.normal(size=(n, max(1, n // 3)))
    K = A @ A.T  # rank-deficient: the ridge makes it definite
    Y = rng.normal(size=(n, 3))
    a = rel_alpha * np.trace(K) / n
    M = np.zeros((n + 1, n + 1))
    M[0, 1:] = M[1:, 0] = 1.0
    M[1:, 1:] = K + a * np.eye(n)
    sol = np.linalg.solve(M, np.r_[np.zeros((1, 3)), Y])
    c, b = loo_mod.ridge_intercept_fit(K, Y, a)
    scale = np.abs(sol).max()
    np.testing.assert_allclose(c, sol[1:], atol=1e-8 * scale)
    np.testing.assert_allclose(b, sol[0], atol=1e-8 * scale)


def test_the_cholesky_refit_falls_back_where_the_factorisation_fails(rng):
    A = rng.normal(size=(6, 2))
    K = A @ A.T - 1e-3 * np.eye(6)  # slightly indefinite: K + 1e-9 I has no Cholesky factor
    Y = rng.normal(size=(6, 2))
    c, b = loo_mod.ridge_intercept_fit(K, Y, 1e-9)
    c2, b2 = loo_mod.ridge_dual_fit(loo_mod.eigh_gram(K, fit_intercept=True), Y, 1e-9, K=K,
                                    fit_intercept=True)
    np.testing.assert_allclose(c, c2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b, b2, rtol=1e-10, atol=1e-12)


def test_the_centred_decomposition_is_that_of_the_doubly_centred_gram(rng):
    n = 40
    A = rng.normal(size=(n, 10))
    K = A @ A.T
    l, Q = loo_mod.eigh_gram(K, fit_intercept=True)
    P = np.eye(n) - 1.0 / n
    np.testing.assert_allclose(Q @ np.diag(l) @ Q.T, P @ K @ P, atol=1e-11 * np.abs(K).max())
    np.testing.assert_allclose(Q.T @ Q, np.eye(n - 1), atol=1e-12)
    np.testing.assert_allclose(Q.T @ np.ones(n), 0.0, atol=1e-12)
