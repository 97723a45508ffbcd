"""The Recurrent Neural Tangent Kernel and the RNN-NNGP kernel (Numba engine).

The formulas are those of the RNTK paper (Alemohammad et al., Thm. 1 and App. B.3),
with its misprints corrected as in the project's math spec:

* ReLU ``V_phi'[K] = (pi - arccos c) / (2 pi)``;
* erf ``V_phi[K] = (2/pi) arcsin(2 k3 / sqrt((1 + 2 k1)(1 + 2 k2)))``;
* the backward term of layer ``l < L`` is ``Pi^(l+1, t)`` (same time step).

Sequences of different lengths are aligned at their end, so every pair only needs
the "diagonal" ``(t, t + tau)`` of each covariance: ``O(L min(T, T'))`` per pair.

Engine layout. Both sets are stacked end-aligned on a common time axis ``P``; a
pair is active at ``P`` when both series have started. For one row ``i`` and a tile
of columns ``j`` the recursion runs forward over ``P`` and layers, vectorised over
the tile, storing ``Sigma`` and ``V_phi'`` per (layer, step, column); the backward
pass then accumulates ``sum Pi * Sigma``. Before the first step of a pair the
recurrent covariance is zero (independent initial states), or ``sigma_h^2`` for a
sample paired with itself.
"""

import math
from contextlib import contextmanager

import numba
import numpy as np
from numba import njit, prange

from ._inputs import as_sequences, check_nonnegative, check_same_channels, pack_end_aligned

__all__ = ["rntk_kernel", "rntk_diag"]

ACTIVATIONS = {"relu": 0, "erf": 1, "linear": 2}
KINDS = ("ntk", "nngp")
_TILE = 256  # columns per work item: bounds per-thread memory to L * T * _TILE * 16 bytes

# Chebyshev coefficients of g(x) = arccos(x) / sqrt(1 - x) on [0, 1] (variable u = 2x - 1),
# accurate to ~4e-16 in arccos. Used instead of math.acos so that the hot loop vectorises.
_ACOS_CHEB = np.array([
    1.4866664932871034, -0.07770606743304581, 0.005770882844168942, -0.0005768436668951073,
    6.644734385570558e-05, -8.316955756105665e-06, 1.0993009051948328e-06,
    -1.5100156898743052e-07, 2.1343876112596863e-08, -3.08436075856294e-09,
    4.536229197090304e-10, -6.767771278685552e-11, 1.0217875048754394e-11,
    -1.5582278427264927e-12, 2.396757178705779e-13, -3.713945243641972e-14,
    5.7923783087289715e-15, -9.08558576998262e-16, 1.4323355894258692e-16,
])


@njit(inline="always", fastmath=True, cache=True)
def _acos(x):
    """Branch-free arccos on [-1, 1] (Clenshaw sum of a Chebyshev series)."""
    a = abs(x)
    u2 = 2.0 * (2.0 * a - 1.0)
    b1 = 0.0
    b2 = 0.0
    for k in range(_ACOS_CHEB.shape[0] - 1, 0, -1):
        b0 = _ACOS_CHEB[k] + u2 * b1 - b2
        b2 = b1
        b1 = b0
    g = _ACOS_CHEB[0] + 0.5 * u2 * b1 - b2
    r = math.sqrt(1.0 - a) * g
    return r if x >= 0.0 else math.pi - r


@njit(inline="always", fastmath=True, cache=True)
def _v_phi(act, k1, k2, k3, same):
    """Return ``(V_phi[K], V_phi'[K])`` for ``K = [[k1, k3], [k3, k2]]``.

    ``same`` forces the correlation to exactly 1 (a sample paired with itself).
    """
    if act == 0:  # ReLU
        s = math.sqrt(k1 * k2)
        c = k3 / s if s > 0.0 else 0.0
        c = min(max(c, -1.0), 1.0)
        if same:
            c = 1.0
        th = _acos(c)
        v = s * (math.sqrt(1.0 - c * c) + (math.pi - th) * c) / (2.0 * math.pi)
        return v, (math.pi - th) / (2.0 * math.pi)
    elif act == 1:  # erf
        d = math.sqrt((1.0 + 2.0 * k1) * (1.0 + 2.0 * k2))
        a = min(max(2.0 * k3 / d, -1.0), 1.0)
        if same:
            a = 2.0 * k1 / (1.0 + 2.0 * k1)
        v = 2.0 / math.pi * math.asin(a)
        return v, 4.0 / (math.pi * d * math.sqrt(1.0 - a * a))
    return k3, 1.0  # linear


