"""Results that must not hang on rounding, series near the float limits, clear refusals.

Each test here failed before its fix: a tie decided by the last bits of a tie-break, a
z-score, quantile function or spectrum that under- or overflowed, an option refused with
a message blaming values the user never gave, and the tie and ridge rules of the search
checked only indirectly.
"""

from types import SimpleNamespace

import numpy as np
import pytest

import rntk
import rntk.model_selection
from rntk import RNTKClassifier, RNTKClassifierCV, SeriesScaler
from rntk._model_selection import DEFAULT_PRIOR
from rntk.datasets import load_ts, load_ucr
from rntk.model_selection import KernelRidgeClassifier, search_grams
from tests.transforms import amplitude_spectrum, value_quantiles

# -- ties: grid order, not rounding ----------------------------------------------------


def _constant_scorer(noise):
    """Score every candidate 0 with the tie-break -4, perturbed in its last bits."""
    def score(K, y, params):
        k = np.array([p["k"] for p in params], dtype=float)
        return np.zeros((len(params), 1)), -4.0 * (1 + noise * np.sin(7.0 * k + 1.0))

    return score


@pytest.mark.parametrize("noise", [0.0, 1e-15, -3e-15, 2e-12])
def test_a_constant_tie_break_is_no_tie_break(noise):
    """Tie-breaks equal up to rounding leave the choice to grid order."""
    n_settings, per = 5, 3
    candidates = [{"k": i} for i in range(n_settings * per)]
    groups = [list(range(s * per, (s + 1) * per)) for s in range(n_settings)]
    grams = (np.full((2, 2), float(s)) for s in range(n_settings))
    out = search_grams(grams, groups, candidates, np.array([0, 1]),
                       [(np.arange(2), np.arange(2))], score_gram=_constant_scorer(noise),
                       keep=3)
    assert out.best_index == 0
    assert [i for i, _ in out.top] == [0, per, 2 * per]  # the first of each setting


def test_a_real_tie_break_still_decides():
    """A tie-break that differs by more than rounding picks the better candidate."""
    candidates = [{"k": i} for i in range(4)]

    def score(K, y, params):
        return np.zeros((len(params), 1)), np.array([-4.0, -4.0 + 1e-6, -4.0, -3.0])[
            [p["k"] for p in params]]

    out = search_grams((np.eye(2) for _ in range(2)), [[0, 1], [2, 3]], candidates,
                       np.array([0, 1]), [(np.arange(2), np.arange(2))],
                       score_gram=score, keep=2)
    assert out.best_index == 3
    assert [i for i, _ in out.top] == [3, 1]


@pytest.fixture(scope="module")
def gunpoint():
    X, y = load_ucr("GunPoint", split="train")
    X_test, _ = load_ucr("GunPoint", split="test")
    return np.asarray(X), np.asarray(y), np.asarray(X_test[:60])


def test_one_series_per_class_does_not_depend_on_order_or_path(gunpoint):
    """With one series per class every LOO accuracy is 0 and the tie-break is 4 for all.

    Before, the third averaged member was picked by rounding noise: the order of the two
    training series and the large-n path changed it, and with it the predictions.
    """
    X, y, X_test = gunpoint
    rng = np.random.default_rng(0)
    # one member more than the priors: the one the tie-break picks
    k = len(DEFAULT_PRIOR) + 1
    for _ in range(3):
        idx = [int(rng.choice(np.flatnonzero(y == c))) for c in np.unique(y)]
        fits = [RNTKClassifierCV(n_average=k).fit(X[order], y[order])
                for order in (idx, idx[::-1])]
        fits.append(RNTKClassifierCV(n_average=k, large_n=1, n_components=10)
                    .fit(X[idx], y[idx]))
        assert np.all(fits[0].cv_results_["mean_test_score"] == 0)
        for other in fits[1:]:
            assert other.averaged_params_ == fits[0].averaged_params_
            np.testing.assert_array_equal(other.predict(X_test), fits[0].predict(X_test))
        # after the priors: the first setting of the grid with its first ridge
        assert fits[0].averaged_params_[k - 1] == fits[0].cv_results_["params"][0]


def test_exact_ties_in_the_loo_search_go_to_grid_order(rng):
    """Candidates with identical LOO scores and tie-breaks by construction: the first wins.

    ``normalize=True`` and ``"norm"`` are one scaling in two spellings (two kernel
    settings, the same Gram); a repeated ridge gives two identical candidates of one
    setting.
    """
    X = rng.normal(size=(16, 12)) + np.repeat([0.0, 1.0], 8)[:, None] * np.sin(np.arange(12))
    y = np.repeat([0, 1], 8)
    for first, second in ((True, "norm"), ("norm", True)):
        grid = [{"normalize": [first], "alpha": [1e-2, 1e-2]},
                {"normalize": [second], "alpha": [1e-2, 1e-2]}]
        search = RNTKClassifierCV(grid, n_average=2).fit(X, y)
        scores = search.cv_results_["mean_test_score"]
        assert np.all(scores == scores[0])
        assert search.best_index_ == 0
        assert search.best_params_["normalize"] is first
        assert [p["normalize"] for p in search.averaged_params_] == [first, second]


