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
from numba import njit, types
from numba.extending import overload

from .._utils import JIT_OPTIONS, check_int, pack_end_aligned

__all__ = ["ASIN_POLY", "ASIN_POLY32", "BLOCK_BYTES", "PRECISIONS", "TILE", "check_out",
           "check_precision", "n_chains", "network_inputs", "pack_series", "prepare",
           "self_factors", "self_variances", "single_fits", "work_items"]

TILE = 512  # columns per work item (512: 5-7% faster than 256 at N = 500-1200, both precisions)
BLOCK_BYTES = 256 * 2**20  # default size of a block of rows written into ``out``

# asin(y) = y + y z P(z), z = y^2, on 0 <= y <= 1/2 (least-squares fit in extended precision,
# relative error ~2e-16; 12 coefficients, the float64 engines' degree). With the
# reduction asin(y) = pi/2 - 2 asin(sqrt((1 - y)/2)) above 1/2 it gives branch-free arcsin /
# arccos that vectorise (math.acos does not).
ASIN_POLY = np.array([
    0.16666666666666646, 0.07500000000021978, 0.04464285710146497, 0.030381947490254527,
    0.022372043664706378, 0.017355334434132383, 0.013928781847841392, 0.011882032645784928,
    0.0077714397645414456, 0.016129764409156828, -0.010908304349000406, 0.028285381520428275,
])

#: The float32 engine's ``P``: 5 coefficients (a minimax fit of ``P``'s relative error on
#: ``0 <= z <= 1/4``, 3.6e-7): in float32 arithmetic the arcsin is then within 0.65 ulp of
#: the correctly rounded one on ``[0, 1/2]``, as with the 12 coefficients, in half the work
#: of the lanes' polynomial.
ASIN_POLY32 = np.array([
    0.16666672733019638, 0.07498813176261167, 0.0450099051520951, 0.026499342041275437,
    0.03819635398238648,
])

# Fast math without reassociation: the pair kernel and the self variances then round the
# same expressions the same way, so that a series and its copy get bitwise the
# covariances of a series with itself (see ``_v_phi``). Same speed.
_JIT = dict(JIT_OPTIONS, fastmath={"nnan", "ninf", "nsz", "arcp", "contract", "afn"})
# ... and the covariance updates without fused multiply-adds (the one rounding of each
# product and sum that every engine does, the CUDA one included)
_EXACT = dict(JIT_OPTIONS, fastmath={"nnan", "ninf", "nsz", "arcp", "afn"})

#: The engine's arithmetic, by ``precision``: the Numba engine is compiled for either.
PRECISIONS = {"float64": np.float64, "float32": np.float32}


def _lit(like, value):
    """Return ``value`` in the floating type of ``like`` (in compiled code).

    The engine's helpers write every constant through it, so that one source compiles
    to float64 or float32 arithmetic from its arguments' type (a bare literal is
    float64 and would widen float32 lanes); ``value`` may be a constant expression.
    """
    return value


@overload(_lit, inline="always")
def _lit_overload(like, value):
    if isinstance(like, types.Float) and like.bitwidth == 32:
        return lambda like, value: np.float32(value)
    return lambda like, value: np.float64(value)


#: The correlation snap of ``_v_phi`` in float32 (see ``_SNAP``).
_SNAP32 = 16 * float(np.finfo(np.float32).eps)


def _snap(like):
    """Return ``_SNAP`` in the floating type of ``like`` (in compiled code)."""
    return _SNAP


@overload(_snap, inline="always")
def _snap_overload(like):
    if isinstance(like, types.Float) and like.bitwidth == 32:
        return lambda like: np.float32(_SNAP32)
    return lambda like: np.float64(_SNAP)


@njit(**_EXACT)
def _cov(sw2, v, inp, sb2):
    """Return ``sw2 v + inp + sb2``, each operation rounded (no fused multiply-add)."""
    return sw2 * v + inp + sb2


@njit(**_EXACT)
def _mul(a, b):
    """Return ``a b``, rounded (never fused into a following addition)."""
    return a * b


@njit(inline="always", **_JIT)
def _asin_core(a, one_minus_a):
    """Return ``(asin(y), big)`` for ``a = |x|``: y = a, or sqrt((1 - a)/2) when a > 1/2.

    ``one_minus_a`` is ``1 - a``, given by a caller who knows it without cancellation.
    """
    big = a > _lit(a, 0.5)
    y = math.sqrt(_lit(a, 0.5) * one_minus_a) if big else a
    z = y * y
    return y + y * z * _asin_poly(z), big


def _asin_poly(z):
    """Return ``P(z)`` of ``asin(y) = y + y z P(z)``, ``z = y^2 <= 1/4`` (compiled code).

    ``ASIN_POLY`` in float64, ``ASIN_POLY32`` in float32, each by Estrin's scheme
    (independent pairs, then levels: the lanes' critical path is the tree's depth, not
    Horner's chain of dependent steps).
    """
    return 0.0


