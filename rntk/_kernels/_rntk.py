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
of columns ``j`` a single forward sweep over ``P`` and layers, vectorised over the
tile, carries the covariance, its derivative kernel and the tangent kernel of each
layer (no per-step storage). Before the first step of a pair the recurrent
covariance is zero (independent initial states), or ``sigma_h^2`` for a sample
paired with itself.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._utils import (
    DOC,
    JIT_OPTIONS,
    as_sequences,
    check_finite_kernel,
    check_int,
    check_memory,
    check_n_jobs,
    check_nonnegative,
    check_same_channels,
    compile_notice,
    fill_doc,
    finite_square,
    numba_threads,
    pack_end_aligned,
)
from .._utils._typing import Scale, Sequences
from ._params import ACTIVATIONS, DIRECTIONS, KINDS, READOUTS, RNTK_DEFAULTS, RNTK_PARAMS_DOC

__all__ = ["rntk_kernel", "rntk_diag"]

_D = RNTK_DEFAULTS
_TILE = 256  # columns per work item
_BLOCK_BYTES = 256 * 2**20  # default size of a block of rows written into ``out``
# below this many pair-steps a Gram takes well under a millisecond on one thread: waking the
# thread pool costs more than it saves (and much more on a loaded machine)
_SERIAL_WORK = 100_000
# Fast math without reassociation: the pair kernel and the self variances then round the
# same expressions the same way, so that a series and its copy get bitwise the
# covariances of a series with itself (see ``_v_phi``). Same speed.
_JIT = dict(JIT_OPTIONS, fastmath={"nnan", "ninf", "nsz", "arcp", "contract", "afn"})
# ... and the covariance updates without fused multiply-adds (the one rounding of each
# product and sum that every engine does, the CUDA one included)
_EXACT = dict(JIT_OPTIONS, fastmath={"nnan", "ninf", "nsz", "arcp", "afn"})


@njit(**_EXACT)
def _cov(sw2, v, inp, sb2):
    """Return ``sw2 v + inp + sb2``, each operation rounded (no fused multiply-add)."""
    return sw2 * v + inp + sb2


@njit(**_EXACT)
def _mul(a, b):
    """Return ``a b``, rounded (never fused into a following addition)."""
    return a * b

# asin(y) = y + y z P(z), z = y^2, on 0 <= y <= 1/2 (least-squares fit in extended precision,
# relative error ~2e-16). With the reduction asin(y) = pi/2 - 2 asin(sqrt((1 - y)/2)) above
# 1/2 it gives branch-free arcsin / arccos that vectorise (math.acos does not).
_ASIN_POLY = np.array([
    0.16666666666666646, 0.07500000000021978, 0.04464285710146497, 0.030381947490254527,
    0.022372043664706378, 0.017355334434132383, 0.013928781847841392, 0.011882032645784928,
    0.0077714397645414456, 0.016129764409156828, -0.010908304349000406, 0.028285381520428275,
])


@njit(inline="always", **_JIT)
def _asin_core(a, one_minus_a):
    """Return ``(asin(y), big)`` for ``a = |x|``: y = a, or sqrt((1 - a)/2) when a > 1/2.

    ``one_minus_a`` is ``1 - a``, given by a caller who knows it without cancellation.
    """
    big = a > 0.5
    y = math.sqrt(0.5 * one_minus_a) if big else a
    z = y * y
    p = _ASIN_POLY[_ASIN_POLY.shape[0] - 1]
    for k in range(_ASIN_POLY.shape[0] - 2, -1, -1):
        p = p * z + _ASIN_POLY[k]
    return y + y * z * p, big


@njit(inline="always", **_JIT)
def _acos(x):
    """Branch-free arccos on [-1, 1], accurate to a few ulps."""
    r, big = _asin_core(abs(x), 1.0 - abs(x))
    r = 2.0 * r if big else 0.5 * math.pi - r
    return r if x >= 0.0 else math.pi - r


@njit(inline="always", **_JIT)
def _asin(x, one_minus_abs_x):
    """Branch-free arcsin on [-1, 1], accurate to a few ulps (relative, also near 0).

    ``one_minus_abs_x`` is ``1 - |x|``; near ``|x| = 1`` its accuracy decides the result's.
    """
    r, big = _asin_core(abs(x), one_minus_abs_x)
    r = 0.5 * math.pi - 2.0 * r if big else r
    return r if x >= 0.0 else -r


