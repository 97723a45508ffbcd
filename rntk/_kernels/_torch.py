"""The RNTK recursion in PyTorch (torch engine): differentiable in inputs and hyperparameters.

The same kernel as :func:`rntk.rntk_kernel` (same end alignment of sequences of
different lengths, same ``sigma_h`` convention, same closed form for a sample paired
with itself), written with whole-matrix tensor operations so that autograd can
differentiate it and so that it runs on any device torch supports.

Engine layout. Both sets are stacked end-aligned on a common time axis ``P``. At each
step the pre-activation covariances of *all* pairs form one ``(n_X, n_Y)`` matrix (or
one ``(n,)`` vector in the paired mode); a pair is "active" once both of its series
have started, and before that its recurrent covariance holds its initial value (0, or
``sigma_h^2`` for a sample with itself). The backward sums of the RNTK are then run
over the stored matrices.

Gradients. Every non-smooth point is guarded with the "double where" pattern, so that
the derivatives stay finite in reverse *and* forward mode: a masked lane is fed a safe
value before the function is applied (``arccos`` and ``sqrt(1 - c^2)`` have infinite
slopes at ``c = +-1``, and ``sqrt(k1 k2)`` at 0). A sample paired with itself uses the
closed form ``c = 1``, whose derivative is taken through its own variances.

This module imports torch: the rest of the package imports it on first use only
(:mod:`rntk.nn` re-exports its public functions; the GP kernel and the sensitivity
import them when they run). The options are checked by
:func:`rntk._kernels._params.resolve_params`, as in the other engines.
"""

import math
import warnings

import numpy as np
import torch

from .._utils import as_sequences, check_finite_kernel, check_nonnegative, fill_doc
from .._utils._sequences import series_2d
from ._params import RNTK_DEFAULTS as _D
from ._params import RNTK_PARAM_LIST, resolve_params, table_options

__all__ = ["rntk_kernel_torch", "rntk_gram_log_gradient"]

_HYPER = ("sigma_w", "sigma_u", "sigma_b", "sigma_h", "sigma_v")
_PER_LAYER = ("sigma_w", "sigma_u", "sigma_b")


# ---------------------------------------------------------------------------------------
# inputs and hyperparameters
# ---------------------------------------------------------------------------------------
def _first_tensor(*objs):
    for obj in objs:
        if isinstance(obj, torch.Tensor):
            return obj
        if isinstance(obj, (list, tuple)):
            for o in obj:
                if isinstance(o, torch.Tensor):
                    return o
    return None


def _as_tensor_sequences(X, name, dtype, device):
    """List of ``(T_i, m)`` tensors; keeps the autograd graph of tensor inputs.

    Validation (and trailing-NaN trimming) is that of :func:`rntk._utils.as_sequences`,
    run on a detached copy; tensors are then sliced to the lengths it found.
    """
    if isinstance(X, torch.Tensor):
        if not (X.is_floating_point() or X.dtype in (torch.bool, torch.int32, torch.int64)):
            raise TypeError(f"{name} must hold real numbers; got a tensor of dtype {X.dtype}")
        if X.ndim not in (2, 3):
            raise ValueError(
                f"{name} must be 2-D (n_samples, n_timesteps), 3-D (n_samples, n_timesteps, "
                f"n_channels) or a list of series; got a tensor with {X.ndim} dimension(s)"
            )
        raw = list(X[:, :, None] if X.ndim == 2 else X)
    elif isinstance(X, (list, tuple)) and any(isinstance(s, torch.Tensor) for s in X):
        raw = [series_2d(s if isinstance(s, torch.Tensor) else torch.as_tensor(np.asarray(s)),
                         f"{name}[{i}]") for i, s in enumerate(X)]
    else:
        return [torch.as_tensor(s, dtype=dtype, device=device) for s in as_sequences(X, name)]
    if len(raw) == 0:
        raise ValueError(f"{name} is empty: at least one series is needed")
    checked = as_sequences([s.detach().cpu().double().numpy() for s in raw], name)
    return [s[: c.shape[0]].to(dtype=dtype, device=device) for s, c in zip(raw, checked)]