@njit(cache=True)
def _self_variances(data, start, act, sw2, su2, sb2, sh2):
    """Pre-activation variances ``Sigma^(l,t)(x, x)`` (sigma_h included), end-aligned.

    Returns an array ``(L, T_max, n)``; positions before a series starts hold 1.0 so
    that masked lanes of the pair kernel stay finite.
    """
    t_max, m, n = data.shape
    n_layers = sw2.shape[0]
    out = np.ones((n_layers, t_max, n))
    for i in range(n):
        for l in range(n_layers):
            v_rec = sh2  # covariance of the initial hidden state
            for p in range(start[i], t_max):
                if l == 0:
                    inp = 0.0
                    for k in range(m):
                        inp += data[p, k, i] * data[p, k, i]
                    inp *= su2[0] / m
                else:
                    below = out[l - 1, p, i]
                    inp = su2[l] * _v_phi(act, below, below, below, True)[0]
                s = sw2[l] * v_rec + inp + sb2[l]
                out[l, p, i] = s
                v_rec = _v_phi(act, s, s, s, True)[0]
    return out


@njit(parallel=True, fastmath=True, cache=True)
def _pair_kernel(xdata, xstart, xself, ydata, ystart, yself, items, symmetric, diag_out,
                 act, sw2, su2, sb2, sh2, sv2, want_ntk, out):
    """Fill ``out`` with the kernel of each work item ``(i, j0, j1)``: row i, columns j0:j1.

    ``symmetric``: Y is X, the pair (i, i) is a sample with itself, and ``out[j, i]`` is
    filled too. ``diag_out``: write ``out[i, 0]`` (used by ``rntk_diag``).
    """
    t_max, m, _ = xdata.shape
    n_layers = sw2.shape[0]
    last = t_max - 1
    for it in prange(items.shape[0]):
        i = items[it, 0]
        j0 = items[it, 1]
        nb = items[it, 2] - j0
        p0 = xstart[i]
        sig = np.zeros((n_layers, t_max, nb))
        dot = np.zeros((n_layers, t_max, nb))
        v_rec = np.zeros((n_layers, nb))
        inp = np.empty(nb)
        k_out = np.zeros(nb)
        same = np.zeros(nb, dtype=np.bool_)
        if symmetric and j0 <= i < j0 + nb:
            same[i - j0] = True
            for l in range(n_layers):
                v_rec[l, i - j0] = sh2
        # forward: Sigma^(l,P) and V_phi'(l,P) for every column of the tile
        for p in range(p0, t_max):
            for l in range(n_layers):
                if l == 0:
                    inp[:] = 0.0
                    for k in range(m):
                        xv = xdata[p, k, i]
                        for jj in range(nb):
                            inp[jj] += xv * ydata[p, k, j0 + jj]
                    scale = su2[0] / m
                else:
                    scale = su2[l]
                    for jj in range(nb):
                        inp[jj] = v_rec[l - 1, jj]
                k1 = xself[l, p, i]
                for jj in range(nb):
                    active = p >= ystart[j0 + jj]
                    s = sw2[l] * v_rec[l, jj] + scale * inp[jj] + sb2[l]
                    v, vd = _v_phi(act, k1, yself[l, p, j0 + jj], s, same[jj])
                    sig[l, p, jj] = s if active else 0.0
                    dot[l, p, jj] = vd if active else 0.0
                    v_rec[l, jj] = v if active else 0.0
        for jj in range(nb):
            k_out[jj] = sv2 * v_rec[n_layers - 1, jj]
        res = k_out
        if want_ntk:
            # backward: Pi^(l,P) = D (sw2 Pi^(l,P+1) + su2^(l+1) Pi^(l+1,P)); top: sigma_v^2
            theta = k_out.copy()
            pi_next = np.zeros((n_layers, nb))
            for p in range(last, p0 - 1, -1):
                for l in range(n_layers - 1, -1, -1):
                    for jj in range(nb):
                        if l == n_layers - 1:
                            up = sv2 if p == last else 0.0
                        else:
                            up = su2[l + 1] * pi_next[l + 1, jj]
                        pi = dot[l, p, jj] * (sw2[l] * pi_next[l, jj] + up)
                        theta[jj] += pi * sig[l, p, jj]
                        pi_next[l, jj] = pi
            res = theta
        for jj in range(nb):
            j = j0 + jj
            if diag_out:
                out[i, 0] = res[jj]
            else:
                out[i, j] = res[jj]
                if symmetric:
                    out[j, i] = res[jj]
    return out