def _self_factors(k, act):
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

    ``a``, ``r`` are the factors of ``_self_factors`` for k1 and k2. ``same`` marks a
    sample paired with itself: correlation exactly 1.

    Both activations avoid ``1 - c^2`` by cancellation. ReLU: with ``t`` the angle
    between the two vectors folded into ``[0, pi/2]`` (``|c| = cos t``),
    ``V_phi = sqrt(k1 k2) (sin t - t |c|) / (2 pi) + [c >= 0] k3 / 2`` and
    ``V_phi' = [c >= 0] / 2 -+ t / (2 pi)``: at ``c = 1`` exactly ``k3 / 2`` and 1/2,
    the values of a series with itself, so that a series and its copy run the same
    recursion. erf: ``1 - c^2 = u1 + u2 - u1 u2 + (p1 p2 - c^2)`` with
    ``u = 1 / (1 + 2k)``, ``p = 2 k u`` (the factor ``a``: ``c`` of a series with
    itself), and ``p1 p2 - c^2 = |c| (e1 + e2) + e1 e2`` from the exact differences
    ``e = p - |c|``: 0 for a series and its copy, never negative by rounding.
    """
    if act == 0:  # ReLU
        c = min(max(k3 * r1 * r2, -1.0), 1.0)
        ac = abs(c)
        om = 1.0 - ac  # exact for |c| >= 1/2
        om = 0.0 if (same or om <= _SNAP) else om
        h, big = _asin_core(ac, om)
        t = 2.0 * h if big else 0.5 * math.pi - h  # arccos |c|
        tail = a1 * a2 * (math.sqrt(om * (1.0 + ac)) - t * ac) * (0.5 / math.pi)
        q = t * (0.5 / math.pi)
        if c >= 0.0:
            return tail + 0.5 * k3, 0.5 - q
        return tail, q
    elif act == 1:  # erf
        c = min(max(2.0 * k3 * r1 * r2, -1.0), 1.0)
        c = 2.0 * k3 * r1 * r1 if same else c
        ac = abs(c)
        e1 = a1 - ac
        e2 = a2 - ac
        # a series and its copy (e within rounding of 0): the lane of a series with itself
        near = same or (abs(e1) <= _SNAP and abs(e2) <= _SNAP)
        g = 0.0 if near else max(ac * (e1 + e2) + e1 * e2, 0.0)
        u1 = r1 * r1
        u2 = r2 * r2
        sin2 = u1 + u2 * a1 + g  # 1 - c^2 > 0 (a1 = 1 - u1)
        rt = math.sqrt(sin2)
        inv = 1.0 / ((1.0 + ac) * rt)  # one division for 1 - |c| and 1 / sqrt(1 - c^2)
        return ((2.0 / math.pi) * _asin(c, sin2 * rt * inv),
                (4.0 / math.pi) * r1 * r2 * ((1.0 + ac) * inv))
    return k3, 1.0  # linear


@njit(**_JIT)
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
                if l == 0:  # the pair kernel's input product, in its order
                    if m == 1:
                        inp = su2[0] * (data[p, 0, i] * data[p, 0, i])
                    else:
                        dot = 0.0
                        for k in range(m):
                            dot += _mul(data[p, k, i], data[p, k, i])
                        inp = su2[0] * ((1.0 / m) * dot)
                else:
                    inp = su2[l] * _v_self(act, out[l - 1, p, i])
                s = _cov(sw2[l], v_rec, inp, sb2[l])
                out[l, p, i] = s
                v_rec = _v_self(act, s)
    return out


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


@njit(inline="always", **_JIT)
def _update(act, p, a1, r1, s, t, ystart, ya, yr, same, v, d, th, jj):
    """Store column ``jj``'s ``V_phi``, ``V_phi'`` and ``Theta`` (0 before it starts)."""
    vv, vd = _v_phi(act, a1, r1, ya[jj], yr[jj], s, same[jj])
    active = p >= ystart[jj]
    v[jj] = vv if active else 0.0
    d[jj] = vd if active else 0.0
    th[jj] = t if active else 0.0


@njit(inline="always", **_JIT)
def _first_layer(act, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, xin, yin, same, v, d, th):
    """Layer 1 at one step; column ``jj``'s input inner product is ``xin * yin[jj]``."""
    for jj in range(v.shape[0]):
        s = _cov(sw2, v[jj], su2 * (xin * yin[jj]), sb2)
        t = s + sw2 * d[jj] * th[jj]
        _update(act, p, a1, r1, s, t, ystart, ya, yr, same, v, d, th, jj)


