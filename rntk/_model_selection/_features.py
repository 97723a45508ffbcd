"""Exact leave-one-out of ridge in a feature space, for many ridges at once: the large-n path.

For many training series the exact search builds an ``n x n`` Gram per kernel setting and
decomposes it (``O(n^2)`` memory, ``O(n^3)`` time). Above a size threshold the default
classifier search maps the series to ``m`` Nystroem features instead
(:class:`~rntk.RNTKNystroem`, ``Phi`` of shape ``(n, m)``, ``Phi Phi^T`` approximating the
Gram) and scores the same model, kernel ridge with an unpenalised intercept on the Gram
``Phi Phi^T``, by its exact leave-one-out, in ``O(n m)`` memory and ``O(n m^2)`` time.

With an intercept the hat matrix is ``11^T / n + K_c (K_c + a I)^{-1}`` with ``K_c = P K P``
and ``P = I - 11^T / n`` (:mod:`rntk._model_selection._loo`). With ``K = Phi Phi^T``,
``K_c = Phi_c Phi_c^T`` for the column-centred features ``Phi_c = P Phi``; the thin SVD
``Phi_c = U diag(s) V^T`` (singular values at rounding level dropped, so that ``U`` is
orthogonal to the constant vector) gives the eigenpairs ``(s^2, U)`` of ``K_c`` on the
complement of the constant vector, and the rest of that complement has eigenvalue 0. The
formulas of :func:`~rntk._model_selection._loo.ridge_loo_predictions` then read, with
``Y_c = P Y``,

    ``c = U diag(1 / (s^2 + a)) U^T Y + (Y_c - U U^T Y) / a``,
    ``(1 - H_ii) / a = sum_k U_ik^2 / (s_k^2 + a) + (1 - 1/n - sum_k U_ik^2) / a``,
    ``loo_i = y_i - c_i a / (1 - H_ii)``,

where the two parts that do not depend on the ridge (the residual of ``Y_c`` off the span of
``U``, and the leverage left for the null space) are computed once. Nothing of size ``n x n``
is formed. With ``m >= n`` landmarks the features reproduce the exact Gram and these LOO
predictions equal the exact ones.

The model refitted on all samples is linear in the features, ``f(x) = phi(x)^T w + b`` with
``w = V diag(s / (s^2 + a)) U^T Y`` and ``b = mean(Y) - mean(Phi) w``; since
``phi(x) = W^{-1/2} k(x)`` (``k(x)`` the kernel against the landmarks), it is kernel ridge on
the landmarks with dual coefficients ``W^{-1/2} w``: each refitted classifier (the best
candidate, or each member of the average of the default grid) is a
:class:`~rntk.RNTKClassifier` whose training series are the ``m`` landmarks.
"""

import numbers

import numpy as np
from scipy import linalg
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from .._nystroem import RNTKNystroem
from .._utils import KernelOverflowError, fill_doc
from ._loo import _check_alphas
from ._scorers import RidgeLOOScorer

__all__ = ["LARGE_N", "LARGE_N_COMPONENTS", "LARGE_N_CONSTRAINTS", "FeatureLOOScorer",
           "FeaturePath", "feature_loo_predictions", "feature_path", "feature_ridge_fit",
           "feature_svd", "resolve_large_n"]

#: Training series above which ``large_n="auto"`` switches the default classifier search
#: to Nystroem features (measured in ``benchmarks/bench_large_n.py``).
LARGE_N = 3000
#: Default number of Nystroem landmarks (features) of the large-n path.
LARGE_N_COMPONENTS = 500
#: Parameter constraints of ``large_n`` and ``n_components`` (scikit-learn's validation).
LARGE_N_CONSTRAINTS = {
    "large_n": [StrOptions({"auto"}), Interval(numbers.Integral, 0, None, closed="left"),
                None],
    "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
}
# The parameter entries shared by feature_loo_predictions and feature_ridge_fit.
_SVD_Y = """svd : tuple
    Output of :func:`feature_svd` for the training features.
Y : array-like of shape (n_samples,) or (n_samples, n_targets)
    Training targets."""
#: Seed of the landmark draw (the same landmarks for every kernel setting).
LANDMARK_SEED = 0


