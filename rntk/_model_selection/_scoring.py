"""The scoring loop: one Gram per kernel setting, every candidate of it scored on it.

:func:`search_grams` is the loop shared by the CV estimators and the UCR benchmark
(for every kernel it runs): it takes the Grams of the kernel settings one after the
other, scores the candidates of each setting (its values of ``C`` or ``alpha``) on
the folds, sliced out of the one Gram, and keeps the best candidate with
:class:`~sklearn.model_selection.GridSearchCV`'s tie rule (the first best in
candidate order). A Gram with non-finite entries (an overflow) scores NaN, with a
warning, and is never selected.
"""

from __future__ import annotations

import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial
from typing import NamedTuple

import numpy as np
from joblib import effective_n_jobs

from .._utils import one_blas_thread

__all__ = ["TIE_RTOL", "GramScores", "SearchOutcome", "search_grams"]


class GramScores(NamedTuple):
    """What a Gram scorer (``score_gram`` of :func:`search_grams`) returns."""

    scores: np.ndarray  # (n_candidates, n_splits)
    tiebreak: np.ndarray | None = None  # (n_candidates,), higher is better; None: none
    loo: object = None  # (n_candidates, ...) leave-one-out predictions, or None


class SearchOutcome(NamedTuple):
    """What :func:`search_grams` found."""

    scores: np.ndarray  # (n_candidates, n_splits)
    tiebreak: np.ndarray  # (n_candidates,) decides between equal mean scores (0: none)
    kernel_time: np.ndarray  # (n_candidates,) seconds of the Gram of its setting
    fit_time: np.ndarray  # (n_candidates,) seconds per fold fit
    best_index: int  # first best mean score in candidate order (-1: every score NaN)
    best_gram: np.ndarray  # the Gram of the best candidate's setting (None if none)
    failures: list  # messages of the failed fold fits
    non_finite: list  # indices of the settings whose Gram was not finite
    top: list = []  # (candidate index, Gram) of the best candidate of each of the
    #                 ``keep`` best settings, best first (see ``search_grams``)
    loo: dict = {}  # candidate index -> its leave-one-out predictions, for the best
    #                 candidate of each setting and the priors, when the scorer gives them


#: Relative tolerance below which two tie-breaks are equal: a tie-break that is the same
#: number for every candidate in exact arithmetic (the leave-one-out squared error of a
#: training set of one series per class) differs only by rounding, which depends on the
#: order of the series and on the path; such a tie goes to grid order.
TIE_RTOL = 1e-9


def _beats(key, other):
    """Whether the ``(mean score, tie-break)`` ``key`` is strictly better than ``other``.

    Mean scores compare exactly (accuracies are counts); tie-breaks only when they differ
    by more than :data:`TIE_RTOL` relative, so that rounding noise never decides.
    """
    if key[0] != other[0]:
        return key[0] > other[0]
    return key[1] - other[1] > TIE_RTOL * max(abs(key[1]), abs(other[1]))


def _all_finite(K):
    """Whether a Gram (or features, or a cluster's handle of them) is finite."""
    check = getattr(K, "all_finite", None)
    return check() if check is not None else bool(np.isfinite(K).all())


