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

import numpy as np
from numba import njit, prange

from .._utils import (
    DOC,
    INTERLEAVE,
    as_sequences,
    check_finite_kernel,
    check_memory,
    check_n_jobs,
    check_same_channels,
    compile_notice,
    fill_doc,
    interleaved_loops,
    numba_threads,
)
from .._utils._typing import Scale, Sequences
from ._params import (
    RNTK_DEFAULTS,
    RNTK_PARAM_LIST,
    RNTK_PARAMS_DOC,
    resolve_params,
    table_options,
)
from ._shared import (
    _JIT,
    PRECISIONS,
    _cov,
    _lit,
    _mul,
    _v_phi,
    check_out,
    check_precision,
    n_chains,
    network_inputs,
    prepare,
    single,
    single_fits,
    work_items,
)

__all__ = ["rntk_kernel", "rntk_diag"]

_D = RNTK_DEFAULTS
# below this many pair-steps a Gram takes well under a millisecond on one thread: waking the
# thread pool costs more than it saves (and much more on a loaded machine)
_SERIAL_WORK = 100_000


@njit(inline="always", **_JIT)
def _update(act, a1, r1, s, t, ya, yr, same, v, d, th, jj):
    """Store column ``jj``'s ``V_phi``, ``V_phi'`` and ``Theta``."""
    v[jj], d[jj] = _v_phi(act, a1, r1, ya[jj], yr[jj], s, same[jj])
    th[jj] = t


@njit(inline="always", **_JIT)
def _first_layer(act, a1, r1, sw2, su2, sb2, ya, yr, xin, yin, same, v, d, th):
    """Layer 1 at one step; column ``jj``'s input inner product is ``xin * yin[jj]``."""
    for jj in range(v.shape[0]):
        s = _cov(sw2, v[jj], su2 * (xin * yin[jj]), sb2)
        t = s + sw2 * d[jj] * th[jj]
        _update(act, a1, r1, s, t, ya, yr, same, v, d, th, jj)


@njit(inline="always", **_JIT)
def _upper_layer(act, a1, r1, sw2, su2, sb2, ya, yr, inp, below, same, v, d, th):
    """Layer l > 1 at one step, from layer l-1's ``V_phi`` and ``su2 V_phi' Theta``."""
    for jj in range(v.shape[0]):
        s = _cov(sw2, v[jj], su2 * inp[jj], sb2)
        t = s + sw2 * d[jj] * th[jj] + below[jj]
        _update(act, a1, r1, s, t, ya, yr, same, v, d, th, jj)


@njit(inline="always", **_JIT)
def _layer(act, l, p, a1, r1, sw2, su2, sb2, ystart, y_started, ya, yr, xin, yin, inp, below,
           same, v, d, th):
    """One (layer, step) of the recursion for a row against a tile of columns.

    Every lane is updated; a column that starts after step ``p`` (there are some only
    before ``y_started``) is then reset to 0, its state before its first step.
    """
    if l == 0:
        _first_layer(act, a1, r1, sw2, su2, sb2, ya, yr, xin, yin, same, v, d, th)
    else:
        _upper_layer(act, a1, r1, sw2, su2, sb2, ya, yr, inp, below, same, v, d, th)
    if p < y_started:
        for jj in range(v.shape[0]):
            if p < ystart[jj]:
                v[jj] = _lit(v[jj], 0.0)
                d[jj] = _lit(v[jj], 0.0)
                th[jj] = _lit(v[jj], 0.0)


#: Elements of a work item's buffer of input products (several channels): 2 MB in float32
_PRODUCTS = 2**19


@njit(inline="always", **_JIT)
def _cut(cut, n_xcuts, stride):
    """Return ``(k, a, b)`` of chain ``cut``: readouts apart, steps cut from x, from y."""
    if cut < n_xcuts:
        return cut, cut * stride, 0
    k = cut - n_xcuts + 1
    return k, 0, k * stride


