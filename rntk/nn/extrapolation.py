"""Extrapolation of overparameterised recurrent networks (teacher-student experiments).

A student recurrent network is trained on sequences of length ``k`` labelled by a teacher,
then compared with the teacher on longer sequences. This module provides the models, teachers,
losses, training loops and error measure of Cohen-Karlik et al. (2022, 2023):

* :class:`StateSpaceRNN` -- the linear RNN (linear dynamical system)
  ``s_{t+1} = A s_t + B x_t``, ``y_t = C s_t``, ``s_0 = 0``, with a full, symmetric or diagonal
  transition matrix, balanced (``B = C^T``), Gaussian or Xavier initialisation, single- or
  multi-input/output, and optionally a whole *ensemble* of independent models trained in one
  vectorised loop (``n_models``).
* :class:`RecurrentRegressor` -- a GRU / LSTM / Elman network with a linear read-out.
* Teachers: :func:`balanced_teacher`, :func:`delay_teacher`, :func:`random_unbalanced_teacher`,
  :func:`memoryless_teacher`, :func:`gru_teacher`.
* Losses: :func:`population_loss` (eq. 3.4 of Cohen-Karlik et al. 2023: for whitened inputs the
  expected squared error of the last output is ``sum_{j<k} ||C A^j B - W_j||^2``) and
  :func:`empirical_loss` on sampled sequences.
* Training: :func:`fit_population`, :func:`fit_empirical` (Adam or plain gradient descent).
* :func:`extrapolation_error` -- the ``l_inf`` distance of impulse responses, with the rule of
  App. B.3 (a model worse than the all-zero response counts as non-extrapolating); it also
  accepts the kernel side's :class:`rntk.nn.LinearRNN` and :class:`rntk.nn.ScaledConv1d`.
* :func:`balancedness` (``||B - C^T|| / ||B + C^T||``) and :func:`asymmetry`
  (``||A - A^T||``), the quantities conserved or approached by gradient descent.

The experiments of both papers are scripts in the repository's ``examples/`` folder
(``extrapolation_*.py``).

Conventions: the *impulse response* of a model is the output sequence for the input
``(1, 0, 0, ...)``; for the linear RNN it is ``h_j = C A^j B``. Outputs are indexed so that
``forward(x)[..., t, :]`` is the output after reading ``x_0, ..., x_t``; the output after a
length-``k`` sequence is ``sum_j h_j x_{k-1-j}``, the convention of both papers. Everything
runs in float64 by default.

Examples
--------
A balanced student trained on length-12 sequences from a 3-dimensional balanced teacher
recovers the teacher's impulse response far beyond the training length:

>>> from rntk.nn.extrapolation import (StateSpaceRNN, balanced_teacher,
...                                    fit_population, extrapolation_error)
>>> teacher = balanced_teacher(3, seed=0)
>>> student = StateSpaceRNN(20, transition="diagonal", init="balanced", seed=0)
>>> _ = fit_population(student, teacher, k=12, lr=2e-2, n_steps=600)
>>> bool(extrapolation_error(student, teacher, horizon=40) < 0.05)
True
"""

from __future__ import annotations

import functools
import math
from numbers import Integral

import numpy as np
import torch

__all__ = [
    "StateSpaceRNN",
    "RecurrentRegressor",
    "balanced_teacher",
    "delay_teacher",
    "random_unbalanced_teacher",
    "memoryless_teacher",
    "gru_teacher",
    "population_loss",
    "empirical_loss",
    "fit_population",
    "fit_empirical",
    "extrapolation_error",
    "balancedness",
    "asymmetry",
]

