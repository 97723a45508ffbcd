"""The RNTK as a scikit-learn kernel object (Gaussian processes, kernel algebra)."""

import warnings

import numpy as np
from sklearn.gaussian_process.kernels import GenericKernelMixin, Hyperparameter, Kernel

from .._utils import DOC, as_sequences, fill_doc, store_init_params
from ._params import RNTK_DEFAULTS as _D
from ._params import RNTK_PARAM_NAMES, RNTK_PARAMS_DOC, RNTK_VARIANCES, resolve_params
from ._rntk import rntk_diag, rntk_kernel

__all__ = ["RNTK", "as_object_array"]

_GRAD_STEP = 1e-4  # central-difference step in log-hyperparameter space


@fill_doc(**DOC)
def as_object_array(X):
    """Series as the 1-D object array that scikit-learn's GP estimators accept.

    :class:`~sklearn.gaussian_process.GaussianProcessRegressor` validates its input
    with numpy before the kernel sees it, which refuses a list of series of different
    lengths; a 1-D object array whose items are tuples (of values, or of per-step
    channel tuples) passes, and :class:`RNTK` reads it back.

    {X_series}

    Returns
    -------
    X_object : ndarray of shape (n_samples,), dtype object
        One tuple per series (trailing NaN padding removed).

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import as_object_array
    >>> X = as_object_array([np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])])
    >>> X.shape, X[1]
    ((2,), (3.0, 4.0, 5.0))
    """
    seqs = as_sequences(X, "X")
    out = np.empty(len(seqs), dtype=object)
    for i, s in enumerate(seqs):
        out[i] = tuple(s[:, 0].tolist()) if s.shape[1] == 1 else tuple(map(tuple, s.tolist()))
    return out


def _sequence_input(X, name="X"):
    """Accept what GP estimators hand over: also a 1-D object array of series."""
    if isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1:
        X = list(X)
    return as_sequences(X, name)


