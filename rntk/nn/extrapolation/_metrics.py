"""Extrapolation error, balancedness and asymmetry of trained models."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import torch

from ._common import _check_positive_int
from ._losses import _teacher_labels
from ._models import RecurrentRegressor, StateSpaceRNN


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
    >>> from rntk.nn.extrapolation import delay_teacher
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


def _response(model, T):
    """Impulse response (float64 numpy) of a model or an explicit sequence.

    Models with an ``impulse_response`` method, :class:`rntk.nn.LinearRNN` and
    :class:`rntk.nn.ScaledConv1d` (single-input single-output responses are squeezed to
    ``(T,)``), or an explicit response with at least ``T`` terms.
    """
    T = _check_positive_int(T, "T")
    if isinstance(model, torch.nn.Module) and not hasattr(model, "impulse_response"):
        from .._linear import impulse_response as linear_response

        h = linear_response(model, T)
        return h[:, 0, 0] if h.shape[1:] == (1, 1) else h
    if hasattr(model, "impulse_response"):
        with torch.no_grad():
            return model.impulse_response(T).detach().cpu().numpy().astype(float)
    h = np.asarray(model, dtype=float)
    if h.ndim == 0 or h.shape[0] < T:
        raise ValueError(f"an explicit impulse response needs at least {T} terms")
    return h[:T]


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