@overload(_asin_poly, inline="always")
def _asin_poly_overload(z):
    if isinstance(z, types.Float) and z.bitwidth == 32:
        c0, c1, c2, c3, c4 = (np.float32(c) for c in ASIN_POLY32)

        def poly32(z):
            z2 = z * z
            return (c0 + c1 * z) + ((c2 + c3 * z) + c4 * z2) * z2
        return poly32
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11 = (float(c) for c in ASIN_POLY)

    def poly64(z):
        z2 = z * z
        z4 = z2 * z2
        p0 = (c0 + c1 * z) + (c2 + c3 * z) * z2
        p1 = (c4 + c5 * z) + (c6 + c7 * z) * z2
        p2 = (c8 + c9 * z) + (c10 + c11 * z) * z2
        return p0 + (p1 + p2 * z4) * z4
    return poly64


@njit(inline="always", **_JIT)
def _asin(x, one_minus_abs_x):
    """Branch-free arcsin on [-1, 1], accurate to a few ulps (relative, also near 0).

    ``one_minus_abs_x`` is ``1 - |x|``; near ``|x| = 1`` its accuracy decides the result's.
    """
    r, big = _asin_core(abs(x), one_minus_abs_x)
    r = _lit(r, 0.5 * math.pi) - _lit(r, 2.0) * r if big else r
    return r if x >= _lit(x, 0.0) else -r


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


def check_precision(precision):
    """Raise a ``ValueError`` unless ``precision`` is one of :data:`PRECISIONS`."""
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {sorted(PRECISIONS)}; got {precision!r}")


#: The largest magnitude of a value or a self factor (``sqrt`` of a variance) that the
#: float32 engine takes, and the smallest nonzero one: products and variances then stay
#: within ``1e-30..1e30``, far from float32's overflow (3.4e38) and its subnormals.
SINGLE_RANGE = (1e-15, 1e15)


def single_fits(packed):
    """Return whether packed inputs ``(data, start, a, r)`` suit the float32 engine.

    Values beyond ``SINGLE_RANGE[1]`` in magnitude, or self factors beyond it or below
    ``SINGLE_RANGE[0]`` (zeros apart: the positions before a series starts, a zero
    series), would overflow float32 or lose its precision; the engine then computes in
    float64 instead.
    """
    data, _, a, r = packed
    lo, hi = SINGLE_RANGE
    if data.size and np.abs(data).max() > hi:
        return False
    for f in (a, r):
        m = np.abs(f[f != 0])
        if m.size and (m.max() > hi or m.min() < lo):
            return False
    return True


def single(packed):
    """Return packed inputs ``(data, start, a, r)`` with the floats in float32."""
    data, start, a, r = packed
    return (data.astype(np.float32), start, a.astype(np.float32), r.astype(np.float32))


def self_factors(k, act):
    """Per-series factors of the V operators, from the self variances ``k``.

    ReLU: ``sqrt(k)`` and its inverse (0 for a zero variance), so that the pair kernel
    multiplies instead of dividing; erf: ``2 k / (1 + 2 k)`` (the correlation of the
    series with itself, computed as the pair kernel computes ``c``) and
    ``1 / sqrt(1 + 2 k)``.
    """
    if act == 1:
        return _erf_factors(k)
    a = np.sqrt(k)
    r = np.divide(1.0, a, out=np.zeros_like(a), where=a > 0)
    return a, r


@njit(**dict(JIT_OPTIONS, fastmath=False))
def _erf_r(k):
    """Return ``1 / sqrt(1 + 2 k)``, rounded alike wherever it is computed."""
    return 1.0 / math.sqrt(1.0 + 2.0 * k)


@njit(**_JIT)
def _erf_factors(k):
    """Return erf's ``(2 k r^2, r)`` with ``r = 1 / sqrt(1 + 2 k)``, elementwise."""
    p = np.empty_like(k)
    r = np.empty_like(k)
    kf, pf, rf = k.ravel(), p.ravel(), r.ravel()
    for i in range(kf.shape[0]):
        ri = _erf_r(kf[i])
        rf[i] = ri
        pf[i] = 2.0 * kf[i] * ri * ri
    return p, r


#: ReLU: a correlation within this of +-1 is +-1. The covariances carry a few rounding
#: errors, so ``c = k3 / sqrt(k1 k2)`` of two proportional series (or of a series and
#: its copy) lands a few ulps off +-1, where ``arccos`` has an infinite slope: a step
#: off by 1 ulp changes ``V_phi'`` by ~1e-8, and that adds up over the steps.
#: ``1 - |c|`` below the rounding level cannot be told from 0.
_SNAP = 16 * np.finfo(np.float64).eps


