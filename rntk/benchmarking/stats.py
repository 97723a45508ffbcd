"""Summary metrics of a classifier comparison over many datasets (RNTK paper, App. A.1).

Given accuracies ``y[i, j]`` of classifier ``j`` on dataset ``i``:

* mean accuracy (and its sample standard deviation);
* ``P90`` / ``P95``: fraction of datasets where ``y[i, j] >= 0.90 (0.95) * max_j y[i, j]``
  (eq. 21);
* ``PMA``: mean over datasets of ``y[i, j] / max_j y[i, j]`` (eq. 22);
* Friedman rank: mean over datasets of the rank of ``j`` (1 = best, eq. 23); ties get
  the average of the ranks they span (the usual Friedman convention), or the lowest
  one with ``ties="min"``, which is what the paper's Table 1 used.

Datasets where some classifier has no result (NaN) are left out of every metric, so
all classifiers are compared on the same datasets.
"""

import numpy as np
from scipy.stats import rankdata

__all__ = ["summary_metrics", "friedman_ranks"]


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
