"""The signature kernel, a peer of the RNTK for sequences (needs ``pysiglib``).

The PDE signature kernel (Salvi, Cass, Foster, Lyons and Yang, "The signature kernel is
the solution of a Goursat PDE", SIAM J. Math. Data Sci., 2021) of two paths is the inner
product of their signatures, lifted by a static kernel on the path's points; ``pysiglib``
solves its Goursat PDE by finite differences. Run by ``rntk-ucr --methods sigkernel``
(``pip install rntk[bench]``) under the same protocol as the other kernels: with
``--protocol loo``, kernel ridge on its Grams selected by exact leave-one-out over the
ridges of ``RNTKClassifierCV``'s default.

Inputs
    Each series is z-normalised channel by channel (a constant channel is only
    centred), and time, running from 0 to 1 over the series' own length, is appended
    as the last channel. Series of unequal lengths are padded by repeating their last
    point: a constant piece adds nothing to a signature, and the PDE's finite
    differences give it exactly zero increments, so padding changes no kernel value.
Grid (:data:`SIGNATURE_GRID`, 7 static kernels x raw and normalised Grams = 14 Grams)
    * linear static kernel ``<a x, a y>``, scale ``a`` in {0.25, 0.5, 1};
    * RBF static kernel ``exp(-|x - y|^2 / s)`` (pysiglib's parameterisation), ``s`` in
      {0.5, 1, 2, 4};
    * each Gram raw and normalised (``K(x, y) / sqrt(K(x, x) K(y, y))``), both from
      one computation;
    * the PDE solved by pysiglib's finite differences on the series' own grid (dyadic
      order 0) with the RBF kernels, on a grid refined 4 times (dyadic order 2) with
      the linear ones: on rough series (large steps) the coarse scheme leaves the
      linear kernel's Gram far from positive semi-definite (on 5 noisy series of
      7 to 15 steps, a smallest eigenvalue of -0.87 times the largest entry at order
      0, -0.05 at order 2, positive from order 4), where the RBF kernels' stay
      positive. A refinement of 2 costs 16 times the PDE's work, about what the RBF
      static kernel costs at order 0.
"""

import contextlib
import importlib
import importlib.util
import warnings

import numpy as np

from .._kernels import KernelSpec

__all__ = ["SIGNATURE_GRID", "signature_gram", "signature_missing", "signature_spec"]

#: The static kernels of the signature-kernel peer, each with a raw and a normalised Gram
#: (``normalize`` varies fastest: both come out of one computation).
SIGNATURE_GRID = [
    {"static": static, **param, "normalize": normalize}
    for static, param in ([("linear", {"scale": a, "dyadic_order": 2})
                           for a in (0.25, 0.5, 1.0)]
                          + [("rbf", {"sigma": s, "dyadic_order": 0})
                             for s in (0.5, 1.0, 2.0, 4.0)])
    for normalize in (False, True)
]


def signature_missing():
    """Why the signature kernel cannot run here, or None when it can.

    Returns
    -------
    why : str or None
        A message naming what is missing (``pysiglib``), or None.

    Examples
    --------
    >>> why = signature_missing()
    >>> why is None or "pysiglib" in why
    True
    """
    if importlib.util.find_spec("pysiglib") is None:
        return "pysiglib is not installed (pip install rntk[bench], or pip install pysiglib)"
    try:
        importlib.import_module("pysiglib")
    except Exception as exc:  # a broken install: say so instead of failing each dataset
        return f"pysiglib cannot be imported ({type(exc).__name__}: {exc})"
    return None


def _require():
    why = signature_missing()
    if why is not None:
        raise ImportError(f"the signature kernel needs pysiglib: {why}")


def _paths(seqs):
    """Z-normalised series with time as the last channel, padded by their last point.

    Returns an array of shape (n, T_max, n_channels + 1), C-contiguous float64.
    """
    if len(seqs) == 0:
        raise ValueError("no series given")
    seqs = [np.asarray(s, dtype=np.float64) for s in seqs]
    seqs = [s[:, None] if s.ndim == 1 else s for s in seqs]
    if any(s.ndim != 2 or len(s) == 0 for s in seqs):
        raise ValueError("each series must be a non-empty array of shape (T,) or (T, m)")
    if len({s.shape[1] for s in seqs}) != 1:
        raise ValueError("the series have different numbers of channels")
    if not all(np.isfinite(s).all() for s in seqs):
        raise ValueError("the series hold NaN or infinite values (trailing NaN padding "
                         "must be removed first)")
    t_max = max(len(s) for s in seqs)
    out = np.empty((len(seqs), t_max, seqs[0].shape[1] + 1))
    for i, s in enumerate(seqs):
        std = s.std(axis=0)
        z = (s - s.mean(axis=0)) / np.where(std > 0, std, 1.0)
        t = np.linspace(0.0, 1.0, len(s)) if len(s) > 1 else np.zeros(1)
        out[i, : len(s), :-1] = z
        out[i, : len(s), -1] = t
        out[i, len(s):] = out[i, len(s) - 1]
    return out


def _static(static, scale=1.0, sigma=1.0):
    import pysiglib

    if static == "linear":
        return pysiglib.ScaledLinearKernel(float(scale))
    if static == "rbf":
        return pysiglib.RBFKernel(float(sigma))
    raise ValueError(f"static must be 'linear' or 'rbf'; got {static!r}")


