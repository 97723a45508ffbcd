"""Empirical neural tangent kernel of any PyTorch module, block by block."""

import numpy as np
import torch
from torch.func import functional_call, jacrev

__all__ = ["empirical_ntk"]

_OUTPUTS = ("trace", "full")


def _model_dtype(model):
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype, p.device
    return torch.get_default_dtype(), torch.device("cpu")


def _as_samples(X, name, dtype, device):
    """Return (n_samples, get_block) where get_block(i, j) is what the model reads."""
    if isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError(f"{name} is empty: at least one sample is needed")
        items = [torch.as_tensor(np.asarray(x) if not torch.is_tensor(x) else x)
                 .to(dtype=dtype, device=device) for x in X]
        return len(items), lambda i, j: items[i:j]
    if torch.is_tensor(X):
        t = X
    else:
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")
        t = torch.as_tensor(arr)
    if t.ndim == 0:
        raise ValueError(f"{name} must have a leading sample axis; got a scalar")
    if t.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is needed")
    if t.is_complex():
        raise TypeError(f"{name} must hold real numbers; got dtype {t.dtype}")
    t = t.to(dtype=dtype, device=device)
    return t.shape[0], lambda i, j: t[i:j]


def _block_seed(seed, which, block):
    state = np.random.SeedSequence([seed, which, block]).generate_state(2, dtype=np.uint32)
    return int(state[0]) << 31 | int(state[1]) >> 1