@njit(inline="always", **_JIT)
def _v_phi(act, a1, r1, a2, r2, k3, same):
    """Return ``(V_phi[K], V_phi'[K])`` for ``K = [[k1, k3], [k3, k2]]``.

    ``a``, ``r`` are the factors of ``self_factors`` for k1 and k2. ``same`` marks a
    sample paired with itself: correlation exactly 1.

    Both activations avoid ``1 - c^2`` by cancellation. ReLU: with ``t`` the angle
    between the two vectors folded into ``[0, pi/2]`` (``|c| = cos t``),
    ``V_phi = sqrt(k1 k2) (sin t - t |c|) / (2 pi) + [c >= 0] k3 / 2`` and
    ``V_phi' = [c >= 0] / 2 -+ t / (2 pi)``: at ``c = 1`` exactly ``k3 / 2`` and 1/2,
    the values of a series with itself, so that a series and its copy run the same
    recursion. erf: ``1 - |c| = (u1 + u2 + e1 + e2) / 2`` with ``u = 1 / (1 + 2k)``
    (``r^2``) and the exact differences ``e = p - |c|`` from ``p = 2 k u`` (the factor
    ``a``: ``c`` of a series with itself, ``1 - u``); every term is positive
    (``e1 + e2 >= 0`` by Cauchy-Schwarz), and ``1 - c^2 = (1 - |c|)(1 + |c|)``. A series
    and its copy have ``e1 = e2 = 0``: ``1 - |c| = u``, bitwise the value of a series
    with itself.
    """
    one = _lit(k3, 1.0)
    if act == 0:  # ReLU
        c = min(max(k3 * r1 * r2, -one), one)
        ac = abs(c)
        om = one - ac  # exact for |c| >= 1/2
        om = _lit(om, 0.0) if (same or om <= _snap(om)) else om
        h, big = _asin_core(ac, om)
        t = _lit(h, 2.0) * h if big else _lit(h, 0.5 * math.pi) - h  # arccos |c|
        tail = a1 * a2 * (math.sqrt(om * (one + ac)) - t * ac) * _lit(t, 0.5 / math.pi)
        q = t * _lit(t, 0.5 / math.pi)
        if c >= _lit(c, 0.0):
            return tail + _lit(k3, 0.5) * k3, _lit(q, 0.5) - q
        return tail, q
    elif act == 1:  # erf
        t = _lit(k3, 2.0) * k3 * r1
        c = t * r1 if same else min(max(t * r2, -one), one)
        ac = abs(c)
        e = (a1 - ac) + (a2 - ac)  # e1 + e2 >= 0
        # a series and its copy (e within rounding of 0): the lane of a series with itself
        e = _lit(e, 0.0) if (same or e <= _lit(e, 2.0) * _snap(e)) else e
        om = _lit(e, 0.5) * ((r1 * r1 + r2 * r2) + e)  # 1 - |c| > 0
        return (_lit(om, 2.0 / math.pi) * _asin(c, om),
                _lit(om, 4.0 / math.pi) * r1 * r2 / math.sqrt(om * (one + ac)))
    return k3, one  # linear


def self_variances(data, start, act, sw2, su2, sb2, sh2):
    """Pre-activation variances ``Sigma^(l,t)(x, x)`` (sigma_h included), end-aligned.

    Returns an array ``(L, T_max, n)``; positions before a series starts hold 1.0 so
    that masked lanes of the pair kernel stay finite. ``act`` is the activation code.
    """
    return _SELF_VARIANCES[act](data, start, sw2, su2, sb2, sh2)


def _make_self_variances(act):
    """Return :func:`self_variances` compiled for activation ``act`` (a constant)."""

    @njit(**_JIT)
    def variances(data, start, sw2, su2, sb2, sh2):
        """Self variances of the activation ``act`` (see :func:`self_variances`)."""
        t_max, m, n = data.shape
        n_layers = sw2.shape[0]
        out = np.ones((n_layers, t_max, n))
        v_rec = np.empty(n)  # V_phi of each series' previous hidden state
        dot = np.empty(n)
        # one step of every series at a time: the loops over series vectorise (the
        # recursion of one series runs along p); a series is idle before its start
        for l in range(n_layers):
            v_rec[:] = sh2  # covariance of the initial hidden state
            for p in range(t_max):
                if l == 0 and m > 1:  # the pair kernel's input product, in its order
                    dot[:] = 0.0
                    for k in range(m):
                        for i in range(n):
                            dot[i] += _mul(data[p, k, i], data[p, k, i])
                for i in range(n):
                    if l > 0:
                        inp = su2[l] * _v_self(act, out[l - 1, p, i])
                    elif m == 1:
                        inp = su2[0] * (data[p, 0, i] * data[p, 0, i])
                    else:
                        inp = su2[0] * ((1.0 / m) * dot[i])
                    s = _cov(sw2[l], v_rec[i], inp, sb2[l])
                    active = p >= start[i]
                    out[l, p, i] = s if active else 1.0
                    v_rec[i] = _v_self(act, s) if active else v_rec[i]
        return out

    return variances


@njit(inline="always", **_JIT)
def _v_self(act, k):
    """V_phi of a sample with itself (correlation 1) at variance ``k``.

    The pair kernel's formula at ``k1 = k2 = k3 = k``, so that a series and its copy
    (``k3`` computed by the pair recursion) stay equal to rounding.
    """
    if act == 0:
        return 0.5 * k
    elif act == 1:
        r = _erf_r(k)
        return _v_phi(1, 2.0 * k * r * r, r, 2.0 * k * r * r, r, k, True)[0]
    return k


#: The compiled self variances, by activation code (compiled on first use).
_SELF_VARIANCES = tuple(_make_self_variances(act) for act in range(3))


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