@njit(**_JIT)
def _input_products(xdata, ydata, i, j0, x_start, first_y, stride, n_xcuts, g0, g1, prod):
    """Fill ``prod[c - g0, py, jj]`` with ``x_i(py - a + b) . y_(j0 + jj)(py)`` for chains g0:g1.

    The inner products over the channels of row ``i``'s step and column ``j0 + jj``'s
    step ``py``, for every step a chain reads (the others are left as they are). Each
    product is added in channel order, as the self variances add theirs (the same
    roundings, so that a series and its copy stay equal); each of y's values is loaded
    once for the whole group instead of once per chain (9x the products per second of
    a pass per chain, at 42 channels and 17 chains, float32).
    """
    t_max, m, _ = xdata.shape
    nb = prod.shape[2]
    n = g1 - g0
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    shift = np.empty(n, np.int64)
    py0 = t_max
    for c in range(n):
        _, a, b = _cut(g0 + c, n_xcuts, stride)
        lo[c] = max(x_start + a, first_y + b) - b  # the chain's steps p, as steps of y
        hi[c] = t_max - b
        shift[c] = a - b  # px = py - shift
        py0 = min(py0, lo[c])
    zero = _lit(xdata[0, 0, 0], 0.0)
    for py in range(py0, t_max):
        for c in range(n):
            if lo[c] <= py < hi[c]:
                prod[c, py, :] = zero
        # four channels per pass over the lanes (a quarter of the loads and stores of
        # the sums), each product added in channel order as one channel per pass would
        kk = 0
        while kk + 4 <= m:
            y0 = ydata[py, kk, j0:j0 + nb]
            y1 = ydata[py, kk + 1, j0:j0 + nb]
            y2 = ydata[py, kk + 2, j0:j0 + nb]
            y3 = ydata[py, kk + 3, j0:j0 + nb]
            for c in range(n):
                if lo[c] <= py < hi[c]:
                    px = py - shift[c]
                    x0, x1 = xdata[px, kk, i], xdata[px, kk + 1, i]
                    x2, x3 = xdata[px, kk + 2, i], xdata[px, kk + 3, i]
                    row = prod[c, py]
                    for jj in range(nb):
                        t = row[jj] + _mul(x0, y0[jj])
                        t = t + _mul(x1, y1[jj])
                        t = t + _mul(x2, y2[jj])
                        row[jj] = t + _mul(x3, y3[jj])
            kk += 4
        while kk < m:
            y0 = ydata[py, kk, j0:j0 + nb]
            for c in range(n):
                if lo[c] <= py < hi[c]:
                    xv = xdata[py - shift[c], kk, i]
                    row = prod[c, py]
                    for jj in range(nb):
                        row[jj] += _mul(xv, y0[jj])
            kk += 1


