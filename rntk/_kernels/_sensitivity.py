"""Per-time-step sensitivity of the RNTK to its input (Alemohammad et al., eq. 20).

``s(t) = || d Theta(x, x') / d x_t ||_2`` says how much the kernel value of a pair
depends on the input at step ``t``: where it is small, changes of ``x_t`` barely move
the kernel. The gradient is exact (autograd of the torch engine,
:func:`rntk.nn.rntk_kernel_torch`), so these functions need PyTorch, imported when they
are called.
"""

import numpy as np

from .._utils import as_sequences, check_same_channels, fill_doc
from ._params import RNTK_DEFAULTS as _D
from ._params import RNTK_PARAM_LIST, resolve_params, table_options

__all__ = ["sensitivity", "mean_sensitivity"]

_RAISES_TORCH = """Raises
------
ImportError
    If PyTorch is not installed (the gradients are torch's autograd)."""


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - exercised only without torch
        raise ImportError(
            "rntk.sensitivity needs PyTorch for its exact gradients: install the CPU wheel "
            "with `pip install torch` (or `pip install rntk[torch]`)"
        ) from None
    from functools import partial

    from ._torch import rntk_kernel_torch

    return torch, partial(rntk_kernel_torch, paired=True)


def _one_series(x, name):
    if isinstance(x, (list, tuple)) or np.ndim(x) not in (1, 2):
        raise ValueError(f"{name} must be one series of shape (T,) or (T, n_channels)")
    return as_sequences([x], name)[0]


def _pair_gradients(torch, kernel, xs, ys, hyper):
    """``d Theta(xs[k], ys[k]) / d xs[k]`` for a batch of equal-length pairs."""
    X = torch.tensor(np.stack(xs), dtype=torch.float64, requires_grad=True)
    kernel(X, list(ys), **hyper).sum().backward()
    return X.grad.numpy()


@fill_doc(raises_torch=_RAISES_TORCH, kernel_param_names=RNTK_PARAM_LIST)
def sensitivity(x, x_prime, *, n_layers=_D["n_layers"], sigma_w=_D["sigma_w"],
                sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"], sigma_h=_D["sigma_h"],
                sigma_v=_D["sigma_v"], activation=_D["activation"], kind=_D["kind"],
                direction=_D["direction"], diff=_D["diff"], readout=_D["readout"],
                readout_stride=_D["readout_stride"], readout_band=_D["readout_band"],
                normalize=False):
    """Sensitivity ``s(t) = ||d Theta(x, x') / d x_t||_2`` of the RNTK, for each step of x.

    ``x`` and ``x_prime`` are two different samples (no ``sigma_h`` cross term, as in
    ``rntk_kernel(X, Y)``); they may have different lengths (end-aligned).

    Parameters
    ----------
    x : array-like of shape (T,) or (T, n_channels)
        The series whose steps are differentiated.
    x_prime : array-like of shape (T',) or (T', n_channels)
        The other series of the pair.
    {kernel_param_names}
        Hyperparameters, as in :func:`rntk.rntk_kernel`.
    normalize : bool, default=False
        Return ``s(t) / max_t s(t)`` (as plotted in the paper's Fig. 3).

    Returns
    -------
    s : ndarray of shape (T,)
        The Euclidean norm of the gradient with respect to ``x_t``, ``t = 1..T``.

    {raises_torch}

    See Also
    --------
    mean_sensitivity : The average over random Gaussian pairs.

    Examples
    --------
    >>> import numpy as np
    >>> import pytest
    >>> _ = pytest.importorskip("torch")
    >>> from rntk import sensitivity
    >>> rng = np.random.default_rng(0)
    >>> s = sensitivity(rng.normal(size=8), rng.normal(size=8), sigma_w=1.3)
    >>> s.shape
    (8,)
    """
    xs = _one_series(x, "x")
    ys = _one_series(x_prime, "x_prime")
    check_same_channels([xs], [ys], "x", "x_prime")
    hyper = table_options(locals())
    resolve_params(**hyper)  # bad options fail here, before torch is imported
    torch, kernel = _torch()
    s = np.linalg.norm(_pair_gradients(torch, kernel, [xs], [ys], hyper)[0], axis=-1)
    return s / s.max() if normalize and s.max() > 0 else s


@fill_doc(raises_torch=_RAISES_TORCH, kernel_param_names=RNTK_PARAM_LIST)
def mean_sensitivity(n_timesteps, *, n_pairs=1000, n_channels=1, random_state=None,
                     batch_size=500, normalize=False, n_layers=_D["n_layers"],
                     sigma_w=_D["sigma_w"], sigma_u=_D["sigma_u"], sigma_b=_D["sigma_b"],
                     sigma_h=_D["sigma_h"], sigma_v=_D["sigma_v"],
                     activation=_D["activation"], kind=_D["kind"],
                     direction=_D["direction"], diff=_D["diff"], readout=_D["readout"],
                     readout_stride=_D["readout_stride"], readout_band=_D["readout_band"]):
    """Sensitivity ``s(t)`` averaged over random pairs with i.i.d. ``N(0, 1)`` entries.

    The protocol of the RNTK paper's Fig. 3: ``x_t, x'_t ~ N(0, I)``, both of length
    ``n_timesteps``; ``s(t)`` of each pair is computed exactly and averaged. Pairs are
    processed in batches, all pairs of a batch in one vectorised kernel evaluation.

    Parameters
    ----------
    n_timesteps : int
        Length ``T`` of both series.
    n_pairs : int, default=1000
        Number of random pairs (the paper uses 10000).
    n_channels : int, default=1
        Channels of each step.
    random_state : int, numpy Generator or None, default=None
        Seed of the pairs.
    batch_size : int, default=500
        Pairs per kernel evaluation (memory grows linearly with it).
    normalize : bool, default=False
        Return ``mean s(t) / max_t mean s(t)``.
    {kernel_param_names}
        Hyperparameters, as in :func:`rntk.rntk_kernel`.

    Returns
    -------
    s : ndarray of shape (n_timesteps,)
        The mean sensitivity at each step.

    {raises_torch}

    See Also
    --------
    sensitivity : One pair.

    Examples
    --------
    >>> import pytest
    >>> _ = pytest.importorskip("torch")
    >>> from rntk import mean_sensitivity
    >>> s = mean_sensitivity(20, n_pairs=50, random_state=0, normalize=True)
    >>> s.shape, float(s.max())
    ((20,), 1.0)
    """
    for value, name in ((n_timesteps, "n_timesteps"), (n_pairs, "n_pairs"),
                        (n_channels, "n_channels"), (batch_size, "batch_size")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    hyper = table_options(locals())
    resolve_params(**hyper)  # bad options fail here, before torch is imported
    torch, kernel = _torch()
    rng = np.random.default_rng(random_state)
    total = np.zeros(n_timesteps)
    done = 0
    while done < n_pairs:
        b = min(batch_size, n_pairs - done)
        X = rng.standard_normal((b, n_timesteps, n_channels))
        Y = rng.standard_normal((b, n_timesteps, n_channels))
        grad = _pair_gradients(torch, kernel, list(X), list(Y), hyper)
        total += np.linalg.norm(grad, axis=-1).sum(axis=0)
        done += b
    s = total / n_pairs
    return s / s.max() if normalize and s.max() > 0 else s
