"""The RNTK estimators: SVC and kernel ridge regression on the precomputed RNTK Gram."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import ClassifierMixin, MultiOutputMixin, RegressorMixin, _fit_context
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels._params import RNTK_CONSTRAINTS, RNTK_PARAMS_DOC
from .._kernels._params import RNTK_DEFAULTS as _D
from .._kernels._shared import PRECISIONS
from .._model_selection._calibration import (
    calibrate,
    cv_decision_values,
    decision_log_proba,
    decision_proba,
)
from .._model_selection._loo import one_vs_all_targets, relative_loo_predictions
from .._representations import MISSING_CONSTRAINT, PREPARATION_CONSTRAINTS, preparation_doc
from .._utils import DOC, fill_doc
from .._utils._validation import store_init_params
from ._base import PrecomputedSequenceEstimator, RNTKKernelMixin
from ._ridge import KernelRidgeClassifier, KernelRidgeRegressor

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from typing import Self

    from .._utils._typing import ArrayLike, Sequences

__all__ = ["RNTKClassifier", "RNTKRegressor"]

_CONSTRAINTS = {
    **RNTK_CONSTRAINTS,
    **PREPARATION_CONSTRAINTS,
    "missing": MISSING_CONSTRAINT,
    "n_jobs": [numbers.Integral, None],
    "device": [StrOptions({"cpu", "cuda"})],
    "precision": [StrOptions({*PRECISIONS, "auto"})],
}


def _consistent(P, classes, labels):
    """Return the (log-)probabilities ``P`` with the predicted class the most probable.

    The SVC's votes decide its ``predict``, which its decision values can break
    otherwise in rare ties: the two probabilities are then swapped.
    """
    want = np.searchsorted(classes, labels)
    rows = np.flatnonzero(P.argmax(axis=1) != want)
    for r in rows:  # swap the two probabilities
        top = P[r].argmax()
        P[r, [top, want[r]]] = P[r, [want[r], top]]
    return P


@fill_doc(kernel_doc=RNTK_PARAMS_DOC, preparations=preparation_doc(), **DOC)
class RNTKClassifier(RNTKKernelMixin, ClassifierMixin, PrecomputedSequenceEstimator):
    """Support vector (or kernel ridge) classifier on the Recurrent Neural Tangent Kernel.

    An :class:`~sklearn.svm.SVC` on the precomputed RNTK Gram of the training
    series (:func:`rntk.rntk_kernel`), as in the RNTK paper's UCR experiments
    (multi-class one-vs-one, as in SVC); or, with ``model="ridge"``, the one-vs-all
    least-squares classifier of :class:`~sklearn.linear_model.RidgeClassifier` in the
    dual, with an unpenalised intercept (the model :class:`RNTKClassifierCV` selects
    by exact leave-one-out). Series may have different lengths.

    Parameters
    ----------
    {kernel_doc}
    model : {"svc", "ridge"}, default="svc"
        The classifier on the Gram: a C-SVM, or one-vs-all kernel ridge.
    C : float, default=1.0
        Regularisation of the SVC (inverse strength), > 0.
    class_weight : dict or "balanced", default=None
        Class weights, as in :class:`~sklearn.svm.SVC` (SVC only).
    alpha : float, default=1e-3
        Ridge of ``model="ridge"``, > 0, relative to the Gram's scale: the solve uses
        ``alpha * trace(K) / n``.
    {preparations}
    {missing}
    {n_jobs_device}
    {precision_estimator}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    estimator_ : sklearn.svm.SVC or KernelRidgeClassifier
        The fitted model on the precomputed kernel.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training set (SVC only).
    proba_scale_ : float
        The temperature of :meth:`predict_proba`, fitted on ``oos_decision_``.
    oos_decision_ : ndarray of shape (n_samples, n_targets)
        Out-of-sample decision values of the training series (one column for two
        classes): the exact leave-one-out values of the ridge, the SVC's on folds of
        its Gram; for stacking, or to calibrate otherwise.
    channel_mean_, channel_scale_ : ndarray of shape (n_channels,)
        The per-channel statistics of the training series (``normalize="dataset"``
        only).
    log_scale_ : ndarray of shape (n_channels,)
        The per-channel scale of the signed logarithm (``normalize="log"`` only).
    {fitted_series}

    See Also
    --------
    RNTKClassifierCV : The same with the paper's cross-validated model selection.
    rntk.RNTK : The kernel as a scikit-learn kernel object.

    Notes
    -----
    There is no ``probability`` option (deprecated in SVC): for probabilities, wrap
    the classifier in :class:`~sklearn.calibration.CalibratedClassifierCV`.
    Predictions of the SVC only need the kernel against the support vectors, so only
    those columns are computed. Series given as a 2-D array at predict time may have
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
        **_CONSTRAINTS,
        "model": [StrOptions({"svc", "ridge"})],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, *, n_layers=_D["n_layers"], sigma_w=_D["sigma_w"],
                 sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"],
                 sigma_v=_D["sigma_v"], activation=_D["activation"], kind=_D["kind"],
                 direction=_D["direction"], diff=_D["diff"], readout=_D["readout"],
                 readout_stride=_D["readout_stride"], readout_band=_D["readout_band"],
                 model="svc", C=1.0, class_weight=None, alpha=1e-3, normalize=True,
                 spectrum=None, quantiles=None, shapes=None,
                 octave_shapes=None, intervals=None, pool=1, missing="raise", n_jobs=None,
                 device="cpu",
                 precision="float64"):
        store_init_params(self, locals())

    def _make_inner(self):
        if self.model == "ridge":
            if self.class_weight is not None:
                raise ValueError("class_weight is supported by model='svc' only; the "
                                 "kernel ridge classifier weighs every sample alike")
            if self.C != 1.0:
                raise ValueError(f"C={self.C!r} is set, but model='ridge' has no C (its "
                                 "regularisation is alpha); leave C at 1.0, or use "
                                 "model='svc'")
            return KernelRidgeClassifier(alpha=self.alpha)
        if self.alpha != 1e-3:
            raise ValueError(f"alpha={self.alpha!r} is set, but model='svc' has no alpha "
                             "(its regularisation is C); leave alpha at 1e-3, or use "
                             "model='ridge'")
        return SVC(kernel="precomputed", C=self.C, class_weight=self.class_weight)

    def _after_fit(self):
        self.classes_ = self.estimator_.classes_
        if self.model == "svc":
            self.support_ = self.estimator_.support_
        elif hasattr(self, "support_"):
            del self.support_

    # -- probabilities ---------------------------------------------------------------
    def _calibrate_on_gram(self, K, y, loo):
        self._calibrate(self._out_of_sample_decision(K, y) if loo is None else loo, y)

    def _out_of_sample_decision(self, K, y):
        """Decision values of the training series by models that did not see them.

        The ridge classifier's exact leave-one-out values (one eigendecomposition); the
        SVC's on stratified folds of the Gram (at most 5, each class in every training
        part; the training decision values where a class has a single member).
        """
        if self.model == "ridge":
            return relative_loo_predictions(K, one_vs_all_targets(y)[1], [self.alpha])[0]
        D = cv_decision_values(self.estimator_, K, y)
        if D is None:  # a class with one series: no fold holds it out
            D = self.estimator_.decision_function(K)
        return D

    def _calibrate(self, D, y):
        return calibrate(self, D, y)

    @fill_doc(X_plain=DOC["X_plain"], proba_returns=DOC["proba_returns"])
    def predict_proba(self, X: Sequences) -> np.ndarray:
        """Probability of each class, from the decision values.

        {X_plain}

        {proba_returns}
        """
        return self._probabilities(X, decision_proba)

    @fill_doc(X_plain=DOC["X_plain"], log_proba_returns=DOC["log_proba_returns"])
    def predict_log_proba(self, X: Sequences) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`, computed without underflow.

        {X_plain}

        {log_proba_returns}
        """
        return self._probabilities(X, decision_log_proba)

    def _probabilities(self, X, transform):
        """(Log-)probabilities from one test Gram (the SVC's labels read the same one)."""
        K = self._test_gram(X)
        P = transform(self.estimator_.decision_function(K), self.proba_scale_)
        if self.model != "svc":
            return P
        return _consistent(P, self.classes_, self.estimator_.predict(K))

    def _predict_columns(self):
        return getattr(self, "support_", None)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Sequences, y: ArrayLike) -> Self:
        """Fit the SVC on the RNTK Gram of the training series.

        Parameters
        ----------
        {X_fit}
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : RNTKClassifier
            The fitted classifier.
        """
        return self._fit(X, y)

    def decision_function(self, X: Sequences) -> np.ndarray:
        """Evaluate the SVC decision function on series.

        {X_predict}

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As :meth:`sklearn.svm.SVC.decision_function` (positive for
            ``classes_[1]`` in the binary case).
        """
        K = self._test_gram(X)
        return self.estimator_.decision_function(K)




@fill_doc(kernel_doc=RNTK_PARAMS_DOC, preparations=preparation_doc(normalize=False), **DOC)
class RNTKRegressor(RNTKKernelMixin, MultiOutputMixin, RegressorMixin,
                    PrecomputedSequenceEstimator):
    """Kernel ridge regression on the Recurrent Neural Tangent Kernel.

    A :class:`~sklearn.kernel_ridge.KernelRidge` on the precomputed RNTK Gram:
    the prediction of an infinitely wide RNN trained to convergence with a ridge
    term ``alpha``. Single and multi-output; series may have different lengths.

    Parameters
    ----------
    {kernel_doc}
    model : {"kernel_ridge", "ridge"}, default="kernel_ridge"
        The regression on the Gram. ``"kernel_ridge"``: scikit-learn's
        :class:`~sklearn.kernel_ridge.KernelRidge` (no intercept, ``alpha`` on the
        Gram's scale; the RNTK paper's model). ``"ridge"``:
        :class:`rntk.model_selection.KernelRidgeRegressor`, an unpenalised intercept and
        ``alpha`` relative to the Gram's scale (``alpha * trace(K) / n``), so that a
        large ridge tends to the mean of the targets; ``alpha=inf`` is the mean.
        Predictions are clipped to the range of the training targets. The model that
        :class:`RNTKRegressorCV` selects by exact leave-one-out.
    alpha : float, default=1.0
        Ridge regularisation: ``>= 0`` with ``"kernel_ridge"``; relative, ``> 0`` or
        ``inf``, with ``"ridge"``.
    {preparations}
    {missing}
    {n_jobs_device}
    {precision_estimator}

    Attributes
    ----------
    estimator_ : sklearn.kernel_ridge.KernelRidge or KernelRidgeRegressor
        The fitted ridge model on the precomputed kernel.
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Its dual coefficients.
    channel_mean_, channel_scale_ : ndarray of shape (n_channels,)
        The per-channel statistics of the training series (``normalize="dataset"``
        only).
    log_scale_ : ndarray of shape (n_channels,)
        The per-channel scale of the signed logarithm (``normalize="log"`` only).
    {fitted_series}

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
        **_CONSTRAINTS,
        "model": [StrOptions({"kernel_ridge", "ridge"})],
        "alpha": [Interval(numbers.Real, 0, None, closed="both")],
    }

    def __init__(self, *, n_layers=_D["n_layers"], sigma_w=_D["sigma_w"],
                 sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"],
                 sigma_v=_D["sigma_v"], activation=_D["activation"], kind=_D["kind"],
                 direction=_D["direction"], diff=_D["diff"], readout=_D["readout"],
                 readout_stride=_D["readout_stride"], readout_band=_D["readout_band"],
                 model="kernel_ridge", alpha=1.0, normalize=False,
                 spectrum=None, quantiles=None, shapes=None,
                 octave_shapes=None, intervals=None, pool=1, missing="raise", n_jobs=None,
                 device="cpu",
                 precision="float64"):
        store_init_params(self, locals())

    def _make_inner(self):
        if self.model == "ridge":
            if not self.alpha > 0:
                raise ValueError(f"alpha must be > 0 (or inf) with model='ridge', got "
                                 f"{self.alpha!r}: the ridge is relative to the Gram's "
                                 "scale, and 0 would interpolate the training targets")
            return KernelRidgeRegressor(alpha=self.alpha)
        if np.isinf(self.alpha):
            raise ValueError("alpha=inf (the mean of the targets) needs model='ridge', "
                             "whose intercept is unpenalised")
        return KernelRidge(alpha=self.alpha, kernel="precomputed")

    def _after_fit(self):
        self.dual_coef_ = self.estimator_.dual_coef_

    def _predict_columns(self):
        if self.model == "ridge" and np.isinf(self.alpha):
            return np.array([], dtype=np.intp)  # the mean: no kernel to compute
        return None

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Sequences, y: ArrayLike) -> Self:
        """Fit kernel ridge regression on the RNTK Gram of the training series.

        Parameters
        ----------
        {X_fit}
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets.

        Returns
        -------
        self : RNTKRegressor
            The fitted regressor.
        """
        return self._fit(X, y)