def search_grams(grams, groups, candidates, y, splits, fold_score=None, *, score_gram=None,
                 n_jobs=None, error_score=np.nan, progress=None, keep=1, prior=None,
                 same_as=None, skip=()):
    """Cross-validate candidates that share precomputed Grams.

    Parameters
    ----------
    grams : iterable of ndarray of shape (n, n) or None
        One training Gram per group, produced lazily in the order of ``groups``;
        ``None`` (a kernel that refused to overflow) is scored like a non-finite Gram.
    groups : list of list of int
        Indices of the candidates that each Gram serves.
    candidates : list of dict
        Full parameters of each candidate, handed to ``fold_score``.
    y : ndarray of shape (n,) or (n, n_targets)
        Targets.
    splits : list of (train, test) index arrays
        The folds.
    fold_score : callable, optional
        ``fold_score(K_train, y_train, K_test, y_test, params) -> float``.
    score_gram : callable, optional
        Instead of ``fold_score``: ``score_gram(K, y, params_list)`` scores every
        candidate of a Gram at once and returns ``(scores, tiebreak)`` or a
        :class:`GramScores` ``(scores, tiebreak, loo)``: ``scores`` of shape
        ``(len(params_list), n_splits)``, ``tiebreak`` None or one value per candidate
        (higher is better, deciding between equal mean scores before grid order),
        ``loo`` None or the candidates' leave-one-out predictions (kept in
        ``outcome.loo``), as the exact leave-one-out of kernel ridge gives for all its
        ridges.
    n_jobs : int, default=None
        Threads for the fold fits (libsvm and the ridge solves release the GIL);
        ``None``: joblib's current setting (one unless set by ``joblib.parallel_config``).
    error_score : "raise" or float, default=np.nan
        Score of a failed fit (recorded in ``failures``), or ``"raise"``.
    progress : callable, optional
        ``progress(settings_done, n_settings, best_mean_score)`` after each setting.
    keep : int, default=1
        Number of kernel settings whose Grams are kept in ``outcome.top``: the
        settings ranked by their best candidate (mean score, then tie-break, then
        candidate order), each with that candidate's index.
    prior : int or sequence of int, optional
        Index (indices) of the candidate(s) taken when every scored candidate has the
        same mean score, as the leave-one-out accuracy of a training set with one
        series per class (0 for all): the best candidate is the first, and with
        ``keep > 1`` the kept settings are theirs first, then the others by
        tie-break.
    same_as : dict, optional
        ``{group: earlier group}``: groups whose Gram is that of an earlier group (the
        same kernel; ``grams`` gives that group's Gram again, or anything, for them).
        Their candidates take the earlier group's scores and tie-breaks, candidate by
        candidate (the two groups list the same scoring parameters, e.g. ridges, in the
        same order), and the earlier group's Gram; they are ranked and kept like the
        others.
    skip : collection of int, default=()
        Groups left unscored (a screening dropped them; ``grams`` gives anything for
        them): their candidates score NaN, without a warning, and are never ranked.
        A group of ``same_as`` is skipped with the group it maps to.

    Returns
    -------
    outcome : SearchOutcome
        A named tuple: ``scores`` (n_candidates, n_splits), ``tiebreak``
        (n_candidates,), ``kernel_time`` and ``fit_time`` (seconds per candidate),
        ``best_index`` (the first best mean score in candidate order, then the
        tie-break; -1 when every score is NaN), ``best_gram`` (the Gram of its
        setting), ``failures`` (messages of failed fits), ``non_finite`` (settings
        whose Gram was not finite), ``top`` (see ``keep``) and ``loo`` (see
        ``score_gram``).
    """
    if (fold_score is None) == (score_gram is None):
        raise ValueError("give exactly one of fold_score and score_gram")
    n_workers = effective_n_jobs(n_jobs)
    pool = ThreadPoolExecutor(n_workers) if n_workers > 1 else None
    run = _GramSearch(groups, candidates, y, splits, fold_score, score_gram, error_score,
                      keep, prior, same_as, skip, pool)
    # the fold fits are small: one BLAS thread is faster and does not oversubscribe
    with one_blas_thread(len(y) < 2000), (pool if pool is not None else nullcontext()):
        t = time.perf_counter()
        for s, K in zip(range(len(groups)), grams):
            run.kernel_time[groups[s]] = time.perf_counter() - t
            run.setting(s, K)
            if progress is not None:
                progress(s + 1, len(groups), run.best_mean())
            t = time.perf_counter()
    return run.outcome()


