"""Summary metrics of a classifier comparison over many datasets (RNTK paper, App. A.1).

Given accuracies ``y[i, j]`` of classifier ``j`` on dataset ``i``:

* mean accuracy (and its sample standard deviation);
* ``P90`` / ``P95``: fraction of datasets where ``y[i, j] >= 0.90 (0.95) * max_j y[i, j]``
  (eq. 21);
* ``PMA``: mean over datasets of ``y[i, j] / max_j y[i, j]`` (eq. 22);
* Friedman rank: mean over datasets of the rank of ``j`` (1 = best, eq. 23); ties get
  the average of the ranks they span (the usual Friedman convention), or the lowest
  one with ``ties="min"``, which is what the paper's Table 1 used.

And the tests of Demšar (JMLR 2006) and Benavoli, Corani and Mangili (JMLR 2016) that
a critical-difference diagram draws:

* :func:`win_tie_loss`: datasets where one method is above / equal to / below another;
* :func:`nemenyi_critical_difference`: the Nemenyi test's critical difference of
  average ranks, ``CD = q_alpha * sqrt(k (k + 1) / (6 N))``;
* :func:`critical_difference`: average ranks, the Friedman test and the groups
  ("cliques") of methods not significantly different, by the Nemenyi test or by
  pairwise Wilcoxon signed-rank tests with Holm's correction (what aeon's
  ``plot_critical_difference`` draws).

Datasets where some classifier has no result (NaN) are left out of every metric, so
all classifiers are compared on the same datasets.
"""

import numpy as np
from scipy.stats import friedmanchisquare, rankdata, studentized_range, wilcoxon

from .._utils import fill_doc

__all__ = ["calibration_bins", "calibration_sums", "critical_difference",
           "expected_calibration_error", "friedman_ranks", "nemenyi_critical_difference",
           "probability_metrics", "reliability_curve", "summary_metrics", "win_tie_loss"]


def _table(acc):
    A = np.asarray(acc, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"acc must be 2-D (n_datasets, n_methods); got shape {A.shape}")
    if np.isinf(A).any():
        raise ValueError("acc contains infinite values")
    keep = ~np.isnan(A).any(axis=1)
    if not keep.any():
        raise ValueError("no dataset has a result for every method")
    A = A[keep]
    if (A < 0).any():
        raise ValueError("accuracies must be non-negative")
    return A


def friedman_ranks(acc, ties="average"):
    """Rank the methods on each dataset (1 = highest accuracy).

    Parameters
    ----------
    acc : array-like of shape (n_datasets, n_methods)
        Accuracies; rows with a NaN are dropped.
    ties : {"average", "min"}, default="average"
        Tied methods get the mean of the ranks they span, or the lowest one.

    Returns
    -------
    ranks : ndarray of shape (n_kept_datasets, n_methods)

    Examples
    --------
    >>> friedman_ranks([[90, 80, 90], [70, 75, 60]])
    array([[1.5, 3. , 1.5],
           [2. , 1. , 3. ]])
    """
    if ties not in ("average", "min"):
        raise ValueError(f"ties must be 'average' or 'min'; got {ties!r}")
    A = _table(acc)
    return np.array([rankdata(-row, method=ties) for row in A], dtype=np.float64)


