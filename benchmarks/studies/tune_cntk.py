"""The convolutional kernel for local shapes beside the default's settings, by nested CV.

``rntk.cntk_kernel`` is the NTK of a wide dilated 1-D convolutional ReLU network with
global average pooling: every window of one series against every window of the other.
Alone, a one-layer version of it lost to the default on most small sets where it was
tried (issue notes); this script measures it as a member of the default's ensemble: as
an eighth setting beside the default's seven, and in place of the last-step setting
(the only one that reads no average over time).

Each variant reads the series pooled to at most ``MAX_STEPS`` steps (block means of
``ceil(longest training series / MAX_STEPS)`` steps, as ``rntk.BlockMeans``; a pair of
series costs ``O(T T')`` per layer), scaled to unit RMS per step like the default's
mean-readout settings (``VARIANTS``: name -> ``cntk_kernel`` parameters).

Protocol of ``tune_local_shapes.py`` (the Grams of the default's six other settings with
``precision="auto"`` cached by ``tune_panel_grid.py`` under ``--cache``, its shape
setting ``qd_b``; ``--precision float64``: the six in float64, which scores as
``"auto"`` in ``tune_precision.py``): the default's rule (the best candidates of the
three best settings averaged, the prior pair when LOO cannot tell) scored by nested CV
(5 outer folds of each training set), on draws of 1 and 2 training series per class,
and on the test set (reported only). A ``--data-home`` of ``.ts`` sets (the UEA panel)
is read as there.

Writes ``cntk.csv`` (per set and variant, with the seconds of each variant's training
and test Grams) and ``cntk.md`` (means over the sets and the per-set nested differences
against the default, with their standard errors) under ``--out``.

Usage::

    python benchmarks/studies/tune_cntk.py [--quick] [--data-home DIR] [--cache DIR] [--out DIR]
        [--precision auto|float64]
"""

import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
import harness as T  # noqa: E402
import tune_local_shapes as LS  # noqa: E402
import tune_precision as P  # noqa: E402

from rntk import BlockMeans, cntk_kernel  # noqa: E402
from rntk._utils import normalize_series

#: Steps a series is pooled to, at most.
MAX_STEPS = 64
#: name -> ``cntk_kernel`` parameters.
VARIANTS = {
    "cntk_1x9": dict(n_layers=1, taps=9),
    "cntk_2x3": dict(n_layers=2, taps=3, dilation=(1, 2)),
    "cntk_3x3": dict(n_layers=3, taps=3, dilation=(1, 2, 4)),
}


def cntk_grams(name, key, data, cache):
    """Training and test-vs-train Grams of a variant, and their seconds (cached)."""
    path = cache / f"{name}__{key}.npz"
    if not path.exists():
        xtr, xte = data
        pool = max(1, -(-max(len(x) for x in xtr) // MAX_STEPS))
        a, b = (normalize_series(BlockMeans(pool=pool).fit_transform(x), "rms")
                for x in (xtr, xte))
        return T.timed_grams(path, a, b, gram=cntk_kernel, **VARIANTS[key])
    return T.timed_grams(path, None, None)


def plans():
    """``variant -> settings`` (positions: the six, the shapes, then ``VARIANTS``)."""
    seven = list(range(7))
    out = {"the default (seven settings)": seven}
    for j, key in enumerate(VARIANTS):
        out[f"{key} beside the seven"] = seven + [7 + j]
        out[f"{key} in place of the last step"] = seven[1:] + [7 + j]
    return out


def main(argv=None):
    args, cache, out = T.study_args(argv, __doc__.splitlines()[0], "results/tune_cntk",
                                    precision=True)
    names = T.folder_names(args.data_home, args.quick)
    variants = plans()
    key_of = {v: next((k for k in VARIANTS if v.startswith(k + " ")), None)
              for v in variants}

    def set_grams(name):
        xtr, y, xte, yte = LS.load(name, args.data_home)
        G = [T.grams(name, k, (xtr, xte), cache, P.setting_precision(args.precision, k))
             for k in LS.SIX]
        G.append(LS.variant_grams(name, "qd_b", (xtr, xte), cache))
        G += [cntk_grams(name, k, (xtr, xte), cache) for k in VARIANTS]
        seconds = {k: g[2] + g[3] for k, g in zip(VARIANTS, G[7:])}
        return G, y, yte, {v: {"gram_seconds": seconds.get(key_of[v], np.nan)}
                           for v in variants}

    return LS.score_panel(names, set_grams, variants, out, "cntk", against="the default",
                          seconds="gram_seconds")


if __name__ == "__main__":
    main()
