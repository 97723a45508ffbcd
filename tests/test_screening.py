"""Screening the kernel settings on a subsample before the exact leave-one-out search."""

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from rntk import RNTKClassifierCV, RNTKRegressorCV
from rntk._model_selection._screen import (
    SCREEN,
    resolve_screen,
    screen_subsample,
    screened_settings,
)


def _waves(n, t=20, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    steps = np.linspace(0, 1, t)
    X = np.sin(2 * np.pi * (y[:, None] + 1) * steps + rng.uniform(0, 6, (n, 1)))
    return X + 0.4 * rng.normal(size=(n, t)), y


def test_the_screening_runs_above_twice_the_subsample():
    assert resolve_screen(None, 10**6) is None
    assert resolve_screen("auto", 2 * SCREEN) is None
    assert resolve_screen("auto", 2 * SCREEN + 1) == SCREEN
    assert resolve_screen(20, 41) == 20 and resolve_screen(20, 40) is None


@pytest.mark.parametrize("screen", [1, 0, -5, "all", 2.5])
def test_a_bad_screen_is_refused(screen):
    X, y = _waves(12)
    with pytest.raises(InvalidParameterError, match="screen"):
        RNTKClassifierCV(screen=screen).fit(X, y)


def test_the_subsample_keeps_every_class_share():
    y = np.r_[np.zeros(60), np.ones(30), np.full(9, 2), [3]]
    idx = screen_subsample(y, 50, classification=True)
    assert len(idx) == len(set(idx)) == 50 and np.all(np.diff(idx) > 0)
    _, counts = np.unique(y[idx], return_counts=True)
    assert counts[:2].tolist() == [30, 15] and counts[2] in (4, 5)  # the shares, rounded
    np.testing.assert_array_equal(idx, screen_subsample(y, 50, True))  # seeded
    assert len(screen_subsample(np.arange(100.0), 10, classification=False)) == 10


def test_a_gated_setting_keeps_the_best_of_the_others_for_the_gate():
    """With gated candidates the best ``n_average`` without them are kept too."""
    from rntk._model_selection._screen import screen_settings

    class Search:
        screen, verbose = 4, 0

    class Outcome:  # settings ranked 3 > 1 > 2 > 0 on the subsample
        scores = np.array([[0.1], [0.2], [0.8], [0.7], [0.5], [0.6], [0.9], [0.3]])
        tiebreak = np.zeros(8)

    groups = [[0, 1], [2, 3], [4, 5], [6, 7]]
    y = np.arange(12.0)

    def kept(gated):
        screen = screen_settings(lambda idx: Outcome(), Search(), y, groups, {}, 2, False,
                                 gated)
        return sorted(set(range(4)) - screen.skip)

    assert kept(frozenset()) == [1, 3]
    assert kept(frozenset({6, 7})) == [1, 2, 3]  # 3 gated: 1 and 2 for the gate
    assert kept(frozenset({0, 1})) == [1, 3]  # a gated setting outside the best: no more


def test_kept_settings_are_the_best_of_the_subsample_and_their_partners():
    # 4 settings of 2 candidates, one split; group 3 shares group 1's Gram
    scores = np.array([[0.5], [0.6], [0.9], [0.8], [0.7], [0.7], [0.9], [0.8]])
    tiebreak = np.array([0, 0, 0, 0, 0, 0, -1.0, 0])
    groups = [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert screened_settings(scores, tiebreak, groups, {}, 2) == [1, 3]
    assert sorted(screened_settings(scores, tiebreak, groups, {3: 1}, 1)) == [1, 3]
    assert sorted(screened_settings(scores, tiebreak, groups, {2: 0}, 1)) == [1]
    # a failed setting (NaN scores) is never kept
    scores[2:4] = np.nan
    assert screened_settings(scores, tiebreak, groups, {}, 2) == [3, 2]


def test_a_screened_search_scores_the_kept_settings_as_the_full_search():
    X, y = _waves(66)
    full = RNTKClassifierCV(screen=None).fit(X, y)
    screened = RNTKClassifierCV(screen=21).fit(X, y)
    res, ref = screened.cv_results_, full.cv_results_
    kept = ~np.isnan(res["mean_test_score"])
    assert 0 < kept.sum() < len(kept)
    # the kept settings: the same Grams, the same leave-one-out
    np.testing.assert_allclose(res["mean_test_score"][kept], ref["mean_test_score"][kept],
                               rtol=0, atol=1e-12)
    # every candidate's subsample score: the search of the subsample itself
    sub = screen_subsample(y, 21, classification=True)
    alone = RNTKClassifierCV(screen=None).fit(X[sub], y[sub]).cv_results_
    np.testing.assert_allclose(res["screen_test_score"], alone["mean_test_score"], atol=1e-12)
    assert "screen_test_score" not in ref
    # the refit averages the best candidates of the kept settings only
    assert all(kept[screened.cv_results_["params"].index(p)]
               for p in screened.averaged_params_)
    assert screened.best_score_ == np.nanmax(res["mean_test_score"])
    assert screened.score(X, y) > 0.9


def test_no_screening_with_folds_or_below_the_threshold():
    X, y = _waves(30)
    res = RNTKClassifierCV(screen=10, cv=3, protocol="loo").fit(X, y).cv_results_
    assert "screen_test_score" not in res
    res = RNTKClassifierCV(screen=15).fit(X, y).cv_results_  # 30 <= 2 * 15
    assert "screen_test_score" not in res and not np.isnan(res["mean_test_score"]).any()


def test_the_regressor_screens_too(capsys):
    X, y = _waves(45)
    target = X[:, -1] + 0.5 * X[:, -2]
    reg = RNTKRegressorCV(screen=15, verbose=1).fit(X, target)
    assert "Screened the" in capsys.readouterr().out
    means = reg.cv_results_["mean_test_score"]
    assert np.isnan(means).any() and np.isfinite(reg.cv_results_["screen_test_score"]).all()
    assert np.isfinite(reg.predict(X[:5])).all()
