"""The table of kernels the model-selection engine and the benchmark iterate.

Each entry says what a kernel reads (``"sequences"``: a list of ``(T_i, m)`` series of
any lengths; ``"vectors"``: one row per series, zero-padded to a common length), how
to compute a Gram for one setting, and how to compute the Grams of many settings at
once where they share work (the MLP NTK of every depth comes out of one pass).
"""

from typing import Callable, NamedTuple

from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from .._utils import KernelOverflowError
from ._mlp_ntk import mlp_ntk_depths
from ._rntk import rntk_kernel

__all__ = ["KERNELS", "KernelSpec"]


class KernelSpec(NamedTuple):
    """One kernel of the registry."""

    name: str
    gram: Callable  # gram(A, B=None, *, n_jobs=None, **params) -> ndarray
    input: str  # "sequences" or "vectors"
    description: str
    grams: Callable = None  # grams(A, settings, *, n_jobs=None) -> iterator of Grams

    def iter_grams(self, A, settings, *, n_jobs=None):
        """Yield the training Gram of each setting, in order.

        Parameters
        ----------
        A : list of ndarray or ndarray
            The training inputs, in the kernel's ``input`` layout.
        settings : list of dict
            Kernel parameters of each setting.
        n_jobs : int, default=None
            Threads of the kernel computations; ``None``: the current setting.

        Yields
        ------
        K : ndarray of shape (n, n) or None
            The Gram of the next setting (``None`` if it overflows).
        """
        if self.grams is not None:
            yield from self.grams(A, settings, n_jobs=n_jobs)
            return
        for p in settings:
            try:
                yield self.gram(A, n_jobs=n_jobs, **p)
            except KernelOverflowError:
                yield None  # the search engine scores it NaN, with a warning


def _rntk(A, B=None, *, n_jobs=None, **params):
    return rntk_kernel(A, B, n_jobs=n_jobs, **params)


def _mlp_ntk(A, B=None, *, n_jobs=None, n_layers=1, sigma_w=2**0.5, sigma_b=0.0,
             sigma_v=1.0, kind="ntk"):
    return mlp_ntk_depths(A, A if B is None else B, n_layers, sigma_w, sigma_b, sigma_v,
                          kind=kind, symmetric=B is None)[-1]


def _mlp_ntk_grams(A, settings, *, n_jobs=None):
    """One pass per (sigma_w, sigma_b): every depth of it comes out of the deepest one."""
    depth = {}
    for p in settings:
        key = (p.get("sigma_w", 2**0.5), p.get("sigma_b", 0.0))
        depth[key] = max(depth.get(key, 1), p.get("n_layers", 1))
    cached_key, Ks = None, None
    for p in settings:
        key = (p.get("sigma_w", 2**0.5), p.get("sigma_b", 0.0))
        if key != cached_key:
            Ks = mlp_ntk_depths(A, A, depth[key], key[0], key[1], 1.0, symmetric=True)
            cached_key = key
        yield Ks[p.get("n_layers", 1) - 1]


def _rbf(A, B=None, *, n_jobs=None, gamma=1.0):
    return rbf_kernel(A, B, gamma=gamma)


def _poly(A, B=None, *, n_jobs=None, degree=3, coef0=1.0):
    return polynomial_kernel(A, B, gamma=1.0, degree=degree, coef0=coef0)


#: Kernels by name.
KERNELS = {
    "rntk": KernelSpec("rntk", _rntk, "sequences",
                       "Recurrent Neural Tangent Kernel (rntk.rntk_kernel)"),
    "ntk": KernelSpec("ntk", _mlp_ntk, "vectors",
                      "NTK of a ReLU MLP on the flattened series (rntk.mlp_ntk_kernel)",
                      _mlp_ntk_grams),
    "rbf": KernelSpec("rbf", _rbf, "vectors", "Gaussian RBF kernel exp(-gamma |x - y|^2)"),
    "poly": KernelSpec("poly", _poly, "vectors", "polynomial kernel (x.y + coef0)^degree"),
}
