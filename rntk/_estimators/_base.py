"""The shared base of the estimators that fit a scikit-learn model on a sequence Gram."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator

from .._kernels import rntk_kernel
from .._kernels._params import RNTK_PARAM_NAMES
from .._model_selection._protocol import SearchableEstimator
from .._representations import PREPARATION_NAMES, PREPARATIONS, fit_preparations, prepare_series
from .._utils import DOC, fill_doc, validate_fit_data, validate_predict_data

if TYPE_CHECKING:  # pragma: no cover - annotations only

    from .._utils._typing import Sequences

__all__ = ["PrecomputedSequenceEstimator", "RNTKKernelMixin"]


@fill_doc(**DOC)
class PrecomputedSequenceEstimator(SearchableEstimator, BaseEstimator):
    """Base of the estimators that fit a precomputed-kernel model on sequences.

    Subclasses define ``_gram(xs, ys=None)`` (lists of ``(T_i, m)`` arrays to a Gram
    matrix), ``_make_inner()`` (an unfitted scikit-learn estimator with
    ``kernel="precomputed"``) and, if they have ``normalize`` and ``pool``
    parameters, get the per-series scaling and pooling for free. ``_fit_gram`` fits
    from an already computed Gram (used by the CV estimators); ``_predict_columns``
    may restrict the training samples a prediction needs (the support vectors of an
    SVC). An estimator with
    its own target layout passes ``check_targets`` to ``_validate_fit``, and one
    whose Gram is not ``(n, n)`` adapts it in an override of ``_fit_gram``.
    """

    _is_regressor = False

    # -- input validation ------------------------------------------------------------
    def _validate_fit(self, X, y, check_targets=None):
        """Validate training data: ``(series, y)``, series not yet scaled."""
        return validate_fit_data(self, X, y, self._is_regressor, check_targets)

    def _validate_predict(self, X):
        return self._prepare(validate_predict_data(self, X), fitted=True)

    def _fit_preparation(self, xs):
        """Fit what the preparations learn from the training series (``_prepare``)."""
        for name in (a for p in PREPARATIONS for a in p.fitted):  # of an earlier fit
            self.__dict__.pop(name, None)
        for name, value in fit_preparations(xs, self._preparation_values()).items():
            setattr(self, name, value)

    def _preparation_values(self):
        return {name: getattr(self, name) for name in PREPARATION_NAMES if hasattr(self, name)}

    def _prepare(self, xs, fitted=False):
        """Return the series as the kernel reads them (:data:`PREPARATIONS`, in order).

        What a preparation learns from the training series (``normalize="dataset"``:
        ``channel_mean_``, ``channel_scale_``; ``"log"``: ``log_scale_``) is fitted and
        stored here unless ``fitted``, when the stored values are applied.
        """
        if not fitted:
            self._fit_preparation(xs)
        state = {name: value for name, value in vars(self).items() if name.endswith("_")}
        return prepare_series(xs, self._preparation_values(), state)

    # -- fitting and prediction ------------------------------------------------------
    def _fit_gram(self, xs, K, y, sample_weight=None, loo=None):
        """Fit the inner model on the Gram ``K`` of the prepared sequences ``xs``.

        ``loo``: out-of-sample decision values of the training series, if a search has
        them already (a classifier calibrates its probabilities on them).
        """
        inner = self._make_inner()
        if sample_weight is None:
            inner.fit(K, y)
        else:
            inner.fit(K, y, sample_weight=sample_weight)
        self.estimator_ = inner
        self.X_fit_ = list(xs)
        self._after_fit()
        self._calibrate_on_gram(K, y, loo)
        return self

    def _calibrate_on_gram(self, K, y, loo):
        pass

    def _after_fit(self):
        pass

    def _predict_columns(self):
        return None

    def _test_gram(self, X):
        xs = self._validate_predict(X)
        cols = self._predict_columns()
        if cols is None:
            return self._gram(xs, self.X_fit_)
        K = np.zeros((len(xs), len(self.X_fit_)))
        if len(cols):
            K[:, cols] = self._gram(xs, [self.X_fit_[j] for j in cols])
        return K

    def predict(self, X: Sequences) -> np.ndarray:
        """Predict labels or targets of series with the model fitted on the training Gram.

        {X_predict}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions of the inner model on the kernel of ``X`` against the
            training series.
        """
        K = self._test_gram(X)  # checks that the estimator is fitted
        return self.estimator_.predict(K)

    def _fit(self, X, y, sample_weight=None):
        xs, y = self._validate_fit(X, y)
        xs = self._prepare(xs)
        return self._fit_gram(xs, self._gram(xs), y, sample_weight)


class RNTKKernelMixin:
    """The RNTK as the kernel of a ``PrecomputedSequenceEstimator``."""

    def _kernel_params(self):
        return {name: getattr(self, name) for name in RNTK_PARAM_NAMES}

    def _precision(self):
        """Return the engine's arithmetic: ``precision``, with ``"auto"`` resolved."""
        precision = getattr(self, "precision", "float64")
        if precision == "auto":
            return "float32" if self.readout == "mean" else "float64"
        return precision

    def _gram(self, xs, ys=None):
        return rntk_kernel(xs, ys, n_jobs=self.n_jobs, device=getattr(self, "device", "cpu"),
                           precision=self._precision(), **self._kernel_params())
