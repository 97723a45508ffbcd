"""The NTK of a wide 1-D convolutional ReLU network with global average pooling.

The convolutional counterpart of the RNTK's mean readout (Arora et al. 2019, "On exact
computation with an infinitely wide neural net", the CNTK with GAP, in one dimension).
The network has ``L = n_layers`` convolutional layers of ``n -> infinity`` channels in
the NTK parameterisation (standard normal weights and biases, scales in the forward
pass), ``q = taps`` centred taps at dilation ``d_l``, zero padding that keeps every
step (``"same"``), ReLU, and a linear readout of the time average::

    h^1_t = sigma_w / sqrt(q m) sum_j W^1_j x_(t + o_j) + sigma_b b^1
    h^l_t = sigma_w / sqrt(q n) sum_j W^l_j relu(h^(l-1))_(t + o_j) + sigma_b b^l
    f(x)  = sigma_v / sqrt(n) v . (1 / T) sum_t relu(h^L_t)

with offsets ``o_j = (j - (q - 1) / 2) d_l`` and inputs outside ``0 <= t < T`` zero.
Its kernels between a series ``x`` (``T`` steps) and ``x'`` (``T'`` steps) are sums over
every pair of steps ``(t, t')``, the patch sums running along the diagonals::

    Sigma^1_(t,t')     = sigma_w^2 / (q m) sum_j <x_(t+o_j), x'_(t'+o_j)> + sigma_b^2
    V^l, V'^l           = V_phi, V_phi' of [[Sigma^l_(t,t)(x,x), Sigma^l_(t,t')],
                                            [Sigma^l_(t,t'), Sigma^l_(t',t')(x',x')]]
    Sigma^(l+1)_(t,t') = sigma_w^2 / q sum_j V^l_(t+o_j, t'+o_j) + sigma_b^2
    Theta^1 = Sigma^1,  Theta^(l+1)_(t,t') = Sigma^(l+1)_(t,t')
                        + sigma_w^2 / q sum_j (Theta^l V'^l)_(t+o_j, t'+o_j)
    NNGP = sigma_v^2 / (T T') sum_(t,t') V^L_(t,t')
    NTK  = sigma_v^2 / (T T') sum_(t,t') (V^L + Theta^L V'^L)_(t,t')

(``V_phi`` and ``V_phi'`` of the ReLU as in the project's math spec; entries at steps
outside a series are zero.) Series of different lengths are compared as they are: each
network averages over its own steps. A pair costs ``O(T T' q L)``.
"""

import math
import numbers

import numpy as np
from numba import njit, prange

from .._utils import (
    JIT_OPTIONS,
    as_sequences,
    check_finite_kernel,
    check_int,
    check_n_jobs,
    check_nonnegative,
    check_same_channels,
    numba_threads,
)

__all__ = ["cntk_kernel"]


def _offsets(taps, dilations):
    """Return the ``(L, q)`` step offsets ``(j - (q - 1) / 2) d_l`` of every layer."""
    centre = (taps - 1) // 2
    return np.array([[(j - centre) * d for j in range(taps)] for d in dilations],
                    dtype=np.int64)


def _self_variances(xs, offsets, sw2, sb2):
    """Return ``Sigma^l_(t,t)(x, x)`` of every series: a list of ``(L, T_i)`` arrays."""
    n_layers, q = offsets.shape
    out = []
    for x in xs:
        T = x.shape[0]
        var = np.empty((n_layers, T))
        prev = np.einsum("tc,tc->t", x, x) / x.shape[1]  # per-channel mean square
        for layer in range(n_layers):
            acc = np.zeros(T)
            for o in offsets[layer]:
                lo, hi = max(0, -o), min(T, T - o)
                if lo < hi:
                    acc[lo:hi] += prev[lo + o:hi + o]
            var[layer] = sw2 / q * acc + sb2
            prev = var[layer] / 2.0  # V_phi of a step with itself: half its variance
        out.append(var)
    return out


@njit(**JIT_OPTIONS)
def _shift_sum(A, tx, ty, offs, out):
    """``out[t, s] = sum_j A[t + o_j, s + o_j]`` over the pairs inside both series."""
    out[:tx, :ty] = 0.0
    for o in offs:
        t0, t1 = max(0, -o), min(tx, tx - o)
        s0, s1 = max(0, -o), min(ty, ty - o)
        for t in range(t0, t1):
            for s in range(s0, s1):
                out[t, s] += A[t + o, s + o]


