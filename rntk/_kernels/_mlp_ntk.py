"""The Neural Tangent Kernel of a fully connected ReLU network (the RNTK paper's NTK baseline).

The network has ``L = n_layers`` hidden layers of width ``n -> infinity`` in the NTK
parameterisation (standard normal weights, scales in the forward pass) and a linear
readout without bias::

    h^1 = sigma_w / sqrt(d) W^1 x + sigma_b b^1
    h^l = sigma_w / sqrt(n) W^l relu(h^(l-1)) + sigma_b b^l,      l = 2..L
    f   = sigma_v / sqrt(n) v . relu(h^L)

Its kernels (Jacot et al. 2018; Arora et al. 2019; RNTK paper Appendix A.1 with the
ReLU derivative ``V_phi'[K] = (pi - arccos c) / (2 pi)`` of the project's math spec)::

    Sigma^1 = sigma_w^2 <x, x'> / d + sigma_b^2
    Sigma^(l+1) = sigma_w^2 V_phi[K^l] + sigma_b^2
    K^l = [[Sigma^l(x, x), Sigma^l(x, x')], [Sigma^l(x, x'), Sigma^l(x', x')]]
    Theta = sigma_v^2 ( V_phi[K^L]
                        + sum_l Sigma^l prod_(l'=l)^(L-1) (sigma_w^2 V_phi'[K^l']) V_phi'[K^L] )

The paper prints ``sigma_w^2`` in front of the last derivative factor; the readout has
scale ``sigma_v`` (which equals the paper's formula for ``sigma_v = sigma_w``).
"""

import math
import numbers

import numpy as np

from .._utils import (
    as_sequences,
    check_finite_kernel,
    check_nonnegative,
    check_same_channels,
    flatten_padded,
)

__all__ = ["mlp_ntk_kernel"]


def _relu_v(s1, s2, s12, same_diag):
    """ReLU ``V_phi`` and ``V_phi'`` of the covariances (vectorised)."""
    s = np.sqrt(np.outer(s1, s2))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(s > 0, s12 / np.where(s > 0, s, 1.0), 0.0)
    np.clip(c, -1.0, 1.0, out=c)
    if same_diag:
        np.fill_diagonal(c, 1.0)
    theta = np.arccos(c)
    v = s * (np.sqrt(1.0 - c * c) + (math.pi - theta) * c) / (2.0 * math.pi)
    dv = (math.pi - theta) / (2.0 * math.pi)
    return v, dv


def mlp_ntk_depths(A, B, n_layers, sigma_w, sigma_b, sigma_v, kind="ntk", symmetric=False):
    """Kernels of depths ``1..n_layers`` from flattened inputs ``A`` (n, d), ``B`` (n', d).

    Returns a list of ``n_layers`` Grams, entry ``l - 1`` being the kernel of the
    network with ``l`` hidden layers. One pass costs about as much as the deepest one.
    """
    d = A.shape[1]
    sw2, sb2, sv2 = sigma_w**2, sigma_b**2, sigma_v**2
    sig = sw2 * (A @ B.T) / d + sb2
    sa = sw2 * np.einsum("ij,ij->i", A, A) / d + sb2
    sb = sa if symmetric else sw2 * np.einsum("ij,ij->i", B, B) / d + sb2
    if symmetric:
        np.fill_diagonal(sig, sa)
    q = sig.copy()
    out = []
    for layer in range(n_layers):
        v, dv = _relu_v(sa, sb, sig, symmetric)
        if kind == "nngp":
            out.append(sv2 * v)
        else:
            out.append(sv2 * (q * dv + v))
        if layer + 1 < n_layers:
            sig = sw2 * v + sb2
            # self terms: c = 1, V_phi[K] = k / 2
            sa = sw2 * sa / 2.0 + sb2
            sb = sa if symmetric else sw2 * sb / 2.0 + sb2
            q = q * (sw2 * dv) + sig
    return out