@fill_doc(kernel_params=RNTK_PARAMS_DOC)
class RNTK(GenericKernelMixin, Kernel):
    """Recurrent Neural Tangent Kernel as a scikit-learn kernel object.

    A kernel on sequences (of any and of different lengths) following the protocol
    of :mod:`sklearn.gaussian_process.kernels`: it works in
    :class:`~sklearn.gaussian_process.GaussianProcessRegressor` and
    :class:`~sklearn.gaussian_process.GaussianProcessClassifier`, combines with
    other kernels (``ConstantKernel() * RNTK() + WhiteKernel()``), and its
    variances are hyperparameters the GP can fit by maximising the marginal
    likelihood. Values are those of :func:`rntk.rntk_kernel`. The scales
    ``sigma_w``, ``sigma_u``, ``sigma_b``, ``sigma_h`` and ``sigma_v`` are the
    hyperparameters (``theta`` holds their logs).

    Parameters
    ----------
    {kernel_params}
    sigma_w_bounds, sigma_u_bounds, sigma_b_bounds, sigma_h_bounds : \
pair of floats >= 0 or "fixed", default="fixed"
        Bounds of each hyperparameter for the optimiser of a GP; ``"fixed"`` keeps
        it out of ``theta``. The network's scales are fixed by default: fitted by the
        marginal likelihood, they collapse (scikit-learn's optimiser drove
        ``sigma_w`` to its lower bound and the kernel to nearly zero, a chance-level
        classifier on GunPoint), so give bounds to fit them on purpose. A
        hyperparameter whose value is 0 (any entry, for a per-layer one) is held
        fixed, with a warning when it has bounds, since ``theta`` is the log of the
        values.
    sigma_v_bounds : pair of floats >= 0 or "fixed", default=(1.0, 1e5)
        Bounds of the output scale, the kernel's amplitude (``K`` is proportional to
        ``sigma_v ** 2``): free by default, its gradient exact (``2 K``) and cheap. The
        default lets the amplitude grow above the kernel's own scale, not shrink below
        it: on small training sets the marginal likelihood of a Gaussian-process
        classifier rises as the amplitude falls towards 0, where its predictions
        become a kernel-weighted vote of the training labels (with a lower bound of
        ``1e-5``, scikit-learn's optimiser took ``sigma_v`` there on Chinatown and
        scored 27.5% against the fixed kernel's 98.6%), so scikit-learn's note that
        ``sigma_v`` sits at its lower bound is expected with a classifier. Give
        ``(1e-5, 1e5)`` to fit a smaller amplitude on purpose (a regressor of small
        targets).
    n_jobs : int, default=None
        Numba threads per kernel evaluation; ``None``: the current setting (Numba's
        thread count, all cores unless changed by ``numba.set_num_threads``), ``-1``:
        all cores.

    See Also
    --------
    rntk.rntk_kernel : The Gram matrix as a function.
    rntk.RNTKRegressor : Kernel ridge regression on the RNTK.

    Notes
    -----
    ``__call__(X, eval_gradient=True)`` returns the gradient with respect to the
    log of the free hyperparameters (``theta``). With PyTorch installed it is exact
    (forward-mode autograd of :func:`rntk.nn.rntk_kernel_torch`, a few times the cost
    of the finite differences on CPU); without it, it is exact for ``sigma_v``
    (``2 K``) and computed by central differences (step ``1e-4`` in log space, two
    kernel evaluations per free hyperparameter) for the others.

    Inputs are the layouts of :func:`rntk.rntk_kernel`; a 1-D object array of
    series is accepted too. Gaussian-process estimators check their input with
    numpy before the kernel sees it: give them variable-length series as a 1-D
    object array whose items are tuples (:func:`rntk.as_object_array` makes it), as
    in the example; equal-length series can stay a 2-D array.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process import GaussianProcessRegressor
    >>> from sklearn.gaussian_process.kernels import WhiteKernel
    >>> from rntk import RNTK, as_object_array
    >>> rng = np.random.default_rng(0)
    >>> seqs = [rng.normal(size=t) for t in (5, 7, 6, 8)]
    >>> RNTK(sigma_b=0.1)(seqs).shape
    (4, 4)
    >>> X = as_object_array(seqs)  # the form GP estimators accept
    >>> y = np.array([0.1, 0.3, -0.2, 0.5])
    >>> kernel = RNTK(sigma_u_bounds="fixed") + WhiteKernel(1e-2)
    >>> gp = GaussianProcessRegressor(kernel, optimizer=None).fit(X, y)
    >>> gp.predict(X[:2]).shape
    (2,)
    """

    def __init__(self, n_layers=_D["n_layers"], sigma_w=_D["sigma_w"], sigma_u=_D["sigma_u"],
                 sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"], sigma_v=_D["sigma_v"],
                 activation=_D["activation"], kind=_D["kind"], direction=_D["direction"],
                 diff=_D["diff"], readout=_D["readout"], readout_stride=_D["readout_stride"],
                 readout_band=_D["readout_band"],
                 sigma_w_bounds="fixed", sigma_u_bounds="fixed",
                 sigma_b_bounds="fixed", sigma_h_bounds="fixed",
                 sigma_v_bounds=(1.0, 1e5), n_jobs=None):
        store_init_params(self, locals())

    # -- hyperparameters -------------------------------------------------------------
    def _hyperparameter(self, name):
        value = np.asarray(getattr(self, name), dtype=float)
        bounds = getattr(self, name + "_bounds")
        if np.any(value == 0) and not (isinstance(bounds, str) and bounds == "fixed"):
            # no log of 0: held fixed (compound kernels read the bounds), and said so
            warnings.warn(
                f"{name}_bounds={bounds!r} is not used: {name}={getattr(self, name)!r} is "
                f"held fixed, since scikit-learn optimises the hyperparameters on a log "
                f"scale, where 0 has no place; give {name} a value inside the bounds to "
                f"fit it", UserWarning, stacklevel=3)
            bounds = "fixed"
        return Hyperparameter(name, "numeric", bounds, max(int(value.size), 1))

    def _kernel_params(self):
        return {**{k: getattr(self, k) for k in RNTK_PARAM_NAMES}, "n_jobs": self.n_jobs}

    # -- kernel protocol -------------------------------------------------------------
    def __call__(self, X, Y=None, eval_gradient=False):
        """Return the kernel ``k(X, Y)`` and optionally its gradient.

        Parameters
        ----------
        X : array-like or list of arrays
            Sequences (any layout of :func:`rntk.rntk_kernel`).
        Y : array-like or list of arrays, default=None
            Second set; ``None`` evaluates ``k(X, X)``.
        eval_gradient : bool, default=False
            Also return the gradient with respect to the log of the free
            hyperparameters. Only valid when ``Y`` is None.

        Returns
        -------
        K : ndarray of shape (n_X, n_Y)
            Kernel ``k(X, Y)``.
        K_gradient : ndarray of shape (n_X, n_X, n_dims), optional
            Gradient of ``k(X, X)`` with respect to ``theta``; returned only when
            ``eval_gradient`` is True.
        """
        if eval_gradient and Y is not None:
            raise ValueError("Gradient can only be evaluated when Y is None.")
        resolve_params(**{k: getattr(self, k) for k in RNTK_PARAM_NAMES})
        xs = _sequence_input(X, "X")
        ys = None if Y is None else _sequence_input(Y, "Y")
        K = rntk_kernel(xs, ys, **self._kernel_params())
        if not eval_gradient:
            return K
        theta = self.theta
        if theta.size == 0:
            return K, np.empty((len(xs), len(xs), 0))
        return K, self._gradient(xs, theta, K)

    def _gradient(self, X, theta, K=None):
        """Gradient of ``k(X, X)`` with respect to ``theta``, shape (n, n, n_dims)."""
        names = [hp.name for hp in self.hyperparameters if not hp.fixed
                 for _ in range(hp.n_elements)]
        if names == ["sigma_v"]:  # the amplitude alone (the default): d K / d log s_v = 2 K
            return 2.0 * K[:, :, None]
        try:  # exact, by torch autograd (the torch engine, imported on first use)
            from ._torch import rntk_gram_log_gradient
        except ImportError:
            return self._gradient_central_differences(X, theta, K)
        params = self.clone_with_theta(theta)._kernel_params()
        return rntk_gram_log_gradient(X, names, **params)[1]

    def _gradient_central_differences(self, X, theta, K=None):
        theta = np.asarray(theta, dtype=float)
        n = len(X)
        grad = np.empty((n, n, theta.size))
        if theta.size == 0:
            return grad
        names = []  # the hyperparameter of each entry of theta
        for hp in self.hyperparameters:
            if not hp.fixed:
                names.extend([hp.name] * hp.n_elements)
        for d in range(theta.size):
            if names[d] == "sigma_v":
                # K is proportional to sigma_v ** 2: d K / d log sigma_v = 2 K
                if K is None:
                    K = rntk_kernel(X, **self.clone_with_theta(theta)._kernel_params())
                grad[:, :, d] = 2.0 * K
                continue
            step = np.zeros_like(theta)
            step[d] = _GRAD_STEP
            k_plus = rntk_kernel(X, **self.clone_with_theta(theta + step)._kernel_params())
            k_minus = rntk_kernel(X, **self.clone_with_theta(theta - step)._kernel_params())
            grad[:, :, d] = (k_plus - k_minus) / (2.0 * _GRAD_STEP)
        return grad

    def diag(self, X):
        """Return the diagonal of ``k(X, X)``, in ``O(n T)``.

        Parameters
        ----------
        X : array-like or list of arrays
            Sequences.

        Returns
        -------
        K_diag : ndarray of shape (n_X,)
            Diagonal of ``k(X, X)`` (each sample paired with itself).
        """
        return rntk_diag(_sequence_input(X, "X"), **self._kernel_params())

    def is_stationary(self):
        """Return False: the RNTK is not shift invariant."""
        return False

    def __repr__(self):
        def fmt(v):
            a = np.asarray(v, dtype=float)
            if a.ndim == 0:
                return f"{float(a):.3g}"
            return "[" + ", ".join(f"{x:.3g}" for x in a) + "]"

        extra = ""
        if self.n_layers != 1:
            extra += f", n_layers={self.n_layers}"
        if self.activation != "relu":
            extra += f", activation={self.activation!r}"
        if self.kind != "ntk":
            extra += f", kind={self.kind!r}"
        for name in ("direction", "diff", "readout", "readout_stride", "readout_band"):
            if not _same_value(getattr(self, name), _D[name]):
                extra += f", {name}={getattr(self, name)!r}"
        return (f"RNTK(sigma_w={fmt(self.sigma_w)}, sigma_u={fmt(self.sigma_u)}, "
                f"sigma_b={fmt(self.sigma_b)}, sigma_h={fmt(self.sigma_h)}, "
                f"sigma_v={fmt(self.sigma_v)}{extra})")


def _same_value(a, b):
    return type(a) is type(b) and a == b


def _hyperparameter_property(name):
    return property(lambda self: self._hyperparameter(name),
                    doc=f"Hyperparameter of ``{name}``.")


# scikit-learn finds the hyperparameters by their ``hyperparameter_<name>`` attributes
for _name in RNTK_VARIANCES:
    setattr(RNTK, f"hyperparameter_{_name}", _hyperparameter_property(_name))