@njit(inline="always", **_JIT)
def _upper_layer(act, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, inp, below, same, v, d, th):
    """Layer l > 1 at one step, from layer l-1's ``V_phi`` and ``su2 V_phi' Theta``."""
    for jj in range(v.shape[0]):
        s = _cov(sw2, v[jj], su2 * inp[jj], sb2)
        t = s + sw2 * d[jj] * th[jj] + below[jj]
        _update(act, p, a1, r1, s, t, ystart, ya, yr, same, v, d, th, jj)


# Everything a step does is inlined into the engine, one copy per activation, so that each
# lane loop vectorises with its activation known, and the layer-1 input product is fused
# into the lane loop: 1.3-2.3x faster than a call per step with the inputs in a separate pass.
@njit(inline="always", **_JIT)
def _layer(act, l, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, xin, yin, inp, below, same, v, d,
           th):
    """One (layer, step) of the recursion for a row against a tile of columns."""
    if l == 0:
        if act == 0:
            _first_layer(0, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, xin, yin, same, v, d, th)
        elif act == 1:
            _first_layer(1, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, xin, yin, same, v, d, th)
        else:
            _first_layer(2, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, xin, yin, same, v, d, th)
    elif act == 0:
        _upper_layer(0, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, inp, below, same, v, d, th)
    elif act == 1:
        _upper_layer(1, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, inp, below, same, v, d, th)
    else:
        _upper_layer(2, p, a1, r1, sw2, su2, sb2, ystart, ya, yr, inp, below, same, v, d, th)


