"""Elman RNN in the NTK parameterisation of Alemohammad et al., eq. (5)-(6)."""

import math

import numpy as np
import torch
from torch import nn

from .._kernels._params import RNTK_DEFAULTS as _D
from .._kernels._params import resolve_params
from .._utils import check_int

__all__ = ["ElmanRNN"]

_ACTIVATIONS = {
    "relu": torch.relu,
    "erf": torch.erf,
    "tanh": torch.tanh,
    "linear": lambda x: x,
}


def _trailing_nan_lengths(x, name):
    """Lengths of the series of a (b, T, m) tensor whose trailing steps may be NaN."""
    step_nan = torch.isnan(x).any(dim=2)
    if not bool(step_nan.any()):
        return None
    if not bool((torch.isnan(x).all(dim=2) == step_nan).all()):
        raise ValueError(f"{name}: a time step has only some channels NaN")
    t = x.shape[1]
    idx = torch.arange(1, t + 1, device=x.device).expand_as(step_nan)
    lengths = torch.where(step_nan, torch.zeros_like(idx), idx).amax(dim=1)
    inside = step_nan & (idx <= lengths[:, None])
    if bool(inside.any()):
        raise ValueError(f"{name}: NaN inside a series (NaN is only allowed as trailing padding)")
    if bool((lengths == 0).any()):
        raise ValueError(f"{name}: a series is empty (all values are NaN)")
    return lengths


def pack_batch(X, n_in, dtype, device, name="X"):
    """Stack a batch of sequences end-aligned, time-major.

    Parameters
    ----------
    X : tensor or ndarray of shape (b, T) or (b, T, m), or list of (T_i,) / (T_i, m)
        The batch. Trailing NaN steps of an array are padding.
    n_in : int
        Expected channel count ``m``.
    dtype, device
        Of the returned tensor.
    name : str
        For error messages.

    Returns
    -------
    data : tensor of shape (T_max, b, m)
        ``data[T_max - T_i:, i]`` is series ``i``; zeros in front.
    starts : tensor of shape (b,), dtype long
        First valid step of each series, ``T_max - T_i``.
    """
    if isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError(f"{name} is empty: at least one series is needed")
        seqs = []
        for i, s in enumerate(X):
            s = torch.as_tensor(s if torch.is_tensor(s) else np.asarray(s, dtype=np.float64))
            s = s.to(dtype=dtype, device=device)
            if s.ndim == 1:
                s = s[:, None]
            if s.ndim != 2:
                raise ValueError(f"{name}[{i}] must have shape (T,) or (T, n_channels); got "
                                 f"{tuple(s.shape)}")
            lengths = _trailing_nan_lengths(s[None], f"{name}[{i}]")
            if lengths is not None:
                s = s[: int(lengths[0])]
            if s.shape[0] == 0:
                raise ValueError(f"{name}[{i}] is empty")
            seqs.append(s)
        t_max = max(s.shape[0] for s in seqs)
        m = seqs[0].shape[1]
        if any(s.shape[1] != m for s in seqs):
            raise ValueError(f"{name}: all series must have the same number of channels")
        data = torch.zeros((t_max, len(seqs), m), dtype=dtype, device=device)
        for i, s in enumerate(seqs):
            data[t_max - s.shape[0]:, i] = s
        starts = torch.tensor([t_max - s.shape[0] for s in seqs], device=device)
    else:
        x = X if torch.is_tensor(X) else torch.as_tensor(np.asarray(X, dtype=np.float64))
        x = x.to(dtype=dtype, device=device)
        if x.ndim == 2:
            x = x[:, :, None]
        if x.ndim != 3:
            raise ValueError(f"{name} must be a batch of shape (b, T) or (b, T, n_channels), or "
                             f"a list of series; got shape {tuple(x.shape)}")
        if x.shape[0] == 0 or x.shape[1] == 0:
            raise ValueError(f"{name} is empty")
        m = x.shape[2]
        lengths = _trailing_nan_lengths(x, name)
        t_max = x.shape[1]
        if lengths is None:
            data = x.transpose(0, 1)
            starts = torch.zeros(x.shape[0], dtype=torch.long, device=device)
        else:
            t_max = int(lengths.max())
            starts = t_max - lengths
            data = torch.zeros((t_max, x.shape[0], m), dtype=dtype, device=device)
            for i in range(x.shape[0]):
                n_i = int(lengths[i])
                data[t_max - n_i:, i] = x[i, :n_i]
    if bool(torch.isinf(data).any()):
        raise ValueError(f"{name} contains infinite values")
    if m != n_in:
        raise ValueError(f"{name} has {m} channels but the network expects n_in={n_in}")
    return data, starts


