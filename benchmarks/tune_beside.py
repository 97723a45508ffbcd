"""Kernels and representations beside the default's seven settings, by nested CV.

Every setting of 0.4.0's default is a mean readout of the banded or pooled RNTK: on the
series (z-normalised and as given), their spectrum, and the quantile functions of their
values, slopes and curvatures (``shapes=64``, ``octave_shapes=64``: the default before
its octaves went to 32 levels, which score the same). This script scores
four more members, each as an eighth setting and in place of each setting outside the
prior pair (the level band and the spectrum), and each of those settings left out:

* ``mlp``, ``mlp_z``: the NTK of a wide ReLU perceptron of one hidden layer
  (``rntk.mlp_ntk_kernel``) on each series interpolated onto the longest training length
  and scaled to unit norm (``mlp_z``: each channel z-normalised first): a kernel that
  compares step ``t`` of one series with step ``t`` of the other only, where the
  default's settings compare every step with its neighbours or with every other step
  (spectra such as ``Beef`` and ``OliveOil``, whose classes differ at fixed positions);
  ``mlp3_z``: three hidden layers;
* ``segments``: the quantile functions (at most 16 levels) of the values, steps and
  curvatures in each quarter of a series, 12 signals per channel: where in the series a
  distribution holds;
* ``contrast``: the quantile functions of the values and of each value against the mean
  of the 9 values around it at dilations 1, 2, 4, 8 and 16 (MiniRocket's kernels are
  such contrasts, three of nine taps against their mean), 6 signals per channel.

The last two are read by the banded network of the shape settings (on the representation
scaled to unit RMS per step, float32). Protocol of ``tune_local_shapes.py`` (``--cache``,
``--precision``; the default's rule, nested CV on 5 outer folds of each training set,
draws of 1 and 2 training series per class, the test set reported only); ``--data-home``
of ``.ts`` sets as there.

Writes ``beside.csv`` and ``beside.md`` under ``--out``. Results: see
``benchmarks/README.md``.

Usage::

    python benchmarks/tune_beside.py [--quick] [--data-home DIR] [--cache DIR] [--out DIR]
        [--precision auto|float64]
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tune_local_shapes as LS  # noqa: E402
import tune_panel_grid as T  # noqa: E402

from rntk import mlp_ntk_kernel  # noqa: E402
from rntk.model_selection import as_sequences, normalize_series  # noqa: E402

#: The default's seven settings: ``LS.SIX`` but the last step (position 0), then the two
#: shape settings (positions 6 and 7, ``LS.REPLACE``).
SEVEN = [1, 2, 3, 4, 5, 6, 7]
#: Settings of the seven a variant takes the place of (not the prior pair, 2 and 5).
PLACES = {"qd_b": 6, "band8": 1, "raw_pool4": 3, "pool8": 4}
#: name -> (kind, parameters).
VARIANTS = {
    "mlp": ("aligned", dict(n_layers=1, z=False)),
    "mlp_z": ("aligned", dict(n_layers=1, z=True)),
    "mlp3_z": ("aligned", dict(n_layers=3, z=True)),
    "segments": ("quantiles", dict(max_levels=16)),
    "contrast": ("quantiles", dict(max_levels=64)),
}


def aligned(X, length, z):
    """Each series interpolated onto ``length`` steps, flattened, at unit norm."""
    u = np.linspace(0.0, 1.0, length)
    out = []
    for s in as_sequences(X, "X"):
        t = np.linspace(0.0, 1.0, len(s))
        v = np.stack([np.interp(u, t, c) for c in s.T], axis=1)
        if z:
            sd = v.std(axis=0)
            v = (v - v.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        norm = np.linalg.norm(v)
        out.append(v.ravel() / (norm if norm > 0 else 1.0))
    return np.array(out)


def _unit_quantiles(z, grid):
    q = np.quantile(z, grid, axis=0)
    rms = np.sqrt(np.mean(q * q, axis=0))
    return q / np.where(rms > 0, rms, 1.0)


def segments(s, grid, n_segments=4):
    """Quantile functions of values, steps and curvatures in each quarter of ``s``."""
    zero = np.zeros((1, s.shape[1]))
    d = s[1:] - s[:-1] if len(s) > 1 else zero
    c = d[1:] - d[:-1] if len(d) > 1 else zero
    cols = []
    for z in (s, d, c):
        edges = np.linspace(0, len(z), n_segments + 1).astype(int)
        cols += [_unit_quantiles(z[min(a, len(z) - 1):max(b, a + 1)], grid)
                 for a, b in zip(edges[:-1], edges[1:])]
    return cols


def contrast(s, grid, dilations=(1, 2, 4, 8, 16)):
    """Quantile functions of the values and of each value against its 9 neighbours' mean."""
    cols = [_unit_quantiles(s, grid)]
    for d in dilations:
        if len(s) > 8 * d:
            mid = np.arange(4 * d, len(s) - 4 * d)
            around = np.mean([s[mid + j * d] for j in range(-4, 5)], axis=0)
            cols.append(_unit_quantiles(s[mid] - around, grid))
        else:  # too short for this dilation: one zero
            cols.append(np.zeros((len(grid), s.shape[1])))
    return cols


def quantile_representation(key, X, levels):
    """``segments`` or ``contrast`` of every series (``(levels, signals x channels)``)."""
    grid = (np.arange(levels) + 0.5) / levels
    signals = segments if key == "segments" else contrast
    return [np.ascontiguousarray(np.concatenate(signals(s, grid), axis=1))
            for s in as_sequences(X, "X")]


def variant_grams(name, key, data, cache):
    """Training and test-vs-train Grams of a variant (cached)."""
    path = cache / f"{name}__beside_{key}.npz"
    if path.exists():
        return T.timed_grams(path, None, None)
    xtr, xte = data
    longest = max(len(x) for x in as_sequences(xtr, "X"))
    kind, params = VARIANTS[key]
    if kind == "aligned":
        params = dict(params)
        z = params.pop("z")
        a, b = (aligned(x, longest, z) for x in (xtr, xte))
        return T.timed_grams(path, a, b, gram=mlp_ntk_kernel, **params)
    levels = max(2, min(params["max_levels"], longest // 4 if key == "segments" else longest))
    a, b = (normalize_series(quantile_representation(key, x, levels), "rms")
            for x in (xtr, xte))
    return T.timed_grams(path, a, b, readout_band=8, precision="float32", **T.MEAN)


def plans():
    """``variant -> settings`` (positions: ``LS.SIX``, ``LS.REPLACE``, then ``VARIANTS``)."""
    out = {"the default (seven settings)": SEVEN}
    for place, i in PLACES.items():  # what each replacement's place alone is worth
        out[f"without {place} (six settings)"] = [s for s in SEVEN if s != i]
    for j, key in enumerate(VARIANTS):
        out[f"{key} beside the seven"] = SEVEN + [8 + j]
        for place, i in PLACES.items():
            out[f"{key} in place of {place}"] = [s for s in SEVEN if s != i] + [8 + j]
    return out


def main(argv=None):
    args, cache, out = T.study_args(argv, __doc__.splitlines()[0], "results/tune_beside",
                                    precision=True)

    def set_grams(name):
        xtr, y, xte, yte = LS.load(name, args.data_home)
        G = LS.default_grams(name, (xtr, xte), cache, args.precision)
        G += [variant_grams(name, k, (xtr, xte), cache) for k in VARIANTS]
        return G, y, yte, {}

    return LS.score_panel(T.folder_names(args.data_home, args.quick), set_grams, plans(),
                          out, "beside", against="the default")


if __name__ == "__main__":
    main()
