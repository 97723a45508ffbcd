"""The NTK of wide linear RNNs: a scaled 1-D convolution kernel (Emami et al.).

A linear RNN ``h_t = W h_{t-1} / sqrt(n) + F x_t``, ``y_t = C h_t / sqrt(n)`` with
``W_ij ~ N(0, nu_w)``, ``F ~ N(0, nu_f)``, ``C ~ N(0, nu_c)`` has, as its width ``n``
grows, the neural tangent kernel of the convolution ``y_t = sum_j sqrt(rho_j) theta_j
x_{t-j}`` (Emami et al., Thm. 3.2-3.3)::

    K(x, x')_{t,s} = sum_{j=0}^{min(t,s)} rho_j <x_{t-j}, x'_{s-j}>,
    rho_j = nu_c (j nu_f nu_w^(j-1) + nu_w^j) + nu_f nu_w^j.

Engine. Both outputs start from the Gram matrix of the time steps, computed with one
BLAS product. The last-output kernel is that product with rho-weighted steps. For the
full sequence kernel, ``rho_j = a nu^j + b j nu^(j-1)`` with ``a = nu_c + nu_f`` and
``b = nu_c nu_f``, so along each diagonal ``s - t = const`` of a ``T x T'`` block the two
sums ``A(u) = sum_j nu^j G(u - j)`` and ``B(u) = sum_j j nu^(j-1) G(u - j)`` obey
``A(u) = G(u) + nu A(u - 1)`` and ``B(u) = nu B(u - 1) + A(u - 1)``: a block costs
``O(T T')`` after its step Gram. Arbitrary taps ``rho`` use the direct causal sum,
``O(T T' min(T, T'))`` per block.
"""

import numbers

import numpy as np
from numba import njit, prange

from .._utils import (
    DOC,
    as_sequences,
    blas_threads,
    check_finite_kernel,
    check_nonnegative,
    check_same_channels,
    fill_doc,
    numba_threads,
    pack_end_aligned,
)

__all__ = ["check_rho", "scaled_conv_rho", "scaled_conv_kernel"]

OUTPUTS = ("last", "sequence")

#: The numpydoc entries of the variances of a linear RNN (kernel, estimator, model).
LINEAR_RNN_VARIANCES_DOC = """nu_w : float, default=0.3
    Variance of the recurrent weights (``nu_w < 1`` for a stable network).
nu_f : float, default=1.0
    Variance of the input weights.
nu_c : float, default=1.0
    Variance of the output weights."""


