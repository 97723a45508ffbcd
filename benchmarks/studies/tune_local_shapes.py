"""Local shapes for the default classifier: quantiles of slopes and curvatures, by nested CV.

The quantile setting of 0.3.0's default reads, per channel, the quantile functions of a
series' values and of its steps (first differences). MiniRocket's features are the
proportions of positive values of dilated convolutions of each series, at several
thresholds; a quantile function of a convolution's outputs holds those proportions at
every threshold. This script tries, in the quantile setting's place and beside it, the
quantile functions of more convolutions: differences ``x_t - x_{t-d}`` (``"d"``) and
curvatures ``x_{t+d} - 2 x_t + x_{t-d}`` (``"c"``) at several dilations ``d``, each
scaled to unit RMS, read by the same banded network (``VARIANTS``; ``qd_b`` is what
``rntk.ShapeQuantiles`` computes, and 0.4.0's default reads with ``shapes=64``).

Protocol of ``tune_panel_grid.py`` (its ``--cache``, the Grams of the default's other
six settings with ``precision="auto"``: the last-step setting in float64, the others and
the variants in float32): the default's rule (the best candidates of the three best
settings averaged, the prior pair when LOO cannot tell) scored by nested CV (5 outer
folds of each training set), on draws of 1 and 2 training series per class, and on the
test set (reported only).

A ``--data-home`` of ``.ts`` sets (the UEA multivariate panel, ``../shared/data/uea``)
is read with :func:`rntk.datasets.load_ts` (missing values interpolated).

Writes ``local_shapes.csv`` (per set and variant) and ``local_shapes.md`` (means and the
per-set differences against the default, with their standard errors) under ``--out``.
``--replace``: ``qd_c`` (``rntk.ShapeQuantiles`` at octaves) beside ``qd_b``, in place of
``qd_b`` or of each of the six settings outside the prior pair (``replace.csv``,
``replace.md``; how 0.4.0's default came to read both in place of the last-step setting).
``--levels``: the default's two shape settings on 32 levels instead of 64, each or both
(``levels.csv``, ``levels.md``; how the octave setting came to read 32).
Results: see ``benchmarks/README.md``.

Usage::

    python benchmarks/studies/tune_local_shapes.py [--quick] [--replace | --levels]
        [--data-home DIR]
        [--cache DIR] [--out DIR] [--precision auto|float64]
"""

import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
import harness as T  # noqa: E402
import tune_panel_ensembles as E  # noqa: E402
import tune_precision as P  # noqa: E402

from rntk import ShapeQuantiles  # noqa: E402
from rntk._utils import as_sequences, normalize_series
from rntk.datasets import load_ts  # noqa: E402

#: The six settings the default keeps (``tune_panel_grid.py``'s names), and the quantile
#: setting of 0.3.0 (the seventh).
SIX, QUANTILES = E.DEFAULT, E.QUANTILES[0]
#: name -> (levels at most, signals): ``("v", 1)`` the values, ``("d", d)`` the
#: differences at ``d`` steps, ``("c", d)`` the curvatures at ``d`` steps.
VARIANTS = {
    "qd_a": (64, [("v", 1), ("d", 1), ("d", 2), ("d", 4), ("d", 8), ("d", 16)]),
    "qd_b": (64, [("v", 1), ("d", 1), ("d", 4), ("d", 16), ("c", 1), ("c", 4), ("c", 16)]),
    "qd_c": (64, [("v", 1), ("d", 1), ("d", 2), ("d", 4), ("d", 8), ("d", 16), ("c", 1),
                  ("c", 2), ("c", 4), ("c", 8), ("c", 16)]),
    "qd_d": (64, [("v", 1), ("d", 1), ("c", 1), ("c", 2), ("c", 4), ("c", 8), ("c", 16)]),
    "qd_e": (32, [("v", 1), ("d", 1), ("d", 4), ("d", 16), ("c", 1), ("c", 4), ("c", 16)]),
}
#: The default's two shape settings on 32 levels (``--levels``; ``qd_e`` is ``qd_b``'s).
LEVELS = {"qd_f": (32, VARIANTS["qd_c"][1])}
HOWS = ("nested", "shot1", "shot2", "test")


def signals_quantiles(X, levels, signals):
    """Return each series' quantile functions of ``signals``, each at unit RMS.

    Channel ``k m + c`` is signal ``k`` of channel ``c``; a signal a series is too short
    for is one zero.
    """
    grid = (np.arange(levels) + 0.5) / levels
    out = []
    for s in as_sequences(X, "X"):
        t = len(s)
        cols = []
        for kind, d in signals:
            if kind == "v":
                z = s
            elif kind == "d":
                z = s[d:] - s[:-d] if t > d else np.zeros((1, s.shape[1]))
            else:
                z = (s[2 * d:] - s[d:-d]) - (s[d:-d] - s[:-2 * d]) if t > 2 * d \
                    else np.zeros((1, s.shape[1]))
            q = np.quantile(z, grid, axis=0)
            rms = np.sqrt(np.mean(q * q, axis=0))
            cols.append(q / np.where(rms > 0, rms, 1.0))
        out.append(np.ascontiguousarray(np.concatenate(cols, axis=1)))
    return out


