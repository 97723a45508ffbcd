"""Probabilities from decision values: one temperature, fitted on out-of-sample values.

A classifier's decision values ``D`` (one column per class, or one column for two
classes, positive for the second) become probabilities ``softmax(a D)`` (two classes:
``p_1 = 1 / (1 + exp(-a d))``), one scale ``a > 0`` for all classes. The scale minimises the
negative log-likelihood of the training labels under *out-of-sample* decision values: the
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


def fit_temperature(D, y_index):
    """Return the scale ``a`` minimising the negative log-likelihood of ``y_index``.

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
    rows = np.arange(len(y_index))

    def nll(log_scale):
        return -np.mean(decision_log_proba(D, np.exp(log_scale))[rows, y_index])

    res = minimize_scalar(nll, bounds=_LOG_BOUNDS, method="bounded",
                          options={"xatol": 1e-6})
    return float(np.exp(res.x))