@contextmanager
def numba_threads(n_jobs):
    """Run a block with ``n_jobs`` Numba threads, restoring the previous count after.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` keeps the current count; ``-1`` uses all available threads; a
        negative ``-k`` uses all but ``k - 1``.

    Yields
    ------
    n_threads : int
        The thread count in force inside the block.
    """
    previous = numba.get_num_threads()
    if n_jobs is None:
        yield previous
        return
    if not isinstance(n_jobs, (int, np.integer)) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    available = numba.config.NUMBA_NUM_THREADS
    n = n_jobs if n_jobs > 0 else max(1, available + 1 + n_jobs)
    n = min(n, available)
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)


def _check_params(n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind):
    if isinstance(n_layers, bool) or not isinstance(n_layers, (int, np.integer)):
        raise TypeError(f"n_layers must be an integer, got {n_layers!r}")
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}"
        )
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose 'ntk' or 'nngp'")
    n_layers = int(n_layers)
    return dict(
        act=ACTIVATIONS[activation],
        sw2=check_nonnegative(sigma_w, "sigma_w", n_layers) ** 2,
        su2=check_nonnegative(sigma_u, "sigma_u", n_layers) ** 2,
        sb2=check_nonnegative(sigma_b, "sigma_b", n_layers) ** 2,
        sh2=check_nonnegative(sigma_h, "sigma_h") ** 2,
        sv2=check_nonnegative(sigma_v, "sigma_v") ** 2,
        want_ntk=kind == "ntk",
    )


def _prepare(seqs, t_max, p):
    data, start = pack_end_aligned(seqs)
    pad = t_max - data.shape[0]
    # time-major with channels before samples: the innermost loop runs over samples
    data = np.ascontiguousarray(np.pad(data, ((pad, 0), (0, 0), (0, 0))).transpose(0, 2, 1))
    start = start + pad
    self_var = _self_variances(data, start, p["act"], p["sw2"], p["su2"], p["sb2"], p["sh2"])
    return data, start, self_var