def _prepare(X, Y, pad):
    xs = as_sequences(X, "X")
    ys = None if Y is None else as_sequences(Y, "Y")
    if ys is not None:
        check_same_channels(xs, ys, "X", "Y")
    lengths = [s.shape[0] for s in xs] + ([] if ys is None else [s.shape[0] for s in ys])
    t_max = max(lengths)
    if pad is None:
        if min(lengths) != t_max:
            raise ValueError(
                "mlp_ntk_kernel needs series of equal length (the NTK of an MLP acts on "
                f"fixed-size vectors); got lengths from {min(lengths)} to {t_max}. Pass "
                "pad='zero' to zero-pad every series at its end to the longest length, or "
                "pad=<int> to pad to a fixed length."
            )
        length = t_max
    elif isinstance(pad, str):
        if pad != "zero":
            raise ValueError(f"pad must be None, 'zero' or a positive int; got {pad!r}")
        length = t_max
    elif isinstance(pad, numbers.Integral) and not isinstance(pad, bool):
        if pad < t_max:
            raise ValueError(f"pad={pad} is shorter than the longest series ({t_max} steps)")
        length = int(pad)
    else:
        raise TypeError(f"pad must be None, 'zero' or a positive int; got {pad!r}")
    A = flatten_padded(xs, length)
    B = A if ys is None else flatten_padded(ys, length)
    return A, B


def mlp_ntk_kernel(X, Y=None, *, n_layers=1, sigma_w=2**0.5, sigma_b=0.0, sigma_v=1.0,
                   kind="ntk", pad=None):
    """NTK of an infinitely wide ReLU multilayer perceptron on flattened series.

    The baseline "NTK" kernel of the RNTK paper (Appendix A.1): each series is
    flattened to a vector of ``n_timesteps * n_channels`` values and compared by the
    Neural Tangent Kernel of a fully connected ReLU network with ``n_layers`` hidden
    layers (NTK parameterisation, linear readout without bias; formulas in the module
    docstring).

    Parameters
    ----------
    X : array-like or list of array-like
        Series in any layout accepted by :func:`rntk.rntk_kernel`: 2-D
        ``(n_samples, n_timesteps)``, 3-D ``(n_samples, n_timesteps, n_channels)``,
        a list of ``(T_i,)`` / ``(T_i, n_channels)`` arrays, trailing NaN padding.
    Y : same as X, optional
        Second set; ``None`` means ``Y = X`` (a symmetric Gram).
    n_layers : int, default=1
        Number of hidden layers ``L >= 1``.
    sigma_w : float, default=sqrt(2)
        Weight scale of the hidden layers (``sqrt(2)`` keeps ReLU variances constant).
    sigma_b : float, default=0.0
        Bias scale of the hidden layers.
    sigma_v : float, default=1.0
        Readout weight scale (the whole kernel scales with ``sigma_v ** 2``).
    kind : {"ntk", "nngp"}, default="ntk"
        The tangent kernel, or the Gaussian-process (NNGP) kernel of the output.
    pad : None, "zero" or int, default=None
        ``None``: all series (of X and Y) must have the same length. ``"zero"``:
        zero-pad each series at its end to the longest series of X and Y together (as
        the paper does for variable lengths); an int pads to that fixed length, which
        keeps ``K(X, X)`` and ``K(X_test, X)`` on the same scale when the longest
        series differ.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix (float64).

    Raises
    ------
    ValueError
        For series of different lengths without ``pad``, different channel counts,
        negative scales, ``n_layers < 1``, and the input errors of ``rntk_kernel``.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import mlp_ntk_kernel
    >>> X = np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
    >>> K = mlp_ntk_kernel(X, n_layers=2)
    >>> K.shape, bool(np.allclose(K, K.T))
    ((2, 2), True)
    >>> mlp_ntk_kernel([[1.0, 2.0], [1.0]], pad="zero").shape
    (2, 2)
    """
    if not isinstance(n_layers, numbers.Integral) or isinstance(n_layers, bool) or n_layers < 1:
        raise ValueError(f"n_layers must be an int >= 1; got {n_layers!r}")
    sigma_w = check_nonnegative(sigma_w, "sigma_w")
    sigma_b = check_nonnegative(sigma_b, "sigma_b")
    sigma_v = check_nonnegative(sigma_v, "sigma_v")
    if kind not in ("ntk", "nngp"):
        raise ValueError(f"kind must be 'ntk' or 'nngp'; got {kind!r}")
    A, B = _prepare(X, Y, pad)
    with np.errstate(over="ignore", invalid="ignore"):
        K = mlp_ntk_depths(A, B, int(n_layers), sigma_w, sigma_b, sigma_v, kind,
                           symmetric=Y is None)[-1]
    return check_finite_kernel(K, "mlp_ntk_kernel", dict(
        n_layers=n_layers, sigma_w=sigma_w, sigma_b=sigma_b, sigma_v=sigma_v, kind=kind))