def load(name, home):
    """Training and test series and labels: the UCR layout, or ``.ts`` files."""
    if not (Path(home) / name / f"{name}_TRAIN.ts").exists():
        return T.load(name, home)
    out = []
    for split in ("TRAIN", "TEST"):
        X, y = load_ts(Path(home) / name / f"{name}_{split}.ts", missing="interpolate")
        out += [as_sequences(X, "X"), np.asarray(y)]
    return out


def variant_inputs(key, data):
    """Return the training and test representations of a variant, and its kernel parameters.

    The quantile functions of ``VARIANTS[key]`` (or ``LEVELS``), scaled to unit RMS per
    step, read by the banded setting's network.
    """
    xtr, xte = data
    levels, signals = {**VARIANTS, **LEVELS}[key]
    levels = max(2, min(levels, max(len(x) for x in xtr)))
    a, b = (signals_quantiles(x, levels, signals) for x in (xtr, xte))
    a, b = (normalize_series(x, "rms") for x in (a, b))
    return a, b, dict(T.MEAN, readout_band=8)


def variant_grams(name, key, data, cache):
    """Training and test-vs-train Grams of a variant (cached, float32 as ``"auto"``)."""
    path = cache / f"{name}__{key}__float32.npz"
    if not path.exists():
        a, b, kw = variant_inputs(key, data)
        return T.timed_grams(path, a, b, precision="float32", **kw)
    return T.timed_grams(path, None, None)


def plans():
    """``variant -> settings`` (positions: the six, the quantiles, then ``VARIANTS``)."""
    six = list(range(6))
    out = {"0.3.0's default (the six + quantiles)": six + [6]}
    for j, key in enumerate(VARIANTS):
        out[f"{key} in place of the quantiles"] = six + [7 + j]
        out[f"{key} beside the quantiles"] = six + [6, 7 + j]
    return out


#: The variants ``--replace`` reads, after the six (positions 6 and 7).
REPLACE = ("qd_b", "qd_c")


def replace_plans():
    """``variant -> settings`` of ``--replace``: ``qd_c`` beside ``qd_b``, in place of one.

    Positions: the six, then ``REPLACE``. The baseline is the six with ``qd_b`` (the
    default of this script's first study); ``qd_c`` is added, or takes the place of
    ``qd_b`` or of one of the six but the two settings of the default's prior pair
    (``E.PRIOR``).
    """
    six, b, c = list(range(6)), 6, 7
    out = {"the six + qd_b": six + [b], "qd_c beside them": six + [b, c],
           "qd_c in place of qd_b": six + [c]}
    prior = {j for j, _ in E.PRIOR}
    for j, key in enumerate(SIX):
        if j not in prior:
            out[f"qd_c beside qd_b, in place of {key}"] = [i for i in six if i != j] + [b, c]
    return out


def default_grams(name, data, cache, precision):
    """Return the Grams of 0.4.0's default at the positions of ``--replace``.

    ``SIX``, then ``REPLACE`` (``qd_b``, ``qd_c``). The last step (position 0) is in none
    of the default's plans: the next setting's Grams stand in there, and its float64 Gram
    is not computed.
    """
    G = [T.grams(name, k, data, cache, P.setting_precision(precision, k)) for k in SIX[1:]]
    return [G[0], *G] + [variant_grams(name, k, data, cache) for k in REPLACE]


def levels_plans():
    """``variant -> settings`` of ``--levels``: the default's shape settings on 32 levels.

    Positions: the six (the last step, 0, outside every plan), ``qd_b``, ``qd_c``, then
    ``qd_e`` and ``qd_f`` (the same on 32 levels). The baseline is the default of the
    ``--replace`` study, both on 64 levels.
    """
    five = [1, 2, 3, 4, 5]  # the default's settings but the two shape settings
    return {"the default, both on 64 levels": five + [6, 7],
            "qd_c on 32 levels (qd_f)": five + [6, 9],
            "qd_b on 32 levels (qd_e)": five + [8, 7],
            "both on 32 levels": five + [8, 9]}


