"""The average of the decision functions of fitted classifiers (the best of a search)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._utils import DOC, fill_doc
from ._loo import decision_to_labels

if TYPE_CHECKING:  # pragma: no cover - annotations only

    from .._utils._typing import Sequences

__all__ = ["AveragedClassifier"]


class AveragedClassifier(ClassifierMixin, BaseEstimator):
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
    """

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
        self : AveragedClassifier
            The ensemble.
        """
        if not self.estimators:
            raise ValueError("estimators must be a non-empty list of fitted classifiers")
        classes = [np.asarray(e.classes_) for e in self.estimators]
        if any(c.shape != classes[0].shape or np.any(c != classes[0]) for c in classes):
            raise ValueError("the estimators must have the same classes_")
        self.estimators_ = list(self.estimators)
        self.classes_ = classes[0]
        return self

    @fill_doc(decision=DOC["decision_function"])
    def decision_function(self, X: Sequences) -> np.ndarray:
        """Mean of the members' decision functions.

        {decision}
            Positive for ``classes_[1]`` in the binary case.
        """
        check_is_fitted(self)
        done = {}  # a member listed more than once is evaluated once
        for e in self.estimators_:
            if id(e) not in done:
                done[id(e)] = e.decision_function(X)
        return np.mean([done[id(e)] for e in self.estimators_], axis=0)

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
