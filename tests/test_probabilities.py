"""Probabilities: one temperature on out-of-sample decision values, the invariants."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from rntk import RNTKClassifier, RNTKClassifierCV, rntk_kernel
from rntk._model_selection._loo import eigh_gram, one_vs_all_targets, ridge_loo_predictions
from rntk.model_selection import AveragedClassifier
from tests.reference import ridge_loo_by_refits
from tests.test_model_selection import _waves


def _nll(D, y_index, a):
    """Cross-entropy of Platt's targets under softmax(a D) (two classes: sigmoid), by hand.

    The target of a sample's class is (N_c + 1) / (N_c + 2), the rest spread evenly.
    """
    if D.shape[1] == 1:
        z = a * D[:, 0]
        logP = np.column_stack([-np.logaddexp(0, z), -np.logaddexp(0, -z)])
    else:
        Z = a * D
        logP = Z - np.logaddexp.reduce(Z, axis=1, keepdims=True)
    C = logP.shape[1]
    counts = np.bincount(y_index, minlength=C)
    T = np.empty_like(logP)
    for i, c in enumerate(y_index):
        true = (counts[c] + 1) / (counts[c] + 2)
        T[i] = (1 - true) / (C - 1)
        T[i, c] = true
    return -np.mean(np.sum(T * logP, axis=1))


def _assert_optimal(scale, D, y_index):
    """``scale`` minimises the NLL of ``D``: no better one on a fine grid, nor by Brent.

    (The NLL is flat near its minimum when most values are far on the right side:
    scales, not their likelihoods, may differ.)
    """
    grid = np.exp(np.linspace(-10, 10, 4001))
    best = min(_nll(D, y_index, a) for a in grid)
    res = minimize_scalar(lambda t: _nll(D, y_index, np.exp(t)), bounds=(-10, 10),
                          method="bounded", options={"xatol": 1e-9})
    got = _nll(D, y_index, scale)
    assert got <= min(best, res.fun) + 1e-7 * max(1.0, abs(best))
    assert _nll(D, y_index, 1.0) >= got  # the fit improves on no scaling


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_ridge_temperature_is_fitted_on_the_exact_loo_values(rng, n_classes):
    X, y = _waves(rng, n_classes=n_classes, noise=0.6)
    clf = RNTKClassifier(model="ridge", alpha=1e-2).fit(X, y)
    xs = clf._prepare([np.asarray(x, float)[:, None] for x in X])
    K = clf._gram(xs)
    _, Y = one_vs_all_targets(y)
    n = len(y)
    # the LOO decision values by explicit refits (bordered system, the full Gram's ridge)
    ridge = 1e-2 * np.trace(K) / n
    D = ridge_loo_by_refits(K, Y, ridge)
    np.testing.assert_allclose(
        ridge_loo_predictions(eigh_gram(K, True), Y, [ridge])[0], D, rtol=1e-7, atol=1e-9)
    _assert_optimal(clf.proba_scale_, D, y)


def test_the_average_is_calibrated_on_the_mean_of_its_members_loo_values(rng):
    X, y = _waves(rng, n_per_class=6, T=16, noise=0.6)
    search = RNTKClassifierCV().fit(X, y)
    avg = search.best_estimator_
    assert isinstance(avg, AveragedClassifier)
    loo = []
    for est in avg.estimators_:
        xs = est._prepare([np.asarray(x, float)[:, None] for x in X])
        K = est._gram(xs)
        _, Y = one_vs_all_targets(y)
        loo.append(ridge_loo_predictions(eigh_gram(K, True), Y,
                                         [est.alpha * np.trace(K) / len(K)])[0])
    _assert_optimal(avg.proba_scale_, np.mean(loo, axis=0), y)


@pytest.mark.parametrize("make", [
    lambda: RNTKClassifier(model="ridge", alpha=1e-2),
    lambda: RNTKClassifier(C=10.0),
    lambda: RNTKClassifierCV({"sigma_b": [0.0, 1.0], "alpha": [1e-3, 1e-1]}),
    lambda: RNTKClassifierCV(),
    lambda: RNTKClassifierCV({"sigma_b": [0.0, 1.0], "C": [1.0]}, protocol="paper", cv=3),
])
def test_probability_invariants(make):
    """Rows in [0, 1] summing to 1, columns in ``classes_`` order, argmax = predict."""
    hypothesis = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")

    @hypothesis.settings(max_examples=6, deadline=None)
    @hypothesis.given(seed=st.integers(0, 1000), n_classes=st.integers(2, 4),
                      labels=st.sampled_from(["int", "str"]))
    @hypothesis.example(seed=289, n_classes=4, labels="int")  # the SVC's votes tie
    def check(seed, n_classes, labels):
        rng = np.random.default_rng(seed)
        X, y = _waves(rng, n_per_class=5, T=10, n_classes=n_classes, noise=0.6)
        if labels == "str":
            y = np.array(["c", "a", "d", "b"])[y]
        clf = make().fit(X, y)
        X_new = X + 0.5 * rng.normal(size=X.shape)
        P = clf.predict_proba(X_new)
        assert P.shape == (len(X_new), n_classes)
        assert np.all((P >= 0) & (P <= 1))
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X_new))
        np.testing.assert_allclose(np.exp(clf.predict_log_proba(X_new)), P, rtol=1e-10,
                                   atol=1e-300)
        # the columns follow the classes: the probability of the true class is high
        # where the decision value is
        D = clf.decision_function(X_new)
        if n_classes > 2:
            top = D.argmax(axis=1)
            if _is_svc(clf):  # the votes decide, which may tie where the values do not
                top = np.where(clf.classes_[top] == clf.predict(X_new), top, P.argmax(axis=1))
            np.testing.assert_array_equal(P.argmax(axis=1), top)

    check()


def _is_svc(clf):
    return getattr(getattr(clf, "best_estimator_", clf), "model", None) == "svc"


def test_the_svc_probabilities_follow_its_votes_where_they_tie():
    """Three classes with two votes each: the SVC predicts the first of them (as
    :class:`sklearn.svm.SVC` does, ``break_ties=False``), which its decision values may
    not rank first; the probabilities are ``softmax(a D)`` with the predicted class's
    and the top value's swapped, elsewhere ``softmax(a D)`` itself."""
    from rntk._model_selection._calibration import decision_proba

    rng = np.random.default_rng(289)
    X, y = _waves(rng, n_per_class=5, T=10, n_classes=4, noise=0.6)
    clf = RNTKClassifier(sigma_b=0.0).fit(X, y)
    X_new = X + 0.5 * rng.normal(size=X.shape)
    D, labels = clf.decision_function(X_new), clf.predict(X_new)
    P = clf.predict_proba(X_new)
    tied = clf.classes_[D.argmax(axis=1)] != labels
    assert tied.any()  # the case is met
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], labels)
    Q = decision_proba(D, clf.proba_scale_)
    np.testing.assert_allclose(P[~tied], Q[~tied], rtol=1e-12)
    for r in np.flatnonzero(tied):
        want, top = np.searchsorted(clf.classes_, labels[r]), D[r].argmax()
        Q[r, [want, top]] = Q[r, [top, want]]
    np.testing.assert_allclose(P, Q, rtol=1e-12)


