"""Student and teacher networks: the linear state-space RNN and GRU/LSTM/Elman regressors."""

from __future__ import annotations

import math

import numpy as np
import torch

from ._common import (
    _check_choice,
    _check_positive_float,
    _check_positive_int,
    _check_sizes,
    _generator,
)

_TRANSITIONS = ("full", "symmetric", "diagonal")
_INITS = ("balanced", "gaussian", "xavier")


class StateSpaceRNN(torch.nn.Module):
    r"""Linear RNN (linear dynamical system) ``s_{t+1} = A s_t + B x_t``, ``y_t = C s_t``.

    The state starts at zero. ``A`` is ``(d, d)``, ``B`` is ``(d, n_inputs)``, ``C`` is
    ``(n_outputs, d)``. The model realises the convolution with its impulse response
    ``h_j = C A^j B``.

    Parameters
    ----------
    state_size : int
        State dimension ``d``.
    n_inputs, n_outputs : int, default=1
        Input and output dimensions (1 and 1: the single-input single-output model of the
        papers).
    transition : {"full", "symmetric", "diagonal"}, default="full"
        Structure of ``A``. ``"symmetric"`` is parameterised by its ``d(d+1)/2`` upper-triangular
        entries (as in Cohen-Karlik et al. 2023), ``"diagonal"`` by its ``d`` diagonal entries.
    init : {"balanced", "gaussian", "xavier"}, default="balanced"
        ``"balanced"``: ``A`` entries i.i.d. ``N(0, init_scale^2)`` (restricted to the
        structure) and ``B = C^T`` with i.i.d. ``N(0, init_scale^2)`` entries (needs
        ``n_inputs == n_outputs``). ``B`` and ``C`` are still two independent parameters: only
        the starting point is balanced. ``"gaussian"``: all entries i.i.d.
        ``N(0, init_scale^2)``. ``"xavier"``: Glorot-normal, std ``init_scale *
        sqrt(2 / (fan_in + fan_out))`` per matrix (``init_scale=1`` is Xavier's default gain).
    init_scale : float, default=1e-3
        Scale of the initialisation (see ``init``).
    n_models : int or None, default=None
        ``None``: a single model. An integer ``R``: ``R`` independent models stored with a
        leading ensemble axis and trained together (their losses are summed, so gradients,
        Adam moments and updates stay independent); every returned quantity then has a
        leading axis of length ``R``.
    dtype : torch.dtype, default=torch.float64
        Parameter dtype.
    seed : int, numpy.random.Generator, torch.Generator or None, default=None
        Seed of the initialisation.

    Attributes
    ----------
    A, B, C : torch.Tensor
        The (structured) matrices, with a leading ensemble axis when ``n_models`` is set.

    Examples
    --------
    >>> import torch
    >>> rnn = StateSpaceRNN(4, transition="symmetric", init="balanced", init_scale=0.5, seed=0)
    >>> bool(torch.equal(rnn.B, rnn.C.T)) and bool(torch.equal(rnn.A, rnn.A.T))
    True
    >>> rnn.impulse_response(6).shape
    torch.Size([6])
    """

    def __init__(
        self,
        state_size,
        n_inputs=1,
        n_outputs=1,
        *,
        transition="full",
        init="balanced",
        init_scale=1e-3,
        n_models=None,
        dtype=torch.float64,
        seed=None,
    ):
        super().__init__()
        d, n_in, n_out = _check_sizes(state_size, "state_size", n_inputs, n_outputs)
        _check_choice(transition, "transition", _TRANSITIONS)
        _check_choice(init, "init", _INITS)
        scale = _check_positive_float(init_scale, "init_scale", allow_zero=True)
        if n_models is not None:
            n_models = _check_positive_int(n_models, "n_models")
        if init == "balanced" and n_in != n_out:
            raise ValueError(
                "a balanced initialisation (B = C^T) needs n_inputs == n_outputs, got "
                f"{n_in} and {n_out}"
            )
        self.state_size, self.n_inputs, self.n_outputs = d, n_in, n_out
        self.transition, self.n_models = transition, n_models
        R = 1 if n_models is None else n_models
        g = _generator(seed)

        def normal(*shape, std):
            return torch.randn(*shape, generator=g, dtype=dtype) * std

        if init == "xavier":
            std_a, std_b, std_c = (
                scale * math.sqrt(2.0 / (d + d)),
                scale * math.sqrt(2.0 / (d + n_in)),
                scale * math.sqrt(2.0 / (d + n_out)),
            )
        else:
            std_a = std_b = std_c = scale
        if transition == "full":
            a = normal(R, d, d, std=std_a)
        elif transition == "symmetric":
            a = normal(R, d * (d + 1) // 2, std=std_a)
        else:
            a = normal(R, d, std=std_a)
        b = normal(R, d, n_in, std=std_b)
        c = b.transpose(1, 2).clone() if init == "balanced" else normal(R, n_out, d, std=std_c)
        self.a = torch.nn.Parameter(a)
        self.b = torch.nn.Parameter(b)
        self.c = torch.nn.Parameter(c)
        if transition == "symmetric":
            rows, cols = torch.triu_indices(d, d)
            self.register_buffer("_rows", rows, persistent=False)
            self.register_buffer("_cols", cols, persistent=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_weights(cls, A, B, C, *, transition="full", dtype=torch.float64):
        """Build a single model with given matrices.

        Parameters
        ----------
        A : array-like of shape (d, d)
            Transition matrix (for ``transition="diagonal"`` a length-``d`` vector or a
            diagonal matrix; for ``"symmetric"`` a symmetric matrix).
        B : array-like of shape (d,) or (d, n_inputs)
            Input weights.
        C : array-like of shape (d,) or (n_outputs, d)
            Output weights.
        transition : {"full", "symmetric", "diagonal"}, default="full"
            Structure used for ``A`` (it is checked).
        dtype : torch.dtype, default=torch.float64
            Parameter dtype.

        Returns
        -------
        StateSpaceRNN
            The model.

        Examples
        --------
        >>> rnn = StateSpaceRNN.from_weights([[0.5]], [1.0], [2.0])
        >>> rnn.impulse_response(3).tolist()
        [2.0, 1.0, 0.5]
        """
        A = torch.as_tensor(np.asarray(A, dtype=float), dtype=dtype)
        B = torch.as_tensor(np.asarray(B, dtype=float), dtype=dtype)
        C = torch.as_tensor(np.asarray(C, dtype=float), dtype=dtype)
        if B.ndim == 1:
            B = B[:, None]
        if C.ndim == 1:
            C = C[None, :]
        if transition == "diagonal" and A.ndim == 2:
            if not torch.equal(A, torch.diag(torch.diagonal(A))):
                raise ValueError("transition='diagonal' needs a diagonal A")
            A = torch.diagonal(A).clone()
        d = B.shape[0]
        expected = (d,) if transition == "diagonal" else (d, d)
        if tuple(A.shape) != expected or C.ndim != 2 or C.shape[1] != d or B.ndim != 2:
            raise ValueError(
                f"inconsistent shapes: A {tuple(A.shape)}, B {tuple(B.shape)}, "
                f"C {tuple(C.shape)}"
            )
        if transition == "symmetric" and not torch.allclose(A, A.T):
            raise ValueError("transition='symmetric' needs a symmetric A")
        for name, M in (("A", A), ("B", B), ("C", C)):
            if not torch.isfinite(M).all():
                raise ValueError(f"{name} contains NaN or inf")
        model = cls(
            d, B.shape[1], C.shape[0], transition=transition, init="gaussian",
            init_scale=0.0, dtype=dtype, seed=0,
        )
        with torch.no_grad():
            if transition == "symmetric":
                model.a.copy_(A[model._rows, model._cols][None])
            else:
                model.a.copy_(A[None])
            model.b.copy_(B[None])
            model.c.copy_(C[None])
        return model

    # ------------------------------------------------------------------ matrices
    def _A(self):
        """Full transition matrices, always with the ensemble axis: (R, d, d)."""
        if self.transition == "full":
            return self.a
        if self.transition == "diagonal":
            return torch.diag_embed(self.a)
        R, d = self.a.shape[0], self.state_size
        A = self.a.new_zeros(R, d, d)
        A[:, self._rows, self._cols] = self.a
        upper = A.triu(1)
        return A + upper.transpose(1, 2)

    def _squeeze(self, t):
        return t[0] if self.n_models is None else t

    @property
    def A(self):
        """Transition matrix ``(d, d)`` (``(R, d, d)`` for an ensemble)."""
        return self._squeeze(self._A())

    @property
    def B(self):
        """Input weights ``(d, n_inputs)`` (``(R, d, n_inputs)`` for an ensemble)."""
        return self._squeeze(self.b)

    @property
    def C(self):
        """Output weights ``(n_outputs, d)`` (``(R, n_outputs, d)`` for an ensemble)."""
        return self._squeeze(self.c)

    # ------------------------------------------------------------------ responses
    def _impulse(self, T):
        """Impulse response with all axes: (R, T, n_out, n_in)."""
        T = _check_positive_int(T, "T")
        v = self.b
        if self.transition == "diagonal":
            # powers a_i^j by a cumulative product (its backward is exact at a_i = 0)
            R, d = self.a.shape
            pw = torch.cumprod(self.a[:, None, :].expand(R, T - 1, d), dim=1)
            P = torch.cat([torch.ones_like(self.a)[:, None, :], pw], dim=1)
            return torch.einsum("rod,rtd,rdi->rtoi", self.c, P, self.b)
        # [B, AB, ..., A^{m-1}B] grows by doubling: log2(T) products instead of T
        A = self._A()
        R, n_in = v.shape[0], self.n_inputs
        P, m = A, 1
        while m < T:
            v = torch.cat([v, P @ v], dim=-1)
            m *= 2
            if m < T:
                P = P @ P
        h = (self.c @ v[..., : T * n_in]).reshape(R, self.n_outputs, T, n_in)
        return h.transpose(1, 2)

    def impulse_response(self, T):
        """First ``T`` terms ``C A^j B`` of the impulse response.

        Parameters
        ----------
        T : int
            Number of terms.

        Returns
        -------
        torch.Tensor
            Shape ``(T,)`` for a single-input single-output model, ``(T, n_outputs,
            n_inputs)`` otherwise, with a leading ensemble axis when ``n_models`` is set.
            Differentiable.
        """
        h = self._impulse(T)
        if self.n_inputs == 1 and self.n_outputs == 1:
            h = h[..., 0, 0]
        return self._squeeze(h)

    def forward(self, x):
        """Run the recurrence on a batch of sequences.

        Parameters
        ----------
        x : torch.Tensor
            ``(N, T)`` (single input) or ``(N, T, n_inputs)``; for an ensemble also
            ``(R, N, T[, n_inputs])`` (one batch per model).

        Returns
        -------
        torch.Tensor
            Outputs ``y[..., t, :] = C s_{t+1}``, the output after reading ``x_0..x_t``: shape
            ``(..., N, T, n_outputs)``, or ``(..., N, T)`` for a single-output model fed
            ``(N, T)`` inputs.
        """
        x = torch.as_tensor(x, dtype=self.b.dtype)
        per_model_siso = (
            x.ndim == 3 and self.n_models is not None and x.shape[0] == self.n_models
            and x.shape[-1] != 1
        )
        squeeze_in = self.n_inputs == 1 and (x.ndim == 2 or per_model_siso)
        if squeeze_in:
            x = x[..., None]
        if x.shape[-1] != self.n_inputs:
            raise ValueError(f"expected {self.n_inputs} input channel(s), got {x.shape[-1]}")
        if self.n_models is None and x.ndim != 3:
            raise ValueError(f"expected inputs (N, T[, n_inputs]), got shape {tuple(x.shape)}")
        if self.n_models is not None and x.ndim == 3:
            x = x.expand(self.n_models, *x.shape)
        A, B, C = self._A(), self.b, self.c
        if self.n_models is None:
            A, B, C = A[0], B[0], C[0]
        s = x.new_zeros(*x.shape[:-2], self.state_size)
        ys = []
        for t in range(x.shape[-2]):
            s = s @ A.transpose(-1, -2) + x[..., t, :] @ B.transpose(-1, -2)
            ys.append(s @ C.transpose(-1, -2))
        y = torch.stack(ys, dim=-2)
        if squeeze_in and self.n_outputs == 1:
            y = y[..., 0]
        return y


class RecurrentRegressor(torch.nn.Module):
    """GRU, LSTM or Elman network with a linear read-out, sequence to sequence.

    Parameters
    ----------
    hidden_size : int
        Width of the recurrent layer.
    n_inputs, n_outputs : int, default=1
        Input and output dimensions.
    cell : {"gru", "lstm", "rnn"}, default="gru"
        Recurrent cell (``torch.nn.GRU``, ``torch.nn.LSTM``, ``torch.nn.RNN`` with tanh).
    init : {"default", "xavier", "normal"}, default="default"
        ``"default"``: PyTorch's uniform ``+-1/sqrt(hidden_size)``; ``"xavier"``: Glorot-normal
        weights (gain ``init_scale``) and zero biases; ``"normal"``: every parameter i.i.d.
        ``N(0, init_scale^2)`` (near-zero initialisation for small ``init_scale``).
    init_scale : float, default=1.0
        See ``init``.
    dtype : torch.dtype, default=torch.float64
        Parameter dtype.
    seed : int or None, default=None
        Seed of the initialisation.

    Examples
    --------
    >>> net = RecurrentRegressor(8, cell="lstm", seed=0)
    >>> net(torch.zeros(2, 5)).shape
    torch.Size([2, 5])
    """

    def __init__(
        self,
        hidden_size,
        n_inputs=1,
        n_outputs=1,
        *,
        cell="gru",
        init="default",
        init_scale=1.0,
        dtype=torch.float64,
        seed=None,
    ):
        super().__init__()
        h, n_in, n_out = _check_sizes(hidden_size, "hidden_size", n_inputs, n_outputs)
        cells = {"gru": torch.nn.GRU, "lstm": torch.nn.LSTM, "rnn": torch.nn.RNN}
        _check_choice(cell, "cell", cells)
        if init not in ("default", "xavier", "normal"):
            raise ValueError(f"init must be 'default', 'xavier' or 'normal', got {init!r}")
        scale = _check_positive_float(init_scale, "init_scale", allow_zero=True)
        self.hidden_size, self.n_inputs, self.n_outputs, self.cell = h, n_in, n_out, cell
        g = _generator(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(2**31, (1,), generator=g)))
            self.rnn = cells[cell](n_in, h, batch_first=True, dtype=dtype)
            self.readout = torch.nn.Linear(h, n_out, dtype=dtype)
            with torch.no_grad():
                for name, p in self.named_parameters():
                    if init == "normal":
                        p.normal_(0.0, scale)
                    elif init == "xavier":
                        if p.ndim == 2:
                            torch.nn.init.xavier_normal_(p, gain=scale)
                        else:
                            p.zero_()

    def forward(self, x):
        """Compute the outputs at every step.

        Parameters
        ----------
        x : torch.Tensor
            ``(N, T)`` or ``(N, T, n_inputs)``.

        Returns
        -------
        torch.Tensor
            ``(N, T)`` for ``(N, T)`` inputs and one output, else ``(N, T, n_outputs)``.
        """
        x = torch.as_tensor(x, dtype=self.readout.weight.dtype)
        squeeze = x.ndim == 2
        if squeeze:
            x = x[..., None]
        y = self.readout(self.rnn(x)[0])
        return y[..., 0] if squeeze and self.n_outputs == 1 else y

    def impulse_response(self, T):
        """Output sequence for the input ``(1, 0, ..., 0)`` (first input channel).

        Parameters
        ----------
        T : int
            Length.

        Returns
        -------
        torch.Tensor
            ``(T,)`` for one output, else ``(T, n_outputs)``.
        """
        T = _check_positive_int(T, "T")
        x = torch.zeros(1, T, self.n_inputs, dtype=self.readout.weight.dtype)
        x[0, 0, 0] = 1.0
        y = self.forward(x)[0]
        return y[:, 0] if self.n_outputs == 1 else y