def empirical_ntk(model, X, Y=None, *, batch_size=32, output="trace", seed=0):
    r"""Empirical neural tangent kernel: inner products of parameter gradients.

    The Jacobian of the model's outputs with respect to all its trainable parameters
    is computed with :mod:`torch.func` (``functional_call`` + ``jacrev``: one forward
    pass per block of inputs and one vector-Jacobian product per output), one block
    of ``batch_size`` inputs at a time, and contracted block against block, so memory
    stays bounded by two Jacobian blocks whatever the number of samples:
    ``K[i, j] = <grad_theta f(X[i]), grad_theta f(Y[j])>``.

    Parameters
    ----------
    model : torch.nn.Module
        Any module whose forward maps a batch of inputs to outputs of shape
        ``(batch,)`` or ``(batch, d)``. It receives a slice ``X[i:j]`` of the inputs
        (a tensor, or a list of tensors when ``X`` is a list, e.g. sequences of
        different lengths for :class:`~rntk.nn.ElmanRNN`): reading a list or padding
        is the model's job. Cast it with ``model.double()`` for a float64 kernel;
        inputs are converted to the dtype and device of its parameters.
    X : tensor, array-like of shape (n_X, ...) or list of n_X samples
        Inputs. A list is kept a list (each item converted to a tensor).
    Y : same layout as X, default=None
        Second set; ``None`` computes the symmetric ``K(X, X)``.
    batch_size : int, default=32
        Inputs per Jacobian block. Peak memory is about
        ``2 * batch_size * d * n_params`` numbers of the model's dtype.
    output : {"trace", "full"}, default="trace"
        For ``d`` outputs, ``"trace"`` returns the trace-normalised kernel
        :math:`\frac1d\sum_k \langle \nabla f_k(x), \nabla f_k(x')\rangle` (equal to
        the per-output kernel of a network whose NTK is ``Theta (x) I_d``, and to the
        plain NTK when ``d = 1``); ``"full"`` returns every pair of outputs.
    seed : int or None, default=0
        Seed of torch's random generator for each block's forward pass (the global
        generator state is restored afterwards). A model that draws random numbers in
        its forward pass (the initial state of :class:`~rntk.nn.ElmanRNN`) then sees
        the same draws every time a block is recomputed, so the result is the Gram
        matrix of one draw: in ``K(X, X)`` each input is paired with itself through
        the same draw, while ``X`` and ``Y`` always get independent draws. ``None``
        uses the global generator as it is (blocks recomputed against later blocks
        then see fresh draws).

    Returns
    -------
    K : ndarray of shape (n_X, n_Y), or (n_X, n_Y, d, d) with ``output="full"``
        The kernel, in float64 (computed in the model's dtype).

    Raises
    ------
    ValueError
        If the model has no trainable parameters, returns outputs of another shape
        than ``(batch,)`` / ``(batch, d)``, or the inputs are empty.

    See Also
    --------
    rntk.nn.ElmanRNN.ntk : The same kernel for an Elman RNN, from the structure of its
        gradients (no Jacobian), for very wide networks.
    rntk.rntk_kernel : Its infinite-width limit for :class:`~rntk.nn.ElmanRNN`.

    Notes
    -----
    Each block of ``X`` is differentiated once; blocks of ``Y`` (or of ``X`` above
    the diagonal) are recomputed for each block of ``X``. With ``n_X <= batch_size``
    and ``Y=None`` every input goes through a single forward pass.

    Examples
    --------
    >>> import torch
    >>> from rntk.nn import empirical_ntk
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
    ...                             torch.nn.Linear(8, 1), torch.nn.Flatten(0)).double()
    >>> K = empirical_ntk(model, torch.randn(5, 3))
    >>> K.shape
    (5, 5)
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model)!r}")
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {_OUTPUTS}, got {output!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    batch_size = int(batch_size)
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}
    if not params:
        raise ValueError("model has no trainable parameters: its NTK is zero")
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    dtype, device = _model_dtype(model)
    n_x, x_block = _as_samples(X, "X", dtype, device)
    symmetric = Y is None
    if symmetric:
        n_y, y_block = n_x, x_block
    else:
        n_y, y_block = _as_samples(Y, "Y", dtype, device)
    cuda = sorted({p.device.index or 0 for p in params.values() if p.device.type == "cuda"})

    def f(p, batch):
        return functional_call(model, (p, buffers), (batch,))

    jac_fn = jacrev(f)

    def jacobian(block_fn, which, b, n):
        i, j = b * batch_size, min((b + 1) * batch_size, n)
        batch = block_fn(i, j)
        if seed is None:
            jac = jac_fn(params, batch)
        else:
            with torch.random.fork_rng(devices=cuda):
                torch.manual_seed(_block_seed(seed, which, b))
                jac = jac_fn(params, batch)
        out = []
        for name, g in jac.items():
            lead = g.ndim - params[name].ndim
            if lead not in (1, 2) or g.shape[0] != j - i:
                raise ValueError(
                    "model output must have shape (batch,) or (batch, d) for a batch of "
                    f"{j - i} inputs; the Jacobian w.r.t. {name!r} has shape {tuple(g.shape)}"
                )
            d_out = 1 if lead == 1 else g.shape[1]
            out.append(g.reshape(j - i, d_out, params[name].numel()))
        return out

    d = None
    blocks_x = -(-n_x // batch_size)
    blocks_y = -(-n_y // batch_size)
    result = None
    for a in range(blocks_x):
        ja = jacobian(x_block, 0, a, n_x)
        if d is None:
            d = ja[0].shape[1]
            shape = (n_x, n_y) if output == "trace" else (n_x, n_y, d, d)
            result = np.zeros(shape)
        for b in range(a if symmetric else 0, blocks_y):
            jb = ja if (symmetric and b == a) else jacobian(
                y_block, 0 if symmetric else 1, b, n_y)
            if output == "trace":
                blk = sum(torch.einsum("idp,jdp->ij", u, v) for u, v in zip(ja, jb)) / d
            else:
                blk = sum(torch.einsum("idp,jep->ijde", u, v) for u, v in zip(ja, jb))
            blk = blk.detach().cpu().to(torch.float64).numpy()
            i0, i1 = a * batch_size, min((a + 1) * batch_size, n_x)
            j0, j1 = b * batch_size, min((b + 1) * batch_size, n_y)
            result[i0:i1, j0:j1] = blk
            if symmetric and b != a:
                result[j0:j1, i0:i1] = np.swapaxes(blk, 0, 1) if output == "trace" \
                    else np.transpose(blk, (1, 0, 3, 2))
    if symmetric:
        # the diagonal blocks are symmetric only up to rounding (the order of the sums in
        # einsum depends on the CPU): average with the transpose, exact by construction
        axes = (1, 0) if output == "trace" else (1, 0, 3, 2)
        result = 0.5 * (result + np.transpose(result, axes))
    return result