def _make_pair_kernel(act):
    """Return the pair kernel of activation ``act`` (0 ReLU, 1 erf, 2 linear).

    ``act`` is a constant of the compiled function: everything a step does is inlined
    into the engine with its activation known, so that each lane loop vectorises, and
    the layer-1 input product is fused into the lane loop (1.3-2.3x faster than a call
    per step with the inputs in a separate pass). One engine per activation, compiled
    on its first call: a ReLU-only run compiles only the ReLU engine (``python -m rntk``
    with no cache: 16.5 s of compilation instead of 46 s for the three activations at
    once, medians of 3 on a loaded 2-core machine, ``benchmarks/bench_first_run.py``).
    Same results, bitwise, and the same speed as the engine with a runtime ``act``.
    """

    @njit(parallel=True, **_JIT)
    def pair_kernel(xdata, xstart, xa, xr, ydata, ystart, ya, yr, items, symmetric, diag_out,
                    sw2, su2, sb2, sh2, sv2, want_ntk, stride, band, row0, products, out):
        """Fill ``out`` with the kernel of each work item ``(i, j0, j1)``: row i, columns j0:j1.

        ``out`` holds the rows from ``row0`` on: pair ``(i, j)`` goes to ``out[i - row0, j]``.
        ``symmetric``: Y is X, the pair (i, i) is a sample with itself, and ``out[j - row0, i]``
        is filled too when row ``j`` is in ``out``. ``diag_out``: write ``out[i - row0, 0]``
        (used by ``rntk_diag``).

        The NTK is accumulated forward in time: with ``Theta^(l,t)`` the tangent kernel of
        the pre-activations ``g^(l,t)``,
        ``Theta^(l,t) = Sigma^(l,t) + sw2_l D^(l,t-1) Theta^(l,t-1)
        + su2_l D^(l-1,t) Theta^(l-1,t)``
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
        real = xdata.dtype  # the arithmetic: float64, or float32 (``precision``)
        zero = _lit(sw2[0], 0.0)
        for it in prange(items.shape[0]):
            i = items[it, 0]
            j0 = items[it, 1]
            j1 = items[it, 2]
            nb = j1 - j0
            # per layer and column: V_phi (covariance of h), V_phi' and Theta of g, last step
            v = np.zeros((n_layers, nb), real)
            d = np.zeros((n_layers, nb), real)
            th = np.zeros((n_layers, nb), real)
            acc = np.zeros(nb, real)
            inp = np.zeros(nb, real)
            below = np.zeros(nb, real)
            same = np.zeros(nb, dtype=np.bool_)
            self_lane = symmetric and j0 <= i < j1
            ys = ystart[j0:j1]
            first_y = t_max
            last_y = 0  # every column has started from this step on
            for jj in range(nb):
                first_y = min(first_y, ys[jj])
                last_y = max(last_y, ys[jj])
            if stride == 0:
                n_xcuts = 1
                n_ycuts = 0
            else:
                n_xcuts = (t_max - xstart[i] + stride - 1) // stride
                n_ycuts = (t_max - first_y + stride - 1) // stride - 1
                if band >= 0:
                    n_xcuts = min(n_xcuts, band + 1)
                    n_ycuts = min(n_ycuts, band)
            n_cuts = n_xcuts + n_ycuts
            # several channels: the input products of a group of chains are computed
            # first, one pass over y's columns for the whole group (chains that read
            # the same column step share its loads), then each chain reads its own
            group = n_cuts if m == 1 else max(1, min(n_cuts, products // (t_max * nb)))
            prod = np.empty((group if m > 1 else 0, t_max, nb), real)
            for g0 in range(0, n_cuts, group):
                g1 = min(g0 + group, n_cuts)
                if m > 1:
                    _input_products(xdata, ydata, i, j0, xstart[i], first_y, stride,
                                    n_xcuts, g0, g1, prod)
                for cut in range(g0, g1):
                    k, a, b = _cut(cut, n_xcuts, stride)
                    wgt = _lit(zero, 1.0 if band < 0 else 1.0 - k / (band + 1.0))
                    v[:] = zero
                    d[:] = zero
                    th[:] = zero
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
                            xin = _lit(zero, 1.0 / m)
                            yin = prod[cut - g0, py]
                        for l in range(n_layers):
                            if l > 0:  # inputs from layer l-1 at this step
                                for jj in range(nb):
                                    inp[jj] = v[l - 1, jj]
                                    below[jj] = su2[l] * d[l - 1, jj] * th[l - 1, jj]
                            _layer(act, l, py, xa[l, px, i], xr[l, px, i], sw2[l], su2[l],
                                   sb2[l], ys, last_y, ya[l, py, j0:j1], yr[l, py, j0:j1], xin,
                                   yin, inp, below, same, v[l], d[l], th[l])
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

    return pair_kernel


#: The engines, by activation code and precision: dispatchers, compiled on first use
#: (one per precision, so that each is compiled with its own first call's options).
_PAIR_KERNELS = {(act, precision): _make_pair_kernel(act)
                 for act in range(3) for precision in PRECISIONS}
#: Interleaved vectors of each engine's lane loops (ReLU, erf, linear; see INTERLEAVE).
_INTERLEAVE = {"float64": (INTERLEAVE, 0, INTERLEAVE),
               # the float32 engines: none (their 16 lanes per vector gain nothing from it,
               # and the interleaved engine took about twice as long to compile)
               "float32": (0, 0, 0)}


def _pair_kernel(xdata, xstart, xa, xr, ydata, ystart, ya, yr, items, symmetric, diag_out,
                 act, *args):
    """Run the engine of activation ``act`` (see ``_make_pair_kernel``).

    Its first call in a process compiles it with interleaved lane loops where that pays
    (:func:`rntk._utils.interleaved_loops`; not the erf engine, which it slows). The
    arithmetic is that of ``xdata`` (float64 or float32; every float argument alike).
    """
    precision = _precision_of(xdata)
    engine = _PAIR_KERNELS[act, precision]
    with interleaved_loops(engine, _INTERLEAVE[precision][act]):
        return engine(xdata, xstart, xa, xr, ydata, ystart, ya, yr, items, symmetric,
                      diag_out, *args)




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
                block_rows: int | None = None, device: str = "cpu",
                precision: str = "float64") -> np.ndarray:
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
        Numba threads for this call; ``None``: the current setting (Numba's thread
        count, all cores unless changed by ``numba.set_num_threads``), ``-1``: all
        cores. The previous thread count is restored afterwards.
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
    {precision}

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
    options = table_options(locals())
    check_precision(precision)
    if device == "cuda":
        from ._cuda import rntk_kernel_cuda

        K = rntk_kernel_cuda(X, Y, **options)
        if out is None:
            return K
        check_out(out, block_rows, *K.shape, 1)
        out[...] = K
        return out
    if device != "cpu":
        raise ValueError(f"unknown device {device!r}; choose 'cpu' or 'cuda'")
    check_n_jobs(n_jobs)
    return _gram(X, Y, resolve_params(**options), n_jobs, out, block_rows, precision)


def _precision_of(data):
    """Return the ``precision`` of an array of the engine (its floating type's name)."""
    return "float32" if data.dtype == np.float32 else "float64"


def _engine_args(spec, precision="float64"):
    """Return the options as the engine's ``act, sw2, su2, sb2, sh2, sv2, want_ntk``."""
    real = PRECISIONS[precision]
    sw2, su2, sb2 = (np.asarray(a, dtype=real) for a in spec.layer_variances())
    return (spec.act, sw2, su2, sb2, real(spec.sh2), real(spec.sv2), spec.want_ntk)


def _engine_name(spec, precision="float64"):
    """Return the engine's name in the compile notice (one engine per precision)."""
    return f"the RNTK engine ({spec.activation}, {precision})"


def _gram(X, Y, spec, n_jobs=None, out=None, block_rows=None, precision="float64"):
    """Return the Gram for checked options ``spec`` (see :func:`rntk_kernel`)."""
    readers, diff, stride, band = spec.readers, spec.diff, spec.stride, spec.band
    xs = as_sequences(X, "X")
    symmetric = Y is None
    ys = xs if symmetric else as_sequences(Y, "Y")
    check_same_channels(xs, ys)
    n_x, n_y = len(xs), len(ys)
    # a second Gram (buffer) for a sum of directions
    n_grams = 1 if len(readers) == 1 else 2
    rows = check_out(out, block_rows, n_x, n_y, n_grams)
    t_max = max(max(len(s) for s in xs), max(len(s) for s in ys))
    in_place = out is None and rows >= n_x  # the whole Gram in one block, no buffer
    n_buffers = n_grams - 1 if in_place else n_grams
    width = xs[0].shape[1] * (2 if diff else 1) + 2 * spec.n_layers  # packed inputs
    check_memory(8 * ((n_x * n_y if out is None else 0) + n_buffers * min(rows, n_x) * n_y
                      + len(readers) * t_max * (n_x + (0 if symmetric else n_y)) * width),
                 f"an RNTK Gram of {n_x} x {n_y} series"
                 + ("" if in_place else f" (blocks of {min(rows, n_x)} rows)"))
    settings = spec.settings(longest_series=t_max)
    packed = []  # the kernel of independent RNNs is the sum of theirs
    for reverse in readers:
        x = prepare(network_inputs(xs, reverse, diff), t_max, spec)
        y = x if symmetric else prepare(network_inputs(ys, reverse, diff), t_max, spec)
        packed.append((x, y))
    if precision == "float32":
        if all(single_fits(x) and (y is x or single_fits(y)) for x, y in packed):
            packed = [(sx, sx if y is x else single(y)) for x, y in packed
                      for sx in [single(x)]]
        else:  # values or variances beyond float32's comfortable range
            precision = "float64"
    K = np.zeros((n_x, n_y)) if out is None else out
    buffers = [np.zeros((min(rows, n_x), n_y)) for _ in range(n_buffers)]
    for r0 in range(0, n_x, rows):
        r1 = min(r0 + rows, n_x)
        items = work_items(r1 - r0, n_y, symmetric, r0)
        work = ((items[:, 2] - items[:, 1]).sum() * t_max * spec.n_layers * len(readers)
                * n_chains(t_max, stride, band))
        parts = ([K] if in_place else []) + [b[:r1 - r0] for b in buffers]
        for (x, y), part in zip(packed, parts):
            with numba_threads(1 if work < _SERIAL_WORK else n_jobs), \
                    compile_notice(_PAIR_KERNELS[spec.act, precision],
                                   _engine_name(spec, precision)):
                _pair_kernel(*x, *y, items, symmetric, False, *_engine_args(spec, precision),
                             stride, band, r0, _PRODUCTS, part)
            if part is not parts[0]:
                parts[0] += part
        block = parts[0]
        if symmetric and r0 > 0:  # the columns before the block's diagonal: earlier rows
            block[:, :r0] = K[:r0, r0:r1].T
        check_finite_kernel(block, "rntk_kernel", settings)
        if block is not K:
            K[r0:r1] = block
    return K


@fill_doc(kernel_param_names=RNTK_PARAM_LIST)
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
    {kernel_param_names}, n_jobs
        As in :func:`rntk_kernel`.

    Returns
    -------
    d : ndarray of shape (n_X,)
        ``rntk_kernel(X)[i, i]`` for every ``i``.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import rntk_kernel
    >>> from rntk._kernels import rntk_diag
    >>> X = np.random.default_rng(0).normal(size=(4, 6))
    >>> bool(np.allclose(rntk_diag(X), np.diag(rntk_kernel(X))))
    True
    """
    spec = resolve_params(**table_options(locals()))
    check_n_jobs(n_jobs)
    return _diag(X, spec, n_jobs)


def _diag(X, spec, n_jobs=None):
    """Return the diagonal of ``K(X, X)`` for checked options ``spec``."""
    xs = as_sequences(X, "X")
    t_max = max(len(s) for s in xs)
    n = len(xs)
    items = np.stack([np.arange(n), np.arange(n), np.arange(1, n + 1)], axis=1).astype(np.int64)
    d = np.zeros(n)
    for reverse in spec.readers:
        x = prepare(network_inputs(xs, reverse, spec.diff), t_max, spec)
        out = np.zeros((n, 1))
        work = n * t_max * spec.n_layers * n_chains(t_max, spec.stride, spec.band)
        with numba_threads(1 if work < _SERIAL_WORK else n_jobs), \
                compile_notice(_PAIR_KERNELS[spec.act, "float64"], _engine_name(spec)):
            _pair_kernel(*x, *x, items, True, True, *_engine_args(spec), spec.stride,
                         spec.band, 0, _PRODUCTS, out)
        d += out[:, 0]
    return check_finite_kernel(d, "rntk_diag", spec.settings(longest_series=t_max))
