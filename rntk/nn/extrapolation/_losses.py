"""Population and empirical losses, teacher responses and teacher labels."""

from __future__ import annotations

import numpy as np
import torch

from ._common import _check_positive_int
from ._models import StateSpaceRNN


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
