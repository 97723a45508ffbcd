"""MiniRocket's front end read by the RNTK: a prototype setting of the classifier, on resamples.

The representation issue 61 names first: each series goes through MiniRocket's 84 fixed
length-9 kernels (weights -1, and 2 at three of the nine taps; Dempster et al., 2021)
at the dilations 1, 2, 4, ... (``--dilations`` of them, the same for every
series; series padded at both ends with their edge values so that every dilation gives
``T`` outputs), and each output is replaced by its quantile function at
``--levels`` levels ``(k + 1/2) / levels``, each channel scaled to unit RMS. A quantile
function holds the proportion of positive values at every bias, MiniRocket's feature,
for all biases at once. ``MEAN_NETWORK`` with the band of the shape settings reads the
quantile functions from the lowest level to the highest (the kernel of that network
behind this front end).

The setting is added to the default classifier grid as an eighth setting, plain
(``rocket``) and gated (``rocket_gated``: in the average only where the paired 0/1
leave-one-out errors fall by more than two standard errors, as the regressor's interval
statistics; :func:`harness.classifier_gate`), by ``bench_resamples.py --with``: the
default, MiniRocket and the default with each, on the same stratified resamples of each
development set. It is a study: the representation rides on the ``intervals`` parameter
of the estimators, whose preparation step is replaced for the run.

Usage::

    python benchmarks/studies/rocket_front_end.py [--levels L] [--dilations D]
        [--fast [--max-steps S]] [bench_resamples.py's options]
"""

import argparse
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402
from harness import classifier_gate, gated_rules, resampled_study  # noqa: E402

from rntk._model_selection import _grids, _refit  # noqa: E402
from rntk._model_selection._search import BaseKernelSearchCV  # noqa: E402
from rntk._representations import _table  # noqa: E402
from rntk._representations._algorithms import (  # noqa: E402
    _linear_quantiles,
    _unit_rms_columns,
)
from rntk._utils._sequences import _per_shape, pool_series  # noqa: E402

#: MiniRocket's 84 kernels: -1 at every tap, 2 at three of the nine.
KERNELS = np.array([[2.0 if j in c else -1.0 for j in range(9)]
                    for c in combinations(range(9), 3)])


def dilations(most):
    """Return the octaves ``1, 2, 4, ...``, ``most`` of them, for every series alike."""
    return [2 ** k for k in range(most)]


def _front_end(seqs, n_levels, most_dilations, block, quantiles):
    """Replace each ``(T, m)`` series by ``(n_levels, 84 * m * D)`` quantile functions.

    The skeleton of both transforms: the series of one shape stacked, ``block`` at a
    time, each dilation's quantile functions from ``quantiles(part, d, levels)`` (an
    array ``(n_levels, len(part), 84 m)``, column ``c * 84 + j`` kernel ``j`` on channel
    ``c``), each channel scaled to unit RMS.
    """
    levels = (np.arange(n_levels) + 0.5) / n_levels

    def transform(a):  # (n, T, m) -> (n, n_levels, 84 m D)
        n, _, m = a.shape
        out = np.empty((n, n_levels, len(KERNELS) * m * most_dilations))
        for lo in range(0, n, block):
            part = a[lo:lo + block]
            cols = [_unit_rms_columns(quantiles(part, d, levels))
                    for d in dilations(most_dilations)]
            out[lo:lo + block] = np.concatenate(cols, axis=2).transpose(1, 0, 2)
        return out

    return _per_shape(seqs, transform)


def _exact_quantiles(part, d, levels):
    """One dilation's quantile functions in float64: the nine products of each output."""
    n, t, _ = part.shape
    padded = np.pad(part, ((0, 0), (4 * d, 4 * d), (0, 0)), mode="edge")
    taps = np.stack([padded[:, j * d:j * d + t] for j in range(9)], axis=-1)
    conv = (taps @ KERNELS.T).reshape(n, t, -1)  # (n, T, m 84)
    return _linear_quantiles(conv, levels)


#: The three taps of weight 2 of each of MiniRocket's kernels (the others weigh -1).
_TWOS = np.array([c for c in combinations(range(9), 3)]).T


