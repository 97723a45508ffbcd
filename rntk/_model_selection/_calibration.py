"""Probabilities from decision values: one temperature, fitted on out-of-sample values.

A classifier's decision values ``D`` (one column per class, or one column for two
classes, positive for the second) become probabilities ``softmax(a D)`` (two classes:
``p_1 = 1 / (1 + exp(-a d))``), one scale ``a > 0`` for all classes. The scale minimises the
cross-entropy of the training labels' Platt targets (the rule of succession,
``(N_c + 1) / (N_c + 2)`` for the class) under *out-of-sample* decision values: the
exact leave-one-out values of the kernel ridge classifier (which the search computes for
every candidate anyway), or cross-validated values of the SVC on slices of its Gram. A
positive scale keeps the order of the decision values, so the most probable class is the
predicted one.
"""

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_expit, log_softmax

from .._utils import fill_doc

__all__ = ["calibrate", "cv_decision_values", "decision_log_proba", "decision_proba",
           "fit_temperature"]

#: Bounds of ``log a`` for the fit (``a`` from about 5e-5 to 2e4).
_LOG_BOUNDS = (-10.0, 10.0)


#: The parameters of the two functions below.
_PARAMS = """Parameters
----------
D : ndarray of shape (n_samples, n_targets)
    Decision values; one column for two classes (positive: the second).
scale : float
    The fitted scale ``a > 0``."""


@fill_doc(params=_PARAMS)
def decision_log_proba(D, scale):
    """Log-probabilities of decision values under the scale ``scale``.

    {params}

    Returns
    -------
    log_proba : ndarray of shape (n_samples, n_classes)
        ``log softmax(a D)``; for two classes ``log(1 - p_1)``, ``log p_1``.
    """
    D = np.asarray(D, dtype=np.float64)
    D = D[:, None] if D.ndim == 1 else D
    if D.shape[1] == 1:
        z = scale * D[:, 0]
        return np.column_stack([log_expit(-z), log_expit(z)])
    return log_softmax(scale * D, axis=1)


@fill_doc(params=_PARAMS)
def decision_proba(D, scale):
    """Probabilities of decision values under the scale ``scale`` (rows sum to 1).

    {params}

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        The probabilities, in the order of the classes.
    """
    D = np.asarray(D, dtype=np.float64)
    D = D[:, None] if D.ndim == 1 else D
    if D.shape[1] == 1:
        z = scale * D[:, 0]
        return np.column_stack([expit(-z), expit(z)])
    return np.exp(decision_log_proba(D, scale))


def _soft_targets(y_index, n_classes):
    """Platt's targets: ``(N_c + 1) / (N_c + 2)`` for a sample's class, the rest spread.

    With ``N_c`` training samples of class ``c``, the target probability of the class is
    that of the rule of succession rather than 1 (Platt 1999, as scikit-learn's sigmoid
    calibration does), so that out-of-sample values that are all on the right side give a
    finite scale, not probabilities of exactly 0 and 1.
    """
    counts = np.bincount(y_index, minlength=n_classes)
    true = (counts[y_index] + 1.0) / (counts[y_index] + 2.0)
    T = np.repeat(((1.0 - true) / (n_classes - 1))[:, None], n_classes, axis=1)
    T[np.arange(len(y_index)), y_index] = true
    return T


def fit_temperature(D, y_index, targets="platt"):
    """Return the scale ``a`` minimising the cross-entropy of Platt's targets of ``y_index``.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_targets)
        Out-of-sample decision values of the training samples.
    y_index : ndarray of shape (n_samples,)
        Index of each sample's class in ``classes_``.
    targets : {"platt", "labels"}, default="platt"
        Platt's targets (the rule of succession), or the labels themselves (the
        negative log-likelihood; infinite scale where every value is on the right side).

    Returns
    -------
    scale : float
        The fitted ``a`` (within ``exp(-10) .. exp(10)``); 1 when the values do not
        depend on the class (all equal).
    """
    D = np.asarray(D, dtype=np.float64)
    D = D[:, None] if D.ndim == 1 else D
    y_index = np.asarray(y_index)
    if not np.all(np.isfinite(D)) or np.ptp(D) == 0:
        return 1.0
    n_classes = max(D.shape[1], 2)
    if targets == "platt":
        T = _soft_targets(y_index, n_classes)
    elif targets == "labels":
        T = np.eye(n_classes)[y_index]
    else:
        raise ValueError(f"targets must be 'platt' or 'labels', got {targets!r}")

    def nll(log_scale):
        return -np.mean(np.sum(T * decision_log_proba(D, np.exp(log_scale)), axis=1))

    res = minimize_scalar(nll, bounds=_LOG_BOUNDS, method="bounded",
                          options={"xatol": 1e-6})
    return float(np.exp(res.x))


def cv_decision_values(estimator, K, y):
    """Decision values of the training samples by clones fitted on folds of their Gram.

    Parameters
    ----------
    estimator : classifier on a precomputed kernel
        An unfitted or fitted classifier (an SVC): its clones are fitted on stratified
        folds (at most 5, each class in every training part) of ``K``.
    K : ndarray of shape (n_samples, n_samples)
        The training Gram.
    y : ndarray of shape (n_samples,)
        The labels.

    Returns
    -------
    D : ndarray of shape (n_samples, n_targets) or None
        Out-of-fold decision values (one column for two classes); None where a class has
        a single sample (no fold can hold it out).
    """
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y)
    classes, counts = np.unique(y, return_counts=True)
    folds = min(5, int(counts.min()))
    if folds < 2:
        return None
    D = np.zeros((len(y), 1 if len(classes) == 2 else len(classes)))
    for train, test in StratifiedKFold(folds).split(np.zeros(len(y)), y):
        est = clone(estimator).fit(K[np.ix_(train, train)], y[train])
        d = est.decision_function(K[np.ix_(test, train)])
        D[test] = d[:, None] if d.ndim == 1 else d
    return D


def calibrate(classifier, D, y):
    """Store on a fitted classifier its out-of-sample values ``D`` and their temperature.

    Parameters
    ----------
    classifier : classifier with ``classes_``
        Gets ``oos_decision_`` (``D``) and ``proba_scale_`` (:func:`fit_temperature`).
    D : ndarray of shape (n_samples, n_targets)
        Out-of-sample decision values of its training samples.
    y : array-like of shape (n_samples,)
        Their labels.

    Returns
    -------
    classifier : object
        The classifier.
    """
    classifier.oos_decision_ = np.asarray(D, dtype=np.float64)
    classifier.proba_scale_ = fit_temperature(D, np.searchsorted(classifier.classes_, y))
    return classifier
