"""Scores on a precomputed Gram: per fold, and by exact leave-one-out.

SVC accuracy and kernel ridge R^2 of one fold, and the exact leave-one-out scores of
kernel ridge for many ridges at once.

Both reproduce the arithmetic of the scikit-learn estimator they stand for
(:class:`~sklearn.svm.SVC` and :class:`~sklearn.kernel_ridge.KernelRidge` with
``kernel="precomputed"``) without its per-call overhead.
"""

import threading
import warnings

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.svm import SVC
from sklearn.utils.class_weight import compute_class_weight

from ._loo import (
    _check_two_classes,
    clip_loo_predictions,
    constant_loo_predictions,
    loo_classification_scores,
    one_vs_all_targets,
    relative_loo_predictions,
)
from ._scoring import GramScores

try:  # libsvm entry point used by SVC itself: same solver, without SVC's per-call overhead
    from sklearn.svm import _libsvm
except ImportError:  # pragma: no cover - depends on the scikit-learn build
    _libsvm = None

__all__ = ["SVM_MAX_ITER", "FastSVC", "RidgeLOOScorer", "SVCFoldScorer", "kernel_ridge_score",
           "loo_r2"]


def loo_r2(y, loo):
    """Leave-one-out ``R^2`` (``1 - PRESS / SS_tot``, averaged over targets) per candidate.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Targets.
    loo : ndarray of shape (n_candidates, n_samples, n_targets)
        Leave-one-out predictions.

    Returns
    -------
    r2 : ndarray of shape (n_candidates,)
        ``SS_tot`` is about the targets' mean over all samples; a constant target
        scores 1 when predicted exactly, else 0. The mean itself scores
        ``1 - (n / (n - 1))^2``, just below 0.
    """
    Y = np.asarray(y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    # R^2 is a ratio: both sums in units of each target's spread, so that targets far
    # from 1 (|y| ~ 1e155 and more) do not overflow when squared
    centred = Y - Y.mean(axis=0)
    scale = np.abs(centred).max(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    sse = (((loo - Y[None]) / scale) ** 2).sum(axis=1)
    sst = ((centred / scale) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(sst > 0, 1.0 - sse / np.where(sst > 0, sst, 1.0),
                      np.where(sse == 0, 1.0, 0.0))
    return r2.mean(axis=1)

#: Iteration cap of every SVC fit of a search. libsvm's own tools stop after 10^7
#: iterations; without a cap a nearly constant Gram with a large offset (deep NTK, large
#: sigma_w and sigma_b) can make the solver cycle for ever inside a grid search. A fit
#: that reaches the cap is counted as unconverged.
SVM_MAX_ITER = 10_000_000


class FastSVC:
    """Accuracy of an SVC fit on a precomputed fold, without SVC's per-call overhead.

    Calls the libsvm wrapper that :class:`~sklearn.svm.SVC` calls, with the same
    arguments (label encoding, class weights), so the scores are SVC's; if that
    private entry point is missing or its signature changed, SVC itself is used.
    """

    usable = _libsvm is not None

    @classmethod
    def score(cls, K_train, y_train, K_test, y_test, C, class_weight):
        return cls.fold(K_train, y_train, K_test, y_test, C, class_weight)[0]

    @classmethod
    def fold(cls, K_train, y_train, K_test, y_test, C, class_weight=None,
             max_iter=SVM_MAX_ITER):
        """Return ``(accuracy, converged)`` of one fold."""
        if cls.usable:
            try:
                return cls._fold_libsvm(K_train, y_train, K_test, y_test, C, class_weight,
                                        max_iter)
            except TypeError:  # pragma: no cover - private API changed
                cls.usable = False
        svc = SVC(kernel="precomputed", C=C, class_weight=class_weight, max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svc.fit(K_train, y_train)
        return float(np.mean(svc.predict(K_test) == y_test)), svc.fit_status_ == 0

    @staticmethod
    def _fold_libsvm(K_train, y_train, K_test, y_test, C, class_weight, max_iter):
        classes, y_enc = np.unique(y_train, return_inverse=True)
        weights = compute_class_weight(class_weight, classes=classes, y=y_train)
        _check_two_classes(classes)
        y_enc = np.asarray(y_enc, dtype=np.float64, order="C")
        K_train = np.ascontiguousarray(K_train, dtype=np.float64)
        K_test = np.ascontiguousarray(K_test, dtype=np.float64)
        _libsvm.set_verbosity_wrap(0)
        support, sv, n_support, dual, intercept, prob_a, prob_b, status, _ = _libsvm.fit(
            K_train, y_enc, svm_type=0, sample_weight=np.empty(0), class_weight=weights,
            kernel="precomputed", C=float(C), nu=0.5, probability=False, degree=3,
            shrinking=True, tol=1e-3, cache_size=200, coef0=0.0, gamma=1.0, epsilon=0.1,
            max_iter=max_iter, random_seed=0)
        pred = _libsvm.predict(
            K_test, support, sv, n_support, dual, intercept, prob_a, prob_b, svm_type=0,
            kernel="precomputed", degree=3, coef0=0.0, gamma=1.0, cache_size=200)
        return float(np.mean(classes[pred.astype(np.intp)] == y_test)), status == 0


class SVCFoldScorer:
    """Fold scorer of the search engine: SVC accuracy, counting unconverged fits.

    Parameters
    ----------
    class_weight : dict or "balanced", default=None
        Class weights of the SVC.
    max_iter : int, default=SVM_MAX_ITER
        Iteration cap of each fit.

    Attributes
    ----------
    unconverged : int
        Fits that reached ``max_iter``, counted over every call.
    """

    def __init__(self, class_weight=None, max_iter=SVM_MAX_ITER):
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.unconverged = 0
        self._lock = threading.Lock()

    def __call__(self, K_train, y_train, K_test, y_test, params):
        """Fit an SVC with ``params["C"]`` on one fold and score it.

        Parameters
        ----------
        K_train : ndarray of shape (n_train, n_train)
            Gram of the fold's training series.
        y_train : ndarray of shape (n_train,)
            Their labels.
        K_test : ndarray of shape (n_test, n_train)
            Gram of the held-out series against the training ones.
        y_test : ndarray of shape (n_test,)
            Their labels.
        params : dict
            The candidate: ``C`` and optionally ``class_weight``.

        Returns
        -------
        accuracy : float
            Accuracy on the held-out series.
        """
        acc, converged = FastSVC.fold(K_train, y_train, K_test, y_test, params["C"],
                                      params.get("class_weight", self.class_weight),
                                      self.max_iter)
        if not converged:
            with self._lock:
                self.unconverged += 1
        return acc


def kernel_ridge_score(K_train, y_train, K_test, y_test, alpha):
    """R^2 of ``KernelRidge(alpha, kernel="precomputed")`` on one fold (same arithmetic)."""
    y2 = y_train.reshape(-1, 1) if y_train.ndim == 1 else y_train
    A = K_train.copy()
    A.flat[:: A.shape[0] + 1] += alpha
    try:
        dual = linalg.solve(A, y2, assume_a="pos", overwrite_a=False)
    except np.linalg.LinAlgError:
        warnings.warn(
            "Singular matrix in solving dual problem. Using least-squares solution instead."
        )
        dual = linalg.lstsq(A, y2)[0]
    if y_train.ndim == 1:
        dual = dual.ravel()
    return float(r2_score(y_test, np.dot(K_test, dual)))


class RidgeLOOScorer:
    """Gram scorer of the search engine: exact leave-one-out of kernel ridge.

    One eigendecomposition of the training Gram gives the LOO score of every ridge
    ``alpha`` of the candidates that share it (``eigh_gram``).

    Parameters
    ----------
    classification : bool
        One-vs-all ``{-1, +1}`` least squares with an unpenalised intercept, scored by
        LOO accuracy, ties broken by the lower LOO squared error (the inner model
        :class:`rntk.model_selection.KernelRidgeClassifier`, ridges relative to
        ``trace(K) / n``); otherwise kernel ridge regression with an unpenalised
        intercept and relative ridges, each LOO prediction clipped to the range of the
        other samples' targets (the inner model
        :class:`rntk.model_selection.KernelRidgeRegressor`), scored by the LOO ``R^2``
        (``1 - PRESS / SS_tot`` per target, averaged over targets). ``alpha=inf`` is
        the mean of the targets, whose LOO is closed form
        (``constant_loo_predictions``): a candidate every
        regression search can fall back on.
    """

    def __init__(self, classification):
        self.classification = classification

    def __call__(self, K, y, params):
        """Score the candidates ``params`` (dicts with ``alpha``) on the Gram ``K``.

        Parameters
        ----------
        K : ndarray of shape (n_samples, n_samples)
            Training Gram.
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Labels or targets.
        params : list of dict
            The candidates that share ``K``, each with its ``alpha`` (> 0).

        Returns
        -------
        scores : GramScores
            A named tuple: ``scores`` of shape (n_candidates, 1), the LOO accuracy or
            ``R^2``; ``tiebreak`` of shape (n_candidates,) or None, minus the LOO
            squared error (classification), higher is better; ``loo`` of shape
            (n_candidates, n_samples, n_targets), the LOO predictions of every
            candidate (the ``{-1, +1}`` one-vs-all decision values of a classifier),
            for the search to calibrate and average what it refits.
        """
        alphas = np.array([float(p["alpha"]) for p in params])
        if np.any(alphas <= 0):
            raise ValueError(
                "exact leave-one-out needs every alpha > 0 (at alpha = 0 a sample left "
                "out is interpolated by the others); drop alpha=0 from the grid or give "
                "cv folds")
        if self.classification:
            if np.any(np.isinf(alphas)):
                raise ValueError("alpha=inf (the mean) is a candidate of regression only")
            return self._classification_scores(K, y, alphas)
        loo = self.regression_loo(K, y, alphas)
        return GramScores(loo_r2(y, loo)[:, None], None, loo)

    def regression_loo(self, K, y, alphas):
        """Clipped LOO predictions of the regressor for each relative ridge (``inf``: mean).

        Parameters
        ----------
        K : ndarray of shape (n_samples, n_samples)
            Training Gram (or, for the features scorer, the features).
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Targets.
        alphas : ndarray of shape (n_alphas,)
            Relative ridges, ``> 0`` or ``inf``.

        Returns
        -------
        loo : ndarray of shape (n_alphas, n_samples, n_targets)
            The LOO predictions, each clipped to the range of the other targets.
        """
        Y = np.asarray(y, dtype=np.float64)
        Y = Y[:, None] if Y.ndim == 1 else Y
        alphas = np.asarray(alphas, dtype=np.float64)
        finite = np.isfinite(alphas)
        loo = np.empty((alphas.size,) + Y.shape)
        loo[~finite] = constant_loo_predictions(Y)
        if finite.any():
            loo[finite] = self._ridge_loo(K, Y, alphas[finite])
        return clip_loo_predictions(loo, Y)

    def _ridge_loo(self, K, Y, alphas):
        """LOO predictions of ridge with an intercept, relative ``alphas``, from the Gram."""
        return relative_loo_predictions(K, Y, alphas)

    def _classification_scores(self, K, y, alphas):
        """LOO accuracy, minus squared error and predictions of the ridge classifier."""
        classes, Y = one_vs_all_targets(y)
        loo = self._ridge_loo(K, Y, alphas)
        acc, mse = loo_classification_scores(y, classes, Y, loo)
        return GramScores(acc[:, None], -mse, loo)
