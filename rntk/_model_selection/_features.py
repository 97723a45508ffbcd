"""Exact leave-one-out of ridge in a feature space, for many ridges at once: the large-n path.

For many training series the exact search builds an ``n x n`` Gram per kernel setting and
decomposes it (``O(n^2)`` memory, ``O(n^3)`` time). Above a size threshold the default
classifier search maps the series to ``m`` Nystroem features instead
(:class:`~rntk.RNTKNystroem`, ``Phi`` of shape ``(n, m)``, ``Phi Phi^T`` approximating the
Gram) and scores the same model, kernel ridge with an unpenalised intercept on the Gram
``Phi Phi^T``, by its exact leave-one-out, in ``O(n m)`` memory and ``O(n m^2)`` time.

Everything the leave-one-out needs of the whole training set is one reduced statistic: the
R factor of the QR decomposition of ``A = [1, Phi, Y]`` (the constant column of the
intercept, the features, the targets), ``(m + 1 + k) x (m + 1 + k)``. It is computed block
by block of rows (:func:`feature_block_r`), the blocks' factors stacked and decomposed again
(:func:`combine_r`: the "tall and skinny" QR, as stable as a QR of ``A`` itself), so that a
machine, or a worker of a cluster (:mod:`rntk.distributed`), never holds more than a block
of rows. Its first row holds the column means (the constant column's ``R_00 = +-sqrt(n)``);
the block ``R_22`` of the feature columns below it is the R factor of the column-centred
features ``Phi_c``, and ``Z`` beside it is ``Q_2^T Y``. With the SVD ``R_22 = W diag(s) V^T``
(singular values at rounding level dropped), ``Phi_c = U diag(s) V^T`` with ``U = Q_2 W``,
and :class:`FeatureStats` keeps ``s``, ``V``, ``g = W^T Z = U^T Y`` and the means. The
projections ``P = Phi_c V = U diag(s)`` of a block's rows then give, for each ridge ``a``,
the hat matrix ``H = 11^T / n + K_c (K_c + a I)^{-1}`` (``K_c = Phi_c Phi_c^T``, see
:mod:`rntk._model_selection._loo`) on those rows:

    ``H_ii = 1/n + sum_k P_ik^2 / (s_k^2 + a)``,
    ``fitted_i = mean(Y) + sum_k P_ik s_k g_k / (s_k^2 + a)``,
    ``loo_i = y_i - (y_i - fitted_i) / (1 - H_ii)``,

the primal form of the formulas of
:func:`~rntk._model_selection._loo.ridge_loo_predictions`, without forming anything of
size ``n x n`` and without dividing by a small singular value. With ``m >= n`` landmarks
the features reproduce the exact Gram and these LOO predictions equal the exact ones (to
``eps / (1 - H_ii)``, relative: in the large-n regime, ``n >> m``, every ``H_ii`` is small).

The model refitted on all samples is linear in the features, ``f(x) = phi(x)^T w + b`` with
``w = V diag(s / (s^2 + a)) g`` and ``b = mean(Y) - mean(Phi) w``; since
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
from .._utils import KernelOverflowError
from ._loo import _check_alphas
from ._scorers import RidgeLOOScorer
from ._sources import GramSource

__all__ = ["FEATURE_BLOCK", "LARGE_N", "LARGE_N_COMPONENTS", "LARGE_N_CONSTRAINTS",
           "R_FANIN", "FeatureLOOScorer", "FeaturePath", "FeatureStats", "SettingFeatures",
           "combine_r",
           "feature_block_r", "feature_path", "feature_stats", "resolve_large_n"]

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
#: Seed of the landmark draw (the same landmarks for every kernel setting).
LANDMARK_SEED = 0
#: Rows per block of :func:`feature_stats` (one R factor each).
FEATURE_BLOCK = 4096
#: R factors stacked and decomposed together at each node of :func:`combine_r`.
R_FANIN = 8


def _check_features(Phi, Y):
    Phi = np.asarray(Phi, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    if Phi.ndim != 2:
        raise ValueError(f"features must be a 2-D array, got shape {Phi.shape}")
    if Y.ndim != 2 or Y.shape[0] != Phi.shape[0]:
        raise ValueError(f"Y must have {Phi.shape[0]} rows, got shape {Y.shape}")
    if not (np.all(np.isfinite(Phi)) and np.all(np.isfinite(Y))):
        raise ValueError("features contain NaN or infinite values")
    return Phi, Y


def feature_block_r(Phi, Y):
    """R factor of ``[1, Phi, Y]`` for one block of rows.

    Parameters
    ----------
    Phi : array-like of shape (n_rows, n_features)
        The block's features (finite).
    Y : array-like of shape (n_rows,) or (n_rows, n_targets)
        Its targets.

    Returns
    -------
    R : ndarray of shape (min(n_rows, 1 + n_features + n_targets), 1 + n_features + n_targets)
        Upper triangular, ``R^T R = A^T A`` for ``A = [1, Phi, Y]``.
    """
    Phi, Y = _check_features(Phi, Y)
    A = np.empty((Phi.shape[0], 1 + Phi.shape[1] + Y.shape[1]))
    A[:, 0] = 1.0
    A[:, 1:1 + Phi.shape[1]] = Phi
    A[:, 1 + Phi.shape[1]:] = Y
    return np.linalg.qr(A, mode="r")


def combine_r(factors):
    """R factor of the rows of several blocks, from the blocks' R factors.

    The factors are stacked and decomposed :data:`R_FANIN` at a time, in order, level
    after level, until one is left: the reduction a cluster runs as a tree of tasks
    (:mod:`rntk.distributed`) and one machine runs in a loop.

    Parameters
    ----------
    factors : sequence of ndarray
        R factors (:func:`feature_block_r`) of the blocks, in row order.

    Returns
    -------
    R : ndarray
        The R factor of all their rows (``R^T R`` the sum of the blocks' ``A^T A``).
    """
    factors = list(factors)
    if not factors:
        raise ValueError("no block to combine")
    while len(factors) > 1:
        factors = [stack_r(*factors[i:i + R_FANIN]) for i in range(0, len(factors), R_FANIN)]
    return factors[0]


def stack_r(*factors):
    """R factor of stacked R factors (one node of :func:`combine_r`)."""
    if len(factors) == 1:
        return factors[0]
    return np.linalg.qr(np.vstack(factors), mode="r")


class FeatureStats:
    """The reduced statistics of the training features, and the leave-one-out they give.

    Parameters
    ----------
    R : ndarray of shape (r, 1 + n_features + n_targets)
        R factor of ``[1, Phi, Y]`` over the training rows (:func:`combine_r`).
    n_samples : int
        Training rows (``>= 2``).
    n_features : int
        Columns of ``Phi``.

    Attributes
    ----------
    mean : ndarray of shape (n_features,)
        Column means of ``Phi``.
    y_mean : ndarray of shape (n_targets,)
        Means of the targets.
    s : ndarray of shape (rank,)
        Singular values of the centred features above ``max(n, m) * eps * s_max``.
    V : ndarray of shape (n_features, rank)
        Their right singular vectors.
    g : ndarray of shape (rank, n_targets)
        ``U^T Y``, ``U`` their left singular vectors.
    scale : float
        ``trace(Phi Phi^T) / n``, the scale of the relative ridges.
    """

    def __init__(self, R, n_samples, n_features):
        if n_samples < 2:
            raise ValueError("the intercept model needs at least 2 samples")
        R = np.asarray(R, dtype=np.float64)
        m = int(n_features)
        self.n_samples = int(n_samples)
        self.mean = R[0, 1:1 + m] / R[0, 0]
        self.y_mean = R[0, 1 + m:] / R[0, 0]
        W, s, Vt = linalg.svd(R[1:1 + m, 1:1 + m], full_matrices=False, check_finite=False,
                              lapack_driver="gesdd")
        # directions at rounding level belong to the null space: dropped
        keep = s > (s[0] if s.size else 0.0) * max(self.n_samples, m) * np.finfo(float).eps
        self.s, self.V = s[keep], Vt[keep].T
        self.g = W[:, keep].T @ R[1:1 + m, 1 + m:]
        self.scale = float(np.sum(R[:, 1:1 + m] ** 2)) / self.n_samples

    def loo(self, Phi, Y, alphas):
        """Exact leave-one-out predictions of the rows ``Phi`` of the training set.

        Parameters
        ----------
        Phi : array-like of shape (n_rows, n_features)
            Training rows (any block of them).
        Y : array-like of shape (n_rows,) or (n_rows, n_targets)
            Their targets.
        alphas : array-like of shape (n_alphas,)
            Ridges, all ``> 0``, on the scale of ``Phi Phi^T`` (not relative).

        Returns
        -------
        loo : ndarray of shape (n_alphas, n_rows, n_targets)
            ``loo[a, i]``: the prediction for row ``i`` of the model fitted on every other
            training row with ridge ``alphas[a]``.
        """
        Phi, Y = _check_features(Phi, Y)
        alphas = _check_alphas(alphas)
        P = (Phi - self.mean) @ self.V
        P2 = P * P
        Yc = Y - self.y_mean
        lam = self.s * self.s
        out = np.empty((alphas.size,) + Y.shape)
        for a, alpha in enumerate(alphas):
            d = 1.0 / (lam + alpha)
            residual = Yc - P @ ((self.s * d)[:, None] * self.g)
            keep = 1.0 - 1.0 / self.n_samples - P2 @ d  # 1 - H_ii
            out[a] = Y - residual / keep[:, None]
        return out

    def ridge(self, alpha):
        """Weights and intercept of ridge with an unpenalised intercept.

        Parameters
        ----------
        alpha : float
            Ridge, ``> 0``, on the scale of ``Phi Phi^T``.

        Returns
        -------
        coef : ndarray of shape (n_features, n_targets)
            ``w``; predict with ``Phi_new @ coef + intercept``.
        intercept : ndarray of shape (n_targets,)
            ``b = mean(Y) - mean(Phi) @ w``.
        """
        alpha = float(_check_alphas(alpha)[0])
        coef = self.V @ ((self.s / (self.s * self.s + alpha))[:, None] * self.g)
        return coef, self.y_mean - self.mean @ coef


def feature_stats(Phi, Y, block=FEATURE_BLOCK):
    """Return the :class:`FeatureStats` of features held in memory, block by block.

    Parameters
    ----------
    Phi : array-like of shape (n_samples, n_features)
        Training features (finite), ``n_samples >= 2``.
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Training targets.
    block : int, default=FEATURE_BLOCK
        Rows per block.

    Returns
    -------
    stats : FeatureStats
        What the leave-one-out and the refit need of the training set.
    """
    Phi, Y = _check_features(Phi, Y)
    n = Phi.shape[0]
    if n < 2:
        raise ValueError("the intercept model needs at least 2 samples")
    factors = [feature_block_r(Phi[i:i + block], Y[i:i + block]) for i in range(0, n, block)]
    return FeatureStats(combine_r(factors), n, Phi.shape[1])


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
        """LOO predictions of ridge with an intercept from the features, relative ``alphas``.

        ``Phi``: the features, or a :class:`SettingFeatures` of a search, which keeps their
        statistics (and, for a classifier, lets the features go once scored).
        """
        setting = Phi if isinstance(Phi, SettingFeatures) else None
        if setting is not None:
            Phi = setting.Phi
        stats = feature_stats(Phi, Y)
        if setting is not None:
            setting.stats = stats
            if self.classification:  # nothing reads them again: the refit needs stats
                setting.Phi = None
        return stats.loo(Phi, Y, alphas * stats.scale)


class SettingFeatures:
    """One kernel setting's training features, as a search on features holds them.

    The features ``Phi`` while they are scored; then their :class:`FeatureStats` and the
    fitted :class:`~rntk.RNTKNystroem` (landmarks and ``W^{-1/2}``) are all the refit
    needs, so that a search keeping several settings (the average of the default grid)
    keeps ``m x m`` matrices rather than ``n x m`` ones.
    """

    def __init__(self, Phi, nys, stats=None):
        self.Phi, self.nys, self.stats = Phi, nys, stats

    def all_finite(self):
        """Return whether the features are finite (scored ones were)."""
        return self.Phi is None or bool(np.isfinite(self.Phi).all())


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


class FeaturePath(GramSource):
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

    def _transformer(self, est):
        return RNTKNystroem(n_components=self.n_components, random_state=LANDMARK_SEED,
                            normalize=False, n_jobs=self.n_jobs, **est._kernel_params())

    def grams(self, base, candidates, kernel_groups, raw):
        """Yield the :class:`SettingFeatures` of every kernel group (``None``: an overflow)."""
        for idxs in kernel_groups:
            est = clone(base).set_params(**candidates[idxs[0]])
            nys = self._transformer(est)
            try:
                yield SettingFeatures(nys.fit_transform(est._prepare(raw)), nys)
            except KernelOverflowError:
                yield None  # scored NaN by the search, with the engine's warning

    def fit_preparation(self, est, raw):
        """Fit what ``est``'s preparations learn from the training series ``raw``."""
        est._fit_preparation(raw)

    def refit(self, est, K, y, raw, loo):
        """Fit ``est`` from its setting's features ``K``; the landmarks are its series.

        The features are float64's: so is the refitted estimator's arithmetic. A
        classifier calibrates its probabilities on ``loo``.
        """
        if "precision" in est.get_params():
            est.set_params(precision="float64")
        self.fit_preparation(est, raw)
        self.fit_features(est, K, y)
        if not est._is_regressor:
            est._calibrate(loo, y)
        return est

    def fit_features(self, est, setting, y):
        """Fit ``est`` (a ridge ``RNTKClassifier`` or ``RNTKRegressor``) from a setting.

        ``setting``: the :class:`SettingFeatures` of ``est``'s kernel setting, scored on
        the targets of ``y``. Its training series become the landmarks of the setting, and
        its inner model (``est._make_inner()``: the ridge classifier or regressor) gets the
        dual coefficients ``W^{-1/2} w`` on them and the intercept ``b`` (``alpha=inf``:
        no coefficients and the mean).
        """
        nys = setting.nys
        inner = est._make_inner()
        Y = inner._targets(y)  # the scorer's targets: its statistics hold them
        stats = setting.stats if setting.stats is not None else feature_stats(setting.Phi, Y)
        if np.isinf(est.alpha):
            coef, intercept = np.zeros((nys.n_components_, Y.shape[1])), Y.mean(axis=0)
        else:
            coef, intercept = stats.ridge(est.alpha * stats.scale)
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