@njit(parallel=True, **_JIT)
def _pair_kernel(xdata, xstart, xa, xr, ydata, ystart, ya, yr, items, symmetric, diag_out,
                 act, sw2, su2, sb2, sh2, sv2, want_ntk, stride, band, row0, out):
    """Fill ``out`` with the kernel of each work item ``(i, j0, j1)``: row i, columns j0:j1.

    ``out`` holds the rows from ``row0`` on: pair ``(i, j)`` goes to ``out[i - row0, j]``.
    ``symmetric``: Y is X, the pair (i, i) is a sample with itself, and ``out[j - row0, i]``
    is filled too when row ``j`` is in ``out``. ``diag_out``: write ``out[i - row0, 0]``
    (used by ``rntk_diag``).

    The NTK is accumulated forward in time: with ``Theta^(l,t)`` the tangent kernel of
    the pre-activations ``g^(l,t)``,
    ``Theta^(l,t) = Sigma^(l,t) + sw2_l D^(l,t-1) Theta^(l,t-1) + su2_l D^(l-1,t) Theta^(l-1,t)``
    and ``Theta = sigma_v^2 (V_phi + D^(L,T) Theta^(L,T))``, which re-associates the
    backward sum ``sum_l sum_t Pi^(l,t) Sigma^(l,t) + K`` of the spec.

    ``stride == 0``: the readout of the last step. ``stride = s > 0``: the mean of the
    readouts at the steps ``T, T - s, T - 2s, ...`` of each series. The kernel of two
    such readouts is the mean, over the pairs of readout steps, of the last-step kernel
    of the two prefixes: one recursion ("chain") per cut ``(a, b)`` of ``a`` steps from
    the end of x or ``b`` from the end of y (multiples of ``s``), read out every ``s``
    steps back from its last. Every pair of readouts on a chain is ``(a + b) / s``
    readouts apart; ``band = B >= 0`` keeps the chains at most ``B`` apart, weighted
    ``1 - k / (B + 1)`` (``band < 0``: all chains, weight 1).
    """
    t_max, m, _ = xdata.shape
    n_layers = sw2.shape[0]
    last = t_max - 1
    for it in prange(items.shape[0]):
        i = items[it, 0]
        j0 = items[it, 1]
        j1 = items[it, 2]
        nb = j1 - j0
        # per layer and column: V_phi (covariance of h), V_phi' and Theta of g, last step
        v = np.zeros((n_layers, nb))
        d = np.zeros((n_layers, nb))
        th = np.zeros((n_layers, nb))
        acc = np.zeros(nb)
        inp = np.zeros(nb)
        below = np.zeros(nb)
        chan = np.zeros(nb)
        same = np.zeros(nb, dtype=np.bool_)
        self_lane = symmetric and j0 <= i < j1
        ys = ystart[j0:j1]
        first_y = t_max
        for jj in range(nb):
            first_y = min(first_y, ys[jj])
        if stride == 0:
            n_xcuts = 1
            n_ycuts = 0
        else:
            n_xcuts = (t_max - xstart[i] + stride - 1) // stride
            n_ycuts = (t_max - first_y + stride - 1) // stride - 1
            if band >= 0:
                n_xcuts = min(n_xcuts, band + 1)
                n_ycuts = min(n_ycuts, band)
        for cut in range(n_xcuts + n_ycuts):
            k = cut if cut < n_xcuts else cut - n_xcuts + 1  # readouts apart
            a = k * stride if cut < n_xcuts else 0
            b = 0 if cut < n_xcuts else k * stride
            wgt = 1.0 if band < 0 else 1.0 - k / (band + 1.0)
            v[:] = 0.0
            d[:] = 0.0
            th[:] = 0.0
            same[:] = False
            if self_lane and cut == 0:
                same[i - j0] = True
                v[:, i - j0] = sh2  # a sample shares its initial state with itself
            for p in range(max(xstart[i] + a, first_y + b), t_max):
                px = p - a
                py = p - b
                # the data's inner products (layer 1): x's value times y's column
                if m == 1:
                    xin = xdata[px, 0, i]
                    yin = ydata[py, 0, j0:j1]
                else:
                    xin = 1.0 / m
                    chan[:] = 0.0
                    for k in range(m):
                        xv = xdata[px, k, i]
                        for jj in range(nb):
                            chan[jj] += _mul(xv, ydata[py, k, j0 + jj])
                    yin = chan
                for l in range(n_layers):
                    if l > 0:  # inputs from layer l-1 at this step
                        for jj in range(nb):
                            inp[jj] = v[l - 1, jj]
                            below[jj] = su2[l] * d[l - 1, jj] * th[l - 1, jj]
                    _layer(act, l, py, xa[l, px, i], xr[l, px, i], sw2[l], su2[l], sb2[l], ys,
                           ya[l, py, j0:j1], yr[l, py, j0:j1], xin, yin, inp, below, same,
                           v[l], d[l], th[l])
                if p == last or (stride > 0 and (last - p) % stride == 0):
                    top = n_layers - 1
                    if want_ntk:
                        for jj in range(nb):
                            acc[jj] += wgt * (v[top, jj] + d[top, jj] * th[top, jj])
                    else:
                        for jj in range(nb):
                            acc[jj] += wgt * v[top, jj]
        for jj in range(nb):
            j = j0 + jj
            res = sv2 * acc[jj]
            if stride > 0:
                res /= (((t_max - xstart[i] + stride - 1) // stride)
                        * ((t_max - ystart[j] + stride - 1) // stride))
            if diag_out:
                out[i - row0, 0] = res
            else:
                out[i - row0, j] = res
                if symmetric and j - row0 < out.shape[0]:
                    out[j - row0, i] = res
    return out


def _settings(**params):
    """Return the hyperparameters that differ from the defaults, for error messages."""
    return {k: v for k, v in params.items()
            if k not in RNTK_DEFAULTS or not _same(v, RNTK_DEFAULTS[k])}


def _same(a, b):
    try:
        return bool(np.all(np.asarray(a) == np.asarray(b)))
    except (TypeError, ValueError):
        return False


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


def _check_family(direction, diff):
    if not isinstance(direction, str) or direction not in DIRECTIONS:
        raise ValueError(
            f"unknown direction {direction!r}; choose one of {sorted(DIRECTIONS)}")
    if not isinstance(diff, (bool, np.bool_)):
        raise TypeError(f"diff must be True or False, got {diff!r}")
    return DIRECTIONS[direction]


def check_readout(readout, readout_stride):
    """Validate the readout options; return the engine's stride (0: the last step).

    Parameters
    ----------
    readout : {"last", "mean"}
        The readout.
    readout_stride : int
        Steps between two readouts of the mean.

    Returns
    -------
    stride : int
        0 for the last-step readout, else ``readout_stride``.
    """
    if not isinstance(readout, str) or readout not in READOUTS:
        raise ValueError(f"unknown readout {readout!r}; choose one of {list(READOUTS)}")
    stride = check_int(readout_stride, "readout_stride")
    return 0 if readout == "last" else stride


def check_band(readout_band):
    """Validate ``readout_band``; return the engine's band (-1: every pair of readouts).

    Parameters
    ----------
    readout_band : int or None
        The band of the mean readout.

    Returns
    -------
    band : int
        ``readout_band``, or -1 for None.
    """
    return -1 if readout_band is None else check_int(readout_band, "readout_band", minimum=0)


def _n_chains(t_max, stride, band=-1):
    """Recursions per pair: 1 (last step), ``2 T / s`` (mean) or at most ``2 B + 1``."""
    if stride == 0:
        return 1
    n = 2 * -(-t_max // stride)
    return n if band < 0 else min(n, 2 * band + 1)


def _check_params(n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind,
                  n_jobs=None):
    check_n_jobs(n_jobs)
    if isinstance(n_layers, bool) or not isinstance(n_layers, (int, np.integer)):
        raise TypeError(f"n_layers must be an integer, got {n_layers!r}")
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(
            f"unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}"
        )
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose 'ntk' or 'nngp'")
    n_layers = int(n_layers)
    return dict(
        act=ACTIVATIONS[activation],
        sw2=finite_square(check_nonnegative(sigma_w, "sigma_w", n_layers), "sigma_w"),
        su2=finite_square(check_nonnegative(sigma_u, "sigma_u", n_layers), "sigma_u"),
        sb2=finite_square(check_nonnegative(sigma_b, "sigma_b", n_layers), "sigma_b"),
        sh2=finite_square(check_nonnegative(sigma_h, "sigma_h"), "sigma_h"),
        sv2=finite_square(check_nonnegative(sigma_v, "sigma_v"), "sigma_v"),
        want_ntk=kind == "ntk",
    )


def _engine_args(p):
    return p["act"], p["sw2"], p["su2"], p["sb2"], p["sh2"], p["sv2"], p["want_ntk"]


def _prepare(seqs, t_max, p):
    data, start = pack_end_aligned(seqs)
    pad = t_max - data.shape[0]
    # time-major with channels before samples: the innermost loop runs over samples
    data = np.ascontiguousarray(np.pad(data, ((pad, 0), (0, 0), (0, 0))).transpose(0, 2, 1))
    start = start + pad
    self_var = _self_variances(data, start, p["act"], p["sw2"], p["su2"], p["sb2"], p["sh2"])
    return (data, start) + _self_factors(self_var, p["act"])


def _items(n_rows, n_cols, symmetric, row0=0):
    """Work items ``(row, first column, end column)``, in tiles of ``_TILE`` columns.

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
        for j0 in range(i if symmetric else 0, n_cols, _TILE):
            rows.append((i, j0, min(j0 + _TILE, n_cols)))
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def _check_out(out, block_rows, n_x, n_y, n_grams):
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
    return max(1, _BLOCK_BYTES // (8 * n_y * n_grams))


@fill_doc(kernel_params=RNTK_PARAMS_DOC, **DOC)
def rntk_kernel(X: Sequences, Y: Sequences | None = None, *,
                n_layers: int = _D["n_layers"], sigma_w: Scale = _D["sigma_w"],
                sigma_u: Scale = _D["sigma_u"], sigma_b: Scale = _D["sigma_b"],
                sigma_h: float = _D["sigma_h"], sigma_v: float = _D["sigma_v"],
                activation: str = _D["activation"], kind: str = _D["kind"],
                direction: str = _D["direction"], diff: bool = _D["diff"],
                readout: str = _D["readout"], readout_stride: int = _D["readout_stride"],
                readout_band: int | None = _D["readout_band"],
                n_jobs: int | None = None, out: np.ndarray | None = None,
                block_rows: int | None = None, device: str = "cpu") -> np.ndarray:
    r"""Gram matrix of the Recurrent Neural Tangent Kernel (or of the RNN-NNGP kernel).

    The kernel of an infinitely wide Elman RNN with ``n_layers`` layers in the NTK
    parameterisation, reading each sequence to its end and with a linear readout of
    the last hidden state (Alemohammad et al., Thm. 1). Sequences may have different
    lengths: they are aligned at their end and compared without padding.

    Parameters
    ----------
    {X_sequences}
    Y : same layout as X, default=None
        Second set. ``None`` computes ``K(X, X)``, symmetric, whose diagonal pairs
        each sample with itself (it then carries the ``sigma_h`` term).
    {kernel_params}
    n_jobs : int, default=None
        Numba threads for this call (``None``: the current setting, ``-1``: all).
        The previous thread count is restored afterwards.
    out : ndarray or numpy.memmap of shape (n_X, n_Y), dtype float64, default=None
        Where to write the Gram, in blocks of ``block_rows`` rows: the full Gram is
        never held in memory (with a :class:`numpy.memmap` it can exceed the RAM), and
        the memory check and the overflow check apply to one block. ``None``: a new
        array. Every entry is overwritten; for ``Y=None`` the rows of earlier blocks are
        read back to fill the lower triangle, so a memmap needs mode ``"w+"`` or ``"r+"``.
    block_rows : int, default=None
        Rows per block. ``None``: the whole Gram at once when ``out`` is None, else
        blocks of about 256 MB.
    device : {{"cpu", "cuda"}}, default="cpu"
        ``"cuda"``: the fused GPU engine (float64, every option, at most 4 layers),
        which needs the extra ``cuda`` (``pip install "rntk[cuda]"``) and an NVIDIA
        GPU; ``n_jobs``, ``out`` and ``block_rows`` are then not used (``out``
        receives a copy).

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
        The Gram matrix, float64 (``out`` itself when given).

    See Also
    --------
    rntk_diag : The diagonal of ``rntk_kernel(X)`` in ``O(n T)``.
    rntk.RNTKNystroem : Low-rank features whose inner products approximate the RNTK.
    rntk.distributed.rntk_kernel : The Gram in blocks on a Dask cluster.

    Notes
    -----
    Cost ``O(n_X n_Y L min(T, T'))``; memory beyond the output is bounded per thread.
    A symmetric Gram computes each pair once, also in blocks (a block computes its
    rows from its diagonal on and copies the columns before it from earlier rows).

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

    A Gram larger than the memory, on disk:

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "gram.npy")
    ...     out = np.lib.format.open_memmap(path, mode="w+", shape=(2, 2))
    ...     same = bool(np.array_equal(rntk_kernel(X, out=out, block_rows=1), K))
    ...     del out
    >>> same
    True
    """
    if device == "cuda":
        from ._cuda import rntk_kernel_cuda

        K = rntk_kernel_cuda(X, Y, n_layers=n_layers, sigma_w=sigma_w, sigma_u=sigma_u,
                             sigma_b=sigma_b, sigma_h=sigma_h, sigma_v=sigma_v,
                             activation=activation, kind=kind, direction=direction, diff=diff,
                             readout=readout, readout_stride=readout_stride,
                             readout_band=readout_band)
        if out is None:
            return K
        _check_out(out, block_rows, *K.shape, 1)
        out[...] = K
        return out
    if device != "cpu":
        raise ValueError(f"unknown device {device!r}; choose 'cpu' or 'cuda'")
    p = _check_params(n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind,
                      n_jobs)
    readers = _check_family(direction, diff)
    stride = check_readout(readout, readout_stride)
    band = check_band(readout_band)
    xs = as_sequences(X, "X")
    symmetric = Y is None
    ys = xs if symmetric else as_sequences(Y, "Y")
    check_same_channels(xs, ys)
    n_x, n_y = len(xs), len(ys)
    # a second Gram (buffer) for a sum of directions
    n_grams = 1 if len(readers) == 1 else 2
    rows = _check_out(out, block_rows, n_x, n_y, n_grams)
    t_max = max(max(len(s) for s in xs), max(len(s) for s in ys))
    in_place = out is None and rows >= n_x  # the whole Gram in one block, no buffer
    n_buffers = n_grams - 1 if in_place else n_grams
    width = xs[0].shape[1] * (2 if diff else 1) + 2 * p["sw2"].shape[0]  # packed inputs
    check_memory(8 * ((n_x * n_y if out is None else 0) + n_buffers * min(rows, n_x) * n_y
                      + len(readers) * t_max * (n_x + (0 if symmetric else n_y)) * width),
                 f"an RNTK Gram of {n_x} x {n_y} series"
                 + ("" if in_place else f" (blocks of {min(rows, n_x)} rows)"))
    settings = _settings(
        n_layers=n_layers, sigma_w=sigma_w, sigma_u=sigma_u, sigma_b=sigma_b,
        sigma_h=sigma_h, sigma_v=sigma_v, activation=activation, kind=kind,
        readout=readout, longest_series=t_max)
    packed = []  # the kernel of independent RNNs is the sum of theirs
    for reverse in readers:
        x = _prepare(network_inputs(xs, reverse, diff), t_max, p)
        y = x if symmetric else _prepare(network_inputs(ys, reverse, diff), t_max, p)
        packed.append((x, y))
    K = np.zeros((n_x, n_y)) if out is None else out
    buffers = [np.zeros((min(rows, n_x), n_y)) for _ in range(n_buffers)]
    for r0 in range(0, n_x, rows):
        r1 = min(r0 + rows, n_x)
        items = _items(r1 - r0, n_y, symmetric, r0)
        work = ((items[:, 2] - items[:, 1]).sum() * t_max * p["sw2"].shape[0] * len(readers)
                * _n_chains(t_max, stride, band))
        parts = ([K] if in_place else []) + [b[:r1 - r0] for b in buffers]
        for (x, y), part in zip(packed, parts):
            with numba_threads(1 if work < _SERIAL_WORK else n_jobs), \
                    compile_notice(_pair_kernel):
                _pair_kernel(*x, *y, items, symmetric, False, *_engine_args(p), stride, band,
                             r0, part)
            if part is not parts[0]:
                parts[0] += part
        block = parts[0]
        if symmetric and r0 > 0:  # the columns before the block's diagonal: earlier rows
            block[:, :r0] = K[:r0, r0:r1].T
        check_finite_kernel(block, "rntk_kernel", settings)
        if block is not K:
            K[r0:r1] = block
    return K


def rntk_diag(X: Sequences, *, n_layers: int = _D["n_layers"], sigma_w: Scale = _D["sigma_w"],
              sigma_u: Scale = _D["sigma_u"], sigma_b: Scale = _D["sigma_b"],
              sigma_h: float = _D["sigma_h"], sigma_v: float = _D["sigma_v"],
              activation: str = _D["activation"], kind: str = _D["kind"],
              direction: str = _D["direction"], diff: bool = _D["diff"],
              readout: str = _D["readout"], readout_stride: int = _D["readout_stride"],
              readout_band: int | None = _D["readout_band"],
              n_jobs: int | None = None) -> np.ndarray:
    """Diagonal of ``rntk_kernel(X)``: each sample paired with itself, in ``O(n T L)``.

    Parameters
    ----------
    X : array-like or list of arrays
        Sequences, in any layout accepted by :func:`rntk_kernel`.
    n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind, direction, diff, \
readout, readout_stride, readout_band, n_jobs
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
    p = _check_params(n_layers, sigma_w, sigma_u, sigma_b, sigma_h, sigma_v, activation, kind,
                      n_jobs)
    readers = _check_family(direction, diff)
    stride = check_readout(readout, readout_stride)
    band = check_band(readout_band)
    xs = as_sequences(X, "X")
    t_max = max(len(s) for s in xs)
    n = len(xs)
    items = np.stack([np.arange(n), np.arange(n), np.arange(1, n + 1)], axis=1).astype(np.int64)
    d = np.zeros(n)
    for reverse in readers:
        x = _prepare(network_inputs(xs, reverse, diff), t_max, p)
        out = np.zeros((n, 1))
        work = n * t_max * p["sw2"].shape[0] * _n_chains(t_max, stride, band)
        with numba_threads(1 if work < _SERIAL_WORK else n_jobs), \
                compile_notice(_pair_kernel):
            _pair_kernel(*x, *x, items, True, True, *_engine_args(p), stride, band, 0, out)
        d += out[:, 0]
    return check_finite_kernel(d, "rntk_diag", _settings(
        n_layers=n_layers, sigma_w=sigma_w, sigma_u=sigma_u, sigma_b=sigma_b,
        sigma_h=sigma_h, sigma_v=sigma_v, activation=activation, kind=kind,
        readout=readout, longest_series=t_max))
