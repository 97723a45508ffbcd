"""Multivariate series: channels scaled each, or the kernel as a mean over channels, by nested CV.

The default's mean-readout settings read a series of ``m`` channels as one input vector
per step (the network's input layer mixes the channels), and the RMS-scaled ones scale a
series as a whole, so a channel of larger amplitude weighs more. Two levers of the
multivariate case, on the UEA panel (``../shared/data/uea``, ``.ts``):

* **channels scaled each** (``A``): the banded, pooled and spectral settings on series
  whose channels are each scaled to the same RMS (``1 / sqrt(m)``, so that a step keeps
  unit RMS), in place of their own; the same networks and cost;
* **the mean over channels** (``B``): a setting's Gram replaced by the mean of its Grams
  on each channel alone, the kernel of ``m`` separate networks, one per channel, whose
  outputs are summed (the "dimension-independent" form, as DTW_I against DTW_D);
  ``m`` times the engine's work. In place of every mean-readout setting, of the shape
  setting alone, of all but it, or as candidates beside the default's.

Protocol of ``tune_local_shapes.py`` (``tune_panel_grid.py``'s Gram cache, the default's
rule on the seven settings with ``precision="auto"``): nested CV (5 outer folds of each
training set), draws of 1 and 2 training series per class, and the test set (reported
only). Writes ``channels.csv`` (per set and variant) and ``channels.md`` (means, and the
per-set differences of nested accuracy against the default with their standard errors)
under ``--out``; ``--quick`` runs the smallest set of the folder. Results: see
``benchmarks/README.md``.

Usage::

    python benchmarks/studies/tune_channels.py [--quick] [--data-home DIR] [--cache DIR]
        [--out DIR]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
import harness as T  # noqa: E402
import tune_local_shapes as L  # noqa: E402
import tune_panel_ensembles as E  # noqa: E402
import tune_precision as P  # noqa: E402

#: The default's six settings before the shape setting (``tune_panel_grid.py``'s names);
#: the shape setting is ``tune_local_shapes.py``'s ``qd_b``.
SIX, SHAPES = E.DEFAULT, "qd_b"
#: The settings that scale a series to unit RMS as a whole (the lever ``A``).
SCALED = ["band8_cap128", "pool8", "spec_band8_short"]


def channels_scaled(X):
    """Return the series with each channel at RMS ``1 / sqrt(m)`` (a step at unit RMS)."""
    out = []
    for s in X:
        rms = np.sqrt(np.mean(s * s, axis=0))
        out.append(s / np.where(rms > 0, rms, 1.0) / np.sqrt(s.shape[1]))
    return out


def channel_mean(name, key, data, cache):
    """Grams of a setting as the mean of its Grams on each channel alone (cached)."""
    xtr, xte = data
    per = []
    for c in range(xtr[0].shape[1]):
        one = ([x[:, c:c + 1] for x in xtr], [x[:, c:c + 1] for x in xte])
        per.append(L.variant_grams(f"{name}__ch{c}", key, one, cache) if key == SHAPES
                   else T.grams(f"{name}__ch{c}", key, one, cache, "float32"))
    return tuple(np.mean([g[i] for g in per], axis=0) for i in (0, 1)) + (
        sum(g[2] for g in per), sum(g[3] for g in per))


def set_grams(name, data, cache):
    """Grams of one set: the default's 7 settings, then ``A``'s 3, then ``B``'s 7."""
    G = [T.grams(name, k, data, cache, P.setting_precision("auto", k)) for k in SIX]
    G.append(L.variant_grams(name, SHAPES, data, cache))
    scaled = tuple(channels_scaled(x) for x in data)
    G += [T.grams(f"{name}__scaled", k, scaled, cache, "float32") for k in SCALED]
    G += [channel_mean(name, k, data, cache) for k in SIX[1:] + [SHAPES]]
    return G


def plans():
    """``variant -> settings`` (positions in :func:`set_grams`' list)."""
    default = list(range(7))
    a = dict(zip([SIX.index(k) for k in SCALED], range(7, 10)))
    b = dict(zip(range(1, 7), range(10, 16)))
    return {
        "the default": default,
        "A: channels scaled each (band, pool, spectrum)": [a.get(i, i) for i in default],
        "B: mean over channels (every mean-readout setting)": [b.get(i, i) for i in default],
        "B: mean over channels, the shape setting only": default[:6] + [15],
        "B: mean over channels, all but the shape setting": [0, *range(10, 15), 6],
        "B: beside the default (13 settings)": default + list(range(10, 16)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default="../shared/data/uea")
    ap.add_argument("--cache", default="results/tune_panel_grid/grams")
    ap.add_argument("--out", default="results/tune_channels")
    ap.add_argument("--quick", action="store_true", help="only the folder's smallest set")
    args = ap.parse_args(argv)
    cache, out = Path(args.cache), Path(args.out)
    cache.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    home = Path(args.data_home)
    names = T.folder_names(home)
    if args.quick:
        names = [min(names, key=lambda n: (home / n / f"{n}_TRAIN.ts").stat().st_size)]
    variants = plans()

    def one_set(name):
        xtr, y, xte, yte = L.load(name, home)
        G = set_grams(name, (xtr, xte), cache)
        return G, y, yte, {v: {"channels": xtr[0].shape[1]} for v in variants}

    return L.score_panel(names, one_set, variants, out, "channels", against="the default")


if __name__ == "__main__":
    main()
