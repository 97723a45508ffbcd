"""The fused CUDA engine of the RNTK (numba-cuda): one GPU thread per pair of series.

Each thread runs the whole recursion of its pair ``(i, j)``, over the common time axis
and the layers, in registers / thread-local arrays, reading the inputs and the
per-series factors of :func:`rntk._kernels._shared.prepare` from global memory, and
writes one value. The math is that of the CPU engine (:mod:`rntk._kernels._rntk`),
re-declared as CUDA device functions: the same branch-free arcsin / arccos polynomial,
the same cancellation-free forms of the V operators (exact for a series and its copy),
the same forward accumulation of the tangent kernel. A symmetric Gram computes the
pairs ``j >= i`` and writes both halves.

Batched settings: a third grid dimension runs many kernel settings (per-setting sigmas,
activation, kind and depth) in one launch; settings that share the pre-activation
variances of each series (they differ only in ``sigma_v`` or ``kind``) share their
factors.

Series are sorted by length before the launch (and each thread writes its value back
at the original indices), so that the threads of a warp run loops of similar length.

``numba.cuda`` is imported on first use only: importing :mod:`rntk` never touches CUDA.
With ``NUMBA_ENABLE_CUDASIM=1`` (set before ``numba.cuda`` is first imported) the same
kernel runs on numba's CUDA simulator, on the CPU, which is how the tests check it.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import sys

import numpy as np

from .._utils import DOC, as_sequences, check_finite_kernel, check_same_channels, fill_doc
from ._params import (
    RNTK_DEFAULTS,
    RNTK_PARAM_LIST,
    RNTK_PARAM_NAMES,
    resolve_params,
    table_options,
)
from ._params import RNTK_DEFAULTS as _D
from ._shared import ASIN_POLY, network_inputs, prepare, self_factors, self_variances

__all__ = ["MAX_LAYERS", "cuda_available", "rntk_kernel_cuda", "rntk_kernel_cuda_batched"]

#: Deepest network of the CUDA engine (thread-local arrays need a compile-time size).
MAX_LAYERS = 4
#: The package that provides ``numba.cuda`` (a name, so that tests can hide it).
_NUMBA_CUDA = "numba_cuda"
#: Threads per block along (columns j, rows i): a warp spans 32 columns of one row.
_BLOCK = (32, 4)
#: The simulator runs every thread of a block as a Python thread: small blocks.
_SIM_BLOCK = (4, 4)
#: Largest output of one launch (bytes): more settings are run in several launches.
_MAX_OUT_BYTES = 8 * 2**30
_MAX_GRID_Z = 65535
#: The parameters that change the data a launch reads: one launch per combination.
_GROUP_KEYS = ("direction", "diff", "readout", "readout_stride", "readout_band")
#: ``numba.cuda``, once a kernel was compiled (never imported with the package).
cuda = None

_INSTALL_HINT = (
    "install the optional CUDA engine with `pip install 'rntk[cuda]'` (the numba-cuda "
    "package) and, on a machine without a system CUDA toolkit, `pip install "
    "'numba-cuda[cu12]'` or `'numba-cuda[cu13]'` matching the NVIDIA driver")


def _load_cuda():
    """Return ``numba.cuda``, or raise a clear error when it cannot run a kernel."""
    if importlib.util.find_spec(_NUMBA_CUDA) is None:
        raise ImportError(f"device='cuda' needs the numba-cuda package: {_INSTALL_HINT}.")
    try:
        from numba import cuda
    except Exception as exc:  # a broken install: missing bindings, toolkit, ...
        raise ImportError(f"numba.cuda could not be imported ({exc}); {_INSTALL_HINT}."
                          ) from exc
    if not cuda.is_available():
        raise RuntimeError(
            "device='cuda': no usable CUDA GPU (numba.cuda.is_available() is False: no "
            "NVIDIA GPU, no driver, or a driver too old for the installed CUDA packages; "
            "see `python -c 'from numba import cuda; cuda.detect()'`). Use device='cpu', "
            "or set NUMBA_ENABLE_CUDASIM=1 before numba.cuda is imported to run the CUDA "
            "engine on numba's simulator (very slow: tests only).")
    return cuda


def _simulated():
    """Whether ``numba.cuda`` is numba's CPU simulator."""
    return "numba.cuda.simulator_init" in sys.modules


def cuda_available():
    """Whether the CUDA engine can run here (a GPU, or numba's CUDA simulator).

    Returns
    -------
    available : bool
        ``True`` when numba-cuda is installed and ``numba.cuda.is_available()``;
        this imports ``numba.cuda``.
    """
    try:
        _load_cuda()
    except (ImportError, RuntimeError):
        return False
    return True


