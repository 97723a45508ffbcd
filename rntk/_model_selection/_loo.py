"""Exact leave-one-out for kernel ridge on a precomputed Gram, for many ridges at once.

One symmetric eigendecomposition of the training Gram ``K = Q diag(l) Q^T`` gives,
for every ridge ``alpha > 0``, the hat matrix ``H_a = Q diag(l / (l + a)) Q^T`` and so
the exact leave-one-out (LOO) predictions of kernel ridge regression,

    ``loo_i = y_i - r_i / (1 - (H_a)_ii)``,  ``r = y - H_a y``,

the closed form behind scikit-learn's ``RidgeCV`` / ``RidgeClassifierCV`` with
``cv=None`` (``_RidgeGCV``). Both ``r`` and ``1 - diag(H_a)`` are evaluated as
``a Q diag(1 / (l + a)) Q^T y`` and ``a sum_k Q_ik^2 / (l_k + a)``, never as
differences, so tiny ridges on (almost) singular Grams keep full precision.

With ``fit_intercept=True`` the model is ``f(x) = k(x)^T c + b`` with ``b``
unpenalised (the least-squares SVM system ``[[0, 1^T], [1, K + a I]]``). Its hat
matrix is ``11^T / n + K_c (K_c + a I)^{-1}`` with ``K_c = P K P`` the doubly centred
Gram, ``P = I - 11^T / n``; :func:`eigh_gram` then decomposes ``K_c`` on the
``(n - 1)``-dimensional complement of the constant vector (an orthonormal basis from
one Householder reflection), so the intercept direction is removed exactly instead
of through a numerically zero eigenvalue. All the formulas above then hold with the
``n x (n - 1)`` eigenvectors.

LAPACK's ``syevd`` is used (``scipy.linalg.eigh(driver="evd")``, on a matrix it may
overwrite); it was several times faster than ``scipy.linalg.eigh``'s default driver
here. The reflection is applied by BLAS rank updates in place (``syr2``, ``ger``): a
Gram of a few thousand series allocated anew for each of several ``n x n``
temporaries cost as much as a third of its eigendecomposition (fresh pages).
"""

import numpy as np
from scipy.linalg import LinAlgError, blas, cho_factor, cho_solve, eigh

from .._utils import one_blas_thread
from .._utils._docs import fill_doc

__all__ = ["relative_loo_predictions", "clip_loo_predictions", "constant_loo_predictions",
           "eigh_gram", "gram_scale",
           "ridge_loo_predictions", "ridge_loo_scores_classification",
           "ridge_loo_scores_regression", "ridge_dual_fit", "one_vs_all_targets",
           "decision_to_labels", "loo_classification_scores"]


_SERIAL_EIGH = 2000  # largest Gram decomposed on one BLAS thread
_EIG = """eig : tuple of (eigenvalues, eigenvectors)
    Output of :func:`eigh_gram` for the training Gram."""


class _Complement:
    """The complement of the constant vector, through a Householder reflection.

    ``H = I - beta u u^T`` with ``u = e_0 - 1 / sqrt(n)`` maps ``e_0`` to ``1 / sqrt(n)``;
    its columns ``1..n-1``, ``V``, are an orthonormal basis of the complement. ``H`` is
    applied as a rank-one (or, on both sides, a symmetric rank-two) update, O(n^2) per
    matrix, never formed.
    """

    def __init__(self, n):
        if n < 2:
            raise ValueError(f"fit_intercept=True needs at least 2 samples, got n_samples = {n}")
        self.u = np.full(n, -1.0 / np.sqrt(n))
        self.u[0] += 1.0
        self.beta = 2.0 / (self.u @ self.u)

    def reflect(self, A):
        """``H A``."""
        return A - self.beta * np.outer(self.u, self.u @ A)

    def project(self, K):
        """``V^T S V`` of ``S = (K + K^T) / 2``: rows and columns ``1..n-1`` of ``H S H``.

        A new Fortran-ordered matrix of which only the lower triangle is set (what
        LAPACK's symmetric routines read with ``lower=True``).
        """
        A = _symmetric_part(K[1:, 1:])
        Ku = 0.5 * (K @ self.u + self.u @ K)  # S u
        c = self.beta ** 2 * (self.u @ Ku)
        u = self.u[1:]
        # -beta (u w^T + w u^T) + c u u^T, with w = (S u)[1:], as one rank-two update
        w = Ku[1:] - (0.5 * c / self.beta) * u
        return blas.dsyr2(-self.beta, u, w, a=A, lower=1, overwrite_a=1)

    def expand(self, Z):
        """``V Z``: coordinates in the complement back to ``n`` samples."""
        Q = np.empty((Z.shape[0] + 1, Z.shape[1]), order="F")
        Q[0] = 0.0
        Q[1:] = Z
        if Q.shape[1] == 0:
            return Q
        return blas.dger(-self.beta, self.u, self.u[1:] @ Z, a=Q, overwrite_a=1)