class ElmanRNN(nn.Module):
    r"""Elman RNN in the NTK parameterisation, reading each sequence to its own end.

    All parameters are standard normal and the scales of eq. (5)-(6) of Alemohammad
    et al. are applied in the forward pass:

    .. math::

        g^{(l,t)} = \frac{\sigma_w^l}{\sqrt n} W^{(l)} h^{(l,t-1)}
                  + \frac{\sigma_u^l}{\sqrt{m_l}} U^{(l)} h^{(l-1,t)} + \sigma_b^l b^{(l)},
        \qquad h^{(l,t)} = \phi(g^{(l,t)}),
        \qquad f(x) = \frac{\sigma_v}{\sqrt n} V h^{(L,T)},

    with ``h^(0,t) = x_t``, ``m_1 = n_in``, ``m_l = n`` for ``l >= 2`` and an initial
    state ``h^(l,0)`` drawn i.i.d. ``N(0, sigma_h^2)`` for every input at every forward
    pass. As the width grows, :func:`~rntk.nn.empirical_ntk` of this network (or the
    cheaper, identical :meth:`ntk`) tends to :func:`rntk.rntk_kernel` with the same
    hyperparameters: K(X, X) of one network pairs each series with itself through one
    draw of its initial state, which is the ``sigma_h`` term on the diagonal of
    ``rntk_kernel(X)``. Parameters are created in float32; call ``.double()`` for
    kernel comparisons.

    Parameters
    ----------
    n_in : int
        Number of input channels ``m``.
    hidden_size : int
        Width ``n`` of every layer.
    n_out : int, default=1
        Number of outputs ``d``.
    n_layers : int, default=1
        Number of stacked recurrent layers ``L``.
    activation : {"relu", "erf", "tanh", "linear"}, default="relu"
        Nonlinearity ``phi``.
    sigma_w : float or sequence of float of length n_layers, default=sqrt(2)
        Recurrent weight scale of each layer.
    sigma_u : float or sequence of float of length n_layers, default=1.0
        Input weight scale of each layer.
    sigma_b : float or sequence of float of length n_layers, default=0.0
        Bias scale of each layer.
    sigma_h : float, default=0.0
        Standard deviation of the initial hidden state (0: start from zeros, no draw).
    sigma_v : float, default=1.0
        Readout scale.
    tied : bool, default=True
        ``False`` gives every time step its own ``W``, ``U`` and ``b`` (Section 3.3).
        Steps are counted from the end: the last step of every sequence uses the
        last set of weights, so sequences of different lengths share the weights of
        their aligned steps, as in the end-aligned kernel.
    max_length : int, default=None
        Longest sequence an untied network reads (required when ``tied=False``).
    readout : {"last", "mean"}, default="last"
        ``"last"``: ``f(x)`` reads the last hidden state; ``"mean"``: the mean of
        ``f`` over the steps ``T, T - s, T - 2s, ...`` of each series (``s =
        readout_stride``), the same ``V`` at every step:
        ``f(x) = sigma_v / sqrt(n) V mean_t h^(L,t)``. Its wide limit is
        :func:`rntk.rntk_kernel` with ``readout="mean"``.
    readout_stride : int, default=1
        Steps between two readouts of the mean.
    readout_band : int or None, default=None
        ``None``: the same ``V`` at every readout. An int ``B``: the readout ``k``
        (``k = 0`` the last) has its own weights ``V_k = (Z_k + ... + Z_{k+B}) /
        sqrt(B + 1)``, moving sums of independent ``Z_q``, so that readouts ``k``
        apart are correlated ``1 - |k| / (B + 1)``: the network of
        :func:`rntk.rntk_kernel` with ``readout_band=B``. Needs ``max_length``.

    Attributes
    ----------
    W, U, b : torch.nn.ParameterList
        Per layer; shapes ``(n, n)``, ``(n, m_l)``, ``(n,)``, with a leading
        ``max_length`` axis when untied.
    V : torch.nn.Parameter of shape (n_out, n)
        Readout weights; ``(Q, n_out, n)``, the ``Z_q``, with a ``readout_band``
        (``Q = ceil(max_length / readout_stride) + readout_band``).

    Examples
    --------
    >>> import torch
    >>> from rntk.nn import ElmanRNN
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> net = ElmanRNN(1, 64).double()
    >>> x = [torch.tensor([1.0, -1.0, 1.0]), torch.tensor([0.5, 0.2])]
    >>> net(x).shape
    torch.Size([2, 1])
    """

    def __init__(self, n_in, hidden_size, n_out=1, n_layers=_D["n_layers"],
                 activation=_D["activation"], *, sigma_w=_D["sigma_w"], sigma_u=_D["sigma_u"],
                 sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"], sigma_v=_D["sigma_v"], tied=True,
                 max_length=None, readout=_D["readout"], readout_stride=_D["readout_stride"],
                 readout_band=_D["readout_band"]):
        super().__init__()
        self.n_in = check_int(n_in, "n_in")
        self.hidden_size = check_int(hidden_size, "hidden_size")
        self.n_out = check_int(n_out, "n_out")
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, "
                             f"got {activation!r}")
        # the kernel's options, checked by the kernel's resolver (the activation above:
        # the network also has tanh, which has no analytic kernel)
        spec = resolve_params(n_layers=n_layers, sigma_w=sigma_w, sigma_u=sigma_u,
                              sigma_b=sigma_b, sigma_h=sigma_h, sigma_v=sigma_v,
                              readout=readout, readout_stride=readout_stride,
                              readout_band=readout_band)
        self.n_layers = spec.n_layers
        self.activation = activation
        L = self.n_layers
        self.sigma_w, self.sigma_u, self.sigma_b = spec.sigma_w, spec.sigma_u, spec.sigma_b
        self.sigma_h, self.sigma_v = spec.sigma_h, spec.sigma_v
        self.tied = bool(tied)
        self.readout = spec.readout
        self.readout_stride = int(readout_stride)
        self.readout_band = None if spec.band < 0 else spec.band
        banded = self.readout == "mean" and self.readout_band is not None
        if self.tied and not banded:
            if max_length is not None:
                max_length = check_int(max_length, "max_length")
        else:
            if max_length is None:
                raise ValueError("an untied network (tied=False) or a banded mean readout "
                                 "(readout_band) needs max_length")
            max_length = check_int(max_length, "max_length")
        self.max_length = max_length
        n = self.hidden_size
        lead = () if self.tied else (max_length,)
        self.W = nn.ParameterList([nn.Parameter(torch.empty(*lead, n, n)) for _ in range(L)])
        self.U = nn.ParameterList([nn.Parameter(torch.empty(*lead, n, self.n_in if l == 0 else n))
                                   for l in range(L)])
        self.b = nn.ParameterList([nn.Parameter(torch.empty(*lead, n)) for _ in range(L)])
        n_z = (-(-max_length // self.readout_stride) + self.readout_band,) if banded else ()
        self.V = nn.Parameter(torch.empty(*n_z, self.n_out, n))
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every parameter i.i.d. from N(0, 1) (torch's global generator)."""
        with torch.no_grad():
            for p in self.parameters():
                p.normal_()

    def extra_repr(self):  # noqa: D102
        return (f"n_in={self.n_in}, hidden_size={self.hidden_size}, n_out={self.n_out}, "
                f"n_layers={self.n_layers}, activation={self.activation!r}, tied={self.tied}, "
                f"readout={self.readout!r}"
                + (f", readout_band={self.readout_band}" if self.V.dim() == 3 else ""))

    def forward(self, X, h0=None):
        """Compute the outputs of the network for a batch of sequences.

        Parameters
        ----------
        X : tensor or array of shape (b, T) or (b, T, n_in), or list of series
            A batch: 2-D is univariate, 3-D time-major; a list holds ``(T_i,)`` or
            ``(T_i, n_in)`` series of any lengths. Trailing NaN steps are padding.
            Each series is read from its first to its own last step; the others'
            extra steps do not touch it.
        h0 : tensor of shape (n_layers, b, hidden_size), default=None
            Initial hidden states. ``None`` draws them ``N(0, sigma_h^2)`` from
            torch's global generator, independently for every series (zeros, and no
            draw, when ``sigma_h == 0``).

        Returns
        -------
        out : tensor of shape (b, n_out)
            The readout ``f(x)`` of each series (of its last hidden state, or the
            mean over its readout steps).
        """
        return self._run(X, h0)[0]

    def _run(self, X, h0=None, record=False):
        """Forward pass; with ``record``, also every layer's pre-activations and inputs."""
        ref = self.V
        data, starts = pack_batch(X, self.n_in, ref.dtype, ref.device)
        t_max, batch = data.shape[0], data.shape[1]
        n = self.hidden_size
        if not self.tied and t_max > self.max_length:
            raise ValueError(f"a series has {t_max} steps but this untied network reads at "
                             f"most max_length={self.max_length}")
        if h0 is None:
            if self.sigma_h > 0:
                h0 = self.sigma_h * torch.randn(self.n_layers, batch, n, dtype=ref.dtype,
                                                device=ref.device)
            else:
                h0 = torch.zeros(self.n_layers, batch, n, dtype=ref.dtype, device=ref.device)
        elif tuple(h0.shape) != (self.n_layers, batch, n):
            raise ValueError(f"h0 must have shape {(self.n_layers, batch, n)}, "
                             f"got {tuple(h0.shape)}")
        phi = _ACTIVATIONS[self.activation]
        offset = 0 if self.tied else self.max_length - t_max
        steps = torch.arange(t_max, device=ref.device)
        active = steps[:, None] >= starts[None, :]           # (T, b)
        need_mask = bool((starts > 0).any())
        inputs = data                                         # (T, b, m_l)
        records = []
        for l in range(self.n_layers):
            cw = self.sigma_w[l] / math.sqrt(n)
            cu = self.sigma_u[l] / math.sqrt(inputs.shape[2])
            cb = self.sigma_b[l]
            W, U, b = self.W[l], self.U[l], self.b[l]
            if self.tied:
                drive = cu * inputs @ U.T + cb * b            # (T, b, n), all steps at once
            else:
                Ut = U[offset:offset + t_max]
                drive = cu * torch.matmul(inputs, Ut.transpose(1, 2)) \
                    + cb * b[offset:offset + t_max, None, :]
            h = h0[l]
            outs, pre, prev = [], [], []
            for t in range(t_max):
                Wt = W if self.tied else W[offset + t]
                g = cw * h @ Wt.T + drive[t]
                if record:
                    pre.append(g)
                    prev.append(h)
                h_new = phi(g)
                h = torch.where(active[t][:, None], h_new, h) if need_mask else h_new
                outs.append(h)
            if record:
                records.append((pre, torch.stack(prev), inputs))
            inputs = torch.stack(outs)
        if self.readout == "mean":  # the steps T, T - s, ... of each series, averaged
            s = self.readout_stride
            read = active & ((t_max - 1 - steps) % s == 0)[:, None]
            w = read.to(ref.dtype) / read.sum(0).to(ref.dtype)
            if self.V.dim() == 3:  # banded: readout k has weights sum_{q=k}^{k+B} Z_q
                return self._banded_readout(w, inputs, records)
            h = torch.einsum("tb,tbn->bn", w, inputs)
        out = (self.sigma_v / math.sqrt(n)) * h @ self.V.T
        return out, records, h

    def _banded_readout(self, w, inputs, records):
        """``f = sigma_v / sqrt(n) sum_q Z_q g_q``, ``g_q = sum_{k=q-B}^{q} w_k h_k / sqrt(B+1)``.

        Returns the outputs, the records and the features ``g`` flattened per series
        (their inner products are the readout weights' part of the NTK).
        """
        t_max, batch, n = inputs.shape
        band, n_z = self.readout_band, self.V.shape[0]
        idx = torch.arange(t_max - 1, -1, -self.readout_stride, device=inputs.device)
        if len(idx) + band > n_z:
            raise ValueError(f"a series has {t_max} steps but this network reads at most "
                             f"max_length={self.max_length}")
        feat = w[idx][:, :, None] * inputs[idx]                       # (K, b, n), k = 0 last
        feat = torch.cat([feat, feat.new_zeros(n_z - len(idx), batch, n)])
        csum = torch.cumsum(feat, 0)
        g = (csum - torch.cat([csum.new_zeros(band + 1, batch, n), csum[:-band - 1]])
             ) / math.sqrt(band + 1)                                  # (Q, b, n)
        out = (self.sigma_v / math.sqrt(n)) * torch.einsum("qbn,qon->bo", g, self.V)
        return out, records, g.transpose(0, 1).reshape(batch, -1)

    def _ntk_parts(self, X):
        """Per-series gradient factors: output sensitivities of every pre-activation."""
        if not all(p.requires_grad for p in self.parameters()):
            raise ValueError("ntk() differentiates every parameter; unfreeze them or use "
                             "rntk.nn.empirical_ntk for the trainable ones")
        with torch.enable_grad():
            out, records, h_last = self._run(X, record=True)
            pre = [g for rec in records for g in rec[0]]
            deltas = []                                        # per output: (L, T, b, n)
            for k in range(self.n_out):
                grads = torch.autograd.grad(out[:, k].sum(), pre, retain_graph=True,
                                            allow_unused=True)
                grads = [torch.zeros_like(p) if g is None else g for g, p in zip(grads, pre)]
                t_max = len(records[0][0])
                deltas.append(torch.stack([torch.stack(grads[l * t_max:(l + 1) * t_max])
                                           for l in range(self.n_layers)]).detach())
        prev = [rec[1].detach() for rec in records]
        inp = [rec[2].detach() for rec in records]
        return deltas, prev, inp, h_last.detach()

    def ntk(self, X, Y=None, *, seed=0):
        r"""Empirical NTK of this network, from the structure of its gradients.

        Equal to :func:`~rntk.nn.empirical_ntk` (default ``output="trace"``, all
        parameters trainable) but without forming the Jacobian: the gradient with
        respect to a weight matrix is a sum over time of outer products
        ``delta_t h_{t-1}^T``, so
        ``<dW(x), dW(x')> = sum_{t,s} <delta_t, delta'_s> <h_{t-1}, h'_{s-1}>``
        (only ``t = s`` on the end-aligned grid when untied). Memory is
        ``O(n T)`` per series and ``O(T^2)`` per pair instead of ``O(n^2)`` per series,
        which makes very wide networks cheap.

        Parameters
        ----------
        X : same layouts as :meth:`forward`
            First set of series.
        Y : same layouts as :meth:`forward`, default=None
            Second set; ``None`` computes the symmetric ``K(X, X)``.
        seed : int or None, default=0
            Seeds the initial-state draws exactly as ``empirical_ntk(..., seed=seed)``
            does for a single block, so both give the same matrix when ``X`` fits in
            one of its blocks. ``X`` and ``Y`` get independent draws.

        Returns
        -------
        K : ndarray of shape (n_X, n_Y)
            Float64 kernel (trace-normalised over the ``n_out`` outputs).

        Examples
        --------
        >>> import torch
        >>> from rntk.nn import ElmanRNN
        >>> net = ElmanRNN(1, 32).double()  # the shape does not depend on the draw
        >>> net.ntk([torch.tensor([1.0, -1.0, 1.0]), torch.tensor([0.5, 0.2])]).shape
        (2, 2)
        """
        from ._ntk import _block_seed

        def parts(Z, which):
            if seed is None:
                return self._ntk_parts(Z)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(_block_seed(seed, which, 0))
                return self._ntk_parts(Z)

        px = parts(X, 0)
        py = px if Y is None else parts(Y, 1)
        n = self.hidden_size
        tx, ty = px[1][0].shape[0], py[1][0].shape[0]
        t_all = max(tx, ty)

        def pad(a, t):  # end-align on a common grid of t_all steps (time is axis -3)
            if t == t_all:
                return a
            shape = list(a.shape)
            shape[-3] = t_all - t
            return torch.cat([a.new_zeros(shape), a], dim=-3)

        K = 0.0
        for l in range(self.n_layers):
            hx, hy = pad(px[1][l], tx), pad(py[1][l], ty)          # (T, b, n)
            ix, iy = pad(px[2][l], tx), pad(py[2][l], ty)          # (T, b, m_l)
            cw2 = self.sigma_w[l] ** 2 / n
            cu2 = self.sigma_u[l] ** 2 / ix.shape[2]
            cb2 = self.sigma_b[l] ** 2
            if self.tied:
                feat = (cw2 * torch.einsum("tin,sjn->ijts", hx, hy)
                        + cu2 * torch.einsum("tin,sjn->ijts", ix, iy) + cb2)
            else:
                feat = (cw2 * torch.einsum("tin,tjn->ijt", hx, hy)
                        + cu2 * torch.einsum("tin,tjn->ijt", ix, iy) + cb2)
            for dx, dy in zip(px[0], py[0]):
                gx, gy = pad(dx[l], tx), pad(dy[l], ty)
                if self.tied:
                    K = K + (torch.einsum("tin,sjn->ijts", gx, gy) * feat).sum((2, 3))
                else:
                    K = K + (torch.einsum("tin,tjn->ijt", gx, gy) * feat).sum(2)
        K = K / self.n_out + self.sigma_v ** 2 / n * px[3] @ py[3].T
        return K.cpu().to(torch.float64).numpy()
