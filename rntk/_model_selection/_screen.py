"""Screening of kernel settings on a subsample before the exact leave-one-out search.

Between a few thousand series and the ``large_n`` switch, the exact leave-one-out of a
search costs one ``n x n`` Gram and one eigendecomposition per kernel setting (``n^2``
and ``n^3``), most of them spent on settings that are not among the refitted ones. As
successive halving does (:class:`sklearn.model_selection.HalvingGridSearchCV`, Jamieson
and Talwalkar, 2016), the search then scores every setting on a stratified subsample
of ``screen`` series first, with the same leave-one-out, and scores on all the series
only the settings that the refit can use: the best ``n_average`` of the subsample
(and the settings whose Gram is theirs; with a gated setting among them, the best
``n_average`` of the others too). The others are scored on the subsample only.
"""

import numbers
from typing import NamedTuple

import numpy as np
from sklearn.utils import resample
from sklearn.utils._param_validation import Interval, StrOptions

__all__ = ["SCREEN", "SCREEN_CONSTRAINTS", "Screening", "resolve_screen", "screen_settings",
           "screen_subsample", "screened_settings"]

#: Subsample of ``screen="auto"``; the screening runs above twice as many series.
SCREEN = 1000
SCREEN_CONSTRAINTS = {
    "screen": [StrOptions({"auto"}), Interval(numbers.Integral, 2, None, closed="left"),
               None],
}
#: The subsample's seed.
SCREEN_SEED = 0


class Screening(NamedTuple):
    """What :func:`screen_settings` found."""

    skip: frozenset  # settings (group indices) left out of the search on every series
    scores: np.ndarray  # (n_candidates,) every candidate's score on the subsample


def resolve_screen(screen, n):
    """Return the subsample size of the screening of ``n`` series, or ``None`` (none).

    ``screen`` is the estimator's parameter (``"auto"``: :data:`SCREEN`); the screening
    runs when ``n`` exceeds twice the subsample.
    """
    if screen is None:
        return None
    size = SCREEN if isinstance(screen, str) else int(screen)
    return size if n > 2 * size else None


def screen_settings(subsample_search, search, y, groups, same_as, n_average,
                    classification, gated=frozenset()):
    """Screen the settings of ``search`` (an estimator) on a subsample, or return None.

    ``subsample_search(index)`` runs the search's leave-one-out on the series of
    ``index`` and returns its :class:`SearchOutcome`. Nothing runs (``None``) when
    :func:`resolve_screen` of the search's ``screen`` says so, or when there are no
    more settings than ``n_average``, the settings the refit averages and keeps.
    ``gated``: the candidates of gated settings (the refit's ``gated_top``); the
    ``n_average`` best of the other settings are kept as well, for the gate to compare.
    """
    size = resolve_screen(getattr(search, "screen", None), len(y))
    if size is None or len(groups) <= n_average:
        return None
    index = screen_subsample(y, size, classification)
    first = subsample_search(index)
    kept = screened_settings(first.scores, first.tiebreak, groups, same_as, n_average)
    if gated:
        scores = first.scores.copy()
        scores[sorted(gated)] = np.nan  # a gated setting ranks last: never kept here
        kept += [g for g in screened_settings(scores, first.tiebreak, groups, same_as,
                                              n_average) if g not in kept]
    if not kept:  # no setting could be scored on the subsample: screen nothing
        if search.verbose > 0:
            print(f"[{type(search).__name__}] No kernel setting could be scored on the "
                  f"screening subsample of {len(index)} series: every setting is scored on all "
                  f"{len(y)}", flush=True)
        return None
    if search.verbose > 0:
        print(f"[{type(search).__name__}] Screened the {len(groups)} kernel settings on "
              f"{len(index)} of the {len(y)} series: {len(kept)} scored on all of them",
              flush=True)
    return Screening(frozenset(range(len(groups))) - frozenset(kept), first.scores[:, 0])


def screen_subsample(y, size, classification):
    """Return the sorted indices of a subsample of about ``size`` series.

    Stratified by class for a classifier (every class keeps its share, rounded:
    :func:`sklearn.utils.resample`; a class whose share rounds to none gets its first
    series, so that the subsample has every class), uniform for a regressor; seed
    :data:`SCREEN_SEED`.
    """
    index = np.arange(len(y))
    if not classification:
        return np.sort(resample(index, n_samples=size, replace=False,
                                random_state=SCREEN_SEED))
    drawn = resample(index, n_samples=size, replace=False, stratify=y,
                     random_state=SCREEN_SEED)
    classes, first = np.unique(y, return_index=True)
    missing = first[~np.isin(classes, np.unique(y[drawn]))]
    return np.sort(np.concatenate([drawn, missing]))


def screened_settings(scores, tiebreak, groups, same_as, keep):
    """Return the settings (group indices) to score on every series.

    Parameters
    ----------
    scores : ndarray of shape (n_candidates, n_splits)
        The subsample's scores of every candidate (NaN: a failed setting).
    tiebreak : ndarray of shape (n_candidates,)
        Higher is better, between equal mean scores.
    groups : list of list of int
        Candidates of each setting.
    same_as : dict
        ``{group: earlier group}`` of the search (the same Gram).
    keep : int
        Settings ranked by their best candidate (then by order) to keep; the settings
        of ``same_as`` that share a kept one's Gram are kept as well (they cost
        nothing more, and rank as the setting they are).

    Returns
    -------
    kept : list of int
        Group indices: the ``keep`` best, best first, then the settings that share
        their Gram.
    """
    best = []
    for g, idxs in enumerate(groups):
        means = np.mean(scores[idxs], axis=1)
        if not np.all(np.isnan(means)):  # its best candidate: mean score, then tie-break
            top = max((-np.inf if np.isnan(m) else m, tiebreak[i]) for m, i in zip(means, idxs))
            best.append((-top[0], -top[1], g))
    kept = [g for *_, g in sorted(best)[:keep]]
    for g, h in same_as.items():
        if g in kept and h not in kept:
            kept.append(h)
        elif h in kept and g not in kept:
            kept.append(g)
    return kept