def scaled_conv_rho(T, *, nu_w=0.3, nu_f=1.0, nu_c=1.0):
    r"""Tap scales ``rho_0, ..., rho_{T-1}`` of the linear-RNN NTK (Emami et al., eq. 21).

    ``rho_j = nu_c (j nu_f nu_w^(j-1) + nu_w^j) + nu_f nu_w^j``: the weight the wide
    linear RNN's tangent kernel gives to the input ``j`` steps in the past. For
    ``nu_w < 1`` (a stable network) the taps decay geometrically, which is the RNN's
    implicit bias towards short memory.

    Parameters
    ----------
    T : int
        Number of taps (the longest sequence length to be compared).
    nu_w : float, default=0.3
        Variance of the recurrent weights ``W_ij`` (before the ``1/sqrt(n)`` scaling).
    nu_f : float, default=1.0
        Variance of the input weights ``F_ij``.
    nu_c : float, default=1.0
        Variance of the output weights ``C_ij``.

    Returns
    -------
    rho : ndarray of shape (T,)
        The non-negative tap scales, float64.

    See Also
    --------
    scaled_conv_kernel : The kernel these taps define.

    Examples
    --------
    >>> from rntk import scaled_conv_rho
    >>> scaled_conv_rho(3, nu_w=0.5, nu_f=1.0, nu_c=1.0).tolist()
    [2.0, 2.0, 1.5]
    """
    if isinstance(T, bool) or not isinstance(T, numbers.Integral):
        raise TypeError(f"T must be a positive integer, got {T!r}")
    if T < 1:
        raise ValueError(f"T must be a positive integer, got {T}")
    nu_w = check_nonnegative(nu_w, "nu_w")
    nu_f = check_nonnegative(nu_f, "nu_f")
    nu_c = check_nonnegative(nu_c, "nu_c")
    j = np.arange(int(T), dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        pw = nu_w ** j  # 0.0 ** 0 == 1.0
        dpw = np.zeros(int(T))  # j nu_w^(j-1), zero at j = 0
        dpw[1:] = j[1:] * nu_w ** (j[1:] - 1.0)
        rho = nu_c * (nu_f * dpw + pw) + nu_f * pw
    if not np.all(np.isfinite(rho)):
        raise ValueError(
            f"rho overflows float64 for T={T} and nu_w={nu_w}; use nu_w < 1 (a stable "
            "network) or shorter sequences"
        )
    return rho


def check_rho(rho, n_lags):
    """Validate the taps ``rho`` of a scaled convolution (shared with ``rntk.nn.LinearRNN``).

    Parameters
    ----------
    rho : array-like of shape (n,), n >= n_lags
        Non-negative, finite taps (lags 0, 1, ...).
    n_lags : int
        How many are needed.

    Returns
    -------
    rho : ndarray of shape (n_lags,)
        The first ``n_lags`` taps, float64.
    """
    if isinstance(rho, (str, bytes)):
        raise TypeError(f"rho must be an array of non-negative numbers, got {rho!r}")
    try:
        arr = np.asarray(rho, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"rho must be an array of non-negative numbers, got {rho!r}") from None
    if arr.ndim != 1:
        raise ValueError(f"rho must be 1-D (one scale per lag), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("rho must be finite")
    if np.any(arr < 0):
        raise ValueError("rho must be non-negative")
    if arr.shape[0] < n_lags:
        raise ValueError(
            f"rho has {arr.shape[0]} taps but the sequences need lags 0..{n_lags - 1}: "
            f"give at least {n_lags} values"
        )
    return np.ascontiguousarray(arr[:n_lags])


def _pack_start_aligned(seqs, t_max):
    m = seqs[0].shape[1]
    data = np.zeros((len(seqs), t_max, m))
    for i, s in enumerate(seqs):
        data[i, :s.shape[0]] = s
    return data


@njit(parallel=True, fastmath=True, cache=True)
def _diag_recursion(out, xlen, ylen, nu, a, b):
    """In place: turn step Grams ``out[i, t, k, s] = <x_t, y_s>`` into the kernel.

    Runs ``A(t,s) = G(t,s) + nu A(t-1,s-1)`` and ``B(t,s) = nu B(t-1,s-1) + A(t-1,s-1)``
    row by row (each diagonal is one recursion) and stores ``a A + b B``; steps past a
    series' end are set to zero.
    """
    n_x, t_x, n_y, t_y = out.shape
    for i in prange(n_x):
        tx = xlen[i]
        a_prev = np.empty(t_y)
        b_prev = np.empty(t_y)
        a_cur = np.empty(t_y)
        b_cur = np.empty(t_y)
        for k in range(n_y):
            ty = ylen[k]
            for t in range(tx):
                row = out[i, t, k]
                if t == 0:
                    for s in range(ty):
                        a_cur[s] = row[s]
                        b_cur[s] = 0.0
                else:
                    a_cur[0] = row[0]
                    b_cur[0] = 0.0
                    for s in range(1, ty):
                        a_cur[s] = row[s] + nu * a_prev[s - 1]
                        b_cur[s] = nu * b_prev[s - 1] + a_prev[s - 1]
                for s in range(ty):
                    row[s] = a * a_cur[s] + b * b_cur[s]
                a_prev, a_cur = a_cur, a_prev
                b_prev, b_cur = b_cur, b_prev
                row[ty:] = 0.0
            for t in range(tx, t_x):
                out[i, t, k, :] = 0.0
    return out


@njit(parallel=True, fastmath=True, cache=True)
def _diag_convolution(out, xlen, ylen, rho):
    """In place: ``K_{t,s} = sum_{j <= min(t,s)} rho_j G_{t-j, s-j}`` for arbitrary taps."""
    n_x, t_x, n_y, t_y = out.shape
    for i in prange(n_x):
        tx = xlen[i]
        g = np.empty((t_x, t_y))
        for k in range(n_y):
            ty = ylen[k]
            for t in range(tx):
                for s in range(ty):
                    g[t, s] = out[i, t, k, s]
            for t in range(tx):
                row = out[i, t, k]
                row[:] = 0.0
                for j in range(t + 1):
                    r = rho[j]
                    for s in range(j, ty):
                        row[s] += r * g[t - j, s - j]
            for t in range(tx, t_x):
                out[i, t, k, :] = 0.0
    return out


@fill_doc(linear_rnn_variances=LINEAR_RNN_VARIANCES_DOC, **DOC)
def scaled_conv_kernel(X, Y=None, *, nu_w=0.3, nu_f=1.0, nu_c=1.0, rho=None, output="last",
                       n_jobs=None):
    r"""Gram matrix of the linear-RNN NTK, the scaled 1-D convolution kernel.

    The limit, as the width grows, of the neural tangent kernel of the linear RNN
    ``h_t = W h_{t-1} / sqrt(n) + F x_t``, ``y_t = C h_t / sqrt(n)`` (``h_{-1} = 0``;
    ``W_ij ~ N(0, nu_w)``, ``F_ij ~ N(0, nu_f)``, ``C_ij ~ N(0, nu_c)``), equal to the
    NTK of the convolution ``y_t = sum_j sqrt(rho_j) theta_j x_{t-j}`` (Emami et al.,
    Thm. 3.2-3.3)::

        K(x, x')_{t,s} = sum_{j=0}^{min(t,s)} rho_j <x_{t-j}, x'_{s-j}>.

    For ``n_y`` outputs the kernel is this one times the identity: one Gram serves
    every output channel.

    Parameters
    ----------
    {X_sequences}
    Y : same layout as X, default=None
        Second set; ``None`` means ``Y = X``.
    {linear_rnn_variances}
    rho : array-like of shape (n_taps,), default=None
        Explicit non-negative tap scales ``rho_0, rho_1, ...``, overriding the
        ``nu`` parameters (all ones: the NTK of an unscaled convolution). At least
        ``min(T_max(X), T_max(Y))`` taps are needed; extra ones are ignored.
    output : {"last", "sequence"}, default="last"
        ``"last"``: the kernel of the final outputs, ``sum_j rho_j <x_{T-1-j},
        x'_{T'-1-j}>``, sequences aligned at their end. ``"sequence"``: the full
        sequence-to-sequence kernel, the block ``K_{t,s}`` for every pair of steps,
        sequences aligned at their start (causal).
    n_jobs : int, default=None
        Threads for this call (Numba and BLAS); ``None``: the current setting (Numba's
        thread count, all cores unless changed by ``numba.set_num_threads``), ``-1``:
        all cores. The previous thread count is restored afterwards.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y) or (n_X, T_X, n_Y, T_Y)
        ``(n_X, n_Y)`` for ``output="last"``. For ``output="sequence"``,
        ``K[i, t, k, s]`` is the kernel between step ``t`` of ``X[i]`` and step ``s``
        of ``Y[k]``, where ``T_X`` and ``T_Y`` are the longest lengths of each set;
        entries past the end of a shorter series are zero.

    See Also
    --------
    scaled_conv_rho : The tap scales of a given linear RNN.
    rntk_kernel : The NTK of nonlinear (Elman) RNNs.

    Notes
    -----
    ``output="last"`` costs one matrix product, ``O(n_X n_Y T m)``.
    ``output="sequence"`` costs ``O(n_X n_Y T_X T_Y m)`` with the ``nu``
    parameters (a one-step recursion along each diagonal) and
    ``O(n_X n_Y T_X T_Y min(T_X, T_Y))`` with explicit ``rho``; its output takes
    ``8 n_X T_X n_Y T_Y`` bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import scaled_conv_kernel, scaled_conv_rho
    >>> X = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    >>> K = scaled_conv_kernel(X, nu_w=0.5)
    >>> rho = scaled_conv_rho(3, nu_w=0.5)
    >>> bool(np.isclose(K[0, 1], rho[0] * 2 * 1 + rho[1] * 0 * 1 + rho[2] * 1 * 0))
    True
    >>> scaled_conv_kernel(X, output="sequence").shape
    (2, 3, 2, 3)
    """
    if output not in OUTPUTS:
        raise ValueError(f"unknown output {output!r}; choose 'last' or 'sequence'")
    nu_w = check_nonnegative(nu_w, "nu_w")
    nu_f = check_nonnegative(nu_f, "nu_f")
    nu_c = check_nonnegative(nu_c, "nu_c")
    if n_jobs is not None and (
        not isinstance(n_jobs, (int, np.integer)) or isinstance(n_jobs, bool) or n_jobs == 0
    ):
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    xs = as_sequences(X, "X")
    ys = xs if Y is None else as_sequences(Y, "Y")
    m = check_same_channels(xs, ys)
    xlen = np.array([s.shape[0] for s in xs], dtype=np.int64)
    ylen = xlen if Y is None else np.array([s.shape[0] for s in ys], dtype=np.int64)
    n_lags = int(min(xlen.max(), ylen.max()))
    taps = None if rho is None else check_rho(rho, n_lags)

    if output == "last":
        if taps is None:
            taps = scaled_conv_rho(n_lags, nu_w=nu_w, nu_f=nu_f, nu_c=nu_c)
        # end-aligned on the last n_lags steps (older steps have no partner)
        xd = pack_end_aligned([s[-n_lags:] for s in xs])[0]  # (n_lags, n_X, m)
        yd = xd if Y is None else pack_end_aligned([s[-n_lags:] for s in ys])[0]
        w = taps[::-1][:, None, None]
        if Y is None:  # K = A A^T with sqrt(rho)-weighted steps: symmetric by construction
            w = np.sqrt(w)
        a = (xd * w).transpose(1, 0, 2).reshape(len(xs), n_lags * m)
        b = a if Y is None else yd.transpose(1, 0, 2).reshape(len(ys), n_lags * m)
        with blas_threads(n_jobs):
            out = a @ b.T
        if Y is None:
            out = 0.5 * (out + out.T)
        check_finite_kernel(out, "scaled_conv_kernel", dict(nu_w=nu_w, nu_f=nu_f, nu_c=nu_c))
        return out

    t_x, t_y = int(xlen.max()), int(ylen.max())
    xd = _pack_start_aligned(xs, t_x)
    yd = xd if Y is None else _pack_start_aligned(ys, t_y)
    with blas_threads(n_jobs):
        g = xd.reshape(len(xs) * t_x, m) @ yd.reshape(len(ys) * t_y, m).T
    out = np.ascontiguousarray(g).reshape(len(xs), t_x, len(ys), t_y)
    with numba_threads(n_jobs):
        if taps is None:
            _diag_recursion(out, xlen, ylen, nu_w, nu_c + nu_f, nu_c * nu_f)
        else:
            _diag_convolution(out, xlen, ylen, taps)
    check_finite_kernel(out, "scaled_conv_kernel", dict(nu_w=nu_w, nu_f=nu_f, nu_c=nu_c))
    return out
