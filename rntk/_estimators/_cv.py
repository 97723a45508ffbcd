"""The RNTK estimators with fast cross-validated model selection."""

import numpy as np
from sklearn.base import ClassifierMixin, MultiOutputMixin, RegressorMixin, _fit_context

from .._kernels._params import RNTK_DEFAULTS as _D
from .._kernels._params import RNTK_PARAM_NAMES, RNTK_PARAMS_DOC
from .._model_selection import (
    PAPER_ALPHA,
    PAPER_C,
    PAPER_GRID,
    BaseKernelSearchCV,
    SVCFoldScorer,
    kernel_ridge_score,
)
from .._utils import fill_doc, store_init_params
from ._rntk import RNTKClassifier, RNTKRegressor

__all__ = ["RNTKClassifierCV", "RNTKRegressorCV"]


_SEARCH_DOC = """param_grid : dict or list of dict, default=None
    Grid of parameters of the underlying estimator, as in
    :class:`~sklearn.model_selection.GridSearchCV`. Parameters not in it take
    this object's values. ``None`` is the RNTK paper's grid ({default}).
cv : int, cross-validation generator or iterable, default={cv}
    Folds, as in GridSearchCV ({folds} for an integer, no shuffling).
scoring : str or callable, default=None
    ``None`` uses the estimator's ``score`` ({score}) on a fast path;
    otherwise any scikit-learn scorer, applied to the inner precomputed-kernel
    model on each fold (slower).
{kernel_doc}"""

_SEARCH_DOC_TAIL = """refit : bool, default=True
    Refit the best candidate on the whole training set (reusing its Gram).
n_jobs : int, default=None
    Numba threads for each kernel evaluation, and threads for the fold fits
    (libsvm and the ridge solves release the GIL; ``None`` means one, ``-1`` all
    cores).
verbose : int, default=0
    ``1``: progress about every 10% of the kernel settings (settings done /
    total, elapsed time, ETA, best score so far); ``2``: after every setting.
error_score : "raise" or float, default=np.nan
    Score of a failed fold fit (a warning is raised), or ``"raise"``.

Attributes
----------
cv_results_ : dict of ndarray
    As GridSearchCV's: ``params``, ``param_<name>``, ``split<k>_test_score``,
    ``mean_test_score``, ``std_test_score``, ``rank_test_score``, plus
    ``mean_fit_time`` (inner fits, per fold) and ``kernel_time`` (the Gram of
    the candidate's kernel setting, shared with the other candidates of it).
best_params_ : dict
    Parameters of the best candidate (first of the best in grid order).
best_score_ : float
    Its mean cross-validated score.
best_index_ : int
    Its index in ``cv_results_``.
best_estimator_ : {estimator}
    The best candidate refitted on all data (if ``refit``).
refit_time_ : float
    Seconds spent refitting.
n_splits_ : int
    Number of folds.
n_channels_in_ : int
    Channels per time step seen in fit.
n_features_in_ : int
    Number of time steps, only when fit on a 2-D array."""


@fill_doc(search_doc=_SEARCH_DOC.format(
    default="900 kernel settings x 5 values of C", cv=10, folds="StratifiedKFold",
    score="accuracy", kernel_doc=RNTK_PARAMS_DOC),
    tail=_SEARCH_DOC_TAIL.format(estimator="RNTKClassifier"))