def feature_svd(Phi):
    """Thin SVD of the column-centred features, for the intercept model.

    Parameters
    ----------
    Phi : array-like of shape (n_samples, n_features)
        Feature matrix (finite), ``n_samples >= 2``.

    Returns
    -------
    s : ndarray of shape (r,)
        Singular values of ``Phi - mean(Phi, axis=0)`` above
        ``max(n, m) * eps * s_max``, descending.
    U : ndarray of shape (n_samples, r)
        Their left singular vectors (orthogonal to the constant vector).
    Vt : ndarray of shape (r, n_features)
        Their right singular vectors, as rows.
    mean : ndarray of shape (n_features,)
        Column means of ``Phi``.
    """
    Phi = np.asarray(Phi, dtype=np.float64)
    if Phi.ndim != 2:
        raise ValueError(f"features must be a 2-D array, got shape {Phi.shape}")
    n, m = Phi.shape
    if n < 2:
        raise ValueError("the intercept model needs at least 2 samples")
    if not np.all(np.isfinite(Phi)):
        raise ValueError("features contain NaN or infinite values")
    mean = Phi.mean(axis=0)
    U, s, Vt = linalg.svd(Phi - mean, full_matrices=False, check_finite=False,
                          lapack_driver="gesdd")
    # directions at rounding level belong to the null space (their U columns are
    # arbitrary, possibly not orthogonal to the constant vector): drop them
    keep = s > (s[0] if s.size else 0.0) * max(n, m) * np.finfo(np.float64).eps
    return s[keep], U[:, keep], Vt[keep], mean


def _check_svd(svd):
    s, U, Vt, mean = svd
    if U.ndim != 2 or s.shape != (U.shape[1],) or Vt.shape[0] != s.size:
        raise ValueError("the SVD parts do not match; pass the output of feature_svd")
    return s, U


@fill_doc(svd_Y=_SVD_Y)
def feature_loo_predictions(svd, Y, alphas):
    """Exact leave-one-out predictions of ridge with an intercept, in feature space.

    The model is kernel ridge with an unpenalised intercept on the Gram ``Phi Phi^T``
    (equivalently linear ridge on the features ``Phi`` with an unpenalised intercept); the
    predictions equal :func:`~rntk._model_selection._loo.ridge_loo_predictions` on
    ``eigh_gram(Phi @ Phi.T, fit_intercept=True)`` without forming that Gram.

    Parameters
    ----------
    {svd_Y}
    alphas : array-like of shape (n_alphas,)
        Ridge values, all ``> 0``, on the scale of ``Phi Phi^T``.

    Returns
    -------
    loo : ndarray of shape (n_alphas, n_samples, n_targets)
        ``loo[a, i]``: the prediction for sample ``i`` of the model fitted on the others
        with ridge ``alphas[a]``.
    """
    s, U = _check_svd(svd)
    alphas = _check_alphas(alphas)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    n = U.shape[0]
    if Y.ndim != 2 or Y.shape[0] != n:
        raise ValueError(f"Y must have {n} rows, got shape {Y.shape}")
    UtY = U.T @ Y
    U2 = U * U
    # the parts in the null space of K_c (eigenvalue 0), independent of the ridge
    null_res = (Y - Y.mean(axis=0)) - U @ UtY
    null_lev = np.clip(1.0 - 1.0 / n - U2.sum(axis=1), 0.0, None)
    lam = s * s
    out = np.empty((alphas.size,) + Y.shape)
    for a, alpha in enumerate(alphas):
        w = 1.0 / (lam + alpha)
        c = U @ (w[:, None] * UtY) + null_res / alpha  # (K_c + a I)^{-1} P Y
        ginv_diag = U2 @ w + null_lev / alpha  # (1 - H_ii) / alpha
        out[a] = Y - c / ginv_diag[:, None]
    return out


@fill_doc(svd_Y=_SVD_Y)
def feature_ridge_fit(svd, Y, alpha):
    """Weights and intercept of ridge with an unpenalised intercept, in feature space.

    Parameters
    ----------
    {svd_Y}
    alpha : float
        Ridge, ``> 0``.

    Returns
    -------
    coef : ndarray of shape (n_features, n_targets)
        ``w``; predict with ``Phi_new @ coef + intercept``.
    intercept : ndarray of shape (n_targets,)
        ``b = mean(Y) - mean(Phi) @ w``.
    """
    s, U = _check_svd(svd)
    Vt, mean = svd[2], svd[3]
    alpha = float(_check_alphas(alpha)[0])
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    coef = Vt.T @ ((s / (s * s + alpha))[:, None] * (U.T @ Y))
    return coef, Y.mean(axis=0) - mean @ coef


def _relative_scale(Phi):
    """``trace(Phi Phi^T) / n``: the scale of the relative ridges, as ``trace(K) / n``."""
    return float(np.einsum("ij,ij->", Phi, Phi)) / Phi.shape[0]


