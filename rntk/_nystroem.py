"""Nystroem features of the RNTK: a low-rank approximation for many series."""

import numbers
import warnings

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ._kernels import rntk_diag, rntk_kernel
from ._kernels._params import RNTK_CONSTRAINTS, RNTK_PARAM_NAMES, RNTK_PARAMS_DOC
from ._kernels._params import RNTK_DEFAULTS as _D
from ._utils import (
    DOC,
    fill_doc,
    one_blas_thread,
    store_init_params,
    unit_norm,
    validate_fit_series,
    validate_predict_data,
)

__all__ = ["RNTKNystroem"]

_BATCH_VALUES = 2**23  # kernel values per batch of transform when batch_size is None (64 MB)
# After Numba's OpenMP threads have run, small BLAS calls on several threads can be 10-100x
# slower than on one (the thread pools compete for the cores): the eigendecomposition of
# W up to this many landmarks, and the projection of a batch below _SERIAL_PROJECTION,
# run on one BLAS thread.
_SERIAL_EIGH = 500
_SERIAL_PROJECTION = 256


@fill_doc(kernel_doc=RNTK_PARAMS_DOC, **DOC)
class RNTKNystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Nystroem features of the Recurrent Neural Tangent Kernel.

    Picks ``n_components`` landmark series among the training series, computes their
    RNTK Gram ``W`` and maps a series ``x`` to ``phi(x) = W^{-1/2} k(x)``, where
    ``k(x)`` is the kernel of ``x`` against the landmarks: inner products of the
    features approximate the RNTK (exactly on the span of the landmarks). A linear
    model on the features then costs ``O(n m)`` kernel values instead of the
    ``O(n^2)`` of the exact Gram: the way to many thousands of series. Series may have
    different lengths and several channels.

    Parameters
    ----------
    n_components : int, default=100
        Number of landmarks ``m`` (and of features). More than the training series
        uses them all, with a warning.
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        How the landmarks are picked: uniformly without replacement, or by k-means++
        seeding in the RNTK's feature space (each next landmark drawn with probability
        proportional to its squared kernel distance to the nearest one already picked;
        ``m`` extra rows of the kernel, reused by :meth:`fit_transform`).
    random_state : int, RandomState instance or None, default=None
        Seed of the landmark selection.
    normalize : bool, default=True
        Scale each series to unit Euclidean norm (over all its steps and channels)
        before the kernel, as the RNTK estimators do.
    {kernel_doc}
    n_jobs : int, default=None
        Numba threads for the kernel; ``None``: the current setting (Numba's thread
        count, all cores unless changed by ``numba.set_num_threads``), ``-1``: all
        cores.
    batch_size : int, default=None
        Series per batch in :meth:`transform` (the kernel against the landmarks is
        computed and projected batch by batch). ``None``: batches of about 64 MB of
        kernel values.

    Attributes
    ----------
    components_ : list of ndarray of shape (T_i, n_channels)
        The landmark series (after scaling).
    component_indices_ : ndarray of shape (`n_components_`,)
        Their indices in the training set.
    normalization_ : ndarray of shape (`n_components_`, `n_components_`)
        ``W^{-1/2}``, the pseudo-inverse square root of the landmark Gram: eigenvalues
        below ``n_components_ * eps * max eigenvalue`` are dropped.
    n_components_ : int
        Number of landmarks (``min(n_components, n_samples)``).
    n_channels_in_ : int
        Channels per time step seen in fit.
    n_features_in_ : int
        Number of time steps, only when fit on a 2-D array.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names, only when fit on a DataFrame with string column names.

    See Also
    --------
    rntk.rntk_kernel : The exact Gram (``out=`` writes one larger than the memory).
    sklearn.kernel_approximation.Nystroem : The same for kernels on vectors.

    Notes
    -----
    :meth:`fit_transform` pairs every landmark with itself as the exact training Gram
    does (this only matters with ``sigma_h > 0``, whose term a sample only shares with
    itself); :meth:`transform` treats every series as a new one. With
    ``n_components`` equal to the number of training series, the inner products of
    ``fit_transform(X)`` are the exact Gram ``rntk_kernel(X)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import RidgeClassifierCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from rntk import RNTKNystroem, rntk_kernel
    >>> rng = np.random.default_rng(0)
    >>> t = np.linspace(0, 1, 20)
    >>> X = np.r_[np.sin(6 * t) + 0.1 * rng.normal(size=(30, 20)),
    ...           np.cos(6 * t) + 0.1 * rng.normal(size=(30, 20))]
    >>> y = np.repeat([0, 1], 30)
    >>> features = RNTKNystroem(n_components=20, random_state=0).fit_transform(X)
    >>> features.shape
    (60, 20)
    >>> K = rntk_kernel([x / np.linalg.norm(x) for x in X])
    >>> error = np.linalg.norm(features @ features.T - K) / np.linalg.norm(K)
    >>> bool(error < 0.1)
    True
    >>> clf = make_pipeline(RNTKNystroem(n_components=20, random_state=0),
    ...                     RidgeClassifierCV()).fit(X, y)
    >>> clf.score(X, y)
    1.0
    """

    _parameter_constraints = {
        **RNTK_CONSTRAINTS,
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "landmarks": [StrOptions({"uniform", "kmeans++"})],
        "random_state": ["random_state"],
        "normalize": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }

    def __init__(self, n_components=100, *, landmarks="uniform", random_state=None,
                 normalize=True, n_layers=_D["n_layers"], sigma_w=_D["sigma_w"],
                 sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"],
                 sigma_v=_D["sigma_v"], activation=_D["activation"], kind=_D["kind"],
                 direction=_D["direction"], diff=_D["diff"], readout=_D["readout"],
                 readout_stride=_D["readout_stride"],
                 readout_band=_D["readout_band"], n_jobs=None, batch_size=None):
        store_init_params(self, locals())

    # -- fitting -----------------------------------------------------------------------
    def _kernel(self, xs, ys=None):
        params = {name: getattr(self, name) for name in RNTK_PARAM_NAMES}
        return rntk_kernel(xs, ys, n_jobs=self.n_jobs, **params)

    def _prepare(self, xs):
        return unit_norm(xs) if self.normalize else xs

    def _select(self, xs, m, rng):
        """Landmark indices, and the kernel of every series against them (or None)."""
        n = len(xs)
        if self.landmarks == "uniform" or m == n:
            return rng.permutation(n)[:m], None
        # k-means++ seeding with the kernel distance |phi(x) - phi(c)|^2
        params = {name: getattr(self, name) for name in RNTK_PARAM_NAMES}
        diag = rntk_diag(xs, n_jobs=self.n_jobs, **params)
        C = np.empty((n, m))
        picked = [int(rng.randint(n))]
        nearest = np.full(n, np.inf)
        for k in range(m):
            c = picked[k]
            C[:, k] = self._kernel([xs[c]], xs)[0]
            C[c, k] = diag[c]  # a sample with itself, as in the symmetric Gram
            nearest = np.minimum(nearest, np.maximum(diag + diag[c] - 2 * C[:, k], 0.0))
            nearest[picked] = 0.0
            if k + 1 < m:
                total = nearest.sum()
                if total > 0:
                    nxt = rng.choice(n, p=nearest / total)
                else:  # every series coincides with a landmark: any other one
                    nxt = rng.choice(np.setdiff1d(np.arange(n), picked))
                picked.append(int(nxt))
        return np.array(picked), C

    def _fit(self, X):
        xs = self._prepare(validate_fit_series(self, X))
        n = len(xs)
        m = self.n_components
        if m > n:
            warnings.warn(f"n_components={m} > n_samples={n}: using every training series as "
                          "a landmark (the exact kernel)", UserWarning, stacklevel=3)
            m = n
        rng = check_random_state(self.random_state)
        idx, C = self._select(xs, m, rng)
        W = self._fit_landmarks([xs[i] for i in idx], idx)
        return xs, C, W

    def _fit_landmarks(self, components, indices):
        """Take ``components`` (prepared series) as the landmarks; return their Gram ``W``.

        Sets ``components_``, ``component_indices_``, ``n_components_`` and
        ``normalization_``: what :meth:`transform` needs (a search on a cluster fits the
        landmarks it gathered this way, ``rntk.distributed``).
        """
        m = len(components)
        self.component_indices_ = np.asarray(indices)
        self.components_ = list(components)
        self.n_components_ = m
        W = self._kernel(self.components_)
        # pseudo-inverse square root: eigenvalues at rounding level are dropped
        with one_blas_thread(m <= _SERIAL_EIGH):
            w, V = np.linalg.eigh(W)
        keep = w > max(w.max(), 0.0) * m * np.finfo(np.float64).eps
        scale = np.zeros_like(w)
        scale[keep] = 1.0 / np.sqrt(w[keep])
        self.normalization_ = (V * scale) @ V.T
        return W

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Pick the landmark series and compute ``W^{-1/2}``.

        {X_fit_y}

        Returns
        -------
        self : RNTKNystroem
            The fitted transformer.
        """
        self._fit(X)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Fit, and return the features of the training series.

        {X_fit_y}

        Returns
        -------
        features : ndarray of shape (n_samples, `n_components_`)
            The Nystroem features; each landmark is paired with itself as in the exact
            training Gram.
        """
        xs, C, W = self._fit(X)
        m = self.n_components_
        if C is not None:  # the rows of k-means++
            with one_blas_thread(m < _SERIAL_PROJECTION):
                return C @ self.normalization_
        out = np.empty((len(xs), m))
        # the landmarks' rows of the kernel are those of W (with their self-pairs): only
        # the other series need their kernel against the landmarks
        with one_blas_thread(m < _SERIAL_PROJECTION):
            out[self.component_indices_] = W @ self.normalization_
        rest = np.ones(len(xs), dtype=bool)
        rest[self.component_indices_] = False
        return self._features(xs, np.flatnonzero(rest), out)

    # -- features ----------------------------------------------------------------------
    def _features(self, xs, rows=None, out=None):
        """``k(x) W^{-1/2}`` for ``xs[rows]`` (default all), batch by batch, into ``out``."""
        m = self.n_components_
        step = self.batch_size or max(1, _BATCH_VALUES // m)
        rows = np.arange(len(xs)) if rows is None else rows
        out = np.empty((len(xs), m)) if out is None else out
        for i in range(0, len(rows), step):
            r = rows[i:i + step]
            C = self._kernel([xs[j] for j in r], self.components_)
            with one_blas_thread(m < _SERIAL_PROJECTION):
                if r[-1] - r[0] == len(r) - 1:  # consecutive rows: no temporary
                    np.matmul(C, self.normalization_, out=out[r[0]:r[-1] + 1])
                else:
                    out[r] = C @ self.normalization_
        return out

    def transform(self, X):
        """Map series to their Nystroem features, batch by batch.

        {X_predict}

        Returns
        -------
        features : ndarray of shape (n_samples, `n_components_`)
            ``k(x) W^{-1/2}`` for every series ``x``: their inner products approximate
            the RNTK.
        """
        return self._features(self._prepare(validate_predict_data(self, X)))

    @property
    def _n_features_out(self):
        return self.n_components_