@njit(**JIT_OPTIONS)
def _pair(x, tx, dx, y, ty, dy, same, offsets, sw2, sb2, ntk, G, S, Q, W):
    """Return the kernel of ``x[:tx]`` and ``y[:ty]``, in the work arrays ``G, S, Q, W``."""
    n_layers, q = offsets.shape
    m = x.shape[1]
    for t in range(tx):
        for s in range(ty):
            acc = 0.0
            for c in range(m):
                acc += x[t, c] * y[s, c]
            G[t, s] = acc / m
    _shift_sum(G, tx, ty, offsets[0], S)
    for t in range(tx):
        for s in range(ty):
            S[t, s] = sw2 / q * S[t, s] + sb2
            if ntk:
                Q[t, s] = S[t, s]
    total = 0.0
    for layer in range(n_layers):
        last = layer + 1 == n_layers
        for t in range(tx):
            a = dx[layer, t]
            for s in range(ty):
                b = dy[layer, s]
                norm = math.sqrt(a) * math.sqrt(b)
                if same and t == s:
                    c = 1.0
                elif norm > 0.0:
                    c = min(1.0, max(-1.0, S[t, s] / norm))
                else:
                    c = 0.0
                theta = math.acos(c)
                v = norm * (math.sqrt(max(0.0, 1.0 - c * c)) + (math.pi - theta) * c) / (
                    2.0 * math.pi)
                G[t, s] = v
                if ntk:  # the tangent part: Q times the derivative's expectation
                    W[t, s] = Q[t, s] * ((math.pi - theta) / (2.0 * math.pi))
                if last:
                    total += v + W[t, s] if ntk else v
        if not last:
            _shift_sum(G, tx, ty, offsets[layer + 1], S)
            if ntk:
                _shift_sum(W, tx, ty, offsets[layer + 1], Q)
            for t in range(tx):
                for s in range(ty):
                    S[t, s] = sw2 / q * S[t, s] + sb2
                    if ntk:
                        Q[t, s] = S[t, s] + sw2 / q * Q[t, s]
    return total / (tx * ty)