def _hyperparameter(value, name, n_layers, dtype, device):
    """Return a hyperparameter as a tensor (``(n_layers,)`` or scalar), keeping its graph."""
    if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
        value = torch.stack([torch.as_tensor(v, dtype=dtype, device=device) for v in value])
    if isinstance(value, torch.Tensor):
        check_nonnegative(value.detach().cpu().double().numpy(), name, n_layers)
        t = value.to(dtype=dtype, device=device)
        if n_layers is not None and t.ndim == 0:
            t = t.expand(n_layers)
        return t
    return torch.as_tensor(check_nonnegative(value, name, n_layers), dtype=dtype, device=device)


def _resolve(X, Y, hyper, dtype, device):
    ref = _first_tensor(X, Y, *hyper.values())
    if dtype is None:
        dtype = ref.dtype if ref is not None and ref.is_floating_point() else torch.float64
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise TypeError(f"dtype must be a floating torch dtype, got {dtype!r}")
    if device is None:
        device = ref.device if ref is not None else torch.device("cpu")
    return dtype, torch.device(device)


def _plain(hyper):
    """Return the scales as numbers (detached), for :func:`resolve_params`."""
    return {k: (v.detach().cpu().double().numpy() if isinstance(v, torch.Tensor) else
                [float(u) for u in v] if isinstance(v, (list, tuple))
                and any(isinstance(u, torch.Tensor) for u in v) else v)
            for k, v in hyper.items()}


def _params(spec, hyper, dtype, device):
    """Return the variances of checked options as tensors (with the scales' graphs)."""
    n_layers = spec.n_layers
    out = dict(act=spec.act, want_ntk=spec.want_ntk, n_layers=n_layers)
    for k in _HYPER:
        t = _hyperparameter(hyper[k], k, n_layers if k in _PER_LAYER else None, dtype, device)
        out[k[-1] * 2] = t * t  # ww, uu, bb, hh, vv: the variances
    return out


def _pack(seqs, t_max):
    """End-aligned ``(t_max, n, m)`` stack (zeros in front) and start indices."""
    data = torch.stack([torch.nn.functional.pad(s, (0, 0, t_max - s.shape[0], 0))
                        for s in seqs], dim=1)
    start = torch.tensor([t_max - s.shape[0] for s in seqs], device=data.device)
    return data, start


# ---------------------------------------------------------------------------------------
# the dual activations, differentiable everywhere they are used
# ---------------------------------------------------------------------------------------
#: The Numba engine's ``_SNAP``: a ReLU correlation this close to +-1 is +-1.
_SNAP = 16 * float(np.finfo(np.float64).eps)