# asin(y) = y + y z P(z), z = y^2 on 0 <= y <= 1/2: the coefficients the CPU engine
# evaluates (``ASIN_POLY``), as Python floats so that the device code reads constants.
_C = tuple(float(c) for c in ASIN_POLY)


@functools.cache
def _kernels(dtype):
    """Compile-on-demand CUDA kernels for one float dtype (float64 or float32).

    Every constant is cast to the kernel's float type ``F``: in float32 no instruction
    is promoted to float64.
    """
    import numba

    # a module global, not a closure variable: numba's simulator swaps the ``cuda`` of the
    # kernel's globals for its per-thread fake module (threadIdx, blockIdx, ...)
    global cuda
    cuda = _load_cuda()
    F = numba.float32 if np.dtype(dtype) == np.float32 else numba.float64
    fast = F is numba.float32  # approximate division / sqrt in float32 only
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11 = _C
    HALF_PI = 0.5 * math.pi
    INV_2PI = 0.5 / math.pi
    TWO_OVER_PI = 2.0 / math.pi
    FOUR_OVER_PI = 4.0 / math.pi
    SNAP = 16 * float(np.finfo(dtype).eps)  # the CPU engine's _SNAP, in the kernel's dtype

    @cuda.jit(device=True, fastmath=fast)
    def asin_core(a, one_minus_a):
        big = a > F(0.5)
        y = math.sqrt(F(0.5) * one_minus_a) if big else a
        z = y * y
        p = F(c11)
        p = p * z + F(c10)
        p = p * z + F(c9)
        p = p * z + F(c8)
        p = p * z + F(c7)
        p = p * z + F(c6)
        p = p * z + F(c5)
        p = p * z + F(c4)
        p = p * z + F(c3)
        p = p * z + F(c2)
        p = p * z + F(c1)
        p = p * z + F(c0)
        return y + y * z * p, big

    @cuda.jit(device=True, fastmath=fast)
    def asin(x, one_minus_abs_x):
        r, big = asin_core(abs(x), one_minus_abs_x)
        r = F(HALF_PI) - F(2.0) * r if big else r
        return r if x >= F(0.0) else -r

    @cuda.jit(device=True, fastmath=fast)
    def v_phi(act, a1, r1, a2, r2, k3, same):
        """(V_phi[K], V_phi'[K]) of the CPU engine's ``_v_phi`` (same stable forms)."""
        if act == 0:  # ReLU
            c = min(max(k3 * r1 * r2, F(-1.0)), F(1.0))
            ac = abs(c)
            om = F(1.0) - ac
            om = F(0.0) if (same or om <= F(SNAP)) else om
            h, big = asin_core(ac, om)
            t = F(2.0) * h if big else F(HALF_PI) - h  # arccos |c|
            tail = a1 * a2 * (math.sqrt(om * (F(1.0) + ac)) - t * ac) * F(INV_2PI)
            q = t * F(INV_2PI)
            if c >= F(0.0):
                return tail + F(0.5) * k3, F(0.5) - q
            return tail, q
        elif act == 1:  # erf
            t = F(2.0) * k3 * r1
            c = t * r1 if same else min(max(t * r2, F(-1.0)), F(1.0))
            ac = abs(c)
            e = (a1 - ac) + (a2 - ac)
            e = F(0.0) if (same or e <= F(2.0 * SNAP)) else e
            om = F(0.5) * ((r1 * r1 + r2 * r2) + e)
            return (F(TWO_OVER_PI) * asin(c, om),
                    F(FOUR_OVER_PI) * r1 * r2 / math.sqrt(om * (F(1.0) + ac)))
        return k3, F(1.0)  # linear

    @cuda.jit(fastmath=fast)
    def pair_kernel(xdata, xstart, xidx, xa, xr, ydata, ystart, yidx, ya, yr, code, sig,
                    symmetric, stride, band, out):
        """One thread per pair (i, j) of one setting (grid z): the whole recursion.

        ``xdata``: (readers, T, m, n_x) end-aligned inputs; ``xa``, ``xr``: (readers,
        factor sets, deepest n_layers, T, n_x) self factors; ``xidx``: original index of each
        (length-sorted) series. ``code[s] = (activation, ntk, n_layers, factor set)``,
        ``sig[s] = (sh2, sv2, sw2[MAX_LAYERS], su2[MAX_LAYERS], sb2[MAX_LAYERS])``.
        ``stride``: 0 reads out the last step; ``s > 0`` the mean over the steps
        ``T, T - s, ...`` of each series (one chain per cut, see the CPU engine);
        ``band >= 0`` keeps the cuts of at most ``band`` readouts, weighted.
        """
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        s = cuda.blockIdx.z
        n_readers = xdata.shape[0]
        t_max = xdata.shape[1]
        m = xdata.shape[2]
        if i >= xdata.shape[3] or j >= ydata.shape[3] or s >= code.shape[0]:
            return
        if symmetric and j < i:
            return
        act = code[s, 0]
        ntk = code[s, 1] != 0
        n_layers = code[s, 2]
        u = code[s, 3]
        sh2 = sig[s, 0]
        sv2 = sig[s, 1]
        su0 = sig[s, 2 + MAX_LAYERS]
        inv_m = F(1.0) / F(m)
        top = n_layers - 1
        xs = xstart[i]
        ys = ystart[j]
        self_pair = symmetric and i == j
        # stride 0 (last step): a stride longer than any series gives one chain, one read
        every = stride if stride > 0 else t_max + 1
        n_xcuts = (t_max - xs - 1) // every + 1
        n_ycuts = (t_max - ys - 1) // every
        n_xread = n_xcuts  # readouts of x, for the mean
        if band >= 0:
            n_xcuts = min(n_xcuts, band + 1)
            n_ycuts = min(n_ycuts, band)
        n_cuts = n_xcuts + n_ycuts
        v = cuda.local.array(MAX_LAYERS, F)
        d = cuda.local.array(MAX_LAYERS, F)
        th = cuda.local.array(MAX_LAYERS, F)
        total = F(0.0)
        for r in range(n_readers):
            acc = F(0.0)
            for cut in range(n_cuts):
                k = cut if cut < n_xcuts else cut - n_xcuts + 1  # readouts apart
                a = k * every if cut < n_xcuts else 0
                b = 0 if cut < n_xcuts else k * every
                wgt = F(1.0) if band < 0 else F(1.0) - F(k) / F(band + 1)
                same = self_pair and cut == 0
                ex = t_max - 1 - a
                ey = t_max - 1 - b
                n_steps = min(ex - xs, ey - ys) + 1
                for l in range(n_layers):
                    v[l] = sh2 if same else F(0.0)  # a sample shares its initial state
                    d[l] = F(0.0)
                    th[l] = F(0.0)
                countdown = (n_steps - 1) % every  # steps to the next readout
                for q in range(n_steps - 1, -1, -1):
                    px = ex - q
                    py = ey - q
                    for l in range(n_layers):
                        sw2 = sig[s, 2 + l]
                        if l == 0:
                            dot = F(0.0)
                            for k in range(m):
                                dot += xdata[r, px, k, i] * ydata[r, py, k, j]
                            inp = su0 * (inv_m * dot)  # as the CPU engine
                            below = F(0.0)
                        else:
                            su2 = sig[s, 2 + MAX_LAYERS + l]
                            inp = su2 * v[l - 1]
                            below = su2 * d[l - 1] * th[l - 1]
                        k3 = sw2 * v[l] + inp + sig[s, 2 + 2 * MAX_LAYERS + l]
                        t = k3 + sw2 * d[l] * th[l] + below
                        vv, vd = v_phi(act, xa[r, u, l, px, i], xr[r, u, l, px, i],
                                       ya[r, u, l, py, j], yr[r, u, l, py, j], k3, same)
                        v[l] = vv
                        d[l] = vd
                        th[l] = t
                    if countdown == 0:
                        res = v[top]
                        if ntk:
                            res += d[top] * th[top]
                        acc += wgt * res
                        countdown = every - 1
                    else:
                        countdown -= 1
            if stride > 0:
                acc /= F(n_xread * ((t_max - ys - 1) // every + 1))
            total += sv2 * acc
        oi = xidx[i]
        oj = yidx[j]
        out[s, oi, oj] = total
        if symmetric:
            out[s, oj, oi] = total

    return cuda, pair_kernel


def _check_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {dtype!r}")
    return dt


def _full_settings(settings, params):
    """Each setting completed by ``params`` and the defaults; unknown names raise."""
    unknown = set(params) - set(RNTK_PARAM_NAMES)
    if unknown:
        raise TypeError(f"unknown kernel parameter(s) {sorted(unknown)}")
    if settings is None:
        settings = [{}]
    settings = list(settings)
    if not settings:
        raise ValueError("settings is empty: give at least one kernel setting")
    full = []
    for k, s in enumerate(settings):
        if not isinstance(s, dict):
            raise TypeError(f"settings[{k}] must be a dict, got {type(s).__name__}")
        unknown = set(s) - set(RNTK_PARAM_NAMES)
        if unknown:
            raise ValueError(f"settings[{k}] names unknown kernel parameter(s) "
                             f"{sorted(unknown)}; valid ones: {list(RNTK_PARAM_NAMES)}")
        full.append({**RNTK_DEFAULTS, **params, **s})
    return full


def _order(seqs):
    """Return the indices that sort the series by length (warps of similar loops)."""
    return np.argsort(np.array([len(s) for s in seqs]), kind="stable")


def _factor_sets(checked):
    """Return the unique factor settings ``(act, sw2, su2, sb2, sh2)`` and their index."""
    keys, index = {}, []
    for p in checked:
        key = (p.act, p.sw2, p.su2, p.sb2, p.sh2)
        index.append(keys.setdefault(key, len(keys)))
    first = {}
    for k, u in enumerate(index):
        first.setdefault(u, k)
    return [checked[first[u]] for u in range(len(keys))], np.array(index, dtype=np.int32)


def _pack(seqs, readers, diff, t_max, unique, dt):
    """Return the inputs ``(R, T, m, n)`` and factors ``(R, U, L_max, T, n)`` of a set.

    The packing and factors the CPU engine reads: ``prepare`` for the first factor set,
    ``self_variances`` / ``self_factors`` on the same packed data for the others.
    """
    n = len(seqs)
    data, fa, fr, start = None, None, None, None
    for r, reverse in enumerate(readers):
        inputs = network_inputs(seqs, reverse, diff)
        for u, p in enumerate(unique):
            if u == 0:
                x, start, a, b = prepare(inputs, t_max, p)
                if data is None:
                    depth = max(q.n_layers for q in unique)
                    data = np.empty((len(readers),) + x.shape, dt)
                    fa = np.zeros((len(readers), len(unique), depth, t_max, n), dt)
                    fr = np.zeros_like(fa)
                data[r] = x
            else:
                var = self_variances(x, start, p.act, *p.layer_variances(), p.sh2)
                a, b = self_factors(var, p.act)
            fa[r, u, :a.shape[0]] = a
            fr[r, u, :b.shape[0]] = b
    return data, start.astype(np.int32), fa, fr


def _launch(xs, ys, full, dt, block):
    """Grams of settings that share direction, diff and readout: ``(S, n_X, n_Y)``."""
    symmetric = ys is None
    checked = full  # resolved options; they share direction, diff and the readout
    g = checked[0]
    readers, stride, band = g.readers, g.stride, g.band
    unique, fidx = _factor_sets(checked)
    code = np.zeros((len(full), 4), np.int32)
    sig = np.zeros((len(full), 2 + 3 * MAX_LAYERS), dt)
    for k, p in enumerate(checked):
        n_layers = p.n_layers
        code[k] = (p.act, p.want_ntk, n_layers, fidx[k])
        sig[k, 0], sig[k, 1] = p.sh2, p.sv2
        for o, name in enumerate(("sw2", "su2", "sb2")):
            sig[k, 2 + o * MAX_LAYERS:2 + o * MAX_LAYERS + n_layers] = getattr(p, name)
    t_max = max(max(len(s) for s in xs), max(len(s) for s in (xs if symmetric else ys)))
    xo = _order(xs)
    x = _pack([xs[k] for k in xo], readers, g.diff, t_max, unique, dt)
    if symmetric:
        yo, y = xo, x
    else:
        yo = _order(ys)
        y = _pack([ys[k] for k in yo], readers, g.diff, t_max, unique, dt)
    cuda, kernel = _kernels(dt)
    n_x, n_y = len(xs), len(ys if not symmetric else xs)
    bx, by = block if block is not None else (_SIM_BLOCK if _simulated() else _BLOCK)
    per_launch = max(1, min(_MAX_GRID_Z, _MAX_OUT_BYTES // (n_x * n_y * dt.itemsize)))
    dx = [cuda.to_device(np.ascontiguousarray(a)) for a in
          (x[0], x[1], xo.astype(np.int32), x[2], x[3])]
    dy = dx if symmetric else [cuda.to_device(np.ascontiguousarray(a)) for a in
                               (y[0], y[1], yo.astype(np.int32), y[2], y[3])]
    K = np.empty((len(full), n_x, n_y), dt)
    for s0 in range(0, len(full), per_launch):
        s1 = min(s0 + per_launch, len(full))
        out = cuda.device_array((s1 - s0, n_x, n_y), dt)
        grid = ((n_y + bx - 1) // bx, (n_x + by - 1) // by, s1 - s0)
        kernel[grid, (bx, by, 1)](*dx, *dy, cuda.to_device(code[s0:s1]),
                                  cuda.to_device(sig[s0:s1]), symmetric, stride, band, out)
        K[s0:s1] = out.copy_to_host()
    for k, p in enumerate(full):
        check_finite_kernel(K[k], "rntk_kernel_cuda",
                            p.settings(longest_series=t_max, dtype=dt.name))
    return K


@fill_doc(kernel_param_names=RNTK_PARAM_LIST, **DOC)
def rntk_kernel_cuda_batched(X, Y=None, settings=None, *, dtype=np.float64, block=None,
                             **params):
    """Gram matrices of many RNTK settings on a GPU, one launch per data layout.

    Parameters
    ----------
    {XY_sets}
    settings : list of dict, default=None
        The kernel settings, each a dict of :func:`rntk.rntk_kernel` hyperparameters
        ({kernel_param_names}) that override ``params``. Settings that
        share ``direction``, ``diff`` and the readout run in one launch (a grid
        dimension over settings).
        ``None``: one setting, ``params``.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the whole computation on the GPU, and of the result.
    block : tuple of int (bx, by), default=None
        Threads per block along (columns, rows); ``None``: (32, 4) on a GPU.
    **params
        Hyperparameters common to every setting (defaults: those of
        :func:`rntk.rntk_kernel`).

    Returns
    -------
    K : ndarray of shape (n_settings, n_X, n_Y)
        The Grams, in the order of ``settings``.

    {raises_cuda}
    """
    dt = _check_dtype(dtype)
    full = _full_settings(settings, params)
    xs = as_sequences(X, "X")
    ys = None if Y is None else as_sequences(Y, "Y")
    check_same_channels(xs, ys)
    specs = []
    for s in full:  # validate every setting before any GPU work
        p = resolve_params(**s)
        if p.n_layers > MAX_LAYERS:
            raise ValueError(f"the CUDA engine supports n_layers <= {MAX_LAYERS}, got "
                             f"{p.n_layers}; use device='cpu'")
        specs.append(p)
    _load_cuda()
    groups = {}
    for k, s in enumerate(full):
        key = tuple(repr(s[g]) for g in _GROUP_KEYS)
        groups.setdefault(key, []).append(k)
    n_y = len(xs) if ys is None else len(ys)
    K = np.empty((len(full), len(xs), n_y), dt)
    for idx in groups.values():
        K[idx] = _launch(xs, ys, [specs[k] for k in idx], dt, block)
    return K


@fill_doc(kernel_param_names=RNTK_PARAM_LIST, **DOC)
def rntk_kernel_cuda(X, Y=None, *, n_layers=_D["n_layers"],
                     sigma_w=_D["sigma_w"], sigma_u=_D["sigma_u"],
                     sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"],
                     sigma_v=_D["sigma_v"], activation=_D["activation"],
                     kind=_D["kind"], direction=_D["direction"],
                     diff=_D["diff"], readout=_D["readout"],
                     readout_stride=_D["readout_stride"],
                     readout_band=_D["readout_band"], dtype=np.float64, block=None):
    """RNTK (or RNN-NNGP) Gram matrix computed on a GPU by the fused CUDA engine.

    The same kernel as :func:`rntk.rntk_kernel`: one GPU thread per pair of series
    runs the whole recursion over time and layers.

    Parameters
    ----------
    X : array-like or list of arrays
        Sequences, in any layout accepted by :func:`rntk.rntk_kernel`.
    Y : same layout as X, default=None
        Second set; ``None`` computes ``K(X, X)``, whose diagonal pairs each sample
        with itself (the ``sigma_h`` term). Only the pairs ``j >= i`` are computed.
    {kernel_param_names}
        As in :func:`rntk.rntk_kernel` (``n_layers <= 4``).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the computation on the GPU, and of the result.
    block : tuple of int (bx, by), default=None
        Threads per block along (columns, rows); ``None``: (32, 4) on a GPU.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
        The Gram matrix, of ``dtype``.

    {raises_cuda}

    See Also
    --------
    rntk_kernel_cuda_batched : Many settings in one launch.
    """
    params = table_options(locals())
    return rntk_kernel_cuda_batched(X, Y, [params], dtype=dtype, block=block)[0]
