"""scikit-learn estimators on the RNTK: SVC / kernel ridge, and fast model selection.

``_PrecomputedSequenceEstimator`` is the shared base of every "sklearn model on a
precomputed sequence kernel": it validates the sequence inputs, optionally scales
each series to unit norm, computes the Gram with ``_gram`` and fits a
``kernel="precomputed"`` model made by ``_make_inner``. ``_BaseKernelSearchCV``
turns such an estimator into a grid search that computes each kernel's Gram once.
"""

import numbers
import time
import warnings
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from scipy import linalg
from scipy.stats import rankdata
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
    _fit_context,
    clone,
)
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import check_scoring, r2_score
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)
from threadpoolctl import threadpool_limits

from ._inputs import as_sequences
from ._paper import PAPER_ALPHA, PAPER_C, PAPER_GRID
from ._rntk import rntk_kernel

try:  # libsvm entry point used by SVC itself: same solver, without SVC's per-call overhead
    from sklearn.svm import _libsvm
except ImportError:  # pragma: no cover - depends on the scikit-learn build
    _libsvm = None

__all__ = ["RNTKClassifier", "RNTKRegressor", "RNTKClassifierCV", "RNTKRegressorCV"]

_RNTK_KERNEL_PARAMS = ("n_layers", "sigma_w", "sigma_u", "sigma_b", "sigma_h", "sigma_v",
                       "activation", "kind")

_nonneg_or_array = [Interval(numbers.Real, 0, None, closed="left"), "array-like"]
_RNTK_CONSTRAINTS = {
    "n_layers": [Interval(numbers.Integral, 1, None, closed="left")],
    "sigma_w": _nonneg_or_array,
    "sigma_u": _nonneg_or_array,
    "sigma_b": _nonneg_or_array,
    "sigma_h": [Interval(numbers.Real, 0, None, closed="left")],
    "sigma_v": [Interval(numbers.Real, 0, None, closed="left")],
    "activation": [StrOptions({"relu", "erf", "linear"})],
    "kind": [StrOptions({"ntk", "nngp"})],
    "normalize": ["boolean"],
    "n_jobs": [numbers.Integral, None],
}


def _unit_norm(seqs):
    """Scale each series to unit Euclidean norm (over all its steps and channels)."""
    out = []
    for s in seqs:
        norm = np.linalg.norm(s)
        out.append(s / norm if norm > 0 else s)
    return out


def _is_2d_array(X):
    if isinstance(X, (list, tuple)):
        return False
    if sp.issparse(X):
        return True
    return hasattr(X, "shape") and len(X.shape) == 2


def _check_not_1d(X):
    if not isinstance(X, (list, tuple)) and hasattr(X, "shape") and len(X.shape) == 1:
        if not (isinstance(X, np.ndarray) and X.dtype == object):
            raise ValueError(
                "Expected a 2-D array (n_samples, n_timesteps), a 3-D array (n_samples, "
                "n_timesteps, n_channels) or a list of series; got a 1-D array. Reshape "
                "your data: X[None, :] holds a single series."
            )


def _as_list(X):
    if isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1:
        return list(X)
    return X


def _validate_fit_data(est, X, y, regressor, check_targets=None):
    """Validate training series and targets, setting ``n_channels_in_`` on ``est``.

    For a 2-D array input, ``validate_data`` also sets ``n_features_in_`` (and
    ``feature_names_in_``); for other layouts, stale ones are removed.
    ``check_targets(y, xs)``, if given, replaces the built-in checks of ``y`` (an
    estimator with its own target layout); it gets ``y`` once its length matches.
    """
    X = _as_list(X)
    if y is None:
        raise ValueError(
            f"This {type(est).__name__} estimator requires y to be passed, but the "
            "target y is None."
        )
    _check_not_1d(X)
    if _is_2d_array(X):
        if check_targets is None:
            X, y = validate_data(est, X, y, dtype=np.float64, ensure_all_finite="allow-nan",
                                 multi_output=regressor, y_numeric=regressor)
        else:
            X = validate_data(est, X, dtype=np.float64, ensure_all_finite="allow-nan")
    else:
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(est, attr):
                delattr(est, attr)
    xs = as_sequences(X, "X")
    if check_targets is not None:
        check_consistent_length(xs, y)
        y = check_targets(y, xs)
    else:
        if regressor:
            y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
            if y.ndim not in (1, 2):
                raise ValueError(f"y must be 1-D or 2-D, got {y.ndim} dimensions")
        else:
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
        check_consistent_length(xs, y)
    est.n_channels_in_ = xs[0].shape[1]
    return xs, y


