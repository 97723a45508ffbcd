"""Kernel ridge on a precomputed Gram with an intercept: the inner models of the LOO search."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._model_selection._loo import (
    decision_to_labels,
    gram_scale,
    one_vs_all_targets,
    ridge_intercept_fit,
)
from .._utils import DOC, fill_doc

__all__ = ["KernelRidgeClassifier", "KernelRidgeRegressor", "relative_ridge"]


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
        Y = self._targets(y)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be a square matrix, got shape {K.shape}")
        ridge = self.alpha * gram_scale(K)  # relative_ridge, refusing a zero Gram
        return self._set_coef(*ridge_intercept_fit(K, Y, ridge), y)

    def _targets(self, y):
        """Return the one-vs-all ``{-1, +1}`` targets of ``y`` (and set ``classes_``)."""
        self.classes_, Y = one_vs_all_targets(y)
        return Y

    def _set_coef(self, dual_coef, intercept, y):
        """Store the fitted coefficients (from :meth:`fit`, or a search on features)."""
        self.dual_coef_, self.intercept_ = dual_coef, intercept
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


@fill_doc(**DOC)
class KernelRidgeRegressor(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Kernel ridge regression with an intercept on a precomputed kernel.

    ``f(x) = k(x)^T c + b`` with the intercept ``b`` unpenalised and the ridge relative
    to the Gram's scale (``alpha * trace(K) / n``), so that one grid of ``alpha``
    serves kernels of any magnitude and a large ridge tends to the mean of the
    training targets, not to zero (as :class:`~sklearn.kernel_ridge.KernelRidge`,
    which has no intercept, does). ``alpha=inf`` is that limit: the mean. Predictions
    are clipped to the range of the training targets: a kernel machine extrapolates
    wildly on series unlike any it was fitted on, and a target outside the range seen
    is rarely what is wanted.

    Parameters
    ----------
    alpha : float, default=1e-3
        Relative ridge, > 0; ``numpy.inf`` fits the mean of the targets.
    clip : bool, default=True
        Clip predictions to ``[min(y), max(y)]`` of the training targets (per target).

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Dual coefficients ``c`` (summing to 0 per target; zeros for ``alpha=inf``),
        of the shape of ``y``, as :class:`~sklearn.kernel_ridge.KernelRidge`'s.
    intercept_ : float or ndarray of shape (n_targets,)
        Intercept(s) ``b``.
    y_range_ : ndarray of shape (2,) or (2, n_targets)
        Smallest and largest training target.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import rntk_kernel
    >>> from rntk.model_selection import KernelRidgeRegressor
    >>> X = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 1.9], [2.0, 1.0, 0.0], [2.1, 1.0, 0.0]])
    >>> y = np.array([1.0, 1.1, 3.0, 3.2])
    >>> reg = KernelRidgeRegressor(alpha=1e-3).fit(rntk_kernel(X), y)
    >>> reg.predict(rntk_kernel(X[[1, 2]], X)).round(1).tolist()
    [1.1, 3.0]
    >>> KernelRidgeRegressor(alpha=np.inf).fit(rntk_kernel(X), y).predict(rntk_kernel(X)[:1])
    array([2.075])
    """

    _parameter_constraints = {"alpha": [Interval(numbers.Real, 0, None, closed="right")],
                              "clip": ["boolean"]}

    def __init__(self, alpha=1e-3, clip=True):
        self.alpha = alpha
        self.clip = clip

    def fit(self, K, y):
        """Fit on the training Gram.

        Parameters
        ----------
        K : ndarray of shape (n_samples, n_samples)
            Training Gram.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets.

        Returns
        -------
        self : KernelRidgeRegressor
            The fitted regressor.
        """
        self._validate_params()
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be a square matrix, got shape {K.shape}")
        Y = self._targets(y)
        if Y.shape[0] != K.shape[0]:
            raise ValueError(f"y has {Y.shape[0]} samples but K has {K.shape[0]}")
        if np.isinf(self.alpha):
            return self._set_coef(np.zeros_like(Y), Y.mean(axis=0), y)
        ridge = self.alpha * gram_scale(K)  # relative_ridge, refusing a zero Gram
        return self._set_coef(*ridge_intercept_fit(K, Y, ridge), y)

    def _targets(self, y):
        """Return the targets as a 2-D float array."""
        Y = np.asarray(y, dtype=np.float64)
        return Y[:, None] if Y.ndim == 1 else Y

    def _set_coef(self, dual_coef, intercept, y):
        """Store the fitted coefficients (from :meth:`fit`, or a search on features)."""
        y = np.asarray(y, dtype=np.float64)
        single = y.ndim == 1
        self.dual_coef_ = dual_coef[:, 0] if single else dual_coef
        self.intercept_ = float(intercept[0]) if single else intercept
        self.y_range_ = np.stack([y.min(axis=0), y.max(axis=0)])
        return self

    def predict(self, K):
        """Predict ``K @ c + b``, clipped to the training targets' range (``clip``).

        {K_new}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions.
        """
        check_is_fitted(self)
        P = np.asarray(K, dtype=np.float64) @ self.dual_coef_ + self.intercept_
        return np.clip(P, self.y_range_[0], self.y_range_[1]) if self.clip else P