class RNTKClassifierCV(ClassifierMixin, BaseKernelSearchCV):
    """RNTK support vector classifier with fast cross-validated model selection.

    Equivalent to ``GridSearchCV(RNTKClassifier(), param_grid, cv=cv)`` (same
    folds, same scores, same selected parameters, ties broken by grid order) but
    the RNTK Gram of the whole training set is computed once per kernel setting,
    and every fold and every ``C`` is evaluated on slices of it. The default grid
    and protocol are the RNTK paper's (Appendix A.1): single-layer ReLU RNTK,
    ``sigma_w`` in 15 values around ``sqrt(2)``, ``sigma_u = 1``, 12 ``sigma_b``,
    5 ``sigma_h``, ``C`` in ``{0.01, 0.1, 1, 10, 100}``, unit-norm series,
    10-fold cross-validation.

    Parameters
    ----------
    {search_doc}
    C : float, default=1.0
        SVC regularisation used when ``C`` is not in the grid.
    class_weight : dict or "balanced", default=None
        Class weights of the SVC.
    normalize : bool, default=True
        Scale each series to unit Euclidean norm (as the paper does).
    {tail}

    See Also
    --------
    RNTKClassifier : The classifier with fixed hyperparameters.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import RNTKClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> t = np.linspace(0, 1, 15)
    >>> X = np.r_[np.sin(6 * t) + 0.3 * rng.normal(size=(12, 15)),
    ...           np.cos(6 * t) + 0.3 * rng.normal(size=(12, 15))]
    >>> y = np.repeat([0, 1], 12)
    >>> grid = {"sigma_b": [0.0, 0.5], "C": [0.1, 10.0]}
    >>> clf = RNTKClassifierCV(param_grid=grid, cv=3).fit(X, y)
    >>> sorted(clf.best_params_)
    ['C', 'sigma_b']
    >>> len(clf.cv_results_["mean_test_score"])
    4
    """

    _estimator_class = RNTKClassifier
    _kernel_keys = RNTK_PARAM_NAMES + ("normalize",)
    _parameter_constraints = {
        **RNTKClassifier._parameter_constraints, **BaseKernelSearchCV._search_constraints,
    }

    def __init__(self, param_grid=None, *, cv=10, scoring=None, n_layers=_D["n_layers"],
                 sigma_w=_D["sigma_w"], sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"],
                 sigma_h=_D["sigma_h"], sigma_v=_D["sigma_v"], activation=_D["activation"],
                 kind=_D["kind"], C=1.0, class_weight=None, normalize=True, refit=True,
                 n_jobs=None, verbose=0, error_score=np.nan):
        store_init_params(self, locals())

    @staticmethod
    def _default_grid():
        return {**PAPER_GRID, "C": list(PAPER_C)}

    def _fold_scorer(self, base):
        return SVCFoldScorer(class_weight=self.class_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None):
        """Select the kernel hyperparameters and ``C`` by cross-validation, then refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
            Training series (any layout of :class:`RNTKClassifier`).
        y : array-like of shape (n_samples,)
            Class labels.
        groups : array-like of shape (n_samples,), default=None
            Group labels, for group-aware ``cv`` splitters.

        Returns
        -------
        self : RNTKClassifierCV
            The fitted search.
        """
        self._search(X, y, groups)
        if self.refit:
            self.classes_ = self.best_estimator_.classes_
        return self

    def decision_function(self, X):
        """Decision function of the refitted best classifier.

        Parameters
        ----------
        X : array-like or list of arrays
            Series.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``best_estimator_.decision_function(X)``.
        """
        self._check_refit()
        return self.best_estimator_.decision_function(X)




@fill_doc(search_doc=_SEARCH_DOC.format(
    default="900 kernel settings x 20 values of alpha", cv=5, folds="KFold", score="R^2",
    kernel_doc=RNTK_PARAMS_DOC),
    tail=_SEARCH_DOC_TAIL.format(estimator="RNTKRegressor"))
class RNTKRegressorCV(MultiOutputMixin, RegressorMixin, BaseKernelSearchCV):
    """RNTK kernel ridge regression with fast cross-validated model selection.

    Equivalent to ``GridSearchCV(RNTKRegressor(), param_grid, cv=cv)`` (same folds,
    same selected parameters; R^2 scores equal up to the last bits, since a
    test-vs-train block is read from the symmetric Gram) but the RNTK Gram of the
    whole training set is computed once per kernel setting, and every fold and every
    ``alpha`` is evaluated on slices of it. The default grid is the
    RNTK paper's kernel grid (Appendix A.1) with the ridge values of Appendix A.2,
    and ``cv=5`` as in the paper's regression experiments.

    Parameters
    ----------
    {search_doc}
    alpha : float, default=1.0
        Ridge used when ``alpha`` is not in the grid.
    normalize : bool, default=False
        Scale each series to unit Euclidean norm.
    {tail}

    See Also
    --------
    RNTKRegressor : The regressor with fixed hyperparameters.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import RNTKRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = [rng.normal(size=t) for t in rng.integers(5, 10, size=20)]
    >>> y = np.array([x[-1] + 0.5 * x[-2] for x in X])
    >>> grid = {"sigma_b": [0.0, 0.5], "alpha": [0.01, 1.0]}
    >>> reg = RNTKRegressorCV(param_grid=grid, cv=4).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    _estimator_class = RNTKRegressor
    _kernel_keys = RNTK_PARAM_NAMES + ("normalize",)
    _parameter_constraints = {
        **RNTKRegressor._parameter_constraints, **BaseKernelSearchCV._search_constraints,
    }

    def __init__(self, param_grid=None, *, cv=5, scoring=None, n_layers=_D["n_layers"],
                 sigma_w=_D["sigma_w"], sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"],
                 sigma_h=_D["sigma_h"], sigma_v=_D["sigma_v"], activation=_D["activation"],
                 kind=_D["kind"], alpha=1.0, normalize=False, refit=True, n_jobs=None, verbose=0,
                 error_score=np.nan):
        store_init_params(self, locals())

    @staticmethod
    def _default_grid():
        return {**PAPER_GRID, "alpha": list(PAPER_ALPHA)}

    def _fold_scorer(self, base):
        def score(K_train, y_train, K_test, y_test, params):
            return kernel_ridge_score(K_train, y_train, K_test, y_test, params["alpha"])

        return score

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None):
        """Select the kernel hyperparameters and ``alpha`` by cross-validation, then refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
            Training series (any layout of :class:`RNTKRegressor`).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets.
        groups : array-like of shape (n_samples,), default=None
            Group labels, for group-aware ``cv`` splitters.

        Returns
        -------
        self : RNTKRegressorCV
            The fitted search.
        """
        return self._search(X, y, groups)
