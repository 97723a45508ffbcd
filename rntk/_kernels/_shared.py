"""What the RNTK engines share, below them: packing, self variances, work items, checks.

The Numba engine (:mod:`rntk._kernels._rntk`) and the fused CUDA engine
(:mod:`rntk._kernels._cuda`) read the same packed inputs and per-series factors,
made here: the series one RNN of the network reads (:func:`network_inputs`), their
end-aligned, time-major stack (:func:`pack_series`), each series' pre-activation
variances with itself (:func:`self_variances`) and the factors of the V operators
(:func:`self_factors`); the coefficients of the branch-free arcsin both engines
evaluate (:data:`ASIN_POLY`); the work items of the Numba engine and the check of a
caller's ``out`` array. The options themselves are checked by
:func:`rntk._kernels._params.resolve_params`, above.
"""

import math

import numpy as np
from numba import njit

from .._utils import JIT_OPTIONS, check_int, pack_end_aligned

__all__ = ["ASIN_POLY", "BLOCK_BYTES", "TILE", "check_out", "n_chains", "network_inputs",
           "pack_series", "prepare", "self_factors", "self_variances", "work_items"]

TILE = 256  # columns per work item
BLOCK_BYTES = 256 * 2**20  # default size of a block of rows written into ``out``

# asin(y) = y + y z P(z), z = y^2, on 0 <= y <= 1/2 (least-squares fit in extended precision,
# relative error ~2e-16). With the reduction asin(y) = pi/2 - 2 asin(sqrt((1 - y)/2)) above
# 1/2 it gives branch-free arcsin / arccos that vectorise (math.acos does not).
ASIN_POLY = np.array([
    0.16666666666666646, 0.07500000000021978, 0.04464285710146497, 0.030381947490254527,
    0.022372043664706378, 0.017355334434132383, 0.013928781847841392, 0.011882032645784928,
    0.0077714397645414456, 0.016129764409156828, -0.010908304349000406, 0.028285381520428275,
])


def network_inputs(seqs, reverse=False, diff=False):
    """Return the sequences one RNN of the network reads (with differences, reversed).

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The series.
    reverse : bool, default=False
        Reverse each series in time (the backward RNN).
    diff : bool, default=False
        Append the first difference of each channel (``x_t - x_{t-1}``, 0 at the first
        step): ``(T_i, 2 m)``.

    Returns
    -------
    seqs : list of ndarray
        The transformed series (the input list itself when nothing changes).
    """
    if diff:
        seqs = [np.concatenate([s, np.diff(s, axis=0, prepend=s[:1])], axis=1) for s in seqs]
    if reverse:
        seqs = [np.ascontiguousarray(s[::-1]) for s in seqs]
    return seqs


def pack_series(seqs, t_max):
    """Stack series end-aligned on ``t_max`` steps, time-major, channels before samples.

    Parameters
    ----------
    seqs : list of ndarray of shape (T_i, m)
        The series (``T_i <= t_max``).
    t_max : int
        Length of the common time axis.

    Returns
    -------
    data : ndarray of shape (t_max, m, n)
        ``data[t_max - T_i:, :, i]`` is series ``i``; zeros in front.
    start : ndarray of shape (n,)
        First step of each series, ``t_max - T_i``.
    """
    data, start = pack_end_aligned(seqs)
    pad = t_max - data.shape[0]
    # time-major with channels before samples: the innermost loop runs over samples
    data = np.ascontiguousarray(np.pad(data, ((pad, 0), (0, 0), (0, 0))).transpose(0, 2, 1))
    return data, start + pad


def prepare(seqs, t_max, spec):
    """Return ``(data, start, a, r)``: the packed series and their self factors.

    ``spec`` is an :class:`~rntk._kernels._params.RNTKOptions`; ``a``, ``r`` are the
    factors of :func:`self_factors`, of shape ``(n_layers, t_max, n)``.
    """
    data, start = pack_series(seqs, t_max)
    self_var = self_variances(data, start, spec.act, *spec.layer_variances(), spec.sh2)
    return (data, start) + self_factors(self_var, spec.act)


def self_factors(k, act):
    """Per-series factors of the V operators, from the self variances ``k``.

    ReLU needs ``sqrt(k)``, erf ``sqrt(1 + 2k)``; both with their inverse (0 for a zero
    variance), so that the pair kernel multiplies instead of dividing.
    """
    a = np.sqrt(1.0 + 2.0 * k) if act == 1 else np.sqrt(k)
    r = np.divide(1.0, a, out=np.zeros_like(a), where=a > 0)
    return a, r



@njit(**JIT_OPTIONS)
def self_variances(data, start, act, sw2, su2, sb2, sh2):
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
                    inp = su2[l] * _v_self(act, out[l - 1, p, i])
                s = sw2[l] * v_rec + inp + sb2[l]
                out[l, p, i] = s
                v_rec = _v_self(act, s)
    return out



@njit(inline="always", **JIT_OPTIONS)
def _v_self(act, k):
    """V_phi of a sample with itself (correlation 1) at variance ``k``."""
    if act == 0:
        return 0.5 * k
    elif act == 1:  # asin(c), c = 2 k / (1 + 2 k), with 1 - c = 1 / (1 + 2 k) exactly
        c = 2.0 * k / (1.0 + 2.0 * k)
        if c <= 0.5:
            return (2.0 / math.pi) * math.asin(c)
        return 1.0 - (4.0 / math.pi) * math.asin(math.sqrt(0.5 / (1.0 + 2.0 * k)))
    return k


def n_chains(t_max, stride, band=-1):
    """Recursions per pair: 1 (last step), ``2 T / s`` (mean) or at most ``2 B + 1``."""
    if stride == 0:
        return 1
    n = 2 * -(-t_max // stride)
    return n if band < 0 else min(n, 2 * band + 1)


def work_items(n_rows, n_cols, symmetric, row0=0):
    """Work items ``(row, first column, end column)``, in tiles of ``TILE`` columns.

    The rows are ``row0, ..., row0 + n_rows - 1``. For a symmetric Gram row ``i`` only
    needs the columns from ``i`` on, and the long and short rows (first and last) are
    put side by side, so that the equal contiguous chunks of ``prange`` carry equal work.
    """
    rows = []
    order = range(row0, row0 + n_rows)
    if symmetric:
        half = np.arange((n_rows + 1) // 2)
        order = row0 + np.stack([half, n_rows - 1 - half], axis=1).ravel()[:n_rows]
    for i in order:
        for j0 in range(i if symmetric else 0, n_cols, TILE):
            rows.append((i, j0, min(j0 + TILE, n_cols)))
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def check_out(out, block_rows, n_x, n_y, n_grams):
    """Validate ``out`` and ``block_rows``; return the rows per block."""
    if out is not None:
        if not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.shape != (n_x, n_y):
            what = (f"a {out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray)
                    else repr(type(out)))
            raise ValueError(f"out must be a float64 array (or numpy.memmap) of shape "
                             f"({n_x}, {n_y}); got {what}")
        if not out.flags.writeable:
            raise ValueError("out is read-only: open a numpy.memmap with mode 'w+' or 'r+'")
    if block_rows is not None:
        return check_int(block_rows, "block_rows")
    if out is None:
        return n_x
    return max(1, BLOCK_BYTES // (8 * n_y * n_grams))