def test_log_probabilities_do_not_underflow(rng):
    X, y = _waves(rng, n_classes=2, noise=0.01)
    clf = RNTKClassifier(model="ridge", alpha=1e-6).fit(X, y)
    far = X * 50.0
    L = clf.predict_log_proba(far)
    assert np.all(np.isfinite(L))


def test_separable_out_of_sample_values_give_a_finite_scale(rng):
    """All out-of-sample values right: Platt's targets keep the probabilities off 0 and 1."""
    from rntk._model_selection._calibration import fit_temperature

    D = np.r_[np.full(10, -1.0), np.full(10, 1.0)][:, None]
    a = fit_temperature(D, np.repeat([0, 1], 10))
    # the optimum of the targets 11/12: sigmoid(a) = 11/12
    assert a == pytest.approx(np.log(11), rel=1e-4)


def test_the_scale_sharpens_with_separable_data(rng):
    """Out-of-sample values of an easy problem get a larger scale than a hard one's."""
    easy, y = _waves(rng, noise=0.05)
    hard, _ = _waves(rng, noise=3.0)
    a_easy = RNTKClassifier(model="ridge", alpha=1e-2).fit(easy, y).proba_scale_
    a_hard = RNTKClassifier(model="ridge", alpha=1e-2).fit(hard, y).proba_scale_
    assert a_easy > 3 * a_hard