class _PrecomputedSequenceEstimator(BaseEstimator):
    """Base of the estimators that fit a precomputed-kernel model on sequences.

    Subclasses define ``_gram(xs, ys=None)`` (lists of ``(T_i, m)`` arrays to a Gram
    matrix), ``_make_inner()`` (an unfitted scikit-learn estimator with
    ``kernel="precomputed"``) and, if they have a ``normalize`` parameter, get the
    unit-norm scaling for free. ``_fit_gram`` fits from an already computed Gram
    (used by the CV estimators); ``_predict_columns`` may restrict the training
    samples a prediction needs (the support vectors of an SVC). An estimator with
    its own target layout passes ``check_targets`` to ``_validate_fit``, and one
    whose Gram is not ``(n, n)`` adapts it in an override of ``_fit_gram``.
    """

    _is_regressor = False

    # -- input validation ------------------------------------------------------------
    def _validate_fit(self, X, y, check_targets=None):
        """Validate training data: ``(series, y)``, series not yet scaled."""
        return _validate_fit_data(self, X, y, self._is_regressor, check_targets)

    def _validate_predict(self, X):
        check_is_fitted(self)
        X = _as_list(X)
        _check_not_1d(X)
        if _is_2d_array(X):
            # the number of time steps may differ from fit: only names and values are checked
            X = validate_data(self, X, reset=False, ensure_2d=False, dtype=np.float64,
                              ensure_all_finite="allow-nan")
        xs = as_sequences(X, "X")
        m = xs[0].shape[1]
        if m != self.n_channels_in_:
            raise ValueError(
                f"X has {m} channel(s) per time step, but {type(self).__name__} was "
                f"fitted on series with {self.n_channels_in_} channel(s)"
            )
        return self._prepare(xs)

    def _prepare(self, xs):
        return _unit_norm(xs) if getattr(self, "normalize", False) else xs

    # -- fitting and prediction ------------------------------------------------------
    def _fit_gram(self, xs, K, y, sample_weight=None):
        """Fit the inner model on the Gram ``K`` of the prepared sequences ``xs``."""
        inner = self._make_inner()
        if sample_weight is None:
            inner.fit(K, y)
        else:
            inner.fit(K, y, sample_weight=sample_weight)
        self.estimator_ = inner
        self.X_fit_ = list(xs)
        self._after_fit()
        return self

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

    def _fit(self, X, y, sample_weight=None):
        xs, y = self._validate_fit(X, y)
        xs = self._prepare(xs)
        return self._fit_gram(xs, self._gram(xs), y, sample_weight)


class _RNTKKernelMixin:
    """The RNTK as the kernel of a ``_PrecomputedSequenceEstimator``."""

    def _kernel_params(self):
        return {name: getattr(self, name) for name in _RNTK_KERNEL_PARAMS}

    def _gram(self, xs, ys=None):
        return rntk_kernel(xs, ys, n_jobs=self.n_jobs, **self._kernel_params())


_KERNEL_DOC = """n_layers : int, default=1
        Number of recurrent layers.
    sigma_w : float or array-like of shape (n_layers,), default=sqrt(2)
        Recurrent weight scale.
    sigma_u : float or array-like of shape (n_layers,), default=1.0
        Input weight scale.
    sigma_b : float or array-like of shape (n_layers,), default=0.0
        Bias scale.
    sigma_h : float, default=0.0
        Standard deviation of the initial hidden state.
    sigma_v : float, default=1.0
        Output weight scale.
    activation : {"relu", "erf", "linear"}, default="relu"
        Nonlinearity.
    kind : {"ntk", "nngp"}, default="ntk"
        The tangent kernel or the NNGP kernel."""