_TRANSITIONS = ("full", "symmetric", "diagonal")
_INITS = ("balanced", "gaussian", "xavier")


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_positive_float(value, name, allow_zero=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a finite {kind} number, got {value!r}")
    return v


def _single_threaded(func):
    """Run a training loop of tiny tensor operations on one thread (threads only add overhead)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        n = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return func(*args, **kwargs)
        finally:
            torch.set_num_threads(n)

    return wrapper


def _generator(seed):
    if isinstance(seed, torch.Generator):
        return seed
    g = torch.Generator()
    if seed is None:
        g.seed()
    else:
        if isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2**31))
        g.manual_seed(int(seed))
    return g


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
        d = _check_positive_int(state_size, "state_size")
        n_in = _check_positive_int(n_inputs, "n_inputs")
        n_out = _check_positive_int(n_outputs, "n_outputs")
        if transition not in _TRANSITIONS:
            raise ValueError(f"transition must be one of {_TRANSITIONS}, got {transition!r}")
        if init not in _INITS:
            raise ValueError(f"init must be one of {_INITS}, got {init!r}")
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
        h = _check_positive_int(hidden_size, "hidden_size")
        n_in = _check_positive_int(n_inputs, "n_inputs")
        n_out = _check_positive_int(n_outputs, "n_outputs")
        cells = {"gru": torch.nn.GRU, "lstm": torch.nn.LSTM, "rnn": torch.nn.RNN}
        if cell not in cells:
            raise ValueError(f"cell must be one of {tuple(cells)}, got {cell!r}")
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


# ---------------------------------------------------------------------- teachers
def balanced_teacher(state_size=5, *, eig_range=(0.6, 1.05), seed=None):
    """Balanced diagonal teacher of Cohen-Karlik et al. (2023), App. B.2.1.

    Eigenvalues are drawn uniformly in ``eig_range``; ``B = C^T`` is drawn from ``N(0.5, 1)``
    and normalised so that ``C B = 1``. Its impulse response ``sum_i B_i^2 lambda_i^j`` is the
    moment sequence of a probability distribution on the eigenvalues.

    Parameters
    ----------
    state_size : int, default=5
        Teacher dimension ``d_teacher``.
    eig_range : (float, float), default=(0.6, 1.05)
        Interval of the eigenvalues.
    seed : int or None, default=None
        Seed.

    Returns
    -------
    StateSpaceRNN
        Diagonal, balanced, single-input single-output teacher; parameters frozen.

    Examples
    --------
    >>> t = balanced_teacher(5, seed=0)
    >>> round(t.impulse_response(1).item(), 12)
    1.0
    """
    d = _check_positive_int(state_size, "state_size")
    lo, hi = (float(v) for v in eig_range)
    if not lo <= hi:
        raise ValueError(f"eig_range must be (low, high) with low <= high, got {eig_range!r}")
    rng = np.random.default_rng(seed)
    eig = rng.uniform(lo, hi, size=d)
    b = rng.normal(0.5, 1.0, size=d)
    b /= np.linalg.norm(b)
    return StateSpaceRNN.from_weights(np.diag(eig), b, b, transition="diagonal").requires_grad_(
        False
    )


def _shift(d, diag, super_diag):
    A = np.diag(np.asarray(diag, dtype=float))
    if d > 1:
        A += np.diag(np.asarray(super_diag, dtype=float), k=1)
    return A


def delay_teacher(state_size=10):
    """Delay-line teacher (App. B.2.2): impulse response 1 at lag ``state_size - 1``, else 0.

    ``A`` is the nilpotent shift (ones on the super-diagonal), ``B = e_d``, ``C = e_1``.

    Parameters
    ----------
    state_size : int, default=10
        Teacher dimension ``d_teacher``; the output is the input delayed by
        ``d_teacher - 1`` steps.

    Returns
    -------
    StateSpaceRNN
        Unbalanced, non-symmetric teacher. Parameters frozen (``requires_grad=False``).

    Examples
    --------
    >>> delay_teacher(3).impulse_response(5).tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0]
    """
    d = _check_positive_int(state_size, "state_size")
    b, c = np.zeros(d), np.zeros(d)
    b[-1], c[0] = 1.0, 1.0
    return StateSpaceRNN.from_weights(_shift(d, np.zeros(d), np.ones(d - 1)), b, c).requires_grad_(
        False
    )


def random_unbalanced_teacher(state_size=5, *, seed=None):
    """Random unbalanced teacher with shift structure (App. B.2.2).

    The diagonal of ``A`` is drawn from ``N(0, 0.1^2)`` and its super-diagonal from
    ``N(0.7, 0.1^2)``; ``B``, ``C`` are those of :func:`delay_teacher`, so the first
    ``d_teacher - 1`` impulse-response terms vanish and the teacher is revealed only from lag
    ``d_teacher - 1`` on.

    Parameters
    ----------
    state_size : int, default=5
        Teacher dimension.
    seed : int or None, default=None
        Seed.

    Returns
    -------
    StateSpaceRNN
        The teacher. Parameters frozen (``requires_grad=False``).

    Examples
    --------
    >>> h = random_unbalanced_teacher(4, seed=0).impulse_response(6)
    >>> h[:3].abs().max().item()
    0.0
    """
    d = _check_positive_int(state_size, "state_size")
    rng = np.random.default_rng(seed)
    diag = rng.normal(0.0, 0.1, size=d)
    sup = rng.normal(0.7, 0.1, size=d - 1)
    b, c = np.zeros(d), np.zeros(d)
    b[-1], c[0] = 1.0, 1.0
    return StateSpaceRNN.from_weights(_shift(d, diag, sup), b, c).requires_grad_(False)


def memoryless_teacher(weight=1.0):
    """Memoryless teacher ``y_t = w x_t`` (Cohen-Karlik et al. 2022): response ``(w, 0, 0, ...)``.

    Parameters
    ----------
    weight : float, default=1.0
        The weight ``w*`` (non-zero).

    Returns
    -------
    StateSpaceRNN
        One-dimensional model with ``A = 0``, ``B = 1``, ``C = w``;
        parameters frozen.

    Examples
    --------
    >>> memoryless_teacher(2.0).impulse_response(3).tolist()
    [2.0, 0.0, 0.0]
    """
    w = float(weight)
    if not math.isfinite(w) or w == 0:
        raise ValueError(f"weight must be finite and non-zero, got {weight!r}")
    return StateSpaceRNN.from_weights([[0.0]], [1.0], [w]).requires_grad_(False)


@_single_threaded
def gru_teacher(
    hidden_size=10,
    response=None,
    *,
    n_steps=1000,
    init_scale=1e-6,
    lr=1e-2,
    seed=None,
):
    """GRU teacher trained to mimic a chosen impulse response (App. B.2.3).

    A GRU at near-zero initialisation (every parameter ``N(0, init_scale^2)``) is trained by
    Adam for ``n_steps`` steps so that its output on the impulse ``(1, 0, ..., 0)`` matches
    ``response``; this yields a teacher with non-trivial, long memory (a random GRU either
    decays at once or explodes).

    Parameters
    ----------
    hidden_size : int, default=10
        Teacher width ``d_g``.
    response : array-like of shape (T,) or None, default=None
        Target impulse response; ``None`` uses a damped oscillation
        ``0.8 * 0.97^j * cos(2 pi j / 16)`` of length 60.
    n_steps : int, default=1000
        Adam steps.
    init_scale : float, default=1e-6
        Initialisation scale.
    lr : float, default=1e-2
        Adam learning rate.
    seed : int or None, default=None
        Seed.

    Returns
    -------
    RecurrentRegressor
        The trained teacher (parameters frozen: ``requires_grad=False``).
    """
    if response is None:
        j = np.arange(60)
        response = 0.8 * 0.97**j * np.cos(2 * np.pi * j / 16)
    target = torch.as_tensor(np.asarray(response, dtype=float))
    if target.ndim != 1 or not torch.isfinite(target).all():
        raise ValueError("response must be a finite 1-D sequence")
    teacher = RecurrentRegressor(
        hidden_size, cell="gru", init="normal", init_scale=init_scale, seed=seed
    )
    opt = torch.optim.Adam(teacher.parameters(), lr=lr)
    for _ in range(_check_positive_int(n_steps, "n_steps")):
        opt.zero_grad()
        loss = ((teacher.impulse_response(len(target)) - target) ** 2).mean()
        loss.backward()
        opt.step()
    teacher.requires_grad_(False)
    return teacher


# ---------------------------------------------------------------------- losses
def _response(model, T):
    """Impulse response (float64 numpy) of a model or an explicit sequence.

    Models with an ``impulse_response`` method, :class:`rntk.nn.LinearRNN` and
    :class:`rntk.nn.ScaledConv1d` (single-input single-output responses are squeezed to
    ``(T,)``), or an explicit response with at least ``T`` terms.
    """
    T = _check_positive_int(T, "T")
    if isinstance(model, torch.nn.Module) and not hasattr(model, "impulse_response"):
        from ._linear import impulse_response as linear_response

        h = linear_response(model, T)
        return h[:, 0, 0] if h.shape[1:] == (1, 1) else h
    if hasattr(model, "impulse_response"):
        with torch.no_grad():
            return model.impulse_response(T).detach().cpu().numpy().astype(float)
    h = np.asarray(model, dtype=float)
    if h.ndim == 0 or h.shape[0] < T:
        raise ValueError(f"an explicit impulse response needs at least {T} terms")
    return h[:T]


def _target_response(target, T, model):
    """Teacher response as a tensor (T, n_out, n_in) matching ``model``."""
    if isinstance(target, torch.nn.Module):
        with torch.no_grad():
            w = target._impulse(T)[0] if isinstance(target, StateSpaceRNN) else (
                target.impulse_response(T))
    else:
        w = torch.as_tensor(np.asarray(target, dtype=float))
        if w.ndim == 0 or (w.ndim not in (2, 4) and w.shape[0] < T):
            raise ValueError(f"the target response needs at least {T} terms")
        if w.ndim not in (2, 4):
            w = w[:T]
    w = w.to(model.b.dtype)
    per_member = model.n_models is not None and w.ndim in (2, 4)
    if per_member:  # one response per ensemble member: (R, T[, n_out, n_in])
        if w.shape[0] != model.n_models or w.shape[1] < T:
            raise ValueError(
                f"per-member target responses need shape ({model.n_models}, >= {T}, ...), "
                f"got {tuple(w.shape)}"
            )
        w = w[:, :T]
        if w.ndim == 2:
            w = w[..., None, None]
    elif w.ndim == 1:
        w = w[:, None, None]
    if tuple(w.shape[-2:]) != (model.n_outputs, model.n_inputs) or w.ndim != 3 + per_member:
        raise ValueError(
            f"target response has shape {tuple(w.shape)}, the model needs "
            f"(T, {model.n_outputs}, {model.n_inputs})"
        )
    if not torch.isfinite(w).all():
        raise ValueError("the target response contains NaN or inf")
    return w


def _lengths(k, model):
    R = 1 if model.n_models is None else model.n_models
    ks = np.atleast_1d(np.asarray(k))
    if ks.ndim != 1 or ks.size not in (1, R):
        raise ValueError(f"k must be an integer or one length per model ({R}), got {k!r}")
    ks = np.broadcast_to(ks, (R,))
    for v in ks:
        _check_positive_int(v.item() if hasattr(v, "item") else v, "k")
    return ks.astype(int)


def population_loss(model, target, k):
    r"""Compute the population loss over length-``k`` whitened sequences (eq. 3.4).

    ``L = sum_{j=0}^{k-1} ||C A^j B - W_j||_F^2`` where ``W`` is the teacher's impulse
    response: the expected squared error of the last output for inputs with
    ``E[x x^T] = I``.

    Parameters
    ----------
    model : StateSpaceRNN
        Student (single model or ensemble).
    target : StateSpaceRNN or array-like
        Teacher or its impulse response (``(T,)`` or ``(T, n_outputs, n_inputs)``); for an
        ensemble also one response per member, ``(R, T)`` or ``(R, T, n_outputs,
        n_inputs)``.
    k : int or sequence of int
        Training length; for an ensemble one length per model is allowed.

    Returns
    -------
    torch.Tensor
        Scalar, or ``(R,)`` for an ensemble. Differentiable.

    Examples
    --------
    >>> student = StateSpaceRNN.from_weights([[0.5]], [1.0], [1.0])
    >>> population_loss(student, [1.0, 0.0, 0.0], k=3).item()
    0.3125
    """
    ks = _lengths(k, model)
    K = int(ks.max())
    w = _target_response(target, K, model)
    h = model._impulse(K)
    err = ((h - w) ** 2).sum(dim=(-1, -2))
    mask = torch.as_tensor(np.arange(K)[None, :] < ks[:, None], dtype=err.dtype)
    loss = (err * mask).sum(dim=1)
    return loss[0] if model.n_models is None else loss


def empirical_loss(model, inputs, targets):
    """Mean squared error of the last output on given sequences (eq. 3.2).

    For a linear model the last output is the convolution ``sum_j h_j x_{k-1-j}``, which is
    how it is evaluated (exactly the recurrence, at the cost of ``k`` matrix-vector products).

    Parameters
    ----------
    model : StateSpaceRNN or RecurrentRegressor
        Student.
    inputs : array-like
        ``(N, k)`` or ``(N, k, n_inputs)``; for an ensemble also ``(R, N, k[, n_inputs])``.
    targets : array-like
        ``(N,)`` or ``(N, n_outputs)`` (``(R, N[, n_outputs])`` for an ensemble).

    Returns
    -------
    torch.Tensor
        Scalar or ``(R,)``.

    Examples
    --------
    >>> student = StateSpaceRNN.from_weights([[0.5]], [1.0], [1.0])
    >>> empirical_loss(student, [[1.0, 2.0]], [2.0]).item()
    0.25
    """
    if isinstance(model, StateSpaceRNN):
        dtype = model.b.dtype
        x = torch.as_tensor(np.asarray(inputs, dtype=float) if not torch.is_tensor(inputs)
                            else inputs, dtype=dtype)
        y = torch.as_tensor(np.asarray(targets, dtype=float) if not torch.is_tensor(targets)
                            else targets, dtype=dtype)
        ens = model.n_models is not None
        if x.ndim == 2 + ens:
            x = x[..., None]
        if y.ndim == 1 + ens:
            y = y[..., None]
        if ens and x.ndim == 3:
            x = x.expand(model.n_models, *x.shape)
        if not ens:
            x, y = x[None], y[None]
        if x.ndim != 4 or x.shape[-1] != model.n_inputs or y.shape[-1] != model.n_outputs:
            raise ValueError(
                f"inputs {tuple(x.shape)} / targets {tuple(y.shape)} do not match the model"
            )
        k = x.shape[2]
        h = model._impulse(k)  # (R, k, n_out, n_in)
        pred = torch.einsum("rjoi,rnji->rno", h, x.flip(2))
        loss = ((pred - y) ** 2).sum(-1).mean(-1)
        return loss if ens else loss[0]
    x = torch.as_tensor(inputs, dtype=model.readout.weight.dtype)
    y = torch.as_tensor(targets, dtype=x.dtype)
    pred = model(x)[:, -1]
    return ((pred - y) ** 2).reshape(len(y), -1).sum(-1).mean()


# ---------------------------------------------------------------------- training
def balancedness(model):
    """Relative imbalance ``||B - C^T||_F / ||B + C^T||_F`` (Prop. 9 of Cohen-Karlik et al. 2023).

    Parameters
    ----------
    model : StateSpaceRNN
        Model (``n_inputs == n_outputs``).

    Returns
    -------
    float or numpy.ndarray
        0 for a balanced model; ``(R,)`` for an ensemble.

    Examples
    --------
    >>> balancedness(StateSpaceRNN.from_weights([[0.0]], [1.0], [1.0]))
    0.0
    """
    with torch.no_grad():
        ct = model.c.transpose(1, 2)
        r = (torch.linalg.matrix_norm(model.b - ct) / torch.linalg.matrix_norm(model.b + ct))
    r = r.numpy()
    return float(r[0]) if model.n_models is None else r


def asymmetry(model):
    """Norm ``||A - A^T||_F`` of the antisymmetric part (times 2) of the transition matrix.

    Parameters
    ----------
    model : StateSpaceRNN
        Model.

    Returns
    -------
    float or numpy.ndarray
        0 for symmetric or diagonal ``A``; ``(R,)`` for an ensemble.

    Examples
    --------
    >>> asymmetry(delay_teacher(3))
    2.0
    """
    with torch.no_grad():
        A = model._A()
        r = torch.linalg.matrix_norm(A - A.transpose(1, 2)).numpy()
    return float(r[0]) if model.n_models is None else r


def _weight_stats(model):
    with torch.no_grad():
        A = model._A()
        ct = model.c.transpose(1, 2)
        norm = torch.linalg.matrix_norm
        return {
            "norm_A": norm(A).numpy(),
            "norm_B": norm(model.b).numpy(),
            "norm_C": norm(model.c).numpy(),
            "asymmetry": norm(A - A.transpose(1, 2)).numpy(),
            "imbalance": norm(model.b - ct).numpy(),
        }


def _make_optimizer(params, optimizer, lr, milestones, gamma):
    lr = _check_positive_float(lr, "lr")
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=lr)
    elif optimizer == "gd":
        opt = torch.optim.SGD(params, lr=lr)
    else:
        raise ValueError(f"optimizer must be 'adam' or 'gd', got {optimizer!r}")
    sched = None
    if milestones:
        sched = torch.optim.lr_scheduler.MultiStepLR(opt, list(milestones), gamma=gamma)
    return opt, sched


def _squeeze_history(hist, model):
    out = {}
    for key, vals in hist.items():
        arr = np.asarray(vals)
        if key != "step" and model.n_models is None and arr.ndim == 2:
            arr = arr[:, 0]
        out[key] = arr
    return out


@_single_threaded
def fit_population(
    model,
    target,
    k,
    *,
    optimizer="adam",
    lr=1e-3,
    n_steps=15000,
    tol=0.0,
    record_every=100,
    record_weights=False,
    milestones=None,
    gamma=0.1,
):
    """Train a linear student on the population loss (eq. 3.4) by Adam or gradient descent.

    The defaults are the paper's (Cohen-Karlik et al. 2023, App. B.1): Adam, learning rate
    ``1e-3``, 15K steps. An ensemble is trained in one loop on the sum of its members'
    losses, which leaves every member's trajectory exactly as if trained alone.

    Parameters
    ----------
    model : StateSpaceRNN
        Student; trained in place.
    target : StateSpaceRNN or array-like
        Teacher or its impulse response (per member for an ensemble, as in
        :func:`population_loss`).
    k : int or sequence of int
        Training length (one per ensemble member allowed).
    optimizer : {"adam", "gd"}, default="adam"
        Adam, or full-batch gradient descent (``torch.optim.SGD`` without momentum).
    lr : float, default=1e-3
        Learning rate.
    n_steps : int, default=15000
        Maximum number of steps.
    tol : float, default=0.0
        Stop when every member's loss is below ``tol``.
    record_every : int, default=100
        Record the loss (and weight norms) every ``record_every`` steps.
    record_weights : bool, default=False
        Also record ``norm_A``, ``norm_B``, ``norm_C``, ``asymmetry`` (``||A - A^T||_F``) and
        ``imbalance`` (``||B - C^T||_F``).
    milestones : sequence of int or None, default=None
        Steps at which the learning rate is multiplied by ``gamma`` (``MultiStepLR``).
    gamma : float, default=0.1
        Decay factor.

    Returns
    -------
    dict of numpy.ndarray
        ``"step"`` and ``"loss"`` (per member for an ensemble), plus the weight norms when
        requested.

    Notes
    -----
    When the teacher's response starts with ``m`` zeros (a delay line: ``m = d_teacher - 1``)
    the gradient at a near-zero start of scale ``s`` is ``O(s^(m + 2))``: the origin is a
    high-order saddle and, below Adam's ``eps``, training does not leave it. The sampling
    noise of :func:`fit_empirical` does; use it for such teachers (as the paper does).
    """
    if not isinstance(model, StateSpaceRNN):
        raise TypeError("fit_population needs a StateSpaceRNN student")
    n_steps = _check_positive_int(n_steps, "n_steps")
    record_every = _check_positive_int(record_every, "record_every")
    tol = _check_positive_float(tol, "tol", allow_zero=True)
    ks = _lengths(k, model)
    K = int(ks.max())
    w = _target_response(target, K, model)
    mask = torch.as_tensor(np.arange(K)[None, :] < ks[:, None], dtype=w.dtype)
    opt, sched = _make_optimizer(model.parameters(), optimizer, lr, milestones, gamma)
    hist = {"step": [], "loss": []}

    def record(step, loss):
        hist["step"].append(step)
        hist["loss"].append(loss.detach().numpy().copy())
        if record_weights:
            for key, v in _weight_stats(model).items():
                hist.setdefault(key, []).append(v)

    for step in range(n_steps + 1):
        opt.zero_grad()
        h = model._impulse(K)
        loss = ((((h - w) ** 2).sum(dim=(-1, -2))) * mask).sum(dim=1)
        if not torch.isfinite(loss).all():
            raise FloatingPointError(
                f"the loss diverged at step {step}: lower the learning rate"
            )
        done = bool((loss <= tol).all()) if tol > 0 else False
        if step % record_every == 0 or step == n_steps or done:
            record(step, loss)
        if step == n_steps or done:
            break
        loss.sum().backward()
        opt.step()
        if sched is not None:
            sched.step()
    return _squeeze_history(hist, model)


def _teacher_labels(teacher, x, all_steps):
    """Teacher outputs on x (N, T, n_in): last step (N, n_out) or all (N, T, n_out)."""
    with torch.no_grad():
        if isinstance(teacher, torch.nn.Module):
            y = teacher(x)
            if y.ndim == 2:
                y = y[..., None]
        else:  # an impulse response: causal convolution
            w = torch.as_tensor(np.asarray(teacher, dtype=float), dtype=x.dtype)
            T = x.shape[1]
            if w.ndim == 1:
                w = w[:, None, None]
            if w.shape[0] < T:
                raise ValueError(f"the target response needs at least {T} terms")
            y = torch.stack(
                [torch.einsum("joi,nji->no", w[: t + 1], x[:, : t + 1].flip(1)) for t in range(T)],
                dim=1,
            )
    return y if all_steps else y[:, -1]


@_single_threaded
def fit_empirical(
    model,
    teacher,
    k,
    *,
    n_train=10000,
    batch_size=100,
    optimizer="adam",
    lr=1e-3,
    n_steps=50000,
    eval_every=100,
    patience=None,
    tol=0.0,
    all_steps=False,
    n_val=1000,
    keep_best=True,
    seed=None,
):
    """Train a student on sampled Gaussian sequences labelled by a teacher (eq. 3.2).

    ``n_train`` sequences of length ``k`` with i.i.d. ``N(0, 1)`` entries are drawn once and
    visited in minibatches of ``batch_size`` (defaults: App. B.1 of Cohen-Karlik et al. 2023,
    batch 100, at most 50K steps). Every ``eval_every`` steps the validation error on length
    ``k`` is measured and the best parameters so far are kept (early stopping): the model
    ends at its best validation point. For a linear student and a linear teacher the
    validation error is the exact population loss (eq. 3.4) and an ensemble with one ``k``
    per member is trained at once (shorter sequences are zero-padded in front, which leaves
    a linear network's output unchanged); otherwise ``n_val`` fresh sequences are used.

    Parameters
    ----------
    model : StateSpaceRNN or RecurrentRegressor
        Student; trained in place.
    teacher : torch.nn.Module or array-like
        Teacher network (its outputs are the labels) or a linear teacher's impulse response.
    k : int or sequence of int
        Training length (one per member of a linear ensemble allowed).
    n_train : int, default=10000
        Training-set size.
    batch_size : int, default=100
        Minibatch size.
    optimizer : {"adam", "gd"}, default="adam"
        Optimiser.
    lr : float, default=1e-3
        Learning rate.
    n_steps : int, default=50000
        Maximum number of steps.
    eval_every : int, default=100
        Validation period (steps).
    patience : int or None, default=None
        Stop after this many evaluations without improvement of any member (``None``: never).
    tol : float, default=0.0
        Stop when every member's validation error is below ``tol``.
    all_steps : bool, default=False
        Supervise the outputs at every step ``t < k`` (sequence-to-sequence) instead of only
        the last one. Only for single models.
    n_val : int, default=1000
        Validation sequences for non-linear models.
    keep_best : bool, default=True
        End at the parameters of the best validation error (early stopping); ``False``
        keeps the last iterate (the validation error is then only monitored, which matters
        when the training set is small: the linear validation error is the population one).
    seed : int or None, default=None
        Seed of the data.

    Returns
    -------
    dict of numpy.ndarray
        ``"step"``, ``"train_loss"`` (minibatch), ``"val_loss"``; ``"best_step"``.
    """
    n_train = _check_positive_int(n_train, "n_train")
    batch_size = min(_check_positive_int(batch_size, "batch_size"), n_train)
    n_steps = _check_positive_int(n_steps, "n_steps")
    eval_every = _check_positive_int(eval_every, "eval_every")
    tol = _check_positive_float(tol, "tol", allow_zero=True)
    g = _generator(seed)
    linear_teacher = isinstance(teacher, StateSpaceRNN) or not isinstance(
        teacher, torch.nn.Module
    )
    fast = isinstance(model, StateSpaceRNN) and linear_teacher and not all_steps
    params = [p for p in model.parameters() if p.requires_grad]
    opt, _ = _make_optimizer(params, optimizer, lr, None, 0.1)
    dtype = params[0].dtype
    n_in = model.n_inputs
    if fast:
        ks = _lengths(k, model)
        K = int(ks.max())
        R = ks.size
        w = _target_response(teacher, K, model)
        x = torch.randn(R, n_train, K, n_in, generator=g, dtype=dtype)
        x[torch.as_tensor(np.arange(K)[None, :] < (K - ks)[:, None])[:, None, :, None]
          .expand_as(x)] = 0.0
        xr = x.flip(2)  # xr[..., j, :] = x_{K-1-j}
        y = torch.einsum("rjoi,rnji->rno" if w.ndim == 4 else "joi,rnji->rno", w, xr)
        mask = torch.as_tensor(np.arange(K)[None, :] < ks[:, None], dtype=dtype)

        def train_loss(idx):
            h = model._impulse(K)
            pred = torch.einsum("rjoi,rnji->rno", h, xr[:, idx])
            return ((pred - y[:, idx]) ** 2).sum(-1).mean(-1)

        def val_loss():
            with torch.no_grad():
                h = model._impulse(K)
                return ((((h - w) ** 2).sum(dim=(-1, -2))) * mask).sum(1)
    else:
        if isinstance(model, StateSpaceRNN) and model.n_models is not None:
            raise ValueError("ensembles are trained with a linear teacher and all_steps=False")
        kk = _check_positive_int(int(np.asarray(k).item()), "k")
        x = torch.randn(n_train, kk, n_in, generator=g, dtype=dtype)
        y = _teacher_labels(teacher, x, all_steps)
        xv = torch.randn(n_val, kk, n_in, generator=g, dtype=dtype)
        yv = _teacher_labels(teacher, xv, all_steps)

        def predict(xb):
            out = model(xb)
            if out.ndim == 2:
                out = out[..., None]
            return out if all_steps else out[:, -1]

        def train_loss(idx):
            return ((predict(x[idx]) - y[idx]) ** 2).mean()[None]

        def val_loss():
            with torch.no_grad():
                return ((predict(xv) - yv) ** 2).mean()[None]

    best = val_loss()
    best_state = {n: p.detach().clone() for n, p in model.named_parameters()}
    best_step = np.zeros(best.shape[0], dtype=int)
    hist = {"step": [0], "train_loss": [np.full(best.shape[0], np.nan)],
            "val_loss": [best.numpy().copy()]}
    stale = 0
    perm = torch.randperm(n_train, generator=g)
    pos = 0
    for step in range(1, n_steps + 1):
        if pos + batch_size > n_train:
            perm, pos = torch.randperm(n_train, generator=g), 0
        idx = perm[pos: pos + batch_size]
        pos += batch_size
        opt.zero_grad()
        loss = train_loss(idx)
        if not torch.isfinite(loss).all():
            raise FloatingPointError(f"the loss diverged at step {step}: lower the learning rate")
        loss.sum().backward()
        opt.step()
        if step % eval_every == 0 or step == n_steps:
            v = val_loss()
            better = v < best
            if bool(better.any()):
                stale = 0
                best = torch.where(better, v, best)
                best_step[better.numpy()] = step
                with torch.no_grad():
                    for n, p in model.named_parameters():
                        if isinstance(model, StateSpaceRNN):
                            sel = better.view(-1, *([1] * (p.ndim - 1)))
                            best_state[n] = torch.where(sel, p.detach(), best_state[n])
                        else:
                            best_state[n] = p.detach().clone()
            else:
                stale += 1
            hist["step"].append(step)
            hist["train_loss"].append(loss.detach().numpy().copy())
            hist["val_loss"].append(v.numpy().copy())
            if (tol > 0 and bool((best <= tol).all())) or (
                patience is not None and stale >= patience
            ):
                break
    if keep_best:
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(best_state[n])
    out = {key: np.asarray(v) for key, v in hist.items()}
    out["best_step"] = best_step
    single = not (isinstance(model, StateSpaceRNN) and model.n_models is not None)
    if single:
        out = {key: (v[..., 0] if key != "step" else v) for key, v in out.items()}
    return out


# ---------------------------------------------------------------------- evaluation
def extrapolation_error(
    student, teacher, horizon, *, start=0, cap=True, n_sequences=None, seed=0,
    return_zero=False,
):
    r"""Extrapolation error: ``l_inf`` distance of responses up to ``horizon``.

    For linear models (or explicit impulse responses) the error is
    ``max_{start <= j < horizon} |h_j - w_j|`` between the student's and the teacher's
    impulse responses (Definition 2 of Cohen-Karlik et al. 2023). For non-linear models,
    whose impulse response does not determine the input-output map, give ``n_sequences``:
    the error is then ``max_{start <= t < horizon} |y_t - \hat y_t|`` averaged over that many
    random ``N(0, 1)`` input sequences of length ``horizon`` (Sec. 5.3).

    The rule of App. B.3: the trivial all-zero model has error ``E_0 = max |w_j|`` (or the
    average ``max |\hat y_t|``); a model doing worse is *non-extrapolating*, and with
    ``cap=True`` its error is reported as ``E_0``, so that exploding students do not swamp
    the averages.

    Parameters
    ----------
    student, teacher : StateSpaceRNN, RecurrentRegressor, rntk.nn.LinearRNN or array-like
        Models (also :class:`rntk.nn.ScaledConv1d`), or explicit impulse responses (length
        at least ``horizon``). For an ensemble student the teacher may be one response per
        member, ``(R, T)``.
    horizon : int
        Number of steps compared.
    start : int, default=0
        First step compared (e.g. the training length ``k`` to look only at the tail).
    cap : bool, default=True
        Apply the App. B.3 rule.
    n_sequences : int or None, default=None
        Compare outputs on random sequences instead of impulse responses (required when a
        model is non-linear).
    seed : int, default=0
        Seed of those sequences.
    return_zero : bool, default=False
        Also return ``E_0``.

    Returns
    -------
    error : float or numpy.ndarray
        ``(R,)`` for an ensemble student.
    zero_error : float or numpy.ndarray
        ``E_0``, only when ``return_zero=True`` (per member for per-member teachers).

    Examples
    --------
    >>> extrapolation_error([1.0, 0.5, 0.2], [1.0, 0.5, 0.0], horizon=3)
    0.2
    >>> extrapolation_error([1.0, 0.5, 9.0], [1.0, 0.5, 1.0], horizon=3)  # capped
    1.0
    """
    horizon = _check_positive_int(horizon, "horizon")
    if isinstance(start, bool) or not isinstance(start, Integral) or not 0 <= start < horizon:
        raise ValueError(f"start must be an integer in [0, horizon), got {start!r}")
    nonlinear = any(isinstance(m, RecurrentRegressor) for m in (student, teacher))
    if n_sequences is None and nonlinear:
        raise ValueError("non-linear models are compared on random sequences: set n_sequences")
    if n_sequences is None:
        h = _response(student, horizon)
        # time axis: first axis of a single response, second for an ensemble
        t_axis = 1 if (isinstance(student, StateSpaceRNN) and student.n_models is not None) \
            else 0
        per_member = (t_axis == 1 and not isinstance(teacher, torch.nn.Module)
                      and np.ndim(teacher) == h.ndim)
        if per_member:  # one teacher response per ensemble member
            w = np.asarray(teacher, dtype=float)
            if w.shape[0] != h.shape[0] or w.shape[1] < horizon:
                raise ValueError(f"per-member teacher responses need shape ({h.shape[0]}, "
                                 f">= {horizon}, ...), got {w.shape}")
            w = w[:, :horizon]
        else:
            w = _response(teacher, horizon)
            if t_axis:
                w = np.broadcast_to(w, h.shape)
        steps = np.arange(start, horizon)
        diff = np.take(np.abs(h - w), steps, axis=t_axis)
        err = diff.reshape(*diff.shape[:t_axis], -1).max(axis=-1)
        w0 = np.take(np.abs(w), steps, axis=t_axis)
        zero = w0.reshape(*w0.shape[:t_axis], -1).max(axis=-1)
        zero = zero if per_member else float(np.ravel(zero)[0])
    else:
        n_sequences = _check_positive_int(n_sequences, "n_sequences")
        g = torch.Generator().manual_seed(int(seed))
        n_in = getattr(teacher, "n_inputs", 1)
        x = torch.randn(n_sequences, horizon, n_in, generator=g, dtype=torch.float64)

        def outputs(m):
            if isinstance(m, torch.nn.Module):
                with torch.no_grad():
                    if isinstance(m, StateSpaceRNN) and m.n_models is not None:
                        raise ValueError("ensembles are compared through impulse responses")
                    y = m(x.to(next(m.parameters()).dtype)).to(torch.float64)
                return y[..., None] if y.ndim == 2 else y
            return _teacher_labels(m, x, all_steps=True)

        yt, ys = outputs(teacher), outputs(student)
        sl = slice(start, horizon)
        err = (ys[:, sl] - yt[:, sl]).abs().amax(dim=(1, 2)).mean().item()
        zero = yt[:, sl].abs().amax(dim=(1, 2)).mean().item()
    err = np.minimum(err, zero) if cap else err
    err = float(err) if np.ndim(err) == 0 else np.asarray(err)
    return (err, zero) if return_zero else err
