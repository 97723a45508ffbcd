"""Teachers of the extrapolation experiments: balanced, delay line, unbalanced, memoryless, GRU."""

from __future__ import annotations

import math

import numpy as np
import torch

from ._common import _check_positive_int, _single_threaded
from ._models import RecurrentRegressor, StateSpaceRNN


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