class RNTKClassifier(_RNTKKernelMixin, ClassifierMixin, _PrecomputedSequenceEstimator):
    """Support vector classifier on the Recurrent Neural Tangent Kernel.

    An :class:`~sklearn.svm.SVC` on the precomputed RNTK Gram of the training
    series (:func:`rntk.rntk_kernel`), as in the RNTK paper's UCR experiments.
    Series may have different lengths; multi-class is one-vs-one, as in SVC.

    Parameters
    ----------
    {kernel_doc}
    C : float, default=1.0
        Regularisation of the SVC (inverse strength), > 0.
    class_weight : dict or "balanced", default=None
        Class weights, as in :class:`~sklearn.svm.SVC`.
    normalize : bool, default=True
        Scale each series to unit Euclidean norm (over all its steps and channels)
        before the kernel, as the paper does.
    n_jobs : int, default=None
        Numba threads for the kernel (``None``: current setting, ``-1``: all).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    estimator_ : sklearn.svm.SVC
        The fitted SVC on the precomputed kernel.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training set.
    X_fit_ : list of ndarray of shape (T_i, n_channels)
        Training series (after scaling), needed to compute the test kernel.
    n_channels_in_ : int
        Channels per time step seen in fit.
    n_features_in_ : int
        Number of time steps, only when fit on a 2-D array.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, only when fit on a DataFrame with string column names.

    See Also
    --------
    RNTKClassifierCV : The same with the paper's cross-validated model selection.
    rntk.RNTK : The kernel as a scikit-learn kernel object.

    Notes
    -----
    There is no ``probability`` option (deprecated in SVC): for probabilities, wrap
    the classifier in :class:`~sklearn.calibration.CalibratedClassifierCV`.
    Predictions only need the kernel against the support vectors, so only those
    columns are computed. Series given as a 2-D array at predict time may have
    another number of time steps than in fit.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import RNTKClassifier
    >>> rng = np.random.default_rng(0)
    >>> t = np.linspace(0, 1, 20)
    >>> X = np.r_[np.sin(6 * t) + 0.1 * rng.normal(size=(10, 20)),
    ...           np.cos(6 * t) + 0.1 * rng.normal(size=(10, 20))]
    >>> y = np.repeat([0, 1], 10)
    >>> clf = RNTKClassifier(C=10).fit(X, y)
    >>> clf.score(X, y)
    1.0
    >>> clf.predict([np.sin(6 * t[:15])])  # a shorter series
    array([0])
    """

    _parameter_constraints = {
        **_RNTK_CONSTRAINTS,
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(self, *, n_layers=1, sigma_w=2**0.5, sigma_u=1.0, sigma_b=0.0, sigma_h=0.0,
                 sigma_v=1.0, activation="relu", kind="ntk", C=1.0, class_weight=None,
                 normalize=True, n_jobs=None):
        self.n_layers = n_layers
        self.sigma_w = sigma_w
        self.sigma_u = sigma_u
        self.sigma_b = sigma_b
        self.sigma_h = sigma_h
        self.sigma_v = sigma_v
        self.activation = activation
        self.kind = kind
        self.C = C
        self.class_weight = class_weight
        self.normalize = normalize
        self.n_jobs = n_jobs

    def _make_inner(self):
        return SVC(kernel="precomputed", C=self.C, class_weight=self.class_weight)

    def _after_fit(self):
        self.classes_ = self.estimator_.classes_
        self.support_ = self.estimator_.support_

    def _predict_columns(self):
        return self.support_

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the SVC on the RNTK Gram of the training series.

        Parameters
        ----------
        X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
            Training series (2-D univariate, 3-D time-major, or a list of ``(T_i,)``
            / ``(T_i, n_channels)`` arrays; trailing NaN steps are padding).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : RNTKClassifier
            The fitted classifier.
        """
        return self._fit(X, y)

    def decision_function(self, X):
        """Evaluate the SVC decision function on series.

        Parameters
        ----------
        X : array-like or list of arrays
            Series, in any layout accepted by :meth:`fit`.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As :meth:`sklearn.svm.SVC.decision_function` (positive for
            ``classes_[1]`` in the binary case).
        """
        K = self._test_gram(X)
        return self.estimator_.decision_function(K)

    def predict(self, X):
        """Predict class labels of series.

        Parameters
        ----------
        X : array-like or list of arrays
            Series, in any layout accepted by :meth:`fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        K = self._test_gram(X)
        return self.estimator_.predict(K)


RNTKClassifier.__doc__ = RNTKClassifier.__doc__.replace("{kernel_doc}", _KERNEL_DOC)


class RNTKRegressor(_RNTKKernelMixin, MultiOutputMixin, RegressorMixin,
                    _PrecomputedSequenceEstimator):
    """Kernel ridge regression on the Recurrent Neural Tangent Kernel.

    A :class:`~sklearn.kernel_ridge.KernelRidge` on the precomputed RNTK Gram:
    the prediction of an infinitely wide RNN trained to convergence with a ridge
    term ``alpha``. Single and multi-output; series may have different lengths.

    Parameters
    ----------
    {kernel_doc}
    alpha : float, default=1.0
        Ridge regularisation, >= 0.
    normalize : bool, default=False
        Scale each series to unit Euclidean norm before the kernel. Off by default
        for regression, where the amplitude usually matters.
    n_jobs : int, default=None
        Numba threads for the kernel (``None``: current setting, ``-1``: all).

    Attributes
    ----------
    estimator_ : sklearn.kernel_ridge.KernelRidge
        The fitted ridge model on the precomputed kernel.
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Its dual coefficients.
    X_fit_ : list of ndarray of shape (T_i, n_channels)
        Training series (after scaling).
    n_channels_in_ : int
        Channels per time step seen in fit.
    n_features_in_ : int
        Number of time steps, only when fit on a 2-D array.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, only when fit on a DataFrame with string column names.

    See Also
    --------
    RNTKRegressorCV : The same with cross-validated kernel and ridge selection.
    rntk.RNTK : The kernel object, for Gaussian-process regression.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import RNTKRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = [rng.normal(size=t) for t in (6, 9, 7, 8, 10, 5)]
    >>> y = np.array([x[-1] for x in X])
    >>> reg = RNTKRegressor(alpha=1e-3).fit(X, y)
    >>> reg.predict(X).shape
    (6,)
    """

    _is_regressor = True
    _parameter_constraints = {
        **_RNTK_CONSTRAINTS,
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, *, n_layers=1, sigma_w=2**0.5, sigma_u=1.0, sigma_b=0.0, sigma_h=0.0,
                 sigma_v=1.0, activation="relu", kind="ntk", alpha=1.0, normalize=False,
                 n_jobs=None):
        self.n_layers = n_layers
        self.sigma_w = sigma_w
        self.sigma_u = sigma_u
        self.sigma_b = sigma_b
        self.sigma_h = sigma_h
        self.sigma_v = sigma_v
        self.activation = activation
        self.kind = kind
        self.alpha = alpha
        self.normalize = normalize
        self.n_jobs = n_jobs

    def _make_inner(self):
        return KernelRidge(alpha=self.alpha, kernel="precomputed")

    def _after_fit(self):
        self.dual_coef_ = self.estimator_.dual_coef_

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit kernel ridge regression on the RNTK Gram of the training series.

        Parameters
        ----------
        X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
            Training series (2-D univariate, 3-D time-major, or a list of ``(T_i,)``
            / ``(T_i, n_channels)`` arrays; trailing NaN steps are padding).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets.

        Returns
        -------
        self : RNTKRegressor
            The fitted regressor.
        """
        return self._fit(X, y)

    def predict(self, X):
        """Predict targets of series.

        Parameters
        ----------
        X : array-like or list of arrays
            Series, in any layout accepted by :meth:`fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions.
        """
        K = self._test_gram(X)
        return self.estimator_.predict(K)


RNTKRegressor.__doc__ = RNTKRegressor.__doc__.replace("{kernel_doc}", _KERNEL_DOC)


# ---------------------------------------------------------------------------------------
# fast fold scores on slices of one Gram
# ---------------------------------------------------------------------------------------
# libsvm's own tools stop after 10^7 iterations; without a cap a nearly constant Gram with a
# large offset can make the solver cycle for ever inside a grid search
_SVM_MAX_ITER = 10_000_000


class _FastSVC:
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
             max_iter=_SVM_MAX_ITER):
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
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
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


def _kernel_ridge_score(K_train, y_train, K_test, y_test, alpha):
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


def _freeze(value):
    """Hashable stand-in of a parameter value (grouping candidates by kernel)."""
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        return ("array", tuple(np.asarray(value, dtype=float).ravel().tolist()))
    return value


class _BaseKernelSearchCV(BaseEstimator):
    """Grid search over a precomputed-kernel estimator, one Gram per kernel setting.

    Subclasses set ``_estimator_class`` (a ``_PrecomputedSequenceEstimator``),
    ``_kernel_keys`` (its parameters that change the Gram) and ``_default_grid()``.
    """

    _estimator_class = None
    _kernel_keys = ()
    _search_constraints = {
        "param_grid": [dict, list, None],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "refit": ["boolean"],
        "verbose": ["verbose"],
        "error_score": [StrOptions({"raise"}), numbers.Real],
    }

    def _base_estimator(self):
        names = self._estimator_class._get_param_names()
        return self._estimator_class(**{k: getattr(self, k) for k in names})

    def _candidates(self, base):
        grid = self._default_grid() if self.param_grid is None else self.param_grid
        candidates = list(ParameterGrid(grid))
        if not candidates:
            raise ValueError("param_grid gives no candidate")
        valid = set(base.get_params())
        for c in candidates:
            unknown = set(c) - valid
            if unknown:
                raise ValueError(
                    f"param_grid names unknown parameter(s) {sorted(unknown)} of "
                    f"{type(base).__name__}; valid ones: {sorted(valid)}"
                )
        return candidates

    def _fold_score(self, est, K, y, train, test, scorer):
        K_train = K[np.ix_(train, train)]
        K_test = K[np.ix_(test, train)]
        y_train, y_test = y[train], y[test]
        if scorer is None:
            return self._fast_score(est, K_train, y_train, K_test, y_test)
        inner = est._make_inner().fit(K_train, y_train)
        return float(scorer(inner, K_test, y_test))

    def _search(self, X, y, groups):
        base = self._base_estimator()
        candidates = self._candidates(base)
        raw, y = _validate_fit_data(self, X, y, base._is_regressor)
        cv = check_cv(self.cv, y, classifier=base._is_regressor is False)
        splits = list(cv.split(np.zeros((len(raw), 1)), y, groups))
        n_splits = len(splits)
        scorer = None if self.scoring is None else check_scoring(base, scoring=self.scoring)

        # group candidates by kernel setting, in order of first appearance
        groups_by_kernel = OrderedDict()
        for i, c in enumerate(candidates):
            params = {**base.get_params(), **c}
            key = tuple(_freeze(params[k]) for k in self._kernel_keys)
            groups_by_kernel.setdefault(key, []).append(i)
        n_settings = len(groups_by_kernel)
        n_cand = len(candidates)
        if self.verbose > 0:
            print(f"[{type(self).__name__}] Fitting {n_splits} folds for each of {n_cand} "
                  f"candidates ({n_settings} kernel settings), totalling "
                  f"{n_cand * n_splits} fits", flush=True)

        scores = np.full((n_cand, n_splits), np.nan)
        kernel_time = np.zeros(n_cand)
        fit_time = np.zeros(n_cand)
        failures = []
        best_i, best_mean, best_K = None, -np.inf, None
        start = time.perf_counter()
        report_every = max(1, n_settings // 10) if self.verbose == 1 else 1
        # the fold fits are small: one BLAS thread is faster and does not oversubscribe
        blas = threadpool_limits(1, user_api="blas") if len(raw) < 2000 else nullcontext()
        # libsvm and the small solves release the GIL: the fold fits run on n_jobs threads
        n_workers = effective_n_jobs(self.n_jobs) if scorer is None else 1
        pool = ThreadPoolExecutor(n_workers) if n_workers > 1 else None
        with blas, (pool if pool is not None else nullcontext()):
            for s, idxs in enumerate(groups_by_kernel.values()):
                est = clone(base).set_params(**candidates[idxs[0]])
                t0 = time.perf_counter()
                xs_k = est._prepare(raw)
                K = est._gram(xs_k)
                t_kernel = time.perf_counter() - t0
                t1 = time.perf_counter()
                tasks = [(i, f) for i in idxs for f in range(n_splits)]
                ests = {i: clone(base).set_params(**candidates[i]) for i in idxs}

                def fold(task, K=K):
                    i, f = task
                    train, test = splits[f]
                    try:
                        return self._fold_score(ests[i], K, y, train, test, scorer), None
                    except Exception as exc:
                        if self.error_score == "raise":
                            raise
                        return self.error_score, f"{type(exc).__name__}: {exc}"

                results = pool.map(fold, tasks) if pool is not None else map(fold, tasks)
                for (i, f), (score, failure) in zip(tasks, results):
                    scores[i, f] = score
                    if failure is not None:
                        failures.append(failure)
                fit_time[idxs] = (time.perf_counter() - t1) / len(tasks)
                kernel_time[idxs] = t_kernel
                for i in idxs:
                    mean = np.mean(scores[i])
                    m = -np.inf if np.isnan(mean) else mean
                    if best_i is None or m > best_mean or (m == best_mean and i < best_i):
                        best_i, best_mean, best_K = i, m, (xs_k, K)
                if self.verbose > 0 and ((s + 1) % report_every == 0 or s + 1 == n_settings):
                    elapsed = time.perf_counter() - start
                    eta = elapsed / (s + 1) * (n_settings - s - 1)
                    print(f"[{type(self).__name__}] kernel settings {s + 1}/{n_settings} "
                          f"({100 * (s + 1) / n_settings:3.0f}%) | elapsed {elapsed:6.1f}s | "
                          f"ETA {eta:6.1f}s | best mean CV score {best_mean:.4f}", flush=True)
        if failures:
            warnings.warn(
                f"\n{len(failures)} fits failed out of a total of {n_cand * n_splits}.\n"
                f"The score on these train-test partitions for these parameters will be set "
                f"to {self.error_score}.\nFirst error: {failures[0]}",
                FitFailedWarning,
            )
        self._store_results(candidates, scores, kernel_time, fit_time)
        self.n_splits_ = n_splits
        if self.refit:
            if self.best_index_ != best_i:  # pragma: no cover - both follow grid order
                best_K = None
            est = clone(base).set_params(**self.best_params_)
            t0 = time.perf_counter()
            if best_K is None:
                xs_b = est._prepare(raw)
                best_K = (xs_b, est._gram(xs_b))
            est._fit_gram(best_K[0], best_K[1], y)
            for attr in ("n_channels_in_", "n_features_in_", "feature_names_in_"):
                if hasattr(self, attr):
                    setattr(est, attr, getattr(self, attr))
            self.best_estimator_ = est
            self.refit_time_ = time.perf_counter() - t0
        return self

    def _store_results(self, candidates, scores, kernel_time, fit_time):
        n_cand, n_splits = scores.shape
        results = {}
        names = sorted({k for c in candidates for k in c})
        for name in names:
            col = np.ma.MaskedArray(np.empty(n_cand, dtype=object), mask=True)
            for i, c in enumerate(candidates):
                if name in c:
                    col[i] = c[name]
            results[f"param_{name}"] = col
        results["params"] = candidates
        for f in range(n_splits):
            results[f"split{f}_test_score"] = scores[:, f]
        means = np.average(scores, axis=1)
        stds = np.sqrt(np.average((scores - means[:, None]) ** 2, axis=1))
        if np.isnan(means).all():
            ranks = np.ones(n_cand, dtype=np.int32)
        else:
            filled = np.where(np.isnan(means), np.nanmin(means) - 1, means)
            ranks = rankdata(-filled, method="min").astype(np.int32)
        results["mean_test_score"] = means
        results["std_test_score"] = stds
        results["rank_test_score"] = ranks
        results["mean_fit_time"] = fit_time
        results["kernel_time"] = kernel_time
        self.cv_results_ = results
        self.best_index_ = int(ranks.argmin())
        self.best_score_ = float(means[self.best_index_])
        self.best_params_ = candidates[self.best_index_]

    # -- delegation to the refitted estimator ------------------------------------------
    def _check_refit(self):
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError(
                f"This {type(self).__name__} was fitted with refit=False: there is no "
                "best_estimator_ to predict with"
            )

    def predict(self, X):
        """Predict with the refitted best estimator.

        Parameters
        ----------
        X : array-like or list of arrays
            Series, in any layout accepted by :meth:`fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions of ``best_estimator_``.
        """
        self._check_refit()
        return self.best_estimator_.predict(X)


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


class RNTKClassifierCV(ClassifierMixin, _BaseKernelSearchCV):
    """RNTK support vector classifier with fast cross-validated model selection.

    Equivalent to ``GridSearchCV(RNTKClassifier(), param_grid, cv=cv)`` (same
    folds, same scores, same selected parameters, ties broken by grid order) but
    the RNTK Gram of the whole training set is computed once per kernel setting,
    and every fold and every ``C`` is evaluated on slices of it. The default grid
    and protocol are the RNTK paper's (Appendix A.1): single-layer ReLU RNTK,
    ``sigma_w`` in 15 values around ``sqrt(2)``, ``sigma_u = 1``, 12 ``sigma_b``,
    5 ``sigma_h``, ``C`` in ``{{0.01, 0.1, 1, 10, 100}}``, unit-norm series,
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
    >>> grid = {{"sigma_b": [0.0, 0.5], "C": [0.1, 10.0]}}
    >>> clf = RNTKClassifierCV(param_grid=grid, cv=3).fit(X, y)
    >>> sorted(clf.best_params_)
    ['C', 'sigma_b']
    >>> len(clf.cv_results_["mean_test_score"])
    4
    """

    _estimator_class = RNTKClassifier
    _kernel_keys = _RNTK_KERNEL_PARAMS + ("normalize",)
    _parameter_constraints = {
        **RNTKClassifier._parameter_constraints, **_BaseKernelSearchCV._search_constraints,
    }

    def __init__(self, param_grid=None, *, cv=10, scoring=None, n_layers=1, sigma_w=2**0.5,
                 sigma_u=1.0, sigma_b=0.0, sigma_h=0.0, sigma_v=1.0, activation="relu",
                 kind="ntk", C=1.0, class_weight=None, normalize=True, refit=True,
                 n_jobs=None, verbose=0, error_score=np.nan):
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring
        self.n_layers = n_layers
        self.sigma_w = sigma_w
        self.sigma_u = sigma_u
        self.sigma_b = sigma_b
        self.sigma_h = sigma_h
        self.sigma_v = sigma_v
        self.activation = activation
        self.kind = kind
        self.C = C
        self.class_weight = class_weight
        self.normalize = normalize
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.error_score = error_score

    @staticmethod
    def _default_grid():
        return {**PAPER_GRID, "C": list(PAPER_C)}

    @staticmethod
    def _fast_score(est, K_train, y_train, K_test, y_test):
        return _FastSVC.score(K_train, y_train, K_test, y_test, est.C, est.class_weight)

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


RNTKClassifierCV.__doc__ = RNTKClassifierCV.__doc__.replace("{search_doc}", _SEARCH_DOC.format(
    default="900 kernel settings x 5 values of C", cv=10, folds="StratifiedKFold",
    score="accuracy", kernel_doc=_KERNEL_DOC)).replace("{tail}", _SEARCH_DOC_TAIL.format(
        estimator="RNTKClassifier")).replace("{{", "{").replace("}}", "}")


class RNTKRegressorCV(MultiOutputMixin, RegressorMixin, _BaseKernelSearchCV):
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
    >>> grid = {{"sigma_b": [0.0, 0.5], "alpha": [0.01, 1.0]}}
    >>> reg = RNTKRegressorCV(param_grid=grid, cv=4).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    _estimator_class = RNTKRegressor
    _kernel_keys = _RNTK_KERNEL_PARAMS + ("normalize",)
    _parameter_constraints = {
        **RNTKRegressor._parameter_constraints, **_BaseKernelSearchCV._search_constraints,
    }

    def __init__(self, param_grid=None, *, cv=5, scoring=None, n_layers=1, sigma_w=2**0.5,
                 sigma_u=1.0, sigma_b=0.0, sigma_h=0.0, sigma_v=1.0, activation="relu",
                 kind="ntk", alpha=1.0, normalize=False, refit=True, n_jobs=None, verbose=0,
                 error_score=np.nan):
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring
        self.n_layers = n_layers
        self.sigma_w = sigma_w
        self.sigma_u = sigma_u
        self.sigma_b = sigma_b
        self.sigma_h = sigma_h
        self.sigma_v = sigma_v
        self.activation = activation
        self.kind = kind
        self.alpha = alpha
        self.normalize = normalize
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.error_score = error_score

    @staticmethod
    def _default_grid():
        return {**PAPER_GRID, "alpha": list(PAPER_ALPHA)}

    @staticmethod
    def _fast_score(est, K_train, y_train, K_test, y_test):
        return _kernel_ridge_score(K_train, y_train, K_test, y_test, est.alpha)

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


RNTKRegressorCV.__doc__ = RNTKRegressorCV.__doc__.replace("{search_doc}", _SEARCH_DOC.format(
    default="900 kernel settings x 20 values of alpha", cv=5, folds="KFold", score="R^2",
    kernel_doc=_KERNEL_DOC)).replace("{tail}", _SEARCH_DOC_TAIL.format(
        estimator="RNTKRegressor")).replace("{{", "{").replace("}}", "}")