def test_one_series_per_class_still_gives_probabilities(rng):
    X, y = _waves(rng, n_per_class=1, n_classes=3, noise=0.6)
    for clf in (RNTKClassifier(C=1.0), RNTKClassifier(model="ridge"), RNTKClassifierCV()):
        P = clf.fit(X, y).predict_proba(X)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        assert np.all(np.isfinite(P))


def test_the_kernel_is_untouched(rng):
    """Probabilities change nothing of the decision values."""
    X, y = _waves(rng, noise=0.6)
    clf = RNTKClassifier(model="ridge", alpha=1e-2).fit(X, y)
    K = rntk_kernel(clf._prepare(list(X[:, :, None]), fitted=True), clf.X_fit_)
    np.testing.assert_allclose(clf.decision_function(X), clf.estimator_.decision_function(K))


def test_probability_metrics_against_scikit_learn(rng):
    from sklearn.metrics import balanced_accuracy_score, log_loss, roc_auc_score

    from rntk.benchmarking.stats import expected_calibration_error, probability_metrics

    classes = np.array(["a", "b", "c"])
    y = classes[rng.integers(0, 3, size=60)]
    P = rng.dirichlet([1, 1, 1], size=60)
    m = probability_metrics(y, P, classes)
    pred = classes[P.argmax(axis=1)]
    assert m["accuracy"] == pytest.approx(np.mean(pred == y))
    assert m["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pred))
    assert m["nll"] == pytest.approx(log_loss(y, P, labels=classes))
    assert m["auroc"] == pytest.approx(roc_auc_score(y, P, multi_class="ovr", labels=classes))
    # the ECE by hand: 15 bins of the top probability
    conf, right = P.max(axis=1), (pred == y)
    bins = np.minimum((conf * 15).astype(int), 14)
    ece = sum(np.sum(bins == b) * abs(right[bins == b].mean() - conf[bins == b].mean())
              for b in np.unique(bins)) / len(y)
    assert expected_calibration_error(y, P, classes) == pytest.approx(ece)
    assert m["ece"] == pytest.approx(ece)
    # binary: the AUROC of the second class
    P2 = np.column_stack([1 - P[:, 0], P[:, 0]])
    y2 = np.where(y == "a", "y", "x")
    assert probability_metrics(y2, P2, ["x", "y"])["auroc"] == pytest.approx(
        roc_auc_score(y2 == "y", P2[:, 1]))


def test_calibration_sums_pool_over_test_sets_into_the_bins(rng):
    from rntk.benchmarking.stats import calibration_bins, calibration_sums

    conf = rng.uniform(0.2, 1.0, size=50)
    conf[0] = 1.0  # the top edge falls in the last bin
    right = rng.uniform(size=50) < conf
    whole = calibration_sums(conf, right, n_bins=10)
    parts = [calibration_sums(conf[s], right[s], n_bins=10) for s in (slice(0, 17),
                                                                       slice(17, None))]
    for k in range(3):
        np.testing.assert_allclose(whole[k], parts[0][k] + parts[1][k], rtol=1e-12)
    # by hand: bin b holds the confidences in [b/10, (b+1)/10), the last one closed
    bins = np.minimum((conf * 10).astype(int), 9)
    np.testing.assert_array_equal(whole[2], [np.sum(bins == b) for b in range(10)])
    keep = np.unique(bins)
    mean_conf, acc, count = calibration_bins(conf, right, n_bins=10)
    np.testing.assert_allclose(mean_conf, [conf[bins == b].mean() for b in keep], rtol=1e-12)
    np.testing.assert_allclose(acc, [right[bins == b].mean() for b in keep], rtol=1e-12)
    np.testing.assert_array_equal(count, [np.sum(bins == b) for b in keep])
