"""What the search engine asks of the estimator it searches: the protocol, declared.

:class:`SearchableEstimator` is the abstract base of the precomputed-kernel sequence
estimators (``rntk._estimators._base.PrecomputedSequenceEstimator``): the search
prepares the series and computes the Gram of a candidate through it, scores the inner
model on slices of that Gram, and refits the best candidates from their Grams, so that
no Gram is computed twice.
"""

from abc import ABC, abstractmethod

__all__ = ["SearchableEstimator"]


class SearchableEstimator(ABC):
    """The estimator protocol of the search (an abstract base class).

    A search clones the estimator, sets a candidate's parameters on it
    (``set_params``) and calls the methods below; ``_is_regressor`` says which scores,
    folds and refit policies apply. Classifiers also calibrate their probabilities
    (``_calibrate``) on decision values the search already has.
    """

    #: Whether the estimator is a regressor (else a classifier).
    _is_regressor = False

    @abstractmethod
    def _fit_preparation(self, xs):
        """Fit what the preparations learn from the training series ``xs``."""

    @abstractmethod
    def _prepare(self, xs, fitted=False):
        """Return the series ``xs`` as the kernel reads them (fitting the preparations)."""

    @abstractmethod
    def _kernel_params(self):
        """Return the kernel's hyperparameters, by name (what changes the Gram)."""

    @abstractmethod
    def _gram(self, xs, ys=None):
        """Return the Gram of prepared series (``ys`` None: the training Gram)."""

    @abstractmethod
    def _make_inner(self):
        """Return the unfitted model on the precomputed Gram (``kernel="precomputed"``)."""

    @abstractmethod
    def _fit_gram(self, xs, K, y, sample_weight=None, loo=None):
        """Fit the inner model on the Gram ``K`` of the prepared ``xs``; return self.

        ``loo``: out-of-sample decision values of the training series the search has
        already (a classifier calibrates its probabilities on them), or None.
        """

    @abstractmethod
    def _after_fit(self):
        """Set the fitted attributes read from the inner model (``classes_``, ...)."""
