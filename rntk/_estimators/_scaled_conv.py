"""Kernel ridge regression with the linear-RNN NTK (the scaled convolution kernel)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import r2_score
from sklearn.utils import check_array
from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels import scaled_conv_kernel
from .._representations import MISSING_CONSTRAINT
from .._utils import DOC, fill_doc
from ._base import PrecomputedSequenceEstimator

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from typing import Self

    from .._utils._typing import ArrayLike, Sequences

__all__ = ["ScaledConvNTKRegressor"]


def _valid_steps(lengths, t_max):
    """Mask of the ``(series, step)`` pairs inside each series, flattened series-major."""
    return (np.arange(t_max)[None, :] < np.asarray(lengths)[:, None]).ravel()


@fill_doc(missing=DOC["missing"])
class ScaledConvNTKRegressor(RegressorMixin, PrecomputedSequenceEstimator):
    r"""Kernel ridge regression with the NTK of an infinitely wide linear RNN.

    Fits what gradient descent on a wide linear RNN (or on the equivalent scaled
    convolution ``y_t = sum_j sqrt(rho_j) theta_j x_{t-j}``) converges to, with a
    ridge: ``f(x) = sum_i K(x, x_i) a_i``, ``(K + alpha I) a = y``, where ``K`` is
    :func:`rntk.scaled_conv_kernel` (Emami et al.). Two target layouts:

    * ``output="last"`` (sequence to one): ``y`` of shape ``(n,)`` or
      ``(n, n_targets)``, predicted from the final step of each series; series of any
      lengths, aligned at their end.
    * ``output="sequence"`` (sequence to sequence): ``y`` of shape ``(n, T)`` or
      ``(n, T, n_targets)``, one target per step, predicted causally from the steps up
      to it; series aligned at their start. For series shorter than ``T`` the targets
      past their end are ignored (they may be NaN), and predictions there are NaN.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge regularisation (``0`` gives the minimum-norm interpolant, the limit of
        gradient descent from a zero-output start).
    nu_w : float, default=0.3
        Variance of the RNN's recurrent weights; the memory of the kernel decays
        roughly as ``nu_w^j`` with the lag ``j``.
    nu_f : float, default=1.0
        Variance of the input weights.
    nu_c : float, default=1.0
        Variance of the output weights.
    rho : array-like of shape (n_taps,), default=None
        Explicit non-negative tap scales, overriding the ``nu`` parameters (all ones:
        an unscaled convolution). Needs at least as many taps as the longest lag used.
    output : {"last", "sequence"}, default="last"
        Target layout, see above.
    {missing}
    n_jobs : int, default=None
        Threads for the kernel; ``None``: the current setting (Numba's thread count,
        all cores unless changed by ``numba.set_num_threads``), ``-1``: all cores.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_train_steps,) or (n_train_steps, n_targets)
        Dual coefficients: one per training series (``"last"``) or per valid
        training step, series by series (``"sequence"``).
    X_fit_ : list of ndarray of shape (T_i, n_channels)
        The training series, as float64 arrays.
    n_channels_in_ : int
        Channels of each time step seen in ``fit``.
    n_features_in_ : int
        ``X.shape[1]`` (the number of time steps) when ``fit`` got a 2-D array.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names, when ``fit`` got a DataFrame whose columns are all strings.

    See Also
    --------
    scaled_conv_kernel : The kernel.
    rntk.nn.LinearRNN : The finite-width network whose NTK this is.

    Notes
    -----
    Series are compared without padding, so ``predict`` accepts series of other
    lengths than ``fit`` (``n_features_in_`` is recorded but not enforced), but the
    channel count must match. ``output="sequence"`` solves one system over all valid
    training steps, ``sum_i T_i`` unknowns.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import ScaledConvNTKRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 8))
    >>> y = X[:, -1] + 0.5 * X[:, -2]   # depends on the two latest steps
    >>> reg = ScaledConvNTKRegressor(alpha=1e-3).fit(X[:30], y[:30])
    >>> bool(reg.score(X[30:], y[30:]) > 0.9)
    True
    >>> Y = np.cumsum(X, axis=1) * 0.1  # a target at every step
    >>> seq = ScaledConvNTKRegressor(alpha=1e-3, nu_w=0.9, output="sequence")
    >>> seq.fit(X[:30], Y[:30]).predict(X[30:]).shape
    (10, 8)
    """

    _is_regressor = True
    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "nu_w": [Interval(Real, 0, None, closed="left")],
        "nu_f": [Interval(Real, 0, None, closed="left")],
        "nu_c": [Interval(Real, 0, None, closed="left")],
        "rho": ["array-like", None],
        "output": [StrOptions({"last", "sequence"})],
        "missing": MISSING_CONSTRAINT,
        "n_jobs": [Integral, None],
    }

    def __init__(self, alpha=1.0, *, nu_w=0.3, nu_f=1.0, nu_c=1.0, rho=None, output="last",
                 missing="raise", n_jobs=None):
        self.alpha = alpha
        self.nu_w = nu_w
        self.nu_f = nu_f
        self.nu_c = nu_c
        self.rho = rho
        self.output = output
        self.missing = missing
        self.n_jobs = n_jobs

    def _kernel_params(self):
        return {"nu_w": self.nu_w, "nu_f": self.nu_f, "nu_c": self.nu_c, "rho": self.rho}

    def _gram(self, xs, ys=None):
        return scaled_conv_kernel(xs, ys, nu_w=self.nu_w, nu_f=self.nu_f, nu_c=self.nu_c,
                                  rho=self.rho, output=self.output, n_jobs=self.n_jobs)

    def _make_inner(self):
        return KernelRidge(alpha=self.alpha, kernel="precomputed")

    def _sequence_targets(self, y, xs):
        """Targets of ``output="sequence"``: the valid steps, flattened series by series."""
        y = check_array(y, dtype=np.float64, ensure_2d=True, allow_nd=True,
                        ensure_all_finite="allow-nan", input_name="y")
        if y.ndim not in (2, 3):
            raise ValueError(
                f"with output='sequence' y must have shape (n_samples, T) or (n_samples, T, "
                f"n_targets); got {y.shape}"
            )
        lengths = [s.shape[0] for s in xs]
        t_max = max(lengths)
        if y.shape[1] != t_max:
            raise ValueError(
                f"with output='sequence' y must have one column per time step: the longest "
                f"series has {t_max} steps but y has {y.shape[1]} columns"
            )
        flat = y.reshape(y.shape[0] * t_max, -1)[_valid_steps(lengths, t_max)]
        if not np.all(np.isfinite(flat)):
            raise ValueError("y contains NaN or infinite values inside the series' lengths")
        return flat if y.ndim == 3 else flat[:, 0]

    def _validate_fit(self, X, y):
        if self.output == "last":
            return super()._validate_fit(X, y)
        return super()._validate_fit(X, y, check_targets=self._sequence_targets)

    def _fit_gram(self, xs, K, y, sample_weight=None):
        if self.output == "sequence":  # one sample per valid (series, step) pair
            lengths = [s.shape[0] for s in xs]
            t_max = K.shape[1]
            valid = _valid_steps(lengths, t_max)
            K = K.reshape(len(xs) * t_max, len(xs) * t_max)[np.ix_(valid, valid)]
            if sample_weight is not None:
                sw = np.asarray(sample_weight, dtype=np.float64)
                if sw.shape != (len(xs),):
                    raise ValueError(f"sample_weight must have shape ({len(xs)},), "
                                     f"got {sw.shape}")
                sample_weight = np.repeat(sw, lengths)
        return super()._fit_gram(xs, K, y, sample_weight)

    def _after_fit(self):
        # keep the dual coefficients only: the inner model would also hold the Gram
        self.dual_coef_ = self.estimator_.dual_coef_
        del self.estimator_

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Sequences, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit kernel ridge regression on the scaled convolution NTK.

        Parameters
        ----------
        X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
            Training series, in any layout accepted by :func:`rntk.scaled_conv_kernel`.
        y : array-like
            Targets: ``(n_samples,)`` / ``(n_samples, n_targets)`` with
            ``output="last"``; ``(n_samples, T)`` / ``(n_samples, T, n_targets)`` with
            ``output="sequence"``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each series (each of its steps with ``output="sequence"``).

        Returns
        -------
        self : ScaledConvNTKRegressor
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight)

    def predict(self, X: Sequences) -> np.ndarray:
        """Predict with the fitted kernel ridge model.

        Parameters
        ----------
        X : array-like or list of arrays
            Series of any lengths, with the channel count seen in ``fit``.

        Returns
        -------
        y_pred : ndarray
            ``(n_samples,)`` / ``(n_samples, n_targets)`` with ``output="last"``;
            ``(n_samples, T)`` / ``(n_samples, T, n_targets)`` with
            ``output="sequence"``, ``T`` the longest test series, NaN past the end of
            shorter ones.
        """
        xs = self._validate_predict(X)
        K = self._gram(xs, self.X_fit_)
        if self.output == "last":
            return K @ self.dual_coef_
        n, t_max, n_fit, t_fit = K.shape
        valid_fit = _valid_steps([s.shape[0] for s in self.X_fit_], t_fit)
        pred = K.reshape(n * t_max, n_fit * t_fit)[:, valid_fit] @ self.dual_coef_
        pred = pred.reshape((n, t_max) + self.dual_coef_.shape[1:])
        pred[~_valid_steps([s.shape[0] for s in xs], t_max).reshape(n, t_max)] = np.nan
        return pred

    def score(self, X: Sequences, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Coefficient of determination R^2 of the predictions.

        With ``output="last"`` this is :meth:`sklearn.base.RegressorMixin.score`.
        With ``output="sequence"`` all valid steps of all series are pooled into one
        sample (uniform average over the target channels), so series of different
        lengths can be scored together.

        Parameters
        ----------
        X : array-like or list of arrays
            Test series.
        y : array-like
            True targets, in the layout ``fit`` takes.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each series.

        Returns
        -------
        score : float
            R^2 of ``self.predict(X)`` against ``y``.
        """
        if self.output == "last":
            return super().score(X, y, sample_weight=sample_weight)
        xs = self._validate_predict(X)
        target = self._sequence_targets(y, xs)
        lengths = [s.shape[0] for s in xs]
        pred = self.predict(xs)
        flat = pred.reshape(len(xs) * pred.shape[1], -1)[_valid_steps(lengths, pred.shape[1])]
        if sample_weight is not None:
            sample_weight = np.repeat(np.asarray(sample_weight, dtype=np.float64), lengths)
        return r2_score(target, flat if target.ndim == 2 else flat[:, 0],
                        sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