class FeatureLOOScorer(RidgeLOOScorer):
    """Scorer of the search engine on features: exact leave-one-out of the ridge models.

    :class:`~rntk._model_selection._scorers.RidgeLOOScorer` (whose checks and scores it
    reuses) when the search hands out features ``Phi`` instead of Grams: the same models
    (least squares with an unpenalised intercept, ridges relative to ``trace(Phi Phi^T) /
    n``: the one-vs-all classifier, or the clipped regressor), the same scores
    (leave-one-out accuracy and its tie-break, or the leave-one-out ``R^2``). Called as
    ``scorer(Phi, y, params)``.

    Parameters
    ----------
    classification : bool, default=True
        The classifier's scores, or the regressor's.
    """

    def __init__(self, classification=True):
        super().__init__(classification=classification)

    def _ridge_loo(self, Phi, Y, alphas):
        """LOO predictions of ridge with an intercept from the features, relative ``alphas``."""
        return feature_loo_predictions(feature_svd(Phi), Y, alphas * _relative_scale(Phi))


def resolve_large_n(large_n):
    """Return the threshold of ``large_n`` (``"auto"``: :data:`LARGE_N`; ``None``: never)."""
    if large_n is None:
        return None
    if isinstance(large_n, str):
        if large_n != "auto":
            raise ValueError(f"large_n must be 'auto', an int >= 0 or None, got {large_n!r}")
        return LARGE_N
    if isinstance(large_n, bool) or not isinstance(large_n, numbers.Integral) or large_n < 0:
        raise ValueError(f"large_n must be 'auto', an int >= 0 or None, got {large_n!r}")
    return int(large_n)


class FeaturePath:
    """The large-n path of a search: Nystroem features per kernel setting, and the refit.

    Parameters
    ----------
    n_components : int
        Landmarks (features) per kernel setting; at most the number of series.
    n_jobs : int or None
        Numba threads of the kernel.
    """

    def __init__(self, n_components, n_jobs=None, classification=True):
        self.n_components = n_components
        self.n_jobs = n_jobs
        self.scorer = FeatureLOOScorer(classification)
        self.transformers = []
        self.groups = []

    def _transformer(self, est):
        return RNTKNystroem(n_components=self.n_components, random_state=LANDMARK_SEED,
                            normalize=False, n_jobs=self.n_jobs, **est._kernel_params())

    def grams(self, base, candidates, kernel_groups, raw):
        """Yield the training features of every kernel group (``None``: an overflow)."""
        self.groups = kernel_groups
        self.transformers = []
        for idxs in kernel_groups:
            est = clone(base).set_params(**candidates[idxs[0]])
            nys = self._transformer(est)
            try:
                Phi = nys.fit_transform(est._prepare(raw))
            except KernelOverflowError:
                Phi, nys = None, None  # scored NaN by the search, with the engine's warning
            self.transformers.append(nys)
            yield Phi

    def refit(self, est, Phi, y, best_index):
        """Fit ``est`` (a ridge ``RNTKClassifier`` or ``RNTKRegressor``) from the features.

        Its training series become the landmarks of its setting, and its inner model
        (``est._make_inner()``: the ridge classifier or regressor) gets the dual
        coefficients ``W^{-1/2} w`` on them and the intercept ``b`` (``alpha=inf``: no
        coefficients and the mean).
        """
        group = next(g for g, idxs in enumerate(self.groups) if best_index in idxs)
        nys = self.transformers[group]
        inner = est._make_inner()
        Y = inner._targets(y)
        if np.isinf(est.alpha):
            coef, intercept = np.zeros((Phi.shape[1], Y.shape[1])), Y.mean(axis=0)
        else:
            coef, intercept = feature_ridge_fit(feature_svd(Phi), Y,
                                                est.alpha * _relative_scale(Phi))
        inner._set_coef(nys.normalization_ @ coef, intercept, y)
        est.estimator_ = inner
        est.X_fit_ = list(nys.components_)
        est._after_fit()
        return est


def feature_path(search, base, n_samples):
    """Return the :class:`FeaturePath` of a search on ``n_samples`` series, or None (exact).

    The path applies to the exact leave-one-out of a search whose ``large_n`` threshold
    (``"auto"``: :data:`LARGE_N`) is below ``n_samples``.
    """
    threshold = resolve_large_n(getattr(search, "large_n", None))
    if threshold is None or n_samples <= threshold:
        return None
    m = getattr(search, "n_components", None) or LARGE_N_COMPONENTS
    return FeaturePath(min(int(m), n_samples), n_jobs=getattr(search, "n_jobs", None),
                       classification=not base._is_regressor)
