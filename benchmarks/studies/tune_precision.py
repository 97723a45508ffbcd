"""The default classifier with the float32 engine against float64, by nested CV on the panel.

``rntk_kernel(precision="float32")`` runs the recursion in float32 (twice the SIMD lanes);
the kernel values move by about 1e-6 relative, enough to flip a leave-one-out choice
between candidates that score almost alike. This script measures what that does to the
default's accuracy with ``tune_panel_grid.py``'s protocol and Gram cache (its ``--cache``;
the float32 Grams are cached beside the others): for every set of ``--data-home``, the
Grams of the default grid's seven settings (``tune_panel_ensembles.DEFAULT`` and the
quantile setting) in each precision (``auto``: the last-step setting in float64, the
six mean-readout settings in float32), then the default's rule (the best candidate of each
of the three best settings by exact leave-one-out, averaged; the prior pair when LOO
cannot tell) scored by

* **nested CV** (5 outer folds of each training set), **1 / 2 per class** (3 draws),
* **test** (reported only).

Writes ``precision.csv`` (per set and precision: the four accuracies, the Gram seconds)
and ``precision.md`` (means, the per-set differences' mean and standard error, the sets
that moved) under ``--out``.

``--tser DIR`` does the same for the default regressor on the extrinsic-regression panel
of ``DIR`` (``bench_tser.py``'s layout): ``RNTKRegressorCV(precision=p)`` for ``float64``
and ``auto``, the test RMSE, the RMSE of 5 outer folds of each training set (shuffled,
seed 0; the search on 4, the fifth predicted) and the fit + predict seconds, into
``regression.csv`` and ``regression.md``. ``--quick`` then takes the first set, on
``bench_tser.py``'s small grid.

Results: see ``benchmarks/README.md``.

Usage::

    python benchmarks/studies/tune_precision.py [--quick] [--data-home DIR] [--cache DIR]
        [--out DIR]
        [--tser DIR]
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

#: The default grid's seven settings, in ``tune_panel_grid.py``'s names.
SEVEN = E.DEFAULT + [E.QUANTILES[0]]
PRECISIONS = ("float64", "float32", "auto")


def setting_precision(precision, key):
    """Return the precision of setting ``key``: ``"auto"`` keeps the last step in float64.

    Its network (two layers, ``sigma_b = 2``, read out once after the whole series) makes
    the correlations of two series' states very close to 1, where float32 cannot resolve
    ``arccos``: its float32 Gram is off by up to 6% (``Coffee``), the mean readouts' by
    1e-6 to 5e-5.
    """
    if precision == "auto":
        mean = T.SETTINGS[key][2].get("readout") == "mean"
        return "float32" if mean else "float64"
    return precision


HOWS = ("nested", "shot1", "shot2", "test")


def scores(name, data_home, cache, precision):
    """Return the default rule's accuracies on one set (``HOWS``) and its Gram seconds."""
    xtr, y, xte, yte = T.load(name, data_home)
    G = [T.grams(name, k, (xtr, xte), cache, setting_precision(precision, k))
         for k in SEVEN]
    out = {"seconds": sum(g[2] + g[3] for g in G)}
    out.update(E.default_rule_accuracies(G, y, yte, {"default": range(len(SEVEN))}, HOWS)[
        "default"])
    return out


def report(rows):
    """Markdown of the means and the per-set differences (float32 - float64)."""
    by = {(r["dataset"], r["precision"]): r for r in rows}
    names = sorted({r["dataset"] for r in rows})
    lines = ["| precision | nested CV | 1 per class | 2 per class | test (reported only) "
             "| Gram s |", "|---|---:|---:|---:|---:|---:|"]
    for p in PRECISIONS:
        m = {h: np.nanmean([by[n, p][h] for n in names]) for h in HOWS}
        s = sum(by[n, p]["seconds"] for n in names)
        lines.append(f"| {p} | {m['nested']:.2f} | {m['shot1']:.2f} | {m['shot2']:.2f} | "
                     f"{m['test']:.2f} | {s:.0f} |")
    lines.append("")
    for p in PRECISIONS[1:]:
        for h in HOWS:
            d = np.array([by[n, p][h] - by[n, "float64"][h] for n in names])
            keep = np.isfinite(d)
            moved = [f"{n} {x:+.2f}" for n, x, k in zip(names, d, keep) if k and abs(x) > 1e-9]
            d = d[keep]
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
            mean = d.mean() if len(d) else np.nan
            lines.append(f"- {h}: {p} - float64 {mean:+.3f} +- {se:.3f} over {len(d)} sets; "
                         f"{len(moved)} moved" + (f" ({', '.join(moved)})" if moved else ""))
    return "\n".join(lines) + "\n"