def summary_metrics(acc, ties="average"):
    """Mean accuracy, P90, P95, PMA and Friedman rank of each method.

    Parameters
    ----------
    acc : array-like of shape (n_datasets, n_methods)
        Accuracies (any scale: fractions or percents). Datasets (rows) holding a NaN
        are left out.
    ties : {"average", "min"}, default="average"
        Tie handling of the Friedman rank (see :func:`friedman_ranks`).

    Returns
    -------
    metrics : dict of str to ndarray of shape (n_methods,)
        Keys ``"mean"``, ``"std"`` (sample standard deviation), ``"P90"``, ``"P95"``,
        ``"PMA"`` (fractions in [0, 1]), ``"friedman_rank"``; plus ``"n_datasets"``
        (an int), the number of datasets used.

    Examples
    --------
    >>> m = summary_metrics([[90.0, 80.0], [50.0, 100.0]])
    >>> {k: m[k].round(3).tolist() for k in ("mean", "P90", "PMA", "friedman_rank")}
    {'mean': [70.0, 90.0], 'P90': [0.5, 0.5], 'PMA': [0.75, 0.944], 'friedman_rank': [1.5, 1.5]}
    """
    A = _table(acc)
    best = A.max(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(best > 0, A / np.where(best > 0, best, 1.0), 1.0)
    return {
        "mean": A.mean(axis=0),
        "std": A.std(axis=0, ddof=1) if A.shape[0] > 1 else np.zeros(A.shape[1]),
        "P90": (A >= 0.90 * best).mean(axis=0),
        "P95": (A >= 0.95 * best).mean(axis=0),
        "PMA": ratio.mean(axis=0),
        "friedman_rank": friedman_ranks(A, ties).mean(axis=0),
        "n_datasets": int(A.shape[0]),
    }


def win_tie_loss(a, b, tie=1e-9):
    """Count the datasets where ``a`` is above, equal to and below ``b``.

    Parameters
    ----------
    a, b : array-like of shape (n_datasets,)
        Accuracies of two methods on the same datasets (same scale); pairs holding a
        NaN are left out.
    tie : float, default=1e-9
        Two accuracies at most this far apart are a tie (e.g. half the last digit of
        a rounded published value).

    Returns
    -------
    wins, ties, losses : int
        Datasets where ``a > b``, ``a == b`` (within ``tie``) and ``a < b``.

    Examples
    --------
    >>> win_tie_loss([90.0, 80.0, 70.0, 60.0], [85.0, 80.0, 75.0, 50.0])
    (2, 1, 1)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D of the same length; got shapes {a.shape} "
                         f"and {b.shape}")
    if not (np.isfinite(tie) and tie >= 0):
        raise ValueError(f"tie must be a finite number >= 0; got {tie!r}")
    keep = ~(np.isnan(a) | np.isnan(b))
    diff = a[keep] - b[keep]
    same = np.abs(diff) <= tie
    return (int(np.sum((diff > 0) & ~same)), int(np.sum(same)),
            int(np.sum((diff < 0) & ~same)))


def nemenyi_critical_difference(n_methods, n_datasets, alpha=0.05):
    """Critical difference of average ranks in the Nemenyi test (Demšar 2006, eq. 5).

    ``CD = q_alpha * sqrt(k (k + 1) / (6 N))`` with ``q_alpha`` the studentized range
    statistic of ``k`` groups and infinite degrees of freedom divided by ``sqrt(2)``
    (Demšar's Table 5a, e.g. 2.569 for ``k = 4`` at ``alpha = 0.05``). Two methods
    whose average ranks over ``N`` datasets differ by at least ``CD`` are significantly
    different.

    Parameters
    ----------
    n_methods : int
        Number of methods ``k`` (at least 2).
    n_datasets : int
        Number of datasets ``N`` (at least 1).
    alpha : float, default=0.05
        Significance level, in (0, 1).

    Returns
    -------
    cd : float
        The critical difference, in ranks.

    Examples
    --------
    >>> round(nemenyi_critical_difference(4, 20), 4)
    1.0488
    """
    k, n = _count(n_methods, "n_methods", 2), _count(n_datasets, "n_datasets", 1)
    q = studentized_range.ppf(1.0 - _alpha(alpha), k, np.inf) / np.sqrt(2.0)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def critical_difference(acc, alpha=0.05, test="nemenyi"):
    """Average ranks and the groups of methods not significantly different.

    Parameters
    ----------
    acc : array-like of shape (n_datasets, n_methods)
        Accuracies; rows with a NaN are dropped. At least two methods.
    alpha : float, default=0.05
        Significance level of the tests.
    test : {"nemenyi", "wilcoxon-holm"}, default="nemenyi"
        ``"nemenyi"``: two methods differ when their average ranks differ by at least
        the critical difference (:func:`nemenyi_critical_difference`).
        ``"wilcoxon-holm"``: every pair by a two-sided Wilcoxon signed-rank test on the
        accuracies (zero differences split between the signs, ``zero_method="zsplit"``),
        the p-values corrected by Holm's step-down method (Benavoli et al., 2016).

    Returns
    -------
    result : dict
        ``"average_ranks"`` (ndarray of shape (n_methods,), 1 = best, ties averaged),
        ``"n_datasets"``, ``"test"``, ``"alpha"``, ``"friedman_p"`` (p-value of the
        Friedman test; NaN with fewer than three methods or when every method ranks
        the same on every dataset), ``"cd"`` (the critical difference; None with
        Wilcoxon-Holm), ``"p_values"`` (ndarray of shape (n_methods, n_methods) of the
        Holm-adjusted p-values; None with Nemenyi), ``"significant"`` (boolean matrix:
        the pair differs) and ``"cliques"`` (list of lists of method indices: the
        maximal runs of methods, in average-rank order, of which no two differ;
        single methods are not listed).

    Examples
    --------
    >>> acc = [[90, 80, 70], [85, 80, 60], [95, 70, 65], [80, 82, 60]]
    >>> res = critical_difference(acc)
    >>> res["average_ranks"].tolist(), round(res["cd"], 3), res["cliques"]
    ([1.25, 1.75, 3.0], 1.657, [[0, 1], [1, 2]])
    """
    if test not in ("nemenyi", "wilcoxon-holm"):
        raise ValueError(f"test must be 'nemenyi' or 'wilcoxon-holm'; got {test!r}")
    alpha = _alpha(alpha)
    A = _table(acc)
    n, k = A.shape
    if k < 2:
        raise ValueError(f"a critical difference needs at least 2 methods; got {k}")
    ranks = friedman_ranks(A).mean(axis=0)
    friedman_p = float("nan")
    if k >= 3 and n >= 2 and np.ptp(A, axis=1).any():
        with np.errstate(invalid="ignore", divide="ignore"):
            friedman_p = float(friedmanchisquare(*A.T).pvalue)
    cd, p_values = None, None
    if test == "nemenyi":
        cd = nemenyi_critical_difference(k, n, alpha)
        significant = np.abs(ranks[:, None] - ranks[None, :]) >= cd
    else:
        p_values = _wilcoxon_holm(A)
        significant = p_values <= alpha
    np.fill_diagonal(significant, False)
    return {"average_ranks": ranks, "n_datasets": int(n), "test": test, "alpha": alpha,
            "friedman_p": friedman_p, "cd": cd, "p_values": p_values,
            "significant": significant, "cliques": _cliques(ranks, significant)}


def _wilcoxon_holm(A):
    """Holm-adjusted p-values of the pairwise two-sided Wilcoxon signed-rank tests."""
    k = A.shape[1]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    raw = np.ones(len(pairs))
    for t, (i, j) in enumerate(pairs):
        d = A[:, i] - A[:, j]
        if np.any(d != 0):
            raw[t] = wilcoxon(A[:, i], A[:, j], zero_method="zsplit").pvalue
    order = np.argsort(raw, kind="stable")
    m = len(pairs)
    adjusted = np.empty(m)
    running = 0.0
    for step, t in enumerate(order):  # Holm: p_(s) * (m - s), made monotone
        running = max(running, min(1.0, raw[t] * (m - step)))
        adjusted[t] = running
    P = np.ones((k, k))
    for (i, j), p in zip(pairs, adjusted):
        P[i, j] = P[j, i] = p
    return P


def _cliques(ranks, significant):
    """Maximal runs, in average-rank order, of methods no two of which differ."""
    order = np.argsort(ranks, kind="stable")
    runs = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and not significant[
                np.ix_(order[start:end + 2], order[start:end + 2])].any():
            end += 1
        if end > start and not any(s <= start and end <= e for s, e in runs):
            runs.append((start, end))
    return [[int(i) for i in order[s:e + 1]] for s, e in runs]


def _count(value, name, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")
    return int(value)


def _alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, (float, int, np.floating)) \
            or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)



#: The inputs of the probability metrics below.
_PROBABILITIES = """Parameters
----------
y_true : array-like of shape (n_samples,)
    True labels.
proba : ndarray of shape (n_samples, n_classes)
    Probabilities, columns in the order of ``classes``.
classes : array-like of shape (n_classes,)
    The class labels."""


@fill_doc(probabilities=_PROBABILITIES)
def expected_calibration_error(y_true, proba, classes, n_bins=15):
    """Return the expected calibration error of the most probable class (top-label ECE).

    The predictions are grouped by their top probability into ``n_bins`` equal-width
    bins of ``[0, 1]``; the ECE is the mean over samples of ``|accuracy - confidence|``
    of their bin (Guo et al. 2017).

    {probabilities}
    n_bins : int, default=15
        Bins of the confidence.

    Returns
    -------
    ece : float
        In ``[0, 1]``; 0 for a perfectly calibrated classifier.

    Examples
    --------
    >>> import numpy as np
    >>> expected_calibration_error([0, 1], np.array([[0.9, 0.1], [0.2, 0.8]]), [0, 1])
    0.15
    """
    conf, acc, count = calibration_bins(*_top_label(y_true, proba, classes), n_bins)
    return float(round(np.sum(count * np.abs(acc - conf)) / count.sum(), 12))


def _top_label(y_true, proba, classes):
    proba = np.asarray(proba, dtype=float)
    top = np.asarray(classes)[proba.argmax(axis=1)]
    return proba.max(axis=1), (top == np.asarray(y_true)).astype(float)


@fill_doc(probabilities=_PROBABILITIES)
def reliability_curve(y_true, proba, classes, n_bins=15):
    """Accuracy against confidence of the most probable class, by confidence bin.

    {probabilities}
    n_bins : int, default=15
        Equal-width bins of ``[0, 1]``.

    Returns
    -------
    confidence, accuracy, count : ndarray of shape (n_nonempty_bins,)
        The mean top probability, the accuracy and the number of predictions of each
        non-empty bin.
    """
    return calibration_bins(*_top_label(y_true, proba, classes), n_bins)


#: The parameters of :func:`calibration_sums` and :func:`calibration_bins`.
_BINS = """confidence : array-like of shape (n_samples,)
    Top probability of each prediction (several test sets may be pooled).
correct : array-like of shape (n_samples,)
    Whether each prediction is right (1) or wrong (0).
n_bins : int, default=15
    Equal-width bins of ``[0, 1]``."""


@fill_doc(bins=_BINS)
def calibration_sums(confidence, correct, n_bins=15):
    """Per bin of confidence: the sum of the confidences, the number right, the count.

    Sums rather than means, so that test sets can be pooled by adding them.

    Parameters
    ----------
    {bins}

    Returns
    -------
    confidence_sum, correct_sum, count : ndarray of shape (n_bins,)
        Per bin, empty ones included.
    """
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    return (np.bincount(bins, confidence, n_bins), np.bincount(bins, correct, n_bins),
            np.bincount(bins, minlength=n_bins))


@fill_doc(bins=_BINS)
def calibration_bins(confidence, correct, n_bins=15):
    """Bin predictions by confidence: the mean confidence, accuracy and count per bin.

    Parameters
    ----------
    {bins}

    Returns
    -------
    confidence, accuracy, count : ndarray of shape (n_nonempty_bins,)
        Per non-empty bin.
    """
    conf, right, count = calibration_sums(confidence, correct, n_bins)
    keep = count > 0
    return conf[keep] / count[keep], right[keep] / count[keep], count[keep]


@fill_doc(probabilities=_PROBABILITIES)
def probability_metrics(y_true, proba, classes):
    """Return the bake off redux's metrics of one classifier on one test set.

    {probabilities}

    Returns
    -------
    metrics : dict
        ``accuracy`` and ``balanced_accuracy`` (of the most probable class), ``nll``
        (the mean negative log-likelihood, probabilities clipped at ``1e-15``),
        ``auroc`` (macro one-vs-rest; binary: of the second class) and ``ece``
        (:func:`expected_calibration_error`).

    Examples
    --------
    >>> import numpy as np
    >>> m = probability_metrics([0, 1, 1], np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]),
    ...                         [0, 1])
    >>> round(m["accuracy"], 3), round(m["auroc"], 3)
    (0.667, 1.0)
    """
    from sklearn.metrics import balanced_accuracy_score, log_loss, roc_auc_score

    proba = np.asarray(proba, dtype=float)
    classes = np.asarray(classes)
    y_true = np.asarray(y_true)
    pred = classes[proba.argmax(axis=1)]
    present = np.isin(classes, y_true)
    if len(classes) == 2:
        auroc = roc_auc_score(y_true == classes[1], proba[:, 1])
    elif present.sum() > 2:
        p = proba[:, present] / proba[:, present].sum(axis=1, keepdims=True)
        auroc = roc_auc_score(y_true, p, multi_class="ovr", average="macro",
                              labels=classes[present])
    else:
        auroc = float("nan")
    return {"accuracy": float(np.mean(pred == y_true)),
            "balanced_accuracy": float(balanced_accuracy_score(y_true, pred)),
            "nll": float(log_loss(y_true, np.clip(proba, 1e-15, 1.0), labels=classes)),
            "auroc": float(auroc),
            "ece": expected_calibration_error(y_true, proba, classes)}