@njit(parallel=True, **JIT_OPTIONS)
def _gram(xd, xlen, dx, yd, ylen, dy, pairs, n_chunks, offsets, sw2, sb2, ntk, symmetric,
          out):
    """Fill ``out[i, k]`` for every pair ``(i, k)`` of ``pairs``, chunks in parallel."""
    n_pairs = pairs.shape[0]
    tx_max, ty_max = xd.shape[1], yd.shape[1]
    for chunk in prange(n_chunks):
        G = np.empty((tx_max, ty_max))
        S = np.empty((tx_max, ty_max))
        Q = np.empty((tx_max, ty_max))
        W = np.empty((tx_max, ty_max))
        for p in range(chunk * n_pairs // n_chunks, (chunk + 1) * n_pairs // n_chunks):
            i, k = pairs[p, 0], pairs[p, 1]
            value = _pair(xd[i], xlen[i], dx[i], yd[k], ylen[k], dy[k],
                          symmetric and i == k, offsets, sw2, sb2, ntk, G, S, Q, W)
            out[i, k] = value
            if symmetric:
                out[k, i] = value


def _packed(xs, t_max, variances):
    """Start-aligned, zero-padded series ``(n, t_max, m)`` and variances ``(n, L, t_max)``."""
    n_layers = variances[0].shape[0]
    data = np.zeros((len(xs), t_max, xs[0].shape[1]))
    var = np.ones((len(xs), n_layers, t_max))
    for i, (x, v) in enumerate(zip(xs, variances)):
        data[i, :x.shape[0]] = x
        var[i, :, :x.shape[0]] = v
    return data, var


def cntk_kernel(X, Y=None, *, n_layers=1, taps=3, dilation=1, sigma_w=2**0.5, sigma_b=0.0,
                sigma_v=1.0, kind="ntk", n_jobs=None):
    """NTK of an infinitely wide 1-D convolutional ReLU network with global average pooling.

    The kernel of ``n_layers`` dilated convolutions of ``taps`` centred taps, each
    followed by a ReLU, and a linear readout of the average over time (the CNTK with
    GAP of Arora et al. 2019, in one dimension; network and formulas in the module
    docstring). Every window of one series is compared with every window of the other,
    so a local shape counts wherever it occurs: the convolutional counterpart of the
    RNTK's mean readout, and the nonlinear, deep cousin of
    :func:`rntk.scaled_conv_kernel`.

    Parameters
    ----------
    X : array-like or list of array-like
        Series in any layout of :func:`rntk.rntk_kernel` (2-D, 3-D, or a list of
        arrays of their own lengths, trailing NaN padding). Series of different
        lengths are compared as they are (each network averages over its own steps).
    Y : same as X, optional
        Second set; ``None`` means ``Y = X`` (a symmetric Gram).
    n_layers : int, default=1
        Number of convolutional layers ``L >= 1``.
    taps : int, default=3
        Width ``q`` of every convolution, an odd number (centred windows).
    dilation : int or sequence of int, default=1
        Step between the taps, one for every layer or one per layer (e.g. ``(1, 2,
        4)`` for a receptive field that doubles with depth).
    sigma_w : float, default=sqrt(2)
        Weight scale of the convolutions (``sqrt(2)`` keeps ReLU variances constant).
    sigma_b : float, default=0.0
        Bias scale of the convolutions.
    sigma_v : float, default=1.0
        Readout weight scale (the whole kernel scales with ``sigma_v ** 2``).
    kind : {"ntk", "nngp"}, default="ntk"
        The tangent kernel, or the Gaussian-process (NNGP) kernel of the output.
    n_jobs : int, default=None
        Numba threads for this call; ``None``: the current setting, ``-1``: all cores.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix (float64; symmetric by construction when ``Y`` is None).

    Raises
    ------
    ValueError
        For an even or non-positive ``taps``, dilations that are not positive ints or
        not one per layer, ``n_layers < 1``, negative scales, an unknown ``kind``,
        different channel counts, and the input errors of ``rntk_kernel`` (NaN inside
        a series, infinite values, empty series).

    See Also
    --------
    scaled_conv_kernel : The NTK of a linear RNN, a scaled causal convolution.
    rntk_kernel : The RNTK; ``readout="mean"`` is its counterpart over time.

    Notes
    -----
    A pair of series of lengths ``T`` and ``T'`` costs ``O(T T' (q L + m))`` and one
    ``arccos`` per pair of steps and layer, against ``O(T T' m)`` for the RNTK's mean
    readout: pool long series first (:class:`rntk.BlockMeans`).

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import cntk_kernel
    >>> X = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    >>> K = cntk_kernel(X, n_layers=2)
    >>> K.shape, bool(np.allclose(K, K.T))
    ((2, 2), True)
    >>> bool(np.isclose(K[0, 0], K[1, 1]))  # the same bump, shifted by one step
    True
    """
    n_layers = check_int(n_layers, "n_layers")
    taps = check_int(taps, "taps")
    if taps % 2 == 0:
        raise ValueError(f"taps must be odd (centred windows); got {taps}")
    if isinstance(dilation, numbers.Integral) and not isinstance(dilation, bool):
        dilations = [dilation] * n_layers
    else:
        try:
            dilations = list(dilation)
        except TypeError:
            raise ValueError(
                f"dilation must be a positive int or one per layer; got {dilation!r}"
            ) from None
        if len(dilations) != n_layers:
            raise ValueError(f"dilation has {len(dilations)} entries for {n_layers} layers; "
                             "give one per layer, or a single int")
    dilations = [check_int(d, "every dilation") for d in dilations]
    sw2 = check_nonnegative(sigma_w, "sigma_w") ** 2
    sb2 = check_nonnegative(sigma_b, "sigma_b") ** 2
    sv2 = check_nonnegative(sigma_v, "sigma_v") ** 2
    if kind not in ("ntk", "nngp"):
        raise ValueError(f"kind must be 'ntk' or 'nngp'; got {kind!r}")
    check_n_jobs(n_jobs)
    xs = as_sequences(X, "X")
    ys = xs if Y is None else as_sequences(Y, "Y")
    check_same_channels(xs, ys)
    offsets = _offsets(taps, dilations)
    xd, dx = _packed(xs, max(x.shape[0] for x in xs), _self_variances(xs, offsets, sw2, sb2))
    xlen = np.array([x.shape[0] for x in xs], dtype=np.int64)
    if Y is None:
        yd, dy, ylen = xd, dx, xlen
        pairs = np.column_stack(np.triu_indices(len(xs))).astype(np.int64)
    else:
        yd, dy = _packed(ys, max(y.shape[0] for y in ys),
                         _self_variances(ys, offsets, sw2, sb2))
        ylen = np.array([y.shape[0] for y in ys], dtype=np.int64)
        pairs = np.indices((len(xs), len(ys))).reshape(2, -1).T.astype(np.int64)
    out = np.empty((len(xs), len(ys)))
    with numba_threads(n_jobs):
        _gram(xd, xlen, dx, yd, ylen, dy, np.ascontiguousarray(pairs), min(len(pairs), 64),
              offsets, sw2, sb2, kind == "ntk", Y is None, out)
    out *= sv2
    return check_finite_kernel(out, "cntk_kernel", dict(
        n_layers=n_layers, taps=taps, dilation=dilation, sigma_w=sigma_w, sigma_b=sigma_b,
        sigma_v=sigma_v, kind=kind))