@contextlib.contextmanager
def _torch_threads(n_jobs):
    """Hold torch (pysiglib's static kernels run in it) to ``n_jobs`` threads, then restore."""
    import torch

    before = torch.get_num_threads()
    n = _threads(n_jobs)
    if n > 0:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _raw(P, Q, static_kernel, dyadic_order, n_jobs):
    import pysiglib

    with warnings.catch_warnings(), _torch_threads(n_jobs):
        # an overflow is reported by the search, per setting
        warnings.filterwarnings("ignore", message=".*produced NaN or Inf",
                                category=RuntimeWarning)
        K = pysiglib.sig_kernel_gram(P, Q, dyadic_order=dyadic_order,
                                     static_kernel=static_kernel, n_jobs=_threads(n_jobs))
    return np.asarray(K, dtype=np.float64)


def _diag(P, static_kernel, dyadic_order, n_jobs):
    import pysiglib

    with _torch_threads(n_jobs):
        k = pysiglib.sig_kernel(P, P, dyadic_order=dyadic_order, static_kernel=static_kernel,
                                n_jobs=_threads(n_jobs))
    return np.asarray(k, dtype=np.float64).reshape(len(P))


def _threads(n_jobs):
    return 1 if n_jobs is None else int(n_jobs)


def _normalised(K, da, db):
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return K / np.sqrt(np.outer(da, db))


def signature_gram(A, B=None, *, n_jobs=1, static="linear", scale=1.0, sigma=1.0,
                   dyadic_order=0, normalize=False):
    """Compute the signature-kernel Gram of series, on the inputs of the peer (see module).

    Parameters
    ----------
    A : list of array-like of shape (T_i,) or (T_i, m)
        Series (no NaN); lengths may differ.
    B : list of array-like, optional
        Second set of series (default ``A``: the symmetric Gram).
    n_jobs : int, default=1
        Threads of pysiglib (-1: all).
    static : {"linear", "rbf"}, default="linear"
        Static kernel on the points of the paths.
    scale : float, default=1.0
        Scale ``a`` of the linear static kernel ``<a x, a y>``.
    sigma : float, default=1.0
        ``s`` of the RBF static kernel ``exp(-|x - y|^2 / s)``.
    dyadic_order : int, default=0
        The PDE's grid is refined ``2 ** dyadic_order`` times along each path (0:
        the series' own sampling); finer is closer to the exact kernel.
    normalize : bool, default=False
        Divide by ``sqrt(K(x, x) K(y, y))``.

    Returns
    -------
    K : ndarray of shape (len(A), len(B))
        Non-finite where the kernel overflows (or, normalised, where the PDE's
        approximation of some ``K(x, x)`` is not positive).

    Examples
    --------
    >>> import numpy as np
    >>> X = [np.sin(np.linspace(0, 3, 20)), np.cos(np.linspace(0, 3, 15))]
    >>> K = signature_gram(X, normalize=True)  # doctest: +SKIP
    >>> np.allclose(np.diag(K), 1.0)  # doctest: +SKIP
    True
    """
    _require()
    kernel = _static(static, scale, sigma)
    P = _paths(A)
    Q = P if B is None else _paths(B)
    if Q.shape[2] != P.shape[2]:
        raise ValueError("A and B have different numbers of channels")
    if isinstance(dyadic_order, bool) or not isinstance(dyadic_order, (int, np.integer)) \
            or dyadic_order < 0:
        raise ValueError(f"dyadic_order must be an integer >= 0; got {dyadic_order!r}")
    K = _raw(P, Q, kernel, int(dyadic_order), n_jobs)
    if not normalize:
        return K
    if B is None:
        d = np.diag(K).copy()
        return _normalised(K, d, d)
    return _normalised(K, _diag(P, kernel, int(dyadic_order), n_jobs),
                       _diag(Q, kernel, int(dyadic_order), n_jobs))


def _grams(A, settings, *, n_jobs=None):
    """Training Grams of ``settings`` in order: one computation per static kernel."""
    _require()
    P = _paths(A)
    key, K = None, None
    for p in settings:
        k = (p.get("static", "linear"), p.get("scale", 1.0), p.get("sigma", 1.0),
             p.get("dyadic_order", 0))
        if k != key:
            K = _raw(P, P, _static(*k[:3]), k[3], n_jobs)
            key = k
        G = K
        if p.get("normalize", False):
            d = np.diag(K).copy()
            G = _normalised(K, d, d)
        # overflowed (or a non-positive diagonal to normalise by): the search scores it
        # NaN, with a warning
        yield G if np.isfinite(G).all() else None


def signature_spec():
    """Return the signature kernel as an entry of the kernel registry (needs pysiglib).

    Returns
    -------
    spec : KernelSpec
        Named ``"sigkernel"``; its ``gram`` is :func:`signature_gram`, its ``grams``
        computes one Gram per static kernel for its raw and normalised settings.
    """
    return KernelSpec("sigkernel", signature_gram, "sequences",
                      "PDE signature kernel (pysiglib), z-normalised series with time",
                      _grams)
