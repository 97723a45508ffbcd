"""The finite networks of the RNTK family: direction and difference channels."""

import torch
from torch import nn

from .._kernels._params import RNTK_DEFAULTS as _D
from .._kernels._params import resolve_params
from .._utils import check_int
from ._elman import ElmanRNN, pack_batch

__all__ = ["RNTKNetwork"]


def _series(X, n_in, dtype, device):
    """Return the batch as a list of ``(T_i, n_in)`` tensors (padding removed, graph kept)."""
    data, starts = pack_batch(X, n_in, dtype, device)
    return [data[int(s):, i] for i, s in enumerate(starts)]


class RNTKNetwork(nn.Module):
    r"""The finite-width network whose infinite-width NTK is ``rntk_kernel(..., direction, diff)``.

    One :class:`ElmanRNN` reads each series forward (``direction="forward"``), one
    reads it reversed (``"backward"``: its readout follows the first step), or two
    with independent weights read it both ways and their readouts are summed
    (``"bidirectional"``); with ``diff=True`` every step carries the first difference
    of each channel next to its value (``x_t - x_{t-1}``, 0 at the first step). The
    NTK of a sum of networks with disjoint parameters is the sum of their NTKs, so
    the wide-width limit is :func:`rntk.rntk_kernel` with the same options.

    Parameters
    ----------
    n_in : int
        Channels of the series (before the difference channels are added).
    hidden_size : int
        Width of every layer of every RNN.
    n_out : int, default=1
        Outputs.
    direction : {"forward", "backward", "bidirectional"}, default="forward"
        Which way the series are read.
    diff : bool, default=False
        Append the first differences as channels.
    **kwargs
        The other arguments of :class:`ElmanRNN` (``n_layers``, ``activation``,
        ``sigma_w``, ``sigma_u``, ``sigma_b``, ``sigma_h``, ``sigma_v``, ``tied``,
        ``max_length``), shared by the RNNs.

    Attributes
    ----------
    rnns : torch.nn.ModuleList
        The RNNs, forward first.

    Examples
    --------
    >>> import torch
    >>> from rntk.nn import RNTKNetwork
    >>> net = RNTKNetwork(1, 16, direction="bidirectional", diff=True).double()
    >>> x = [torch.tensor([1.0, -1.0, 1.0]), torch.tensor([0.5, 0.2])]
    >>> net(x).shape
    torch.Size([2, 1])
    """

    def __init__(self, n_in, hidden_size, n_out=1, *, direction=_D["direction"],
                 diff=_D["diff"], **kwargs):
        super().__init__()
        spec = resolve_params(direction=direction, diff=diff)  # the RNNs check the rest
        self.n_in = check_int(n_in, "n_in")
        self.direction = direction
        self.diff = spec.diff
        self.reversed = spec.readers
        width = self.n_in * (2 if diff else 1)
        self.rnns = nn.ModuleList(ElmanRNN(width, hidden_size, n_out, **kwargs)
                                  for _ in self.reversed)

    def extra_repr(self):  # noqa: D102
        return f"direction={self.direction!r}, diff={self.diff}"

    def inputs(self, X):
        """Return the series each RNN reads: with differences, reversed for a backward one.

        Parameters
        ----------
        X : tensor, array or list of series
            Any batch :class:`ElmanRNN` accepts.

        Returns
        -------
        inputs : list of list of tensor
            For each RNN, its ``(T_i, channels)`` series.
        """
        ref = self.rnns[0].V
        seqs = _series(X, self.n_in, ref.dtype, ref.device)
        if self.diff:
            seqs = [torch.cat([s, s - torch.cat([s[:1], s[:-1]])], dim=1) for s in seqs]
        return [[s.flip(0) for s in seqs] if rev else seqs for rev in self.reversed]

    def forward(self, X, h0=None):
        """Compute the summed readouts of the RNNs.

        Parameters
        ----------
        X : tensor, array or list of series
            Any batch :class:`ElmanRNN` accepts.
        h0 : tensor, default=None
            Initial states of every RNN (see :meth:`ElmanRNN.forward`); ``None`` draws
            them, independently for each RNN.

        Returns
        -------
        out : tensor of shape (b, n_out)
            The network's outputs.
        """
        return sum(rnn(x, h0) for rnn, x in zip(self.rnns, self.inputs(X)))

    def ntk(self, X, Y=None, *, seed=0):
        """Empirical NTK: the sum of the RNNs' (their parameters are disjoint).

        Parameters
        ----------
        X : tensor, array or list of series
            First set.
        Y : tensor, array or list of series, default=None
            Second set; ``None`` computes ``K(X, X)``.
        seed : int or None, default=0
            Seed of the initial-state draws, as in :meth:`ElmanRNN.ntk` (each RNN gets
            its own stream).

        Returns
        -------
        K : ndarray of shape (n_X, n_Y)
            Float64 kernel.
        """
        xs = self.inputs(X)
        ys = [None] * len(self.rnns) if Y is None else self.inputs(Y)
        return sum(rnn.ntk(x, y, seed=None if seed is None else check_int(seed, "seed", 0) + k)
                   for k, (rnn, x, y) in enumerate(zip(self.rnns, xs, ys)))