def _v_phi(act, k1, k2, k3, same):
    """``(V_phi[K], V_phi'[K])`` for ``K = [[k1, k3], [k3, k2]]``, elementwise.

    ``same`` (bool tensor or None) marks a sample paired with itself: correlation 1.
    The forms of the Numba engine's ``_v_phi``: no ``1 - c^2`` by cancellation, no
    product ``k1 k2`` (which overflows long before the kernel does), exact at ``c = 1``.
    """
    pi = math.pi
    if act == 0:  # ReLU
        pos = (k1 > 0) & (k2 > 0)
        one = torch.ones_like(k3)
        n12 = torch.where(pos, torch.sqrt(torch.where(pos, k1, one))
                          * torch.sqrt(torch.where(pos, k2, one)), torch.zeros_like(k3))
        c = torch.where(pos, k3 / torch.where(pos, n12, one), torch.zeros_like(k3))
        c = c.clamp(-1.0, 1.0)
        ac = c.abs()
        inner = (1.0 - ac) > _SNAP
        if same is not None:
            inner = inner & ~same
        # t = arccos |c| in [0, pi/2]; acos and sqrt(1 - c^2) have infinite slopes at
        # |c| = 1: evaluate them on safe values there, where t = sin t = 0
        a_in = torch.where(inner, ac, torch.zeros_like(ac))
        t = torch.where(inner, torch.acos(a_in), torch.zeros_like(ac))
        sn = torch.where(inner, torch.sqrt((1.0 - a_in) * (1.0 + a_in)), torch.zeros_like(ac))
        tail = n12 * (sn - t * ac) / (2 * pi)
        up = c >= 0
        v = tail + torch.where(up, 0.5 * k3, torch.zeros_like(k3))
        return v, torch.where(up, 0.5 - t / (2 * pi), t / (2 * pi))
    if act == 1:  # erf
        # the Numba engine's operations, in its order (c of a series and its copy is p)
        r1 = 1.0 / torch.sqrt(1.0 + 2.0 * k1)
        r2 = 1.0 / torch.sqrt(1.0 + 2.0 * k2)
        p1 = 2.0 * k1 * r1 * r1  # correlation of each series with itself
        p2 = 2.0 * k2 * r2 * r2
        c = (2.0 * k3 * r1 * r2).clamp(-1.0, 1.0)
        ac = c.abs()
        e = (p1 - ac) + (p2 - ac)  # e1 + e2 >= 0: the exact differences p - |c|
        near = e <= 2.0 * _SNAP  # a series and its copy
        if same is not None:
            c = torch.where(same, p1, c)
            ac = c.abs()
            near = near | same
        e = torch.where(near, torch.zeros_like(e), e)
        om = 0.5 * ((r1 * r1 + r2 * r2) + e)  # 1 - |c| > 0, no cancellation
        big = ac > 0.5
        # asin near +-1 from 1 - |c|, not from c
        small = torch.where(big, torch.zeros_like(c), c)
        folded = 0.5 * pi - 2.0 * torch.asin(torch.sqrt(0.5 * om))
        asin = torch.where(big, torch.sign(c) * folded, torch.asin(small))
        return 2.0 / pi * asin, 4.0 / pi * r1 * r2 / torch.sqrt(om * (1.0 + ac))
    return k3, torch.ones_like(k3)  # linear


def _self_variances(data, start, p):
    """``Sigma^(l,t)(x, x)`` for every series: a list (per layer) of ``(T, n)`` tensors.

    Steps before a series starts hold 1.0, so that masked lanes stay finite.
    """
    t_max, n, m = data.shape
    n_layers = p["n_layers"]
    ww, uu, bb, hh = p["ww"], p["uu"], p["bb"], p["hh"]
    h0 = hh.expand(n)
    v_rec = [h0] * n_layers
    out = [[None] * t_max for _ in range(n_layers)]
    ones = torch.ones(n, dtype=data.dtype, device=data.device)
    same = torch.ones(n, dtype=torch.bool, device=data.device)
    for t in range(t_max):
        started = start <= t
        for l in range(n_layers):
            if l == 0:
                inp = uu[0] / m * (data[t] * data[t]).sum(-1)
            else:
                below = out[l - 1][t]
                inp = uu[l] * _v_phi(p["act"], below, below, below, same)[0]
            s = ww[l] * v_rec[l] + inp + bb[l]
            out[l][t] = torch.where(started, s, ones)
            s_safe = out[l][t]
            v_rec[l] = torch.where(started, _v_phi(p["act"], s_safe, s_safe, s_safe, same)[0],
                                   h0)
    return [torch.stack(o) for o in out]