def regression(home, out, quick=False):
    """Score the default regressor in ``float64`` and ``auto`` on the TSER panel ``home``."""
    import bench_tser as R
    from sklearn.model_selection import KFold

    from rntk import RNTKRegressorCV

    grid = R.QUICK_GRID if quick else None
    rng = np.random.default_rng(0)
    for p in ("float64", "auto"):  # numba's first calls, outside the timings
        RNTKRegressorCV(grid, precision=p).fit(rng.normal(size=(12, 20)), rng.normal(size=12))
    rows = []
    for name in R.dataset_names(home)[:1 if quick else None]:
        X, y, Xt, yt = R.load(name, home)
        for p in ("float64", "auto"):
            t = time.perf_counter()
            pred = RNTKRegressorCV(grid, precision=p).fit(X, y).predict(Xt)
            seconds = time.perf_counter() - t
            sq = []
            for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
                fold = RNTKRegressorCV(grid, precision=p).fit(X[tr], y[tr])
                sq.append(np.mean((fold.predict(X[te]) - y[te]) ** 2))
            rows.append({"dataset": name, "precision": p,
                         "test_rmse": float(np.sqrt(np.mean((pred - yt) ** 2))),
                         "nested_rmse": float(np.sqrt(np.mean(sq))), "seconds": seconds})
            print(f"{name:<24} {p:<8} test {rows[-1]['test_rmse']:.5g}  nested "
                  f"{rows[-1]['nested_rmse']:.5g}  {seconds:.2f} s", flush=True)
    with open(out / "regression.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    by = {(r["dataset"], r["precision"]): r for r in rows}
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    lines = ["| dataset | test RMSE float64 | test RMSE auto | nested RMSE float64 | "
             "nested RMSE auto | s float64 | s auto |", "|---|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        a, b = by[n, "float64"], by[n, "auto"]
        lines.append(f"| {n} | {a['test_rmse']:.4g} | {b['test_rmse']:.4g} | "
                     f"{a['nested_rmse']:.4g} | {b['nested_rmse']:.4g} | {a['seconds']:.2f} | "
                     f"{b['seconds']:.2f} |")
    ratio = np.exp(np.mean([np.log(by[n, "auto"]["nested_rmse"] / by[n, "float64"]["nested_rmse"])
                            for n in names]))
    t = [sum(by[n, p]["seconds"] for n in names) for p in ("float64", "auto")]
    lines += ["", f"Nested RMSE auto / float64, geometric mean {ratio:.4f}; time "
              f"{t[1]:.1f} s against {t[0]:.1f} s ({t[1] / t[0]:.2f}x)."]
    (out / "regression.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return rows


def main(argv=None):
    def options(ap):
        ap.add_argument("--tser", default=None,
                        help="the default regressor on this extrinsic-regression panel "
                             "instead")

    args, cache, out = T.study_args(argv, __doc__.splitlines()[0], "results/tune_precision",
                                    options=options)
    if args.tser:
        return regression(args.tser, out, args.quick)
    names = T.folder_names(args.data_home, args.quick)
    rows = []
    for name in names:
        t0 = time.perf_counter()
        for p in PRECISIONS:
            rows.append({"dataset": name, "precision": p,
                         **scores(name, args.data_home, cache, p)})
        last = rows[-len(PRECISIONS):]
        print(f"{name:<32} nested " + " / ".join(f"{r['nested']:6.2f}" for r in last)
              + "  test " + " / ".join(f"{r['test']:6.2f}" for r in last)
              + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    with open(out / "precision.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    md = report(rows)
    (out / "precision.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