def test_the_ridge_of_the_classifier_is_relative_to_the_gram(rng):
    """``fit(c K)`` predicts as ``fit(K)``: the ridge is ``alpha x trace(K) / n``."""
    X = rng.normal(size=(30, 10))
    y = rng.integers(0, 3, size=30)
    K = rntk.rntk_kernel(X)
    K_test = rntk.rntk_kernel(X[:7] + 0.1, X)
    ref = KernelRidgeClassifier(alpha=1e-2).fit(K, y)
    for c in (1e-3, 7.0, 1e4):
        clf = KernelRidgeClassifier(alpha=1e-2).fit(c * K, y)
        np.testing.assert_allclose(clf.decision_function(c * K_test),
                                   ref.decision_function(K_test), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(clf.dual_coef_ * c, ref.dual_coef_, rtol=1e-7, atol=1e-9)
    # an absolute ridge would not do this: the same alpha on 1e4 K fits far closer
    loose = KernelRidgeClassifier(alpha=10.0).fit(K, y).decision_function(K)
    tight = KernelRidgeClassifier(alpha=1e-4).fit(K, y).decision_function(K)
    assert not np.allclose(loose, tight, atol=1e-3)


# -- series near the float limits ------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-170, 1e-300, 1e160, 1e300])
def test_zscore_of_tiny_and_huge_series(scale):
    """``std ** 2`` under/overflows out there: the series is scaled by its peak first."""
    X = np.array([[1.0, 2.0, 3.0, 5.0], [4.0, 4.0, 4.0, 4.0]]) * scale
    Z = SeriesScaler().fit_transform(X)
    ref = SeriesScaler().fit_transform(X / scale)
    np.testing.assert_allclose(Z, ref, atol=1e-12)
    assert np.abs(Z[0]).max() > 1  # not turned into zeros
    np.testing.assert_array_equal(Z[1], 0.0)  # a constant series stays a constant 0


def test_quantiles_and_spectra_near_the_float_maximum():
    q = value_quantiles([[1e308, -1e308, 1e308, -1e308]], n_levels=4)
    np.testing.assert_allclose(q, value_quantiles([[1.0, -1.0, 1.0, -1.0]], n_levels=4),
                               rtol=1e-12)
    spectrum = amplitude_spectrum(np.full((1, 4), 1.5e308))
    np.testing.assert_array_equal(spectrum, 0.0)  # a constant series has no amplitude
    alternating = np.array([[1.5e308, -1.5e308] * 4])
    np.testing.assert_allclose(amplitude_spectrum(alternating, n_bins=5),
                               amplitude_spectrum(alternating / 1e308, n_bins=5) * 1e308,
                               rtol=1e-12)
    tiny = np.array([[3e-320, -3e-320] * 4])
    assert amplitude_spectrum(tiny, n_bins=5)[0, -1] > 0


def test_estimators_read_the_representations_of_huge_series(rng):
    """The estimators used to blame missing or infinite values the input did not have."""
    # alternating signs near the maximum: steps and Nyquist sums overflow unscaled
    X = rng.uniform(0.5, 1.0, size=(10, 16)) * (-1.0) ** np.arange(16) * 1.7e308
    y = np.repeat([0, 1], 5)
    for rep in ({"quantiles": 8}, {"spectrum": 8}):
        clf = rntk.RNTKClassifier(model="ridge", **rep).fit(X, y)
        ref = rntk.RNTKClassifier(model="ridge", **rep).fit(X / 1e308, y)
        np.testing.assert_allclose(clf.decision_function(X),
                                   ref.decision_function(X / 1e308), rtol=1e-9, atol=1e-12)


# -- refusals that name the problem and the remedy --------------------------------------


@pytest.mark.parametrize("kw", [{"quantiles": 8}, {"spectrum": 16},
                                {"spectrum": 16, "quantiles": 8}])
def test_representations_with_the_default_grid_are_refused_up_front(rng, kw):
    X, y = rng.normal(size=(8, 12)), np.repeat([0, 1], 4)
    said = ", ".join(f"{k}={v}" for k, v in kw.items())
    with pytest.raises(ValueError, match=f"^{said} is set on the estimator of "
                                         "RNTKClassifierCV with the default grid.*give a "
                                         "param_grid"):
        RNTKClassifierCV(estimator=RNTKClassifier(**kw)).fit(X, y)
    # with a grid of one's own it is a plain option
    search = RNTKClassifierCV({"alpha": [1e-2, 1.0]}, estimator=RNTKClassifier(
        quantiles=kw.get("quantiles"), spectrum=kw.get("spectrum") if len(kw) == 1 else None))
    assert search.fit(X, y).score(X, y) > 0.4


@pytest.mark.parametrize("value", [True, False, 2.0, 0])
def test_n_components_must_be_a_count(rng, value):
    X, y = rng.normal(size=(8, 12)), np.repeat([0, 1], 4)
    with pytest.raises(ValueError, match="n_components"):
        RNTKClassifierCV(n_components=value).fit(X, y)


def test_a_ts_file_missing_one_channel_at_a_step_names_the_remedy(tmp_path):
    path = tmp_path / "toy.ts"
    path.write_text("@problemName toy\n@classLabel true a b\n@data\n"
                    "1,2,3:4,?,6:a\n7,8,9:9,1,2:b\n")
    with pytest.raises(ValueError, match=r"series 0 has a step \(1\) where only some "
                                         r"channels are missing: load it with "
                                         r"missing='interpolate'.*missing='keep'"):
        load_ts(path)
    X, _ = load_ts(path, missing="interpolate")
    np.testing.assert_allclose(X[0], [[1, 4], [2, 5], [3, 6]])
    X, _ = load_ts(path, missing="keep")
    assert np.isnan(X[0][1, 1]) and np.isnan(X).sum() == 1
    with pytest.raises(ValueError, match="missing must be"):
        load_ts(path, missing="drop")


def test_from_aeon_converts_the_channel_major_layout(rng):
    X_aeon = rng.normal(size=(20, 30, 40))  # 20 series, 30 channels, 40 steps
    X = rntk.from_aeon(X_aeon)
    assert X.shape == (20, 40, 30) and X.flags.c_contiguous
    np.testing.assert_array_equal(X[3, :, 7], X_aeon[3, 7])
    # the kernel then sees 40 steps of 30 channels, as the series are
    K = rntk.rntk_kernel(X[:3])
    K_list = rntk.rntk_kernel([x.T for x in X_aeon[:3]])
    np.testing.assert_allclose(K, K_list, rtol=1e-12)
    unequal = rntk.from_aeon([X_aeon[0], X_aeon[1, :, :25]])
    assert [x.shape for x in unequal] == [(40, 30), (25, 30)]
    np.testing.assert_array_equal(rntk.from_aeon(X_aeon[:, 0]), X_aeon[:, 0])  # univariate
    with pytest.raises(ValueError, match="3-D"):
        rntk.from_aeon(np.zeros((2, 3, 4, 5)))
    with pytest.raises(ValueError, match="dimension"):
        rntk.from_aeon([np.zeros((2, 3)), np.zeros(3)])


def test_the_aeon_warning_points_to_from_aeon(rng):
    with pytest.warns(UserWarning, match=r"rntk.from_aeon\(X\)"):
        rntk.rntk_kernel(rng.normal(size=(2, 3, 40)))


# -- what the user is told ----------------------------------------------------------------


def test_main_job_says_what_it_fitted(capsys):
    """The printout names each averaged member; the accuracy is that of their average."""
    from rntk.__main__ import main

    accuracy = main(["--dataset", "Coffee", "--verbose", "0"])
    out = capsys.readouterr().out
    assert "best parameters" not in out
    assert "fitted: the mean decision function of 3 kernel ridge classifiers" in out
    assert out.count("LOO accuracy") >= 2
    X, y, X_test, y_test = load_ucr("Coffee")
    search = RNTKClassifierCV().fit(X, y)
    assert isinstance(search.best_estimator_, rntk.model_selection.AveragedClassifier)
    assert search.score(X_test, y_test) == pytest.approx(accuracy)
    for k, params in enumerate(dict.fromkeys(map(repr, search.averaged_params_)), 1):
        assert f"  {k}. " in out


def test_progress_does_not_extrapolate_the_first_setting(rng, capsys, monkeypatch):
    """The first setting pays the compilation: no ETA from it, later ones without it."""
    from rntk._model_selection import _search

    clock = iter([0.0, 30.0, 31.0, 32.0])  # start, then after settings 1, 2, 3
    monkeypatch.setattr(_search, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    search = RNTKClassifierCV({"sigma_b": [0.0, 0.1, 0.2], "alpha": [1.0]}, verbose=2)
    report = search._progress(3)
    for done in (1, 2, 3):
        report(done, 3, 0.5)
    lines = capsys.readouterr().out.splitlines()
    assert "ETA       ?" in lines[0]
    assert "ETA    1.0s" in lines[1]  # 1 s per setting after the first, 1 to go
    assert "ETA    0.0s" in lines[2]
