"""The refit policies of a search: the best candidate, an average of several, the mean.

After the scoring loop, :func:`refit_best` fits what ``predict`` uses on all training
series, from the Grams the loop kept (nothing is computed again): the best candidate
(``n_average`` 1), or the best candidates of the ``n_average`` best kernel settings,
averaged (:class:`AveragedClassifier`, :class:`AveragedRegressor`), a gated setting of
the default regression grid among them only on clear leave-one-out evidence
(:func:`gated_top`); a regression search with the exact leave-one-out refits the mean
of the targets instead where the average's leave-one-out ``R^2`` does not beat it.
"""

import numpy as np
from sklearn.base import clone

from . import _grids
from ._ensemble import AveragedClassifier, AveragedRegressor
from ._loo import constant_loo_predictions
from ._scorers import loo_r2

__all__ = ["average_or_mean", "gated_top", "member_loo", "refit_best", "squared_errors"]

#: The attributes of the search's fit its refitted estimators take.
_INPUT_ATTRIBUTES = ("n_channels_in_", "n_features_in_", "feature_names_in_")


def refit_best(search, plan, outcome):
    """Set ``search.best_estimator_`` (and ``averaged_params_``) from the outcome."""
    if plan.gated:
        top = gated_top(outcome.top, plan.gated, plan.n_average, plan.candidates, plan.y,
                        plan.score_gram, outcome.loo)
    elif plan.n_average > 1:
        top = outcome.top
    else:
        top = [(search.best_index_, outcome.best_gram)]
    n_members = plan.n_average
    if plan.exact_loo and plan.base._is_regressor:
        top = average_or_mean(search, top, plan.candidates, plan.y, plan.score_gram,
                              outcome.loo)
        n_members = len(top)
    members, used = _fit_members(search, plan, outcome, top)
    if n_members <= 1:
        search.best_estimator_ = members[0]
        return
    search.averaged_params_ = [plan.candidates[i] for i in used]
    if plan.base._is_regressor:
        search.best_estimator_ = AveragedRegressor(members).fit()
        return
    loo = [outcome.loo.get(plan.redirect.get(i, i)) for i, _ in top]
    search.best_estimator_ = AveragedClassifier(members).fit()
    search.best_estimator_._calibrate(
        None if any(v is None for v in loo) else np.mean(loo, axis=0), plan.y)


def _fit_members(search, plan, outcome, top):
    """Fit each ``(candidate, Gram)`` of ``top`` once; return the members and indices."""
    members, used, fitted = [], [], {}
    for i, K in top:
        i = plan.redirect.get(i, i)  # a setting of same_as: the one it is
        used.append(i)
        if i in fitted:  # listed twice: one fitted member, evaluated once
            members.append(fitted[i])
            continue
        est = clone(plan.base).set_params(**plan.candidates[i])
        plan.source.refit(est, K, plan.y, plan.raw, outcome.loo.get(i))
        for attr in _INPUT_ATTRIBUTES:
            if hasattr(search, attr):
                setattr(est, attr, getattr(search, attr))
        members.append(est)
        fitted[i] = est
    return members, used


def member_loo(top, candidates, y, scorer, loo_of):
    """Return the leave-one-out predictions of each ``(candidate, Gram)`` of ``top``.

    From the scoring loop's ``loo_of`` where it kept them, else from the Gram.
    """
    return [loo_of[i] if i in loo_of else
            scorer.regression_loo(K, y, [candidates[i]["alpha"]])[0] for i, K in top]


def squared_errors(D, y):
    """Per-sample squared errors of predictions ``D`` in each target's units (R^2's)."""
    Y = np.reshape(np.asarray(y, dtype=np.float64), (len(y), -1))
    peak = np.max(np.abs(Y), axis=0)
    peak[peak == 0] = 1.0
    scale = peak * np.std(Y / peak, axis=0)  # each target's spread, as R^2 reads it, with
    scale[scale == 0] = 1.0  # squares that stay finite for targets near the float limits
    return (((D - Y) / scale) ** 2).mean(axis=1)


def gated_top(top, gated, n_average, candidates, y, scorer, loo_of, z=None,
              errors=squared_errors):
    """Return the ``n_average`` best of ``top``, a gated candidate only on clear evidence.

    ``top``: ``(candidate, Gram)`` of the best candidate of each kept setting, best
    first; ``gated``: the candidates that must earn their place. The ``n_average``
    best replace the ``n_average`` best of the others only where their average's
    leave-one-out ``errors(average, y)`` (per sample) are below the others' average's
    by more than ``z`` standard errors of the mean paired difference (``None``:
    ``GATE_STANDARD_ERRORS``).
    """
    z = _grids.GATE_STANDARD_ERRORS if z is None else z
    best = top[:n_average]
    base = [e for e in top if e[0] not in gated][:n_average]
    if not base or [i for i, _ in best] == [i for i, _ in base]:
        return best
    loo = dict(zip((i for i, _ in top), member_loo(top, candidates, y, scorer, loo_of)))

    def average(members):
        return np.mean([loo[i] for i, _ in members], axis=0)

    gain = errors(average(base), y) - errors(average(best), y)
    spread = gain.std(ddof=1) / np.sqrt(len(gain))
    return best if gain.mean() > z * spread else base


def average_or_mean(search, top, candidates, y, scorer, loo_of):
    """Return the members a regression search refits: the average, or the mean.

    The leave-one-out predictions of an average of regressors are the average of
    theirs, so the average of the ``top`` members is scored exactly; where its
    leave-one-out ``R^2`` is not above the mean's (the first ``alpha=inf`` candidate
    of the grid, if any), the mean is refitted instead. Sets ``search.loo_score_``.
    """
    loo = np.mean(member_loo(top, candidates, y, scorer, loo_of), axis=0)
    search.loo_score_ = float(loo_r2(y, loo[None])[0])
    mean = next((i for i, c in enumerate(candidates) if np.isinf(c.get("alpha", 0.0))),
                None)
    if mean is None:
        return top
    # the mean's own leave-one-out R^2: its setting may have been screened out
    score = float(loo_r2(y, constant_loo_predictions(y)[None])[0])
    if search.loo_score_ > score:
        return top
    search.loo_score_ = score
    return [(mean, top[0][1])]  # any Gram of the right size: the mean does not read it