class _GramSearch:
    """The state of one :func:`search_grams`: scores, the best so far, the kept Grams."""

    def __init__(self, groups, candidates, y, splits, fold_score, score_gram, error_score,
                 keep, prior, same_as, skip, pool):
        self.groups, self.candidates, self.y, self.splits = groups, candidates, y, splits
        self.fold_score, self.score_gram, self.error_score = fold_score, score_gram, error_score
        self.keep, self.skip, self.pool = keep, skip, pool
        n_cand = len(candidates)
        self.scores = np.full((n_cand, len(splits)), np.nan)
        self.tiebreak, self.kernel_time, self.fit_time = (np.zeros(n_cand) for _ in range(3))
        self.failures, self.non_finite = [], []
        self.best_i, self.best_key, self.best_K = -1, None, None
        self.top = []  # (key, -setting, candidate index, Gram), best first
        self.priors = [] if prior is None else [int(i) for i in np.atleast_1d(prior)]
        self.same_as = dict(same_as or {})
        for g, h in self.same_as.items():
            if (not 0 <= h < g < len(groups) or h in self.same_as
                    or len(groups[g]) != len(groups[h])):
                raise ValueError(f"same_as maps group {g} to {h}: it needs an earlier group "
                                 f"of as many candidates, not itself in same_as")
        self.last_use = {h: max(g for g in self.same_as if self.same_as[g] == h)
                         for h in self.same_as.values()}
        self.kept = {}  # group -> its Gram, while a later group of same_as needs it
        self.loo_by_group, self.loo = {}, {}  # the scorer's leave-one-out predictions
        self.prior_grams = {}  # prior candidate -> (Gram, setting)

    def best_mean(self):
        return -np.inf if self.best_key is None else self.best_key[0]

    def setting(self, s, K):
        """Score the candidates of setting ``s`` on its Gram ``K``, then rank them."""
        idxs = self.groups[s]
        t1 = time.perf_counter()
        if s in self.skip:
            pass  # screened out: its candidates keep their NaN scores, unranked
        elif s in self.same_as:
            K = self._copy(s, idxs)
        elif K is None or not _all_finite(K):  # None: the kernel refused
            self.non_finite.append(s)
        elif self.score_gram is not None:
            self._score_gram(s, K, idxs)
            self.fit_time[idxs] = (time.perf_counter() - t1) / len(idxs)
        else:
            self._score_folds(K, idxs)
            self.fit_time[idxs] = (time.perf_counter() - t1) / (len(idxs) * len(self.splits))
        if s in self.same_as.values() and s not in self.non_finite:
            self.kept[s] = K
        if s not in self.non_finite and s not in self.skip:
            self._rank(s, K, idxs)

    def _copy(self, s, idxs):
        """Give a setting of ``same_as`` the scores of the one it is; return that Gram."""
        h = self.same_as[s]
        K = self.kept.pop(h, None) if self.last_use[h] == s else self.kept.get(h)
        if h in self.non_finite:
            self.non_finite.append(s)
        else:
            self.scores[idxs] = self.scores[self.groups[h]]
            self.tiebreak[idxs] = self.tiebreak[self.groups[h]]
            if h in self.loo_by_group:
                self.loo_by_group[s] = dict(zip(idxs, self.loo_by_group[h].values()))
        return K

    def _score_gram(self, s, K, idxs):
        try:
            out = self.score_gram(K, self.y, [self.candidates[i] for i in idxs])
        except Exception as exc:
            if self.error_score == "raise":
                raise
            self.scores[idxs] = self.error_score
            self.failures.append(f"{type(exc).__name__}: {exc}")
            return
        self.scores[idxs] = out[0]
        if out[1] is not None:
            self.tiebreak[idxs] = out[1]
        if len(out) > 2 and out[2] is not None:
            self.loo_by_group[s] = dict(zip(idxs, out[2]))

    def _fold(self, task, K):
        i, f = task
        train, test = self.splits[f]
        try:
            return self.fold_score(K[np.ix_(train, train)], self.y[train],
                                   K[np.ix_(test, train)], self.y[test],
                                   self.candidates[i]), None
        except Exception as exc:
            if self.error_score == "raise":
                raise
            return self.error_score, f"{type(exc).__name__}: {exc}"

    def _score_folds(self, K, idxs):
        tasks = [(i, f) for i in idxs for f in range(len(self.splits))]
        run = partial(self._fold, K=K)
        results = self.pool.map(run, tasks) if self.pool is not None else map(run, tasks)
        for (i, f), (score, failure) in zip(tasks, results):
            self.scores[i, f] = score
            if failure is not None:
                self.failures.append(failure)

    def _rank(self, s, K, idxs):
        """Update the best candidate, the kept settings and the kept leave-one-out."""
        for i in self.priors:
            if i in idxs:
                self.prior_grams[i] = (K, s)
        set_i, set_key = -1, None
        for i in idxs:
            mean = np.mean(self.scores[i])
            key = (-np.inf if np.isnan(mean) else mean, self.tiebreak[i])
            if self.best_K is None or _beats(key, self.best_key):  # ties: the first
                self.best_i, self.best_key, self.best_K = i, key, K
            if set_key is None or _beats(key, set_key):
                set_i, set_key = i, key
        group_loo = self.loo_by_group.get(s, {})
        for i in {set_i, self.best_i, *self.priors} & set(group_loo):
            self.loo[i] = np.array(group_loo[i])  # what a refit of i is calibrated on
        if s not in self.same_as.values():  # no later group reads them
            self.loo_by_group.pop(s, None)
        if self.keep > 1 and not np.isnan(np.mean(self.scores[set_i])):
            # after every setting it does not beat: ties go to the first setting
            at = next((j for j, e in enumerate(self.top) if _beats(set_key, e[0])),
                      len(self.top))
            self.top.insert(at, (set_key, -s, set_i, K))
            del self.top[self.keep:]

    def outcome(self):
        """Return the :class:`SearchOutcome`, the priors taken where no score decides."""
        if self.non_finite:
            first = self.candidates[self.groups[self.non_finite[0]][0]]
            warnings.warn(
                f"{len(self.non_finite)} of {len(self.groups)} kernel settings gave a Gram "
                f"with non-finite entries (an overflow); their candidates score NaN and are "
                f"never selected. First: {first}", RuntimeWarning, stacklevel=3)
        best_i, best_K, top = self.best_i, self.best_K, self.top
        means = self.scores.mean(axis=1)
        if self.prior_grams and np.ptp(means[~np.isnan(means)]) == 0:
            # the scores cannot tell the candidates apart: the priors, then the tie-break
            first = [(None, -self.prior_grams[i][1], i, self.prior_grams[i][0])
                     for i in self.priors if i in self.prior_grams]
            best_i, best_K = first[0][2], first[0][3]
            taken = {e[1] for e in first}
            top = (first + [e for e in top if e[1] not in taken])[:self.keep]
        if self.keep <= 1:
            top = [] if best_i < 0 else [(None, None, best_i, best_K)]
        return SearchOutcome(self.scores, self.tiebreak, self.kernel_time, self.fit_time,
                             best_i, best_K, self.failures, self.non_finite,
                             [(i, K) for _, _, i, K in top], self.loo)
