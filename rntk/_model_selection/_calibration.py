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

__all__ = ["decision_log_proba", "decision_proba", "fit_temperature"]

#: Bounds of ``log a`` for the fit (``a`` from about 5e-5 to 2e4).
_LOG_BOUNDS = (-10.0, 10.0)


def decision_log_proba(D, scale):
    """Log-probabilities of decision values under the scale ``scale``.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_targets)
        Decision values; one column for two classes (positive: the second).
    scale : float
        The fitted scale ``a > 0``.

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


def decision_proba(D, scale):
    """Probabilities of decision values under the scale ``scale`` (rows sum to 1).

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_targets)
        Decision values; one column for two classes (positive: the second).
    scale : float
        The fitted scale ``a > 0``.

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


def fit_temperature(D, y_index):
    """Return the scale ``a`` minimising the cross-entropy of Platt's targets of ``y_index``.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_targets)
        Out-of-sample decision values of the training samples.
    y_index : ndarray of shape (n_samples,)
        Index of each sample's class in ``classes_``.

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
    T = _soft_targets(y_index, max(D.shape[1], 2))

    def nll(log_scale):
        return -np.mean(np.sum(T * decision_log_proba(D, np.exp(log_scale)), axis=1))

    res = minimize_scalar(nll, bounds=_LOG_BOUNDS, method="bounded",
                          options={"xatol": 1e-6})
    return float(np.exp(res.x))