def _sum_quantiles(part, d, levels):
    """One dilation's quantile functions in float32, by MiniRocket's sums.

    A kernel's output is ``3 (x_a + x_b + x_c) - sum of the nine taps`` (its taps of
    weight 2 are ``a, b, c``): three additions per output instead of nine products; the
    outputs are sorted along a contiguous axis (numpy's vectorised sort, about 3x faster
    than float64 along a strided one), then interpolated as ``numpy.quantile`` does.
    """
    n, t, m = part.shape
    virtual = levels * (t - 1)
    lo = np.floor(virtual).astype(np.intp)
    hi = np.minimum(lo + 1, t - 1)
    gamma = (virtual - lo).astype(np.float32)
    x = np.ascontiguousarray(part.transpose(0, 2, 1), np.float32)  # (n, m, T)
    padded = np.pad(x, ((0, 0), (0, 0), (4 * d, 4 * d)), mode="edge")
    taps = np.stack([padded[:, :, j * d:j * d + t] for j in range(9)], axis=2)
    base = -taps.sum(axis=2, keepdims=True)  # (n, m, 1, T)
    taps *= 3
    conv = base + taps[:, :, _TWOS[0]] + taps[:, :, _TWOS[1]] + taps[:, :, _TWOS[2]]
    conv.sort(axis=-1)  # (n, m, 84, T)
    q = conv[..., lo] + gamma * (conv[..., hi] - conv[..., lo])
    return q.reshape(n, m * len(KERNELS), len(levels)).transpose(2, 0, 1).astype(np.float64)


def rocket_quantiles(seqs, n_levels, most_dilations=5, block=64):
    """Replace each ``(T, m)`` series by ``(n_levels, 84 * m * D)`` quantile functions.

    Column ``(k * m + c) * 84 + j`` is kernel ``j`` at the ``k``-th dilation on channel
    ``c``; the series of one shape are transformed together, ``block`` at a time.
    The first version (the runs of ``resamples_with_rocket.csv`` and
    ``resamples_with_rocket_flat.csv``); :func:`fast_rocket_quantiles` is the same in
    float32, in about a third of the time.
    """
    return _front_end([np.asarray(x, dtype=np.float64) for x in seqs], n_levels,
                      most_dilations, block, _exact_quantiles)


def fast_rocket_quantiles(seqs, n_levels, most_dilations=5, max_steps=None, block=64):
    """:func:`rocket_quantiles` in float32, by MiniRocket's sums (:func:`_sum_quantiles`).

    ``max_steps``: series longer than it are first averaged over blocks of
    ``ceil(T / max_steps)`` steps (``None``: never).
    """
    seqs = [np.asarray(x, dtype=np.float64) for x in seqs]
    if max_steps is not None:
        seqs = pool_series(seqs, -(-max(len(x) for x in seqs) // max_steps))
    return _front_end(seqs, n_levels, most_dilations, block, _sum_quantiles)


def install(levels, most_dilations, fast=False, max_steps=None):
    """Make ``intervals=L`` the front end for this process; register the settings.

    ``fast``: :func:`fast_rocket_quantiles` (with ``max_steps``) instead of
    :func:`rocket_quantiles`.

    ``rocket``: an eighth setting; ``rocket_gated``: the same, entering the
    classifier's average only on clear leave-one-out evidence (:func:`classifier_gate`).
    """
    row = next(p for p in _table.PREPARATIONS if p.name == "intervals")
    if fast:
        def front_end(seqs, value, state):
            return fast_rocket_quantiles(seqs, value, most_dilations, max_steps)
    else:
        if max_steps is not None:
            raise ValueError("max_steps needs the fast transform")

        def front_end(seqs, value, state):
            return rocket_quantiles(seqs, value, most_dilations)
    row.steps["representation"] = front_end
    shapes = {k: v for k, v in _grids._MEAN["shapes"].items() if k != "shapes"}
    for name in ("rocket", "rocket_gated"):
        bench_resamples.EXTRA_SETTINGS[name] = {**shapes, "intervals": [levels]}
    # the quantile functions read level against level, without recurrence: the linear
    # kernel of the flattened front end (MiniRocket's ridge, as a kernel), and the NTK of
    # a one-hidden-layer ReLU network applied to every level, its readouts averaged
    flat = {"readout": ["mean"], "readout_band": [0], "sigma_w": [0.0],
            "normalize": ["rms"], "intervals": [levels]}
    bench_resamples.EXTRA_SETTINGS["rocket_linear"] = {**flat, "activation": ["linear"],
                                                       "sigma_b": [0.0]}
    bench_resamples.EXTRA_SETTINGS["rocket_flat"] = {**flat, "sigma_u": [0.5],
                                                     "sigma_b": [0.1]}
    BaseKernelSearchCV._default_rules = gated_rules(BaseKernelSearchCV._default_rules,
                                                    ("rocket_gated",))
    _refit.gated_top = classifier_gate  # this study fits classifiers only


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    p.add_argument("--levels", type=int, default=16)
    p.add_argument("--dilations", type=int, default=5)
    p.add_argument("--fast", action="store_true",
                   help="the float32 transform (fast_rocket_quantiles)")
    p.add_argument("--max-steps", type=int, default=None,
                   help="with --fast: longer series averaged over blocks down to this many")
    args, rest = p.parse_known_args(argv)
    return resampled_study(rest, lambda: install(args.levels, args.dilations, args.fast,
                                                 args.max_steps),
                           "--with", ("rocket", "rocket_gated"))


if __name__ == "__main__":
    main()
