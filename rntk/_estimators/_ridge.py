"""Kernel ridge classification on a precomputed Gram (the inner model of the LOO search)."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._model_selection._loo import (
    decision_to_labels,
    gram_scale,
    one_vs_all_targets,
    ridge_intercept_fit,
)
from .._utils import DOC, fill_doc

__all__ = ["KernelRidgeClassifier", "relative_ridge"]


def relative_ridge(K, alpha):
    """Return the ridge ``alpha * trace(K) / n``, ``alpha`` relative to the mean diagonal.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Training Gram.
    alpha : float or ndarray
        Relative ridge(s).

    Returns
    -------
    ridge : float or ndarray
        The ridge(s) on the scale of ``K``.
    """
    return np.asarray(alpha, dtype=np.float64) * (np.trace(K) / K.shape[0])


@fill_doc(**DOC)
class KernelRidgeClassifier(ClassifierMixin, BaseEstimator):
    """One-vs-all least-squares classifier on a precomputed kernel.

    The classifier of scikit-learn's :class:`~sklearn.linear_model.RidgeClassifier`
    (targets ``{-1, +1}``, one column for two classes, the class of the largest
    decision value) with an unpenalised intercept, in the dual: ``f(x) = k(x)^T c +
    b``. The ridge is relative to the Gram's scale (``alpha * trace(K) / n``), so one
    grid of ``alpha`` serves kernels of any magnitude.

    Parameters
    ----------
    alpha : float, default=1e-3
        Relative ridge, > 0.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    dual_coef_ : ndarray of shape (n_samples, n_targets)
        Dual coefficients ``c`` (one column for two classes).
    intercept_ : ndarray of shape (n_targets,)
        Intercepts ``b``.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import rntk_kernel
    >>> from rntk.model_selection import KernelRidgeClassifier
    >>> X = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 1.9], [2.0, 1.0, 0.0], [2.1, 1.0, 0.0]])
    >>> clf = KernelRidgeClassifier(alpha=1e-2).fit(rntk_kernel(X), [0, 0, 1, 1])
    >>> clf.predict(rntk_kernel(X[[1, 2]], X)).tolist()
    [0, 1]
    """

    _parameter_constraints = {"alpha": [Interval(numbers.Real, 0, None, closed="neither")]}

    def __init__(self, alpha=1e-3):
        self.alpha = alpha

    def fit(self, K, y):
        """Fit on the training Gram.

        Parameters
        ----------
        K : ndarray of shape (n_samples, n_samples)
            Training Gram.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : KernelRidgeClassifier
            The fitted classifier.
        """
        self._validate_params()
        K = np.asarray(K, dtype=np.float64)
        self.classes_, Y = one_vs_all_targets(y)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be a square matrix, got shape {K.shape}")
        ridge = self.alpha * gram_scale(K)  # relative_ridge, refusing a zero Gram
        self.dual_coef_, self.intercept_ = ridge_intercept_fit(K, Y, ridge)
        return self

    def decision_function(self, K):
        """Decision values ``K @ c + b``.

        {K_new}

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class; a vector for two classes (positive: ``classes_[1]``).
        """
        check_is_fitted(self)
        D = np.asarray(K, dtype=np.float64) @ self.dual_coef_ + self.intercept_
        return D[:, 0] if D.shape[1] == 1 else D

    def predict(self, K):
        """Predict class labels.

        {K_new}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels.
        """
        D = self.decision_function(K)
        return decision_to_labels(self.classes_, D[:, None] if D.ndim == 1 else D)
