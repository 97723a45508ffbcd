"""Finite-width linear RNNs and scaled 1-D convolutions (Emami et al.), in PyTorch.

Both models map an input sequence ``x_0..x_{T-1}`` in ``R^{n_in}`` to outputs
``y_0..y_{T-1}`` in ``R^{n_out}`` through a causal filter ``y_t = sum_j L_j x_{t-j}``;
they differ in how ``L_j`` is parameterised:

* :class:`LinearRNN`: ``L_j = C W^j F / n^((j+1)/2)``, a non-linear parameterisation
  whose wide-limit NTK is the scaled convolution kernel;
* :class:`ScaledConv1d`: ``L_j = sqrt(rho_j) theta_j``, linear in ``theta``, with the
  same NTK when ``rho = scaled_conv_rho(T, nu_w, nu_f, nu_c)``.
"""

import math

import numpy as np
import torch
from torch import nn

from .._kernels._scaled_conv import LINEAR_RNN_VARIANCES_DOC, check_rho
from .._utils import check_int, fill_doc

__all__ = ["LinearRNN", "ScaledConv1d", "impulse_response"]


def _check_var(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a non-negative number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return float(value)


def _as_batch(x, n_in, name):
    """Return ``x`` as a ``(batch, T, n_in)`` tensor (a 2-D input is univariate)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} expects a torch.Tensor, got {type(x).__name__}")
    if x.dim() == 2 and n_in == 1:
        x = x.unsqueeze(-1)
    if x.dim() != 3 or x.shape[-1] != n_in:
        raise ValueError(
            f"{name} expects input of shape (batch, T, {n_in})"
            + (" or (batch, T)" if n_in == 1 else "")
            + f", got {tuple(x.shape)}"
        )
    return x


def _causal_filter(x, taps):
    """``y_t = sum_j taps[j] x_{t-j}`` for x (batch, T_x, n_in), taps (K, n_out, n_in)."""
    k = taps.shape[0]
    weight = taps.flip(0).permute(1, 2, 0)  # conv1d correlates: lag j sits at index k-1-j
    xt = nn.functional.pad(x.transpose(1, 2), (k - 1, 0))
    return nn.functional.conv1d(xt, weight).transpose(1, 2)


@fill_doc(linear_rnn_variances=LINEAR_RNN_VARIANCES_DOC)
class LinearRNN(nn.Module):
    r"""Linear RNN in the parameterisation of Emami et al. (eq. 1, 4).

    ``h_t = W h_{t-1} / sqrt(n) + F x_t``, ``y_t = C h_t / sqrt(n)``, ``h_{-1} = 0``,
    with ``W_ij ~ N(0, nu_w)``, ``F_ij ~ N(0, nu_f)``, ``C_ij ~ N(0, nu_c)`` at
    initialisation. As ``hidden_size`` grows its NTK tends to
    :func:`rntk.scaled_conv_kernel` and gradient descent on it follows that of a
    :class:`ScaledConv1d` with ``rho = rntk.scaled_conv_rho(T, nu_w, nu_f, nu_c)``.

    Parameters
    ----------
    n_in : int
        Input channels ``n_x``.
    n_out : int
        Output channels ``n_y``.
    hidden_size : int
        Width ``n``.
    {linear_rnn_variances}
    dtype : torch.dtype, default=None
        Parameter dtype (``None``: torch's default, use ``torch.float64`` for NTKs).

    Attributes
    ----------
    W : torch.nn.Parameter of shape (hidden_size, hidden_size)
        Recurrent weights.
    F : torch.nn.Parameter of shape (hidden_size, n_in)
        Input weights.
    C : torch.nn.Parameter of shape (n_out, hidden_size)
        Output weights.

    Examples
    --------
    >>> import torch
    >>> from rntk.nn import LinearRNN
    >>> _ = torch.manual_seed(0)
    >>> model = LinearRNN(1, 1, hidden_size=64)
    >>> model(torch.randn(5, 10, 1)).shape
    torch.Size([5, 10, 1])
    """

    def __init__(self, n_in, n_out, hidden_size, nu_w=0.3, nu_f=1.0, nu_c=1.0, *, dtype=None):
        super().__init__()
        self.n_in = check_int(n_in, "n_in")
        self.n_out = check_int(n_out, "n_out")
        self.hidden_size = check_int(hidden_size, "hidden_size")
        self.nu_w = _check_var(nu_w, "nu_w")
        self.nu_f = _check_var(nu_f, "nu_f")
        self.nu_c = _check_var(nu_c, "nu_c")
        n = self.hidden_size
        self.W = nn.Parameter(torch.empty(n, n, dtype=dtype))
        self.F = nn.Parameter(torch.empty(n, self.n_in, dtype=dtype))
        self.C = nn.Parameter(torch.empty(self.n_out, n, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Draw ``W``, ``F``, ``C`` again from their Gaussian initial laws."""
        with torch.no_grad():
            self.W.normal_(0.0, math.sqrt(self.nu_w))
            self.F.normal_(0.0, math.sqrt(self.nu_f))
            self.C.normal_(0.0, math.sqrt(self.nu_c))

    def forward(self, x):
        """Run the network over whole sequences.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, T, n_in), or (batch, T) when ``n_in == 1``
            Input sequences, time-major within each sample.

        Returns
        -------
        y : torch.Tensor of shape (batch, T, n_out)
            The output at every step.

        Notes
        -----
        The network is linear in its input, so when ``min(n_in, n_out) < batch`` the
        outputs are computed as the causal filter of the impulse response ``L_j = C (W /
        sqrt(n))^j F / sqrt(n)`` (``T n^2 min(n_in, n_out)`` operations instead of the
        recurrence's ``batch T n^2``). Both routes compute the same function of
        ``(W, F, C)``, so outputs and gradients are those of the recurrence.
        """
        x = _as_batch(x, self.n_in, "LinearRNN")
        if min(self.n_in, self.n_out) < x.shape[0]:
            return _causal_filter(x, self._impulse(x.shape[1]))
        return self._recurrence(x)

    def _impulse(self, T):
        """Differentiable ``L_j = C (W / sqrt(n))^j F / sqrt(n)``, shape (T, n_out, n_in).

        The power of ``W`` is applied to the narrower of ``F`` and ``C``: ``T`` products
        with ``min(n_in, n_out)`` vectors.
        """
        scale = 1.0 / math.sqrt(self.hidden_size)
        taps = []
        if self.n_in <= self.n_out:
            v = self.F * scale  # (n, n_in), becomes (W / sqrt(n))^j F / sqrt(n)
            for j in range(T):
                taps.append(self.C @ v)
                if j < T - 1:
                    v = scale * (self.W @ v)
        else:
            u = self.C  # (n_out, n), becomes C (W / sqrt(n))^j
            for j in range(T):
                taps.append(scale * (u @ self.F))
                if j < T - 1:
                    u = scale * (u @ self.W)
        return torch.stack(taps)

    def _recurrence(self, x):
        scale = 1.0 / math.sqrt(self.hidden_size)
        u = x @ self.F.T  # (batch, T, n): input drive of every step
        h = u[:, 0]
        states = [h]
        for t in range(1, x.shape[1]):
            h = scale * (h @ self.W.T) + u[:, t]
            states.append(h)
        return scale * (torch.stack(states, dim=1) @ self.C.T)

    def extra_repr(self):
        return (f"n_in={self.n_in}, n_out={self.n_out}, hidden_size={self.hidden_size}, "
                f"nu_w={self.nu_w}, nu_f={self.nu_f}, nu_c={self.nu_c}")


class ScaledConv1d(nn.Module):
    r"""Causal 1-D convolution with scaled taps, ``y_t = sum_j sqrt(rho_j) theta_j x_{t-j}``.

    The model of Emami et al. (eq. 8). ``theta_j`` (an ``n_out x n_in`` matrix per
    lag) starts i.i.d. ``N(0, 1)``, so the impulse response ``L_j = sqrt(rho_j)
    theta_j`` starts ``N(0, rho_j)``. Its NTK is exactly :func:`rntk.scaled_conv_kernel`
    with these ``rho``; with ``rho = rntk.scaled_conv_rho(T, nu_w, nu_f, nu_c)``
    gradient descent on it is the wide limit of that on a :class:`LinearRNN`. All
    ones gives the plain (unscaled) convolution.

    Parameters
    ----------
    n_in : int
        Input channels.
    n_out : int
        Output channels.
    T : int
        Number of taps (lags ``0..T-1``); longer inputs see no older lag.
    rho : array-like of shape (T,), default=None
        Non-negative tap scales; ``None`` means all ones.
    dtype : torch.dtype, default=None
        Parameter dtype.

    Attributes
    ----------
    theta : torch.nn.Parameter of shape (T, n_out, n_in)
        The trained parameters.
    rho : torch.Tensor of shape (T,)
        The tap scales (a buffer, not trained).

    Examples
    --------
    >>> import torch
    >>> from rntk import scaled_conv_rho
    >>> from rntk.nn import ScaledConv1d
    >>> _ = torch.manual_seed(0)
    >>> conv = ScaledConv1d(1, 1, T=10, rho=scaled_conv_rho(10))
    >>> conv(torch.randn(5, 10, 1)).shape
    torch.Size([5, 10, 1])
    """

    def __init__(self, n_in, n_out, T, rho=None, *, dtype=None):
        super().__init__()
        self.n_in = check_int(n_in, "n_in")
        self.n_out = check_int(n_out, "n_out")
        self.T = check_int(T, "T")
        taps = np.ones(self.T) if rho is None else check_rho(rho, self.T)
        if rho is not None and len(rho) != self.T:
            raise ValueError(f"rho must have T={self.T} values, got {len(rho)}")
        dtype = torch.get_default_dtype() if dtype is None else dtype
        self.register_buffer("rho", torch.as_tensor(taps, dtype=dtype))
        self.theta = nn.Parameter(torch.empty(self.T, self.n_out, self.n_in, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Draw ``theta`` again, i.i.d. ``N(0, 1)``."""
        with torch.no_grad():
            self.theta.normal_()

    @classmethod
    def from_impulse_response(cls, L, rho=None, *, dtype=None):
        """Build the model whose impulse response is ``L`` (``theta_j = L_j / sqrt(rho_j)``).

        Starting a :class:`ScaledConv1d` from a :class:`LinearRNN`'s impulse response
        makes the two models compute the same function at initialisation, so their
        gradient-descent trajectories can be compared run by run.

        Parameters
        ----------
        L : array-like or torch.Tensor of shape (T, n_out, n_in)
            Impulse response, e.g. ``impulse_response(rnn, T)``.
        rho : array-like of shape (T,), default=None
            Positive tap scales (``None``: all ones).
        dtype : torch.dtype, default=None
            Parameter dtype (``None``: that of ``L``, e.g. float64 for the output of
            :func:`impulse_response`).

        Returns
        -------
        model : ScaledConv1d
            The convolution with ``sqrt(rho_j) theta_j = L_j``.
        """
        L = torch.as_tensor(np.asarray(L) if not isinstance(L, torch.Tensor) else L)
        if L.dim() != 3:
            raise ValueError(f"L must have shape (T, n_out, n_in), got {tuple(L.shape)}")
        T, n_out, n_in = L.shape
        if dtype is None and L.is_floating_point():
            dtype = L.dtype
        model = cls(n_in, n_out, T, rho, dtype=dtype)
        if torch.any(model.rho <= 0):
            raise ValueError("from_impulse_response needs strictly positive rho")
        with torch.no_grad():
            model.theta.copy_(L.to(model.theta.dtype) / model.rho.sqrt()[:, None, None])
        return model

    def forward(self, x):
        """Apply the causal filter.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, T_x, n_in), or (batch, T_x) when ``n_in == 1``
            Input sequences (any length ``T_x``).

        Returns
        -------
        y : torch.Tensor of shape (batch, T_x, n_out)
            The output at every step.
        """
        x = _as_batch(x, self.n_in, "ScaledConv1d")
        return _causal_filter(x, self.rho.sqrt()[:, None, None] * self.theta)

    def extra_repr(self):
        return f"n_in={self.n_in}, n_out={self.n_out}, T={self.T}"


def impulse_response(model, T=None):
    r"""Impulse response ``L_j`` of a linear sequence model: ``y_t = sum_j L_j x_{t-j}``.

    For a :class:`LinearRNN`, ``L_j = C W^j F / n^((j+1)/2)`` (Emami et al., eq. 9);
    for a :class:`ScaledConv1d`, ``L_j = sqrt(rho_j) theta_j``.

    Parameters
    ----------
    model : LinearRNN or ScaledConv1d
        The model.
    T : int, default=None
        Number of lags. Required for a :class:`LinearRNN`; for a
        :class:`ScaledConv1d` it defaults to its ``T`` (lags past it are zero).

    Returns
    -------
    L : ndarray of shape (T, n_out, n_in)
        ``L[j]`` maps ``x_{t-j}`` to its contribution to ``y_t``, float64.

    Examples
    --------
    >>> import torch
    >>> from rntk.nn import LinearRNN, impulse_response
    >>> _ = torch.manual_seed(0)
    >>> model = LinearRNN(2, 1, hidden_size=32, dtype=torch.float64)
    >>> L = impulse_response(model, T=4)
    >>> L.shape
    (4, 1, 2)
    >>> x = torch.zeros(1, 4, 2, dtype=torch.float64)
    >>> x[0, 0, 0] = 1.0  # a unit impulse on channel 0 at t = 0
    >>> bool(torch.allclose(model(x)[0, :, 0], torch.as_tensor(L[:, 0, 0])))
    True
    """
    with torch.no_grad():
        if isinstance(model, LinearRNN):
            if T is None:
                raise ValueError("impulse_response of a LinearRNN needs T (the number of lags)")
            return model._impulse(check_int(T, "T")).double().numpy()
        if isinstance(model, ScaledConv1d):
            T = model.T if T is None else check_int(T, "T")
            taps = (model.rho.double().sqrt()[:, None, None] * model.theta.double()).numpy()
            full = np.zeros((T, model.n_out, model.n_in))
            k = min(T, model.T)
            full[:k] = taps[:k]
            return full
    raise TypeError(
        f"impulse_response needs a LinearRNN or a ScaledConv1d, got {type(model).__name__}"
    )
