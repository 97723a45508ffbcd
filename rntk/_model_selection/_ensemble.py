"""Averages of fitted estimators (the best of a search): decision functions, predictions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._utils import DOC, fill_doc
from ._calibration import calibrate, decision_log_proba, decision_proba
from ._loo import decision_to_labels

if TYPE_CHECKING:  # pragma: no cover - annotations only

    from .._utils._typing import Sequences

__all__ = ["AveragedClassifier", "AveragedRegressor"]


def _mean_once(estimators, method, X):
    """Mean of ``getattr(e, method)(X)`` over ``estimators``; a repeated member runs once."""
    done = {}
    for e in estimators:
        if id(e) not in done:
            done[id(e)] = np.asarray(getattr(e, method)(X))
    shapes = [done[id(e)].shape for e in estimators]
    if len(set(shapes)) > 1:
        raise ValueError(
            f"the members' {method} have different shapes ({', '.join(map(str, shapes))}, "
            "in the order of estimators): an average needs members fitted on the same "
            "targets (the same number of outputs, the same classes)")
    return np.mean([done[id(e)] for e in estimators], axis=0)


class _Averaged(BaseEstimator):
    """Base of the averages: the members, checked in ``fit``."""

    def __init__(self, estimators):
        self.estimators = estimators

    def fit(self, X=None, y=None):
        """Check the fitted members (nothing is trained).

        Parameters
        ----------
        X, y : ignored
            Present for the scikit-learn API.

        Returns
        -------
        self : object
            The ensemble.
        """
        if not self.estimators:
            raise ValueError("estimators must be a non-empty list of fitted estimators")
        for k, e in enumerate(self.estimators):
            if not hasattr(e, self._member_method):
                raise TypeError(f"estimators[{k}] ({type(e).__name__}) has no "
                                f"{self._member_method}: {type(self).__name__} averages "
                                f"the {self._member_method} of its members")
            try:
                check_is_fitted(e)
            except NotFittedError as exc:
                raise NotFittedError(f"estimators[{k}] is not fitted: {type(self).__name__}"
                                     f" averages fitted estimators. {exc}") from None
        self.estimators_ = list(self.estimators)
        self._check_members()
        return self


class AveragedClassifier(ClassifierMixin, _Averaged):
    """Classifier whose decision function is the mean of fitted classifiers' ones.

    What :class:`rntk.RNTKClassifierCV` refits with ``n_average > 1``: the best
    candidate of each of the best kernel settings, each refitted on all training
    series; a series gets the class of the largest mean decision value (its sign
    with two classes). With the kernel ridge classifier each member's decision
    function is the least-squares fit of the ``{-1, +1}`` one-vs-all targets, so the
    members' values share one scale.

    Parameters
    ----------
    estimators : list of fitted classifiers
        Members with ``decision_function`` and the same ``classes_``. A member listed
        more than once counts as many times in the mean, and is evaluated once.

    Attributes
    ----------
    estimators_ : list of fitted classifiers
        The members.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    proba_scale_ : float
        The temperature of :meth:`predict_proba`.
    oos_decision_ : ndarray of shape (n_samples, n_targets)
        When fitted by a search: the mean of the members' exact leave-one-out decision
        values of the training series, on which ``proba_scale_`` was fitted.
    """

    _member_method = "decision_function"

    def _check_members(self):
        classes = [np.asarray(e.classes_) for e in self.estimators_]
        if any(c.shape != classes[0].shape or np.any(c != classes[0]) for c in classes):
            raise ValueError("the estimators must have the same classes_")
        self.classes_ = classes[0]

    @fill_doc(decision=DOC["decision_function"])
    def decision_function(self, X: Sequences) -> np.ndarray:
        """Mean of the members' decision functions.

        {decision}
            Positive for ``classes_[1]`` in the binary case.
        """
        check_is_fitted(self)
        return _mean_once(self.estimators_, "decision_function", X)

    def _calibrate(self, D, y):
        """Fit ``proba_scale_`` on out-of-sample mean decision values ``D`` of ``y``.

        ``None``: the mean of the members' scales (an average not fitted by a search).
        """
        if D is not None:
            return calibrate(self, D, y)
        self.proba_scale_ = float(np.mean([e.proba_scale_ for e in self.estimators_]))
        return self

    @fill_doc(X_plain=DOC["X_plain"], proba_returns=DOC["proba_returns"])
    def predict_proba(self, X: Sequences) -> np.ndarray:
        """Probability of each class, from the mean decision values.

        {X_plain}

        {proba_returns}
            Here ``D`` is the mean of the members' decision values.
        """
        check_is_fitted(self)
        if not hasattr(self, "proba_scale_"):
            self._calibrate(None, None)
        return decision_proba(self.decision_function(X), self.proba_scale_)

    @fill_doc(X_plain=DOC["X_plain"], log_proba_returns=DOC["log_proba_returns"])
    def predict_log_proba(self, X: Sequences) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`, computed without underflow.

        {X_plain}

        {log_proba_returns}
        """
        check_is_fitted(self)
        if not hasattr(self, "proba_scale_"):
            self._calibrate(None, None)
        return decision_log_proba(self.decision_function(X), self.proba_scale_)

    @fill_doc(X_plain=DOC["X_plain"])
    def predict(self, X: Sequences) -> np.ndarray:
        """Class of the largest mean decision value.

        {X_plain}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels.
        """
        D = self.decision_function(X)
        return decision_to_labels(self.classes_, D[:, None] if D.ndim == 1 else D)


class AveragedRegressor(MultiOutputMixin, RegressorMixin, _Averaged):
    """Regressor whose prediction is the mean of fitted regressors' ones.

    What :class:`rntk.RNTKRegressorCV` refits with ``n_average > 1``: the best candidate
    of each of the best kernel settings, each refitted on all training series. The
    leave-one-out predictions of the average are the average of the members' ones, so
    the search scores it exactly before refitting it.

    Parameters
    ----------
    estimators : list of fitted regressors
        Members with ``predict``. A member listed more than once counts as many times
        in the mean, and is evaluated once.

    Attributes
    ----------
    estimators_ : list of fitted regressors
        The members.
    """

    _member_method = "predict"

    def _check_members(self):
        pass

    @fill_doc(X_plain=DOC["X_plain"])
    def predict(self, X: Sequences) -> np.ndarray:
        """Mean of the members' predictions.

        {X_plain}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions.
        """
        check_is_fitted(self)
        return _mean_once(self.estimators_, "predict", X)