def _items(n_rows, n_cols, symmetric):
    """Work items ``(row, first column, end column)``, in tiles of ``_TILE`` columns.

    For a symmetric Gram the rows ``i`` and ``n - 1 - i`` (long and short) are put side
    by side, so that the equal contiguous chunks of ``prange`` carry equal work.
    """
    rows = []
    order = range(n_rows)
    if symmetric:
        half = np.arange((n_rows + 1) // 2)
        order = np.stack([half, n_rows - 1 - half], axis=1).ravel()[:n_rows]
    for i in order:
        for j0 in range(i if symmetric else 0, n_cols, _TILE):
            rows.append((i, j0, min(j0 + _TILE, n_cols)))
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def rntk_kernel(X, Y=None, *, n_layers=1, sigma_w=2**0.5, sigma_u=1.0, sigma_b=0.0,
                sigma_h=0.0, sigma_v=1.0, activation="relu", kind="ntk", n_jobs=None):
    r"""Gram matrix of the Recurrent Neural Tangent Kernel (or of the RNN-NNGP kernel).

    The kernel of an infinitely wide Elman RNN with ``n_layers`` layers in the NTK
    parameterisation, reading each sequence to its end and with a linear readout of
    the last hidden state (Alemohammad et al., Thm. 1). Sequences may have different
    lengths: they are aligned at their end and compared without padding.

    Parameters
    ----------
    X : array-like of shape (n_X, T) or (n_X, T, n_channels), or list of arrays
        Sequences: 2-D univariate, 3-D time-major multivariate, or a list of
        ``(T_i,)`` / ``(T_i, n_channels)`` arrays. Trailing NaN steps are padding.
    Y : same layout as X, default=None
        Second set. ``None`` computes ``K(X, X)``, symmetric, whose diagonal pairs
        each sample with itself (it then carries the ``sigma_h`` term).
    n_layers : int, default=1
        Number of recurrent layers ``L``.
    sigma_w : float or array-like of shape (n_layers,), default=sqrt(2)
        Recurrent weight scale of each layer.
    sigma_u : float or array-like of shape (n_layers,), default=1.0
        Input weight scale of each layer (layer 1 reads the data, divided by the
        channel count).
    sigma_b : float or array-like of shape (n_layers,), default=0.0
        Bias scale of each layer.
    sigma_h : float, default=0.0
        Standard deviation of the initial hidden state.
    sigma_v : float, default=1.0
        Output weight scale.
    activation : {"relu", "erf", "linear"}, default="relu"
        Nonlinearity, with analytic expectations.
    kind : {"ntk", "nngp"}, default="ntk"
        ``"ntk"`` is the RNTK ``Theta``; ``"nngp"`` the output Gaussian-process
        kernel ``K`` of the untrained network.
    n_jobs : int, default=None
        Numba threads for this call (``None``: the current setting, ``-1``: all).
        The previous thread count is restored afterwards.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
        The Gram matrix, float64.

    See Also
    --------
    rntk_diag : The diagonal of ``rntk_kernel(X)`` in ``O(n T)``.

    Notes
    -----
    Cost ``O(n_X n_Y L min(T, T'))``; memory beyond the output is bounded per thread.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import rntk_kernel
    >>> X = [np.array([1.0, -1.0, 1.0]), np.array([0.5, 0.2])]
    >>> K = rntk_kernel(X)
    >>> K.shape
    (2, 2)
    >>> bool(np.allclose(K, K.T))
    True
    """
    p = _check_params(n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind)
    xs = as_sequences(X, "X")
    symmetric = Y is None
    ys = xs if symmetric else as_sequences(Y, "Y")
    check_same_channels(xs, ys)
    t_max = max(max(len(s) for s in xs), max(len(s) for s in ys))
    xdata, xstart, xself = _prepare(xs, t_max, p)
    if symmetric:
        ydata, ystart, yself = xdata, xstart, xself
    else:
        ydata, ystart, yself = _prepare(ys, t_max, p)
    out = np.zeros((len(xs), len(ys)))
    items = _items(len(xs), len(ys), symmetric)
    with numba_threads(n_jobs):
        _pair_kernel(xdata, xstart, xself, ydata, ystart, yself, items, symmetric, False,
                     p["act"], p["sw2"], p["su2"], p["sb2"], p["sh2"], p["sv2"],
                     p["want_ntk"], out)
    return out


def rntk_diag(X, *, n_layers=1, sigma_w=2**0.5, sigma_u=1.0, sigma_b=0.0, sigma_h=0.0,
              sigma_v=1.0, activation="relu", kind="ntk", n_jobs=None):
    """Diagonal of ``rntk_kernel(X)``: each sample paired with itself, in ``O(n T L)``.

    Parameters
    ----------
    X : array-like or list of arrays
        Sequences, in any layout accepted by :func:`rntk_kernel`.
    n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind, n_jobs
        As in :func:`rntk_kernel`.

    Returns
    -------
    d : ndarray of shape (n_X,)
        ``rntk_kernel(X)[i, i]`` for every ``i``.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import rntk_diag, rntk_kernel
    >>> X = np.random.default_rng(0).normal(size=(4, 6))
    >>> bool(np.allclose(rntk_diag(X), np.diag(rntk_kernel(X))))
    True
    """
    p = _check_params(n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind)
    xs = as_sequences(X, "X")
    t_max = max(len(s) for s in xs)
    xdata, xstart, xself = _prepare(xs, t_max, p)
    n = len(xs)
    items = np.stack([np.arange(n), np.arange(n), np.arange(1, n + 1)], axis=1)
    out = np.zeros((n, 1))
    with numba_threads(n_jobs):
        _pair_kernel(xdata, xstart, xself, xdata, xstart, xself, items.astype(np.int64), True,
                     True, p["act"], p["sw2"], p["su2"], p["sb2"], p["sh2"], p["sv2"],
                     p["want_ntk"], out)
    return out[:, 0]