def eigh_gram(K, fit_intercept=False):
    """Eigendecomposition of a training Gram for the LOO and refit formulas.

    Parameters
    ----------
    K : array-like of shape (n_samples, n_samples)
        Symmetric positive semi-definite Gram matrix (it is symmetrised as
        ``(K + K^T) / 2``).
    fit_intercept : bool, default=False
        If True, decompose the doubly centred Gram ``P K P`` restricted to the
        complement of the constant vector, for a model with an unpenalised
        intercept; ``n_samples - 1`` eigenpairs are returned.

    Returns
    -------
    eigenvalues : ndarray of shape (n_components,)
        Ascending eigenvalues, negative round-off clipped at 0.
        ``n_components`` is ``n_samples``, or ``n_samples - 1`` with an intercept.
    eigenvectors : ndarray of shape (n_samples, n_components)
        Orthonormal eigenvectors, as columns (orthogonal to the constant vector with
        an intercept).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.random.default_rng(0).normal(size=(5, 3))
    >>> l, Q = eigh_gram(A @ A.T)
    >>> bool(np.allclose(Q @ np.diag(l) @ Q.T, A @ A.T))
    True
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinite values")
    n = K.shape[0]
    # below a few thousand samples one BLAS thread is faster (3x on 2 cores at n = 500,
    # far more when the cores are busy) and leaves the other cores to the kernel engine
    with one_blas_thread(n <= _SERIAL_EIGH):
        if fit_intercept:
            comp = _Complement(n)
            l, U = _eigh_lower(comp.project(K))
            Q = comp.expand(U)
        else:
            l, Q = _eigh_lower(_symmetric_part(K))
    return np.clip(l, 0.0, None), Q


def _symmetric_part(K):
    """``(K + K^T) / 2`` as a new Fortran-ordered matrix (LAPACK's, overwritable)."""
    S = np.empty(K.shape, order="F")
    np.add(K, K.T, out=S)
    S *= 0.5
    return S


def _column_means(K):
    """Column means of ``(K + K^T) / 2`` (the intercept of a ridge on the Gram)."""
    return 0.5 * (K.mean(axis=0) + K.mean(axis=1))


def _eigh_lower(A):
    """Eigenpairs of the symmetric matrix whose lower triangle is ``A``'s (overwritten)."""
    if A.shape[0] == 0:
        return np.zeros(0), np.zeros((0, 0))
    return eigh(A, lower=True, overwrite_a=True, check_finite=False, driver="evd")


def _check_eig(eig, fit_intercept):
    l, Q = eig
    l = np.asarray(l, dtype=np.float64)
    Q = np.asarray(Q, dtype=np.float64)
    n, m = Q.shape
    if l.shape != (m,):
        raise ValueError("eigenvalues and eigenvectors do not match")
    if fit_intercept is None:
        fit_intercept = m == n - 1
    elif m != (n - 1 if fit_intercept else n):
        raise ValueError(
            f"eigenvectors of shape {Q.shape} do not match fit_intercept={fit_intercept}; "
            "pass the same fit_intercept to eigh_gram")
    return l, Q, bool(fit_intercept)


def gram_scale(K):
    """Return ``trace(K) / n``, the scale of relative ridges, refusing a zero Gram.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Training Gram.

    Returns
    -------
    scale : float
        The mean diagonal, ``> 0``.
    """
    scale = float(np.trace(K)) / K.shape[0]
    if not scale > 0:
        raise ValueError(
            "the training Gram is zero (trace(K) = 0): the kernel sees every series as "
            "zero: all-zero series (constant series after z-normalisation, e.g. by "
            "SeriesScaler) under a kernel without bias (sigma_b = 0). A ridge "
            "relative to trace(K) / n is then 0 and no classifier can be fitted: check "
            "the series, or use a kernel with sigma_b > 0")
    return scale


def _check_alphas(alphas):
    alphas = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    if alphas.ndim != 1 or alphas.size == 0:
        raise ValueError("alphas must be a non-empty 1-D sequence")
    if not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
        raise ValueError("alphas must be finite and > 0 (LOO is undefined at alpha=0)")
    return alphas


@fill_doc(eig=_EIG)
def ridge_loo_predictions(eig, Y, alphas, fit_intercept=None):
    """Exact leave-one-out predictions of kernel ridge regression for many ridges.

    Parameters
    ----------
    {eig}
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Training targets.
    alphas : array-like of shape (n_alphas,)
        Ridge values, all ``> 0``, on the scale of the Gram (rescale them, e.g. by
        ``trace(K) / n``, before the call for a scale-free grid).
    fit_intercept : bool or None, default=None
        Whether ``eig`` was computed with an unpenalised intercept; ``None`` infers it
        from the shape of the eigenvectors. A mismatch raises ``ValueError``.

    Returns
    -------
    loo : ndarray of shape (n_alphas, n_samples, n_targets)
        ``loo[a, i]`` is the prediction for sample ``i`` of the model fitted on all
        other samples with ridge ``alphas[a]`` (a 1-D ``Y`` gives ``n_targets = 1``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(8, 3))
    >>> loo = ridge_loo_predictions(eigh_gram(A @ A.T), rng.normal(size=8), [0.1, 1.0])
    >>> loo.shape
    (2, 8, 1)
    """
    l, Q, _ = _check_eig(eig, fit_intercept)
    alphas = _check_alphas(alphas)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != Q.shape[0]:
        raise ValueError(f"Y must have {Q.shape[0]} rows, got shape {Y.shape}")
    QtY = Q.T @ Y
    Q2 = Q * Q
    out = np.empty((alphas.size,) + Y.shape)
    for a, alpha in enumerate(alphas):
        w = 1.0 / (l + alpha)
        # c = (K + a I)^{-1} (y - b) restricted to the model space; r = alpha * c
        c = Q @ (w[:, None] * QtY)
        ginv_diag = Q2 @ w  # (1 - H_ii) / alpha
        out[a] = Y - c / ginv_diag[:, None]
    return out


def relative_loo_predictions(K, Y, alphas):
    """Exact LOO predictions of ridge with an intercept, ridges relative to ``trace(K)/n``.

    Parameters
    ----------
    K : ndarray of shape (n_samples, n_samples)
        Training Gram.
    Y : ndarray of shape (n_samples, n_targets)
        Targets.
    alphas : array-like of shape (n_alphas,)
        Relative ridges, all ``> 0``.

    Returns
    -------
    loo : ndarray of shape (n_alphas, n_samples, n_targets)
        :func:`ridge_loo_predictions` on ``eigh_gram(K, fit_intercept=True)`` with the
        ridges ``alphas * trace(K) / n``: the model of the kernel ridge classifier and
        regressor of the searches.
    """
    return ridge_loo_predictions(eigh_gram(K, fit_intercept=True), Y,
                                 np.asarray(alphas, dtype=np.float64) * gram_scale(K))


def _check_two_classes(classes):
    """Raise scikit-learn's error when ``classes`` holds fewer than two labels."""
    if len(classes) < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {len(classes)} class")


def one_vs_all_targets(y):
    """Classes and the ``{-1, +1}`` one-vs-all targets of ``RidgeClassifierCV``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        Sorted unique labels.
    Y : ndarray of shape (n_samples, n_targets)
        ``+1`` for the sample's class and ``-1`` elsewhere; with two classes a single
        column, ``+1`` for ``classes[1]``.
    """
    classes, idx = np.unique(np.asarray(y), return_inverse=True)
    _check_two_classes(classes)
    Y = -np.ones((idx.size, classes.size))
    Y[np.arange(idx.size), idx] = 1.0
    if classes.size == 2:
        Y = Y[:, 1:]
    return classes, Y


def decision_to_labels(classes, D):
    """Labels from one-vs-all decision values (the inverse of the target encoding).

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted class labels.
    D : ndarray of shape (..., n_targets)
        Decision values; one column (``> 0`` means ``classes[1]``) for two classes.

    Returns
    -------
    labels : ndarray of shape D.shape[:-1]
        Predicted labels; ties go to the first class, as ``argmax``.
    """
    if D.shape[-1] == 1:
        return classes[(D[..., 0] > 0).astype(np.intp)]
    return classes[np.argmax(D, axis=-1)]


@fill_doc(eig=_EIG)
def ridge_loo_scores_classification(eig, y, alphas, fit_intercept=None, return_mse=False):
    """Leave-one-out accuracy of the one-vs-all ridge classifier, for each ridge.

    Targets are ``{-1, +1}`` one-vs-all (one column for two classes), as in
    scikit-learn's ``RidgeClassifierCV``; the LOO class is the argmax of the LOO
    predictions (their sign for two classes).

    Parameters
    ----------
    {eig}
    y : array-like of shape (n_samples,)
        Class labels.
    alphas : array-like of shape (n_alphas,)
        Ridge values, all ``> 0``.
    fit_intercept : bool or None, default=None
        As in :func:`ridge_loo_predictions`.
    return_mse : bool, default=False
        Also return the LOO mean squared error of the ``{-1, +1}`` targets (averaged
        over samples and targets), a continuous score for breaking accuracy ties.

    Returns
    -------
    accuracy : ndarray of shape (n_alphas,)
        Fraction of samples whose LOO class is right.
    mse : ndarray of shape (n_alphas,)
        Only with ``return_mse=True``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((4, 2)), np.ones((4, 2))] + 0.1 * np.arange(8)[:, None]
    >>> y = np.r_[np.zeros(4), np.ones(4)]
    >>> acc = ridge_loo_scores_classification(eigh_gram(X @ X.T, True), y, [1e-3], True)
    >>> float(acc[0])
    1.0
    """
    classes, Y = one_vs_all_targets(y)
    loo = ridge_loo_predictions(eig, Y, alphas, fit_intercept)
    acc, mse = loo_classification_scores(y, classes, Y, loo)
    return (acc, mse) if return_mse else acc


def loo_classification_scores(y, classes, Y, loo):
    """Leave-one-out accuracy and squared error of one-vs-all ridge predictions.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    classes, Y : ndarray
        Output of :func:`one_vs_all_targets` for ``y``.
    loo : ndarray of shape (n_alphas, n_samples, n_targets)
        Leave-one-out predictions of ``Y``, one block per ridge.

    Returns
    -------
    accuracy : ndarray of shape (n_alphas,)
        Fraction of samples whose LOO class (:func:`decision_to_labels`) is right.
    mse : ndarray of shape (n_alphas,)
        LOO mean squared error of the ``{-1, +1}`` targets (over samples and targets).

    See Also
    --------
    ridge_loo_predictions : The ``loo`` predictions of kernel ridge, for every ridge.

    Notes
    -----
    The leave-one-out predictions of an average of ridge classifiers are the average of
    their leave-one-out predictions, so an average is scored exactly, like one candidate.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 0, 1, 1])
    >>> classes, Y = one_vs_all_targets(y)
    >>> Y.ravel()  # two classes: one target, -1 for the first class
    array([-1., -1.,  1.,  1.])
    >>> loo = np.array([[[-0.5], [-0.2], [0.4], [-0.3]]])  # one ridge
    >>> acc, mse = loo_classification_scores(y, classes, Y, loo)
    >>> float(acc[0])
    0.75
    """
    acc = (decision_to_labels(classes, loo) == np.asarray(y)[None, :]).mean(axis=1)
    return acc, ((loo - Y[None]) ** 2).mean(axis=(1, 2))


@fill_doc(eig=_EIG)
def ridge_loo_scores_regression(eig, Y, alphas, fit_intercept=None, scoring="r2"):
    """Leave-one-out score of kernel ridge regression, for each ridge.

    Parameters
    ----------
    {eig}
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Targets.
    alphas : array-like of shape (n_alphas,)
        Ridge values, all ``> 0``.
    fit_intercept : bool or None, default=None
        As in :func:`ridge_loo_predictions`.
    scoring : {"r2", "neg_mean_squared_error"}, default="r2"
        ``"r2"``: ``1 - SSE_loo / SS_tot`` per target (``SS_tot`` about the target's
        mean over all samples), averaged uniformly over targets;
        ``"neg_mean_squared_error"``: minus the LOO squared error averaged over
        samples and targets.

    Returns
    -------
    scores : ndarray of shape (n_alphas,)
        Higher is better.
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    loo = ridge_loo_predictions(eig, Y, alphas, fit_intercept)
    sse = ((loo - Y[None]) ** 2).sum(axis=1)  # (n_alphas, n_targets)
    if scoring == "neg_mean_squared_error":
        return -sse.mean(axis=1) / Y.shape[0]
    if scoring != "r2":
        raise ValueError(f"unknown scoring {scoring!r}")
    sst = ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(sst > 0, 1.0 - sse / np.where(sst > 0, sst, 1.0),
                      np.where(sse == 0, 1.0, 0.0))
    return r2.mean(axis=1)


def constant_loo_predictions(Y):
    """Leave-one-out predictions of the mean (the ridge with intercept at ``alpha=inf``).

    Parameters
    ----------
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Targets, at least 2 samples.

    Returns
    -------
    loo : ndarray of shape (n_samples, n_targets)
        ``loo[i]``: the mean of the other samples' targets, ``(n mean(Y) - Y_i) / (n -
        1)``.

    Examples
    --------
    >>> import numpy as np
    >>> constant_loo_predictions(np.array([1.0, 2.0, 6.0])).ravel()
    array([4. , 3.5, 1.5])
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    n = Y.shape[0]
    if n < 2:
        raise ValueError(f"leave-one-out needs at least 2 samples, got n_samples = {n}")
    return (Y.sum(axis=0) - Y) / (n - 1)


