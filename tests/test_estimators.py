import pickle
import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_blobs
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from rntk import (
    RNTKClassifier,
    RNTKClassifierCV,
    RNTKRegressor,
    RNTKRegressorCV,
    rntk_kernel,
)
from rntk._model_selection import FastSVC as _FastSVC
from rntk._model_selection import kernel_ridge_score as _kernel_ridge_score


def _waves(rng, n_per_class=8, lengths=(12, 16), noise=0.2, n_classes=2):
    """Noisy sine / cosine / sawtooth series of varying lengths, with labels."""
    X, y = [], []
    for c in range(n_classes):
        for i in range(n_per_class):
            t = np.linspace(0, 1, lengths[i % len(lengths)])
            base = [np.sin(7 * t), np.cos(7 * t), (3 * t) % 1 - 0.5][c]
            X.append(base + noise * rng.normal(size=t.size))
            y.append(c)
    return X, np.array(y)


def _unit(seqs):
    return [s / np.linalg.norm(s) for s in seqs]


# -- estimators against an independent composition of public pieces --------------------
def test_classifier_matches_svc_on_precomputed_kernel(rng):
    X, y = _waves(rng, n_classes=3)
    Xt, _ = _waves(rng, n_per_class=4, lengths=(10, 14, 18), n_classes=3)
    params = dict(sigma_w=1.38, sigma_b=0.3, sigma_h=0.1)
    clf = RNTKClassifier(C=3.0, **params).fit(X, y)
    K = rntk_kernel(_unit(X), **params)
    svc = SVC(kernel="precomputed", C=3.0).fit(K, y)
    Kt = rntk_kernel(_unit(Xt), _unit(X), **params)
    np.testing.assert_array_equal(clf.predict(Xt), svc.predict(Kt))
    np.testing.assert_allclose(clf.decision_function(Xt), svc.decision_function(Kt),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    np.testing.assert_array_equal(clf.support_, svc.support_)


def test_regressor_matches_kernel_ridge(rng):
    X = [rng.normal(size=t) for t in (5, 8, 6, 9, 7, 4, 10)]
    Y = np.stack([[x[-1], x[-2] * x[-1]] for x in X])
    Xt = [rng.normal(size=t) for t in (6, 3, 11)]
    reg = RNTKRegressor(alpha=0.1, sigma_b=0.5).fit(X, Y)
    K = rntk_kernel(X, sigma_b=0.5)
    kr = KernelRidge(alpha=0.1, kernel="precomputed").fit(K, Y)
    pred = reg.predict(Xt)
    assert pred.shape == (3, 2)
    np.testing.assert_allclose(pred, kr.predict(rntk_kernel(Xt, X, sigma_b=0.5)), rtol=1e-10)
    reg1 = RNTKRegressor(alpha=0.1, sigma_b=0.5).fit(X, Y[:, 0])
    np.testing.assert_allclose(reg1.predict(Xt), pred[:, 0], rtol=1e-10)


def test_normalize_makes_predictions_scale_invariant(rng):
    X, y = _waves(rng)
    Xt, _ = _waves(rng, n_per_class=3)
    clf = RNTKClassifier(sigma_b=0.2).fit(X, y)
    scales = rng.uniform(0.1, 10, size=len(X))
    clf2 = RNTKClassifier(sigma_b=0.2).fit([s * x for s, x in zip(scales, X)], y)
    np.testing.assert_allclose(clf.decision_function(Xt), clf2.decision_function(
        [3.0 * x for x in Xt]), rtol=1e-9, atol=1e-12)
    # without normalisation the amplitude matters
    raw = RNTKClassifier(sigma_b=0.2, normalize=False).fit(X, y)
    assert not np.allclose(raw.decision_function(Xt), clf.decision_function(Xt))


def test_input_layouts_agree(rng):
    X, y = _waves(rng, lengths=(15,))
    X2 = np.stack(X)
    Xt = rng.normal(size=(5, 15))
    ref = RNTKClassifier(C=10).fit(X2, y).decision_function(Xt)
    for Xfit in (X2[:, :, None], list(X2), [x[:, None] for x in X2]):
        d = RNTKClassifier(C=10).fit(Xfit, y).decision_function(list(Xt))
        np.testing.assert_allclose(d, ref, rtol=1e-12)
    # NaN tail padding == shorter series
    padded = np.full((5, 20), np.nan)
    padded[:, :12] = Xt[:, :12]
    clf = RNTKClassifier(C=10).fit(X2, y)
    np.testing.assert_allclose(clf.decision_function(padded),
                               clf.decision_function(list(Xt[:, :12])), rtol=1e-12)
    assert clf.n_features_in_ == 15 and clf.n_channels_in_ == 1
    assert not hasattr(RNTKClassifier().fit(X, y), "n_features_in_")


def test_multivariate_and_channel_mismatch(rng):
    X = [rng.normal(size=(t, 3)) for t in (6, 8, 7, 9)]
    y = np.array([0, 1, 0, 1])
    clf = RNTKClassifier().fit(X, y)
    assert clf.n_channels_in_ == 3
    with pytest.raises(ValueError, match="fitted on series with 3 channel"):
        clf.predict([rng.normal(size=(5, 2))])
    with pytest.raises(ValueError, match="1-D array"):
        clf.predict(rng.normal(size=7))
    reg = RNTKRegressor().fit(X, [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="channel"):
        reg.predict(rng.normal(size=(2, 5)))


@pytest.mark.parametrize("Est", [RNTKClassifier, RNTKRegressor, RNTKClassifierCV,
                                 RNTKRegressorCV])
def test_unfitted_errors(Est, rng):
    with pytest.raises(NotFittedError):
        Est().predict(rng.normal(size=(2, 5)))


def test_invalid_parameters(rng):
    X, y = _waves(rng)
    with pytest.raises(ValueError, match="sigma_h"):
        RNTKClassifier(sigma_h=-1).fit(X, y)
    with pytest.raises(ValueError, match="activation"):
        RNTKRegressor(activation="tanh").fit(X, y)
    with pytest.raises(ValueError, match="unknown parameter"):
        RNTKClassifierCV({"gamma": [1.0]}).fit(X, y)


def test_predict_does_not_change_state_and_pickles(rng):
    X, y = _waves(rng)
    clf = RNTKClassifier(sigma_b=0.1).fit(X, y)
    before = pickle.dumps(clf)
    pred = clf.predict(X)
    clf.decision_function(X[:3])
    assert pickle.dumps(clf) == before
    clf2 = pickle.loads(before)
    np.testing.assert_array_equal(clf2.predict(X), pred)


def test_calibrated_probabilities(rng):
    X, y = _waves(rng, n_per_class=9)
    cal = CalibratedClassifierCV(RNTKClassifier(), cv=3).fit(X, y)
    proba = cal.predict_proba(X[:4])
    assert proba.shape == (4, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_pipeline(rng):
    X, y = _waves(rng, lengths=(14,))
    pipe = make_pipeline(FunctionTransformer(lambda a: np.diff(a, axis=1)), RNTKClassifier())
    assert pipe.fit(np.stack(X), y).score(np.stack(X), y) > 0.9


def test_accuracy_on_blobs():
    # the accuracy part of sklearn's check_classifiers_train (which is an expected
    # failure below): 2-feature blobs read as length-2 series
    X, y = make_blobs(n_samples=300, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    for est in (RNTKClassifier(), RNTKClassifier(normalize=False, C=10)):
        assert est.fit(X, y).score(X, y) > 0.83


# -- model selection ---------------------------------------------------------------
def test_fast_svc_matches_svc(rng):
    X, y = _waves(rng, n_per_class=7, n_classes=3)
    K = rntk_kernel(_unit(X), sigma_b=0.4)
    for train, test in StratifiedKFold(3).split(np.zeros(len(y)), y):
        Ktr, Kte = K[np.ix_(train, train)], K[np.ix_(test, train)]
        for C in (0.01, 1.0, 100.0):
            for cw in (None, "balanced", {0: 2.0, 1: 1.0, 2: 0.5}):
                svc = SVC(kernel="precomputed", C=C, class_weight=cw).fit(Ktr, y[train])
                expected = np.mean(svc.predict(Kte) == y[test])
                assert _FastSVC.score(Ktr, y[train], Kte, y[test], C, cw) == expected


def test_kernel_ridge_score_matches_kernel_ridge(rng):
    X = [rng.normal(size=t) for t in rng.integers(4, 9, size=12)]
    y = np.array([x[-1] for x in X])
    K = rntk_kernel(X)
    tr, te = np.arange(8), np.arange(8, 12)
    for alpha in (0.0, 0.01, 1.0):
        kr = KernelRidge(alpha=alpha, kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr])
        expected = kr.score(K[np.ix_(te, tr)], y[te])
        assert _kernel_ridge_score(K[np.ix_(tr, tr)], y[tr], K[np.ix_(te, tr)], y[te],
                                   alpha) == expected


def _assert_same_search(fast, slow, exact=True):
    # Accuracies are exactly equal; R^2 may differ in the last bit, since a test block
    # of the Gram is computed as K(train, test)^T in the CV estimator and as
    # K(test, train) by GridSearchCV.
    assert fast.best_params_ == slow.best_params_
    assert fast.best_index_ == slow.best_index_
    np.testing.assert_array_equal(fast.cv_results_["rank_test_score"],
                                  slow.cv_results_["rank_test_score"])
    for key in ("mean_test_score", "std_test_score", "split0_test_score",
                "split1_test_score"):
        if exact:
            np.testing.assert_array_equal(fast.cv_results_[key], slow.cv_results_[key])
        else:
            np.testing.assert_allclose(fast.cv_results_[key], slow.cv_results_[key],
                                       rtol=1e-12, atol=1e-12)
    assert fast.best_score_ == pytest.approx(slow.best_score_, rel=1e-12)
    assert fast.cv_results_["params"] == slow.cv_results_["params"]


def test_classifier_cv_equals_gridsearchcv(rng):
    X, y = _waves(rng, n_per_class=9, noise=0.6)
    grid = [{"sigma_w": [1.35, 1.45], "sigma_b": [0.0, 1.0], "C": [0.01, 1.0, 100.0]},
            {"sigma_h": [0.5], "C": [10.0]}]
    folds = StratifiedKFold(3)
    fast = RNTKClassifierCV(grid, protocol="paper", cv=folds).fit(X, y)
    slow = GridSearchCV(RNTKClassifier(), grid, cv=folds).fit(X, y)
    _assert_same_search(fast, slow)
    # many exact ties (accuracy on 6-series folds): the first best in grid order wins
    assert np.sum(fast.cv_results_["rank_test_score"] == 1) >= 1
    Xt, _ = _waves(rng, n_per_class=3)
    np.testing.assert_array_equal(fast.predict(Xt), slow.predict(Xt))
    np.testing.assert_allclose(fast.decision_function(Xt), slow.decision_function(Xt))
    assert fast.score(X, y) == slow.score(X, y)
    np.testing.assert_array_equal(fast.classes_, [0, 1])


@pytest.mark.parametrize("cls, target", [(RNTKClassifierCV, "class"), (RNTKRegressorCV, "real")])
def test_cv_fold_fits_on_threads_give_the_same_search(rng, cls, target):
    X, y = _waves(rng, n_per_class=9, noise=0.6)
    if target == "real":
        y = np.array([x[-1] for x in X], dtype=float)
        grid = {"sigma_b": [0.0, 1.0], "alpha": [0.01, 1.0]}
    else:
        grid = {"sigma_b": [0.0, 1.0], "C": [0.01, 1.0, 100.0]}
    protocol = "loo" if target == "real" else "paper"
    one = cls(grid, protocol=protocol, cv=3, n_jobs=1).fit(X, y)
    two = cls(grid, protocol=protocol, cv=3, n_jobs=2).fit(X, y)
    for f in range(3):
        key = f"split{f}_test_score"
        np.testing.assert_allclose(two.cv_results_[key], one.cv_results_[key], rtol=1e-10)
    assert two.best_params_ == one.best_params_


def test_classifier_cv_default_folds_and_scoring(rng):
    X, y = _waves(rng, n_per_class=6, noise=0.8)
    grid = {"sigma_b": [0.0, 0.5], "C": [0.1, 10.0]}
    kw = dict(scoring="balanced_accuracy", cv=3)
    fast = RNTKClassifierCV(grid, protocol="paper", estimator=RNTKClassifier(
        class_weight="balanced"), **kw).fit(X, y)
    slow = GridSearchCV(RNTKClassifier(class_weight="balanced"), grid, **kw).fit(X, y)
    _assert_same_search(fast, slow)


def test_regressor_cv_equals_gridsearchcv(rng):
    X = [rng.normal(size=t) for t in rng.integers(5, 10, size=18)]
    y = np.array([x[-1] + 0.5 * x[-2] for x in X])
    grid = {"sigma_b": [0.0, 0.5], "sigma_h": [0.0, 1.0], "alpha": [0.01, 0.1, 1.0]}
    folds = KFold(4)
    # protocol="loo" with folds: the ridge regressor (intercept, relative ridge, clipped)
    fast = RNTKRegressorCV(grid, cv=folds).fit(X, y)
    slow = GridSearchCV(RNTKRegressor(model="ridge"), grid, cv=folds).fit(X, y)
    _assert_same_search(fast, slow, exact=False)
    np.testing.assert_allclose(fast.predict(X[:4]), slow.predict(X[:4]), rtol=1e-12)
    assert fast.best_score_ > 0.5
    # the paper's protocol: scikit-learn's KernelRidge
    fast = RNTKRegressorCV(grid, protocol="paper", cv=folds).fit(X, y)
    slow = GridSearchCV(RNTKRegressor(), grid, cv=folds).fit(X, y)
    _assert_same_search(fast, slow, exact=False)
    np.testing.assert_allclose(fast.predict(X[:4]), slow.predict(X[:4]), rtol=1e-12)
    assert isinstance(fast.best_estimator_.estimator_, KernelRidge)


def test_default_grids_are_the_papers():
    paper = RNTKClassifierCV(protocol="paper")
    assert len(ParameterGrid(paper._default_grid(None))) == 15 * 12 * 5 * 5
    grid = paper._default_grid(None)
    assert 2**0.5 in grid["sigma_w"] and grid["sigma_u"] == [1.0]
    assert grid["C"] == [0.01, 0.1, 1.0, 10.0, 100.0]
    assert len(RNTKRegressorCV(protocol="paper")._default_grid(None)["alpha"]) == 20
    assert paper._paper_cv == 10 and RNTKRegressorCV._paper_cv == 5
    assert RNTKClassifierCV().cv is None and RNTKClassifierCV().estimator is None


def test_small_classes_warn_not_crash(rng):
    # 2 members of class 2 with 3 folds: StratifiedKFold warns; a training fold that
    # holds one class fails and scores NaN, as in GridSearchCV
    X, y = _waves(rng, n_per_class=4)
    X, y = X + X[:2], np.r_[y, [2, 2]]
    with pytest.warns(UserWarning, match="least populated class"):
        RNTKClassifierCV({"C": [1.0]}, protocol="paper", cv=3).fit(X, y)
    # every fit failing refuses the refit, as GridSearchCV does ("All the fits failed")
    Xs, ys = X[:3] + X[4:6], np.array([0, 0, 0, 1, 1])
    cv = RNTKClassifierCV({"C": [1.0]}, protocol="paper", cv=KFold(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.warns(FitFailedWarning, match="fits failed"), pytest.raises(
                ValueError, match="every candidate's score is NaN, 2 fits failed"):
            cv.fit(Xs, ys)
    assert np.isnan(cv.cv_results_["split0_test_score"]).all()
    cv.set_params(refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.warns(FitFailedWarning, match="fits failed"):
            cv.fit(Xs, ys)  # the scores alone: no refit to refuse
    with pytest.raises(ValueError, match="classes"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            RNTKClassifierCV({"C": [1.0]}, protocol="paper", cv=KFold(2),
                             error_score="raise").fit(Xs, ys)


def test_verbose_progress(rng, capsys):
    X, y = _waves(rng, n_per_class=5)
    RNTKClassifierCV({"sigma_b": [0.0, 0.1, 0.2], "C": [1.0, 10.0]}, protocol="paper", cv=2,
                     verbose=2).fit(X, y)
    out = capsys.readouterr().out
    assert "6 candidates (3 kernel settings)" in out
    assert "kernel settings 3/3" in out and "ETA" in out and "elapsed" in out


def test_refit_false(rng):
    X, y = _waves(rng, n_per_class=5)
    cv = RNTKClassifierCV({"C": [1.0, 10.0]}, protocol="paper", cv=2, refit=False).fit(X, y)
    assert cv.best_params_ in ({"C": 1.0}, {"C": 10.0})
    with pytest.raises(AttributeError, match="refit=False"):
        cv.predict(X)


# -- scikit-learn's common checks --------------------------------------------------
_LENGTH_REASON = ("series of another length than in fit are valid input (variable-length "
                  "sequences), so predicting on X with fewer columns does not raise")


def _expected_failed_checks(estimator):
    failures = {"check_n_features_in_after_fitting": _LENGTH_REASON}
    if getattr(estimator, "model", None) == "ridge" or (
            isinstance(estimator, RNTKClassifierCV) and estimator.protocol == "loo"):
        failures["check_class_weight_classifiers"] = (
            "class_weight is supported by the SVC only; the kernel ridge classifier "
            "raises a ValueError for it")
    if isinstance(estimator, (RNTKClassifier, RNTKClassifierCV)):
        # this check ends with classifier.predict(X.T); its accuracy and shape
        # assertions are repeated in test_accuracy_on_blobs
        failures["check_classifiers_train"] = _LENGTH_REASON
    if isinstance(estimator, RNTKRegressorCV) and estimator.param_grid is None:
        # the check sets alpha=0.01 on every regressor that has an alpha
        failures["check_regressors_train"] = (
            "the check sets alpha=0.01, which the default grid (its own ridges) refuses "
            "by name rather than ignore")
    return failures


@parametrize_with_checks(
    [RNTKClassifier(), RNTKClassifier(model="ridge"), RNTKRegressor(),
     RNTKRegressor(model="ridge", normalize="dataset"),
     RNTKRegressorCV({"normalize": ["dataset"], "alpha": [0.1, np.inf]}, n_average=2),
     RNTKClassifierCV({"sigma_b": [0.0, 0.5], "C": [1.0, 10.0]}, protocol="paper", cv=3),
     RNTKClassifierCV({"sigma_b": [0.0, 0.5], "alpha": [1e-3, 1.0]}),
     RNTKRegressorCV({"sigma_b": [0.0, 0.5], "alpha": [0.1, 1.0]}, cv=3),
     RNTKRegressorCV({"sigma_b": [0.0, 0.5], "alpha": [0.1, 1.0]}),
     RNTKClassifierCV(), RNTKRegressorCV()],  # the flagship configurations, default grids
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        check(estimator)


# -- the main job and the example, quick modes ---------------------------------------
def test_main_job_quick(capsys):
    from rntk.__main__ import main

    accuracy = main(["--protocol", "paper", "--quick", "--dataset", "Coffee", "--cv", "3",
                     "--verbose", "1"])
    out = capsys.readouterr().out
    assert "test accuracy" in out and "RNTK paper:      100.00% (Table 2)" in out
    assert "kernel settings 6/6" in out
    assert accuracy > 0.85


def test_main_job_default_protocol(capsys):
    from rntk.__main__ import main

    accuracy = main(["--dataset", "Coffee", "--verbose", "0"])
    out = capsys.readouterr().out
    assert "kernel ridge" in out and "exact leave-one-out" in out
    assert accuracy > 0.85


@pytest.mark.parametrize("args, message", [
    (["--cv", "1"], "argument --cv: must be a number of folds >= 2; got 1"),
    (["--cv", "x"], "argument --cv: not an integer: 'x'"),
    (["--n-jobs", "0"], "argument --n-jobs: must be a number of threads >= 1"),
    (["--verbose", "-1"], "argument --verbose: must be 0, 1 or 2; got -1"),
    (["--quick"], "--quick applies to --protocol paper only"),
    (["--quick", "--protocol", "loo"], "--quick applies to --protocol paper only"),
])
def test_main_job_argument_errors_are_clean(capsys, args, message):
    from rntk.__main__ import main

    with pytest.raises(SystemExit) as info:  # argparse's usage error, no traceback
        main(args + ["--dataset", "Coffee"])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_main_job_data_errors_are_clean(tmp_path, monkeypatch):
    from rntk.__main__ import main

    monkeypatch.delenv("RNTK_DATA", raising=False)
    with pytest.raises(SystemExit, match="^error: unknown UCR dataset 'Nope'"):
        main(["--dataset", "Nope"])
    with pytest.raises(SystemExit, match="^error: --data-home .*missing does not exist"):
        main(["--dataset", "Nope", "--data-home", str(tmp_path / "missing")])
    # offline: a dataset of the archive, neither bundled nor cached; nothing listens on
    # port 9 of this machine, so the download fails at once
    monkeypatch.setenv("RNTK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RNTK_UCR_URL", "http://127.0.0.1:9/")
    with pytest.raises(SystemExit, match="^error: could not download Adiac"):
        main(["--dataset", "Adiac"])


def test_pipeline_example_quick(tmp_path):
    import runpy
    from pathlib import Path

    pytest.importorskip("matplotlib")
    path = Path(__file__).resolve().parents[1] / "examples" / "pipeline_gridsearch.py"
    summary = runpy.run_path(str(path))["main"](["--quick", "--out", str(tmp_path)])
    assert {p.name for p in tmp_path.iterdir()} == {"cv_results.csv", "summary.json",
                                                    "cv_accuracy.png"}
    assert summary["gridsearch_test_accuracy"] > 0.85


def test_fast_svc_reports_the_iteration_cap(rng, monkeypatch):
    X = rng.normal(size=(60, 5))
    K = X @ X.T + 30.0
    y = (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)
    tr, te = np.arange(50), np.arange(50, 60)
    args = (K[np.ix_(tr, tr)], y[tr], K[np.ix_(te, tr)], y[te], 10.0)
    capped, full = _FastSVC.fold(*args, max_iter=1), _FastSVC.fold(*args)
    assert capped[1] is False and full[1] is True
    monkeypatch.setattr(_FastSVC, "usable", False)  # the SVC fallback agrees
    assert _FastSVC.fold(*args, max_iter=1) == capped
    assert _FastSVC.fold(*args) == full