def _engine(xdata, xstart, xself, ydata, ystart, yself, same, p, outer, stride=0, band=-1):
    """Kernel of every pair (``outer``: all ``(i, j)``; else ``(i, i)`` of two equal-size sets).

    ``stride = 0``: the last-step readout. ``stride = s > 0``: the mean readout, one
    recursion per cut of ``a`` steps from the end of every x (or ``b`` from every y),
    as in the Numba engine; ``band = B >= 0`` keeps the cuts of at most ``B`` readouts,
    weighted ``1 - k / (B + 1)``.
    """
    if stride == 0:
        return _chain(xdata, xstart, xself, ydata, ystart, yself, same, p, outer, 0)
    t_max = xdata.shape[0]
    total = 0.0
    n_cuts = -(-t_max // stride)
    if band >= 0:
        n_cuts = min(n_cuts, band + 1)

    def weight(k):
        return 1.0 if band < 0 else 1.0 - k / (band + 1.0)

    for k in range(n_cuts):  # cut x by a = k s, then y by b = k s (k >= 1)
        x = _cut(xdata, xstart, xself, k * stride)
        total = total + weight(k) * _chain(*x, ydata, ystart, yself, same if k == 0 else None,
                                           p, outer, stride)
    for k in range(1, n_cuts):
        y = _cut(ydata, ystart, yself, k * stride)
        total = total + weight(k) * _chain(xdata, xstart, xself, *y, None, p, outer, stride)
    nx = torch.div(t_max - xstart + stride - 1, stride, rounding_mode="floor")
    ny = torch.div(t_max - ystart + stride - 1, stride, rounding_mode="floor")
    count = nx[:, None] * ny[None, :] if outer else nx * ny
    return total / count.to(xdata.dtype)


def _cut(data, start, self_var, c):
    """Drop the last ``c`` steps of every series and end-align the prefixes again."""
    if c == 0:
        return data, start, self_var
    pad = data.new_zeros((c,) + tuple(data.shape[1:]))
    shifted = [torch.cat([torch.ones_like(v[:c]), v[:-c]]) for v in self_var]
    return torch.cat([pad, data[:-c]]), start + c, shifted


def _chain(xdata, xstart, xself, ydata, ystart, yself, same, p, outer, stride):
    """Run one recursion over the common time axis.

    Read out at the last step, or every ``stride`` steps back from it (summed).
    """
    t_max, _, m = xdata.shape
    n_layers = p["n_layers"]
    ww, uu, bb, hh, vv = p["ww"], p["uu"], p["bb"], p["hh"], p["vv"]
    act = p["act"]
    if outer:
        first = torch.maximum(xstart[:, None], ystart[None, :])

        def xa(v):
            return v[:, None]

        def ya(v):
            return v[None, :]

        def inner(a, b):
            return a @ b.T
    else:
        first = torch.maximum(xstart, ystart)

        def xa(v):
            return v

        ya = xa

        def inner(a, b):
            return (a * b).sum(-1)

    zero = torch.zeros(first.shape, dtype=xdata.dtype, device=xdata.device)
    init = zero if same is None else torch.where(same, hh.expand(first.shape), zero)
    want_ntk = p["want_ntk"]
    acc = zero
    v_rec = [init] * n_layers  # V_phi of each layer at the previous step
    d_rec = [zero] * n_layers  # V_phi' of each layer at the previous step
    th_rec = [zero] * n_layers  # tangent kernel of each layer's pre-activation
    for t in range(int(first.min()), t_max):
        active = first <= t
        for l in range(n_layers):
            if l == 0:
                inp = uu[0] / m * inner(xdata[t], ydata[t])
            else:
                inp = uu[l] * v_rec[l - 1]
            s = ww[l] * v_rec[l] + inp + bb[l]
            s = torch.where(active, s, zero)  # masked lanes: c = 0, finite derivatives
            v, vd = _v_phi(act, xa(xself[l][t]), ya(yself[l][t]), s, same)
            if want_ntk:
                th = s + ww[l] * d_rec[l] * th_rec[l]
                if l > 0:
                    th = th + uu[l] * d_rec[l - 1] * th_rec[l - 1]
                th_rec[l] = torch.where(active, th, zero)
                d_rec[l] = torch.where(active, vd, zero)
            v_rec[l] = torch.where(active, v, init)
        if stride and (t_max - 1 - t) % stride == 0:
            out = v_rec[-1] + d_rec[-1] * th_rec[-1] if want_ntk else v_rec[-1]
            acc = acc + torch.where(active, vv * out, zero)
    if stride:
        return acc
    k_out = vv * v_rec[-1]
    if not want_ntk:
        return k_out
    return k_out + vv * d_rec[-1] * th_rec[-1]


def _network_inputs(seqs, reverse, diff):
    """Return the series one RNN reads (as ``rntk._kernels._shared.network_inputs``)."""
    if diff:
        seqs = [torch.cat([s, s - torch.cat([s[:1], s[:-1]])], dim=1) for s in seqs]
    if reverse:
        seqs = [s.flip(0) for s in seqs]
    return seqs


def _prepare(X, Y, hyper, spec, dtype, device, reverse=False, diff=False):
    dtype, device = _resolve(X, Y, hyper, dtype, device)
    p = _params(spec, hyper, dtype, device)
    xs = _as_tensor_sequences(X, "X", dtype, device)
    ys = xs if Y is None else _as_tensor_sequences(Y, "Y", dtype, device)
    if xs[0].shape[1] != ys[0].shape[1]:
        raise ValueError(
            f"X has {xs[0].shape[1]} channels but Y has {ys[0].shape[1]}; they must match"
        )
    xs = _network_inputs(xs, reverse, diff)
    ys = xs if Y is None else _network_inputs(ys, reverse, diff)
    t_max = max(max(s.shape[0] for s in xs), max(s.shape[0] for s in ys))
    xdata, xstart = _pack(xs, t_max)
    xself = _self_variances(xdata, xstart, p)
    if Y is None:
        return p, (xdata, xstart, xself), (xdata, xstart, xself)
    ydata, ystart = _pack(ys, t_max)
    return p, (xdata, xstart, xself), (ydata, ystart, _self_variances(ydata, ystart, p))


def rntk_kernel_torch(X, Y=None, *, n_layers=_D["n_layers"], sigma_w=_D["sigma_w"],
                      sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"],
                      sigma_v=_D["sigma_v"], activation=_D["activation"], kind=_D["kind"],
                      direction=_D["direction"], diff=_D["diff"], readout=_D["readout"],
                      readout_stride=_D["readout_stride"], readout_band=_D["readout_band"],
                      device=None, dtype=None, paired=False):
    r"""RNTK (or RNN-NNGP) Gram matrix in PyTorch, differentiable end to end.

    The same kernel as :func:`rntk.rntk_kernel`, computed with tensor operations:
    gradients flow to tensor inputs and to tensor hyperparameters, and the
    computation runs on the device of the tensors (or ``device``).

    Parameters
    ----------
    X : array-like, tensor, or list of arrays / tensors
        Sequences: ``(n_X, T)`` univariate, ``(n_X, T, n_channels)`` time-major, or a
        list of ``(T_i,)`` / ``(T_i, n_channels)`` series of different lengths. Trailing
        NaN steps are padding. Tensors keep their autograd graph.
    Y : same layouts as X, default=None
        Second set. ``None`` computes ``K(X, X)``, whose diagonal pairs each sample
        with itself (and carries the ``sigma_h`` term).
    n_layers : int, default=1
        Number of recurrent layers ``L``.
    sigma_w, sigma_u, sigma_b : float, tensor or sequence of shape (n_layers,)
        Recurrent, input and bias weight scales (defaults ``sqrt(2)``, 1, 0). Tensors
        with ``requires_grad=True`` receive gradients.
    sigma_h : float or 0-d tensor, default=0.0
        Standard deviation of the initial hidden state.
    sigma_v : float or 0-d tensor, default=1.0
        Output weight scale.
    activation : {"relu", "erf", "linear"}, default="relu"
        Nonlinearity.
    kind : {"ntk", "nngp"}, default="ntk"
        The RNTK ``Theta`` or the output NNGP kernel ``K``.
    direction : {"forward", "backward", "bidirectional"}, default="forward"
        Which way the network reads the series, as in :func:`rntk.rntk_kernel`.
    diff : bool, default=False
        Append the first difference of every channel, as in :func:`rntk.rntk_kernel`.
    readout : {"last", "mean"}, default="last"
        The readout, as in :func:`rntk.rntk_kernel`.
    readout_stride : int, default=1
        Steps between two readouts of the mean, as in :func:`rntk.rntk_kernel`.
    readout_band : int or None, default=None
        Band of the mean readout, as in :func:`rntk.rntk_kernel`.
    device : str or torch.device, default=None
        Where to compute; by default the device of the first tensor argument, else CPU.
    dtype : torch.dtype, default=None
        ``torch.float64`` or ``torch.float32``; by default the dtype of the first
        floating tensor argument, else ``torch.float64``.
    paired : bool, default=False
        Return only ``Theta(X[k], Y[k])`` for every ``k`` (distinct samples, X and Y
        of the same size): a vector, in ``O(n)`` pairs instead of ``O(n^2)``.

    Returns
    -------
    K : torch.Tensor of shape (n_X, n_Y), or (n_X,) when ``paired``
        The Gram matrix, on ``device``, with an autograd graph when any input or
        hyperparameter requires gradients.

    Raises
    ------
    rntk.KernelOverflowError
        When a value of the Gram is not finite (as :func:`rntk.rntk_kernel`).

    See Also
    --------
    rntk.rntk_kernel : The Numba engine (faster on CPU, no gradients).

    Notes
    -----
    Cost ``O(n_X n_Y L T_max)`` operations in ``O(L T_max)`` tensor steps; memory
    ``O(n_X n_Y L T_max)`` for the stored covariances (and for autograd). Split large
    Grams into blocks of rows. In float64 the result equals :func:`rntk.rntk_kernel`
    to rounding. Where a distinct pair's correlation is exactly +-1 (two identical
    series in X and Y) the ReLU kernel is not differentiable; the gradient returned
    there is finite (a one-sided value).

    Examples
    --------
    >>> import torch
    >>> from rntk.nn import rntk_kernel_torch
    >>> X = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    >>> sigma_w = torch.tensor(1.4, dtype=torch.float64, requires_grad=True)
    >>> K = rntk_kernel_torch(X, sigma_w=sigma_w)
    >>> K.shape
    torch.Size([3, 3])
    >>> K.sum().backward()
    >>> X.grad.shape, bool(torch.isfinite(sigma_w.grad))
    (torch.Size([3, 5]), True)
    """
    options = table_options(locals())
    hyper = {k: options[k] for k in _HYPER}
    if paired and Y is None:
        raise ValueError("paired=True needs a second set Y of the same size as X")
    spec = resolve_params(**{**options, **_plain(hyper)})
    stride, band = spec.stride, spec.band
    K = 0.0
    for reverse in spec.readers:  # independent RNNs: their kernels add
        p, xa, ya = _prepare(X, Y, hyper, spec, dtype, device, reverse, spec.diff)
        if paired:
            if xa[0].shape[1] != ya[0].shape[1]:
                raise ValueError(
                    f"X and Y must hold as many series for a paired kernel; got "
                    f"{xa[0].shape[1]} and {ya[0].shape[1]}"
                )
            K = K + _engine(*xa, *ya, None, p, outer=False, stride=stride, band=band)
            continue
        same = None
        if Y is None:
            n = xa[0].shape[1]
            same = torch.eye(n, dtype=torch.bool, device=xa[0].device)
        K = K + _engine(*xa, *ya, same, p, outer=True, stride=stride, band=band)
    if Y is None and not paired:
        K = 0.5 * (K + K.T)
    if not bool(torch.isfinite(K).all()):  # as every kernel: an overflow is an error
        check_finite_kernel(K.detach().cpu().numpy(), "rntk_kernel_torch", spec.settings())
    return K


@fill_doc(kernel_param_names=RNTK_PARAM_LIST)
def rntk_gram_log_gradient(X, free, *, n_layers=_D["n_layers"], sigma_w=_D["sigma_w"],
                           sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"],
                           sigma_h=_D["sigma_h"], sigma_v=_D["sigma_v"],
                           activation=_D["activation"], kind=_D["kind"],
                           direction=_D["direction"], diff=_D["diff"], readout=_D["readout"],
                           readout_stride=_D["readout_stride"],
                           readout_band=_D["readout_band"], n_jobs=None):
    """Exact gradient of the RNTK Gram in the log of its scales, by forward-mode autograd.

    The gradient a Gaussian process needs (:class:`rntk.RNTK` uses it for
    ``eval_gradient``), computed in float64 on the CPU.

    Parameters
    ----------
    X : array-like or list of arrays
        Sequences, in any layout of :func:`rntk.rntk_kernel`.
    free : sequence of str
        The hyperparameter of each entry of the log-parameter vector, as in
        scikit-learn's ``Kernel.theta``: a per-layer hyperparameter appears once (one
        value shared by all layers) or ``n_layers`` times (one entry per layer, in
        layer order).
    {kernel_param_names}
        As in :func:`rntk.rntk_kernel`.
    n_jobs : int, default=None
        Accepted for signature compatibility with :func:`rntk.rntk_kernel`; unused.

    Returns
    -------
    K : ndarray of shape (n, n)
        ``K(X, X)``.
    dK : ndarray of shape (n, n, len(free))
        ``d K / d log(sigma)`` for each entry of ``free``.

    Raises
    ------
    rntk.KernelOverflowError
        When a value of ``K`` or of ``dK`` is not finite.
    """
    options = table_options(locals())
    dtype, device = torch.float64, torch.device("cpu")
    hyper = {k: options[k] for k in _HYPER}
    spec = resolve_params(**{**options, **_plain(hyper)})
    p = _params(spec, hyper, dtype, device)
    stride, band = spec.stride, spec.band
    sig = {k: torch.sqrt(p[k[-1] * 2]) for k in _HYPER}
    xs = _as_tensor_sequences(X, "X", dtype, device)
    packed = [_pack(_network_inputs(xs, reverse, spec.diff), max(s.shape[0] for s in xs))
              for reverse in spec.readers]
    same = torch.eye(len(xs), dtype=torch.bool, device=device)
    entries, seen = [], {}
    for name in free:
        if name not in sig:
            raise ValueError(f"unknown hyperparameter {name!r}")
        k = seen.get(name, 0)
        seen[name] = k + 1
        entries.append((name, k))
    counts = dict(seen)
    for name, c in counts.items():
        if c > 1 and (sig[name].ndim == 0 or c != sig[name].shape[0]):
            raise ValueError(f"{name} has {c} entries in theta; expected 1 or n_layers")
    theta0 = torch.stack([torch.log(sig[n][k] if sig[n].ndim else sig[n]) for n, k in entries])

    def gram(theta):
        values = dict(sig)
        for j, (name, k) in enumerate(entries):
            v = values[name]
            if v.ndim and counts[name] > 1:  # one entry per layer
                onehot = torch.zeros_like(v)
                onehot[k] = 1.0
                values[name] = v * (1.0 - onehot) + torch.exp(theta[j]) * onehot
            else:  # one entry for all layers (or a scalar hyperparameter)
                values[name] = torch.exp(theta[j]).expand(v.shape)
        q = dict(p)
        for name, v in values.items():
            q[name[-1] * 2] = v * v
        K = 0.0
        for xdata, xstart in packed:
            xself = _self_variances(xdata, xstart, q)
            K = K + _engine(xdata, xstart, xself, xdata, xstart, xself, same, q, outer=True,
                            stride=stride, band=band)
        return 0.5 * (K + K.T)

    settings = spec.settings()
    with torch.no_grad():
        K = check_finite_kernel(gram(theta0).numpy(), "rntk_gram_log_gradient", settings)
    if not entries:
        return K, np.empty(K.shape + (0,))
    with warnings.catch_warnings():  # torch.func's own internals (not ours) warn here
        warnings.filterwarnings("ignore", message=".*torch.jit.script.*deprecated",
                                category=DeprecationWarning)
        dK = torch.func.jacfwd(gram)(theta0)
    return K, check_finite_kernel(dK.numpy(), "the gradient of the RNTK (rntk_gram_log_gradient)",
                                  settings)