def clip_loo_predictions(loo, Y):
    """Clip leave-one-out predictions to the range of the targets each model was fitted on.

    The leave-one-out counterpart of a regressor that clips its predictions to the
    range of its training targets (:class:`rntk.model_selection.KernelRidgeRegressor`):
    the prediction for sample ``i`` is clipped to the smallest and largest target of
    the other samples.

    Parameters
    ----------
    loo : ndarray of shape (..., n_samples, n_targets)
        Leave-one-out predictions (e.g. of :func:`ridge_loo_predictions`).
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
        The targets, at least 2 samples.

    Returns
    -------
    clipped : ndarray of the shape of ``loo``
        The clipped predictions.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([0.0, 1.0, 5.0])
    >>> clip_loo_predictions(np.array([[-2.0], [9.0], [9.0]]), Y).ravel()
    array([1., 5., 1.])
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.shape[0] < 2:
        raise ValueError("leave-one-out needs at least 2 samples, got n_samples = "
                         f"{Y.shape[0]}")
    order = np.sort(Y, axis=0)
    lo = np.where(Y == order[0], order[1], order[0])  # the least of the others
    hi = np.where(Y == order[-1], order[-2], order[-1])
    return np.clip(loo, lo, hi)


def ridge_intercept_fit(K, Y, alpha):
    """Kernel ridge with an unpenalised intercept by one Cholesky solve (no eigenpairs).

    The same model as ``ridge_dual_fit(eigh_gram(K, True), Y, alpha, K=K)``: ``c =
    V (V^T K V + alpha I)^{-1} V^T Y`` with ``V`` the basis of ``eigh_gram`` (the
    complement of the constant vector), in about a tenth of the time of the
    eigendecomposition; it falls back on it where the Cholesky factorisation fails.

    Parameters
    ----------
    K : ndarray of shape (n_samples, n_samples)
        Training Gram (symmetrised), at least 2 samples.
    Y : ndarray of shape (n_samples, n_targets)
        Training targets.
    alpha : float
        Ridge, ``> 0``.

    Returns
    -------
    dual_coef : ndarray of shape (n_samples, n_targets)
        Dual coefficients, summing to 0 per target.
    intercept : ndarray of shape (n_targets,)
        The intercept.
    """
    K = np.asarray(K, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n = K.shape[0]
    comp = _Complement(n)
    with one_blas_thread(n <= _SERIAL_EIGH):
        M = comp.project(K)
        M[np.diag_indices_from(M)] += alpha
        try:
            z = cho_solve(cho_factor(M, lower=True, check_finite=False),
                          comp.reflect(Y)[1:], check_finite=False)
        except LinAlgError:  # not positive definite in floating point: the eigenpairs
            return ridge_dual_fit(eigh_gram(K, fit_intercept=True), Y, alpha, K=K,
                                  fit_intercept=True)
    c = comp.expand(z)
    return c, Y.mean(axis=0) - _column_means(K) @ c


@fill_doc(eig=_EIG)
def ridge_dual_fit(eig, Y, alpha, K=None, fit_intercept=None):
    """Dual coefficients (and intercept) of kernel ridge refitted on all samples.

    Predict new points with ``K_new @ dual_coef + intercept``, where ``K_new`` is the
    ``(n_new, n_samples)`` Gram between new and training points.

    Parameters
    ----------
    {eig}
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Training targets.
    alpha : float
        Ridge, ``> 0``.
    K : array-like of shape (n_samples, n_samples), default=None
        The training Gram; needed only with an intercept (for its column means).
    fit_intercept : bool or None, default=None
        As in :func:`ridge_loo_predictions`.

    Returns
    -------
    dual_coef : ndarray of shape (n_samples, n_targets)
        Dual coefficients ``c`` (summing to 0 per target with an intercept).
    intercept : ndarray of shape (n_targets,)
        Unpenalised intercept ``b``; zeros without an intercept.
    """
    l, Q, fit_intercept = _check_eig(eig, fit_intercept)
    alpha = float(_check_alphas(alpha)[0])
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    c = Q @ ((Q.T @ Y) / (l + alpha)[:, None])
    if not fit_intercept:
        return c, np.zeros(Y.shape[1])
    if K is None:
        raise ValueError("fit_intercept=True needs the training Gram K")
    K = np.asarray(K, dtype=np.float64)
    return c, Y.mean(axis=0) - _column_means(K) @ c