def main(argv=None):
    def options(ap):
        ap.add_argument("--replace", action="store_true",
                        help="qd_c beside qd_b, in place of each other setting "
                             "(writes replace.csv and replace.md)")
        ap.add_argument("--levels", action="store_true",
                        help="the default's two shape settings on 32 levels (levels.csv, "
                             "levels.md)")

    args, cache, out = T.study_args(argv, __doc__.splitlines()[0],
                                    "results/tune_local_shapes", precision=True,
                                    options=options)
    names = T.folder_names(args.data_home, args.quick)

    def set_grams(name):
        xtr, y, xte, yte = load(name, args.data_home)
        # the variants the package ships: rntk.ShapeQuantiles at (1, 4, 16) and at octaves
        levels = max(2, min(64, max(len(x) for x in xtr)))
        for key, dilations in (("qd_b", (1, 4, 16)), ("qd_c", (1, 2, 4, 8, 16))):
            package = ShapeQuantiles(levels, dilations=dilations).fit_transform(xtr[:3])
            np.testing.assert_allclose(signals_quantiles(xtr[:3], levels, VARIANTS[key][1]),
                                       package, rtol=1e-9, atol=1e-12)
        # only the Grams the plans read (each one's leave-one-out is computed per split)
        if args.levels:
            G = default_grams(name, (xtr, xte), cache, args.precision)
            G += [variant_grams(name, k, (xtr, xte), cache) for k in ("qd_e", "qd_f")]
            return G, y, yte, {}
        first, variants = (SIX, REPLACE) if args.replace else (SIX + [QUANTILES], VARIANTS)
        G = [T.grams(name, k, (xtr, xte), cache, P.setting_precision(args.precision, k))
             for k in first]
        G += [variant_grams(name, k, (xtr, xte), cache) for k in variants]
        return G, y, yte, {}

    if args.levels:
        return score_panel(names, set_grams, levels_plans(), out, "levels",
                           against="the default, both on 64 levels")
    if args.replace:
        return score_panel(names, set_grams, replace_plans(), out, "replace",
                           against="the six + qd_b")
    return score_panel(names, set_grams, plans(), out, "local_shapes")


def score_panel(names, set_grams, variants, out, stem, hows=HOWS, rules=None, **report_kw):
    """Score ``variants`` by the default's rule on each set; write ``stem`` .csv and .md.

    ``set_grams(name) -> (G, y, yte, columns)``: a set's Grams (``variants`` holds
    positions in ``G``), its training and test labels, and ``{variant: {column: value}}``
    added to its rows. ``hows``: the splits scored (of ``HOWS``; the others are reported
    as NaN); ``rules``: the rule of a variant, where not the default's (see
    ``E.default_rule_accuracies``). ``report_kw`` goes to :func:`report`. Return the rows,
    one per set and variant.
    """
    rows = []
    base, *others = variants
    key = hows[0]  # printed per set, and the differences of the report
    for name in names:
        t0 = time.perf_counter()
        G, y, yte, columns = set_grams(name)
        acc = E.default_rule_accuracies(G, y, yte, variants, hows, rules)
        rows += [{"dataset": name, "variant": v, **acc[v], **columns.get(v, {})}
                 for v in variants]
        print(f"{name:<32} {key} {acc[base][key]:6.2f} -> "
              + " ".join(f"{acc[v][key]:6.2f}" for v in others)
              + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    with open(out / f"{stem}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    md = report(rows, list(variants), key=key, **report_kw)
    (out / f"{stem}.md").write_text(md)
    print(md)
    return rows


def report(rows, variants, against="0.3.0's default", seconds=None, key="nested"):
    """Markdown: means over the sets, and the differences against the first.

    ``seconds``: a column of the rows summed over the sets (a last column "Gram s");
    ``key``: the split of the differences (the nested CV unless told; sets without it
    left out).
    """
    by = {(r["dataset"], r["variant"]): r for r in rows}
    names = sorted({r["dataset"] for r in rows})
    extra = (" Gram s |", "---:|") if seconds else ("", "")
    vs = f"vs {against}" + ("" if key == "nested" else f" ({key})")
    lines = [f"| variant | nested CV | {vs} | 1 per class | 2 per class | "
             f"test (reported only) |{extra[0]}", f"|---|---:|---:|---:|---:|---:|{extra[1]}"]
    for v in variants:
        vals = {h: np.array([by[n, v].get(h, np.nan) for n in names]) for h in HOWS}
        m = {h: np.nanmean(a) if (a == a).any() else np.nan for h, a in vals.items()}
        d = np.array([by[n, v].get(key, np.nan) - by[n, variants[0]].get(key, np.nan)
                      for n in names])
        d = d[d == d]
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
        diff = "" if v == variants[0] else f"{d.mean():+.2f} +- {se:.2f}"
        cell = ""
        if seconds:  # blank for a variant without them (the baseline)
            s = np.array([by[n, v][seconds] for n in names], dtype=float)
            cell = " |" if np.isnan(s).all() else f" {np.nansum(s):.1f} |"
        lines.append(f"| {v} | {m['nested']:.2f} | {diff} | {m['shot1']:.2f} | "
                     f"{m['shot2']:.2f} | {m['test']:.2f} |{cell}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
