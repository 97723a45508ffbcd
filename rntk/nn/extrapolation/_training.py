"""Training loops: population loss (eq. 3.4) and sampled sequences (eq. 3.2)."""

from __future__ import annotations

import numpy as np
import torch

from ._common import _check_positive_float, _check_positive_int, _generator, _single_threaded
from ._losses import _lengths, _target_response, _teacher_labels
from ._metrics import _weight_stats
from ._models import StateSpaceRNN


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
