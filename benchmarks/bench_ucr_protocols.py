"""Model selection in seconds: RNTKClassifierCV against the paper's protocol and MiniRocket.

The default protocol, the paper's protocol and MiniRocket, per UCR dataset, in one run.

For every dataset the script times ``fit`` + ``predict`` (train and test Grams, the
selection, the refit and the prediction) of

* ``rntk``: ``RNTKClassifierCV()``, the default protocol (kernel ridge on the RNTK,
  selected by exact leave-one-out over the default grid);
* ``rntk-paper``: ``RNTKClassifierCV(protocol="paper")`` (C-SVM, 10-fold CV over the
  paper's 4500 candidates) on the subset named by ``--paper-datasets`` (it is slow);
* ``minirocket``: aeon's ``MiniRocketClassifier(random_state=0)`` when aeon is
  importable (series zero-padded to a common length, aeon's channel-major layout).

Every method is run once on a tiny problem first, so that numba's first-call
compilation (ours and MiniRocket's) is not counted. Series are given to the RNTK
estimators as loaded (they scale each series to unit norm themselves).

Data: ``--data-home`` (default: ``$RNTK_DATA``, else ``../shared/data/ucr`` beside the
repository when present, else the bundled datasets); with a UCR folder the datasets of
the RNTK paper's Table 2 found there are used, with the bundled data all five.

Outputs in ``--out`` (default ``results/bench_ucr_protocols``): ``results.csv`` (one row
per dataset and method), ``summary.md`` (per-dataset table, totals, the time ratio
against MiniRocket, and each method beside the published state of the art of the "bake
off redux" -- mean accuracy on the shared datasets, W/T/L, average ranks with the
Nemenyi critical difference), ``time_vs_accuracy.png`` and ``critical_difference.png``
(the critical-difference diagram; needs matplotlib).

Usage::

    python benchmarks/bench_ucr_protocols.py [--data-home DIR] [--paper-datasets A,B]
    python benchmarks/bench_ucr_protocols.py --quick --out /tmp/p   # a smoke test
"""

import argparse
import csv
import importlib.util
import os
import time
from pathlib import Path

import numpy as np

from rntk import RNTKClassifierCV
from rntk.benchmarking import (
    PLOT_CD,
    compare_with_published,
    load_paper_table,
    sota_markdown,
    write_cd_plot,
)
from rntk.datasets import list_ucr, load_ucr

HERE = Path(__file__).resolve().parent
PAPER_SUBSET = "Beef,Coffee,ECG200,GunPoint,OliveOil,Trace"


def _aeon_layout(X, t_max):
    """(n, 1 or m, t_max) zero-padded, channel-major: what MiniRocket takes."""
    seqs = [np.asarray(x, dtype=float) for x in X]
    seqs = [s[:, None] if s.ndim == 1 else s for s in seqs]
    seqs = [s[~np.isnan(s).any(axis=1)] for s in seqs]
    out = np.zeros((len(seqs), seqs[0].shape[1], t_max))
    for i, s in enumerate(seqs):
        out[i, :, : len(s)] = s.T
    return out


def _lengths(X):
    if isinstance(X, list):
        return [int(np.sum(~np.isnan(np.asarray(x, dtype=float)).reshape(len(x), -1).any(1)))
                for x in X]
    return [X.shape[1]] * len(X)


#: ``--quick``: small grids (a smoke test of the pipeline, not a measurement)
QUICK_GRIDS = {"rntk": {"sigma_b": [0.0, 1.0]},
               "rntk-paper": {"sigma_b": [0.0, 1.0], "C": [1.0, 100.0]}}


def _methods(n_jobs, quick=False):
    if quick:
        return {
            "rntk": lambda: RNTKClassifierCV(QUICK_GRIDS["rntk"], n_jobs=n_jobs),
            "rntk-paper": lambda: RNTKClassifierCV(QUICK_GRIDS["rntk-paper"],
                                                   protocol="paper", cv=3, n_jobs=n_jobs),
        }
    methods = {
        "rntk": lambda: RNTKClassifierCV(n_jobs=n_jobs),
        "rntk-paper": lambda: RNTKClassifierCV(protocol="paper", n_jobs=n_jobs),
    }
    if importlib.util.find_spec("aeon") is not None:
        from aeon.classification.convolution_based import MiniRocketClassifier

        methods["minirocket"] = lambda: MiniRocketClassifier(random_state=0)
    return methods


def _run(name, make, X_train, y_train, X_test, y_test):
    est = make()
    if name == "minirocket":
        t_max = max(_lengths(X_train) + _lengths(X_test))
        X_train, X_test = _aeon_layout(X_train, t_max), _aeon_layout(X_test, t_max)
    t = time.perf_counter()
    est.fit(X_train, y_train)
    pred = est.predict(X_test)
    seconds = time.perf_counter() - t
    params = getattr(est, "best_params_", {})
    return float(np.mean(pred == np.asarray(y_test))), seconds, params


def write_outputs(out, rows, text):
    """Write ``out/results.csv`` and ``out/summary.md``, the files of every panel script.

    The columns of ``results.csv`` are every key of any row, in order of appearance.
    """
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    (out / "summary.md").write_text(text, encoding="utf-8")


def _warm_up(methods):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 40))
    y = np.repeat([0, 1, 2], 8)
    for name, make in methods.items():
        if name == "rntk-paper":
            est = RNTKClassifierCV({"sigma_b": [0.0], "C": [1.0]}, protocol="paper", cv=3)
            est.fit(X, y)
            continue
        _run(name, make, X, y, X, y)


def _default_home():
    if os.environ.get("RNTK_DATA"):
        return os.environ["RNTK_DATA"]
    shared = HERE.parent.parent / "shared" / "data" / "ucr"
    return str(shared) if shared.is_dir() else None


def _markdown(rows, methods, datasets):
    by = {(r["dataset"], r["method"]): r for r in rows}
    lines = ["| dataset | n_train | length | " + " | ".join(
        f"{m} acc | {m} s" for m in methods) + " |",
        "|---|---:|---:|" + "---:|---:|" * len(methods)]
    for d in datasets:
        first = next(by[(d, m)] for m in methods if (d, m) in by)
        cells = []
        for m in methods:
            r = by.get((d, m))
            cells += ["", ""] if r is None else [f"{100 * r['accuracy']:.2f}",
                                                 f"{r['seconds']:.2f}"]
        lines.append(f"| {d} | {first['n_train']} | {first['length']} | "
                     + " | ".join(cells) + " |")
    lines += ["", "| method | datasets | mean accuracy (%) | total fit+predict (s) |",
              "|---|---:|---:|---:|"]
    for m in methods:
        rs = [by[(d, m)] for d in datasets if (d, m) in by]
        if rs:
            lines.append(f"| {m} | {len(rs)} | {100 * np.mean([r['accuracy'] for r in rs]):.2f}"
                         f" | {sum(r['seconds'] for r in rs):.1f} |")
    common = [d for d in datasets if (d, "rntk") in by and (d, "minirocket") in by]
    if common:
        ours = sum(by[(d, "rntk")]["seconds"] for d in common)
        theirs = sum(by[(d, "minirocket")]["seconds"] for d in common)
        lines += ["", f"Time ratio rntk / minirocket over {len(common)} datasets: "
                      f"{ours / theirs:.2f} ({ours:.1f} s / {theirs:.1f} s)."]
    paper = [d for d in datasets if (d, "rntk-paper") in by]
    if paper:
        fast = sum(by[(d, "rntk")]["seconds"] for d in paper)
        slow = sum(by[(d, "rntk-paper")]["seconds"] for d in paper)
        acc_f = 100 * np.mean([by[(d, "rntk")]["accuracy"] for d in paper])
        acc_s = 100 * np.mean([by[(d, "rntk-paper")]["accuracy"] for d in paper])
        lines += ["", f"On the {len(paper)} datasets of the paper protocol: default "
                      f"{acc_f:.2f}% in {fast:.1f} s, paper protocol {acc_s:.2f}% in "
                      f"{slow:.1f} s ({slow / fast:.0f}x the time)."]
    return "\n".join(lines) + "\n"


def _plot(rows, methods, path):
    if importlib.util.find_spec("matplotlib") is None:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for k, (m, marker) in enumerate(zip(methods, "os^D")):
        rs = [r for r in rows if r["method"] == m]
        if not rs:
            continue
        t = np.array([float(r["seconds"]) for r in rs])
        a = np.array([100 * float(r["accuracy"]) for r in rs])
        ax.scatter(t, a, marker=marker, alpha=0.5, s=22, color=f"C{k}",
                   label=f"{m}: {len(rs)} datasets, mean {a.mean():.1f}%, "
                         f"total {t.sum():.0f} s")
        ax.scatter([t.mean()], [a.mean()], marker=marker, s=140, color=f"C{k}",
                   edgecolor="k")
    ax.set_xscale("log")
    ax.set_xlabel("fit + predict time per dataset (s, log scale)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("UCR datasets: one small marker per dataset, large = mean", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=None)
    p.add_argument("--datasets", default=None, help="comma list (default: see docstring)")
    p.add_argument("--paper-datasets", default=PAPER_SUBSET,
                   help=f"datasets of the (slow) paper protocol (default {PAPER_SUBSET}; "
                        "'' for none)")
    p.add_argument("--n-jobs", type=int, default=None, help="kernel threads (default all)")
    p.add_argument("--out", default="results/bench_ucr_protocols")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: the bundled Coffee data, small grids, no MiniRocket")
    args = p.parse_args(argv)
    if args.quick:
        args.data_home, args.datasets, args.paper_datasets = None, "Coffee", "Coffee"

    home = None if args.quick else args.data_home or _default_home()
    available = [r["name"] for r in list_ucr(home)]
    if args.datasets:
        datasets = [d for d in args.datasets.split(",") if d]
    elif home is not None:
        table = load_paper_table()
        datasets = [d for d in available if d in table]
    else:
        datasets = available
    paper_subset = {d for d in args.paper_datasets.split(",") if d}
    methods = _methods(args.n_jobs, args.quick)
    print(f"methods: {', '.join(methods)}; {len(datasets)} datasets from "
          f"{home or 'the bundled data'}", flush=True)
    _warm_up(methods)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for d in datasets:
        X_train, y_train, X_test, y_test = load_ucr(d, data_home=home, download=False,
                                                    missing="interpolate")
        lengths = _lengths(X_train) + _lengths(X_test)
        length = (str(max(lengths)) if min(lengths) == max(lengths)
                  else f"{min(lengths)}-{max(lengths)}")
        for m, make in methods.items():
            if m == "rntk-paper" and d not in paper_subset:
                continue
            acc, seconds, params = _run(m, make, X_train, y_train, X_test, y_test)
            rows.append({"dataset": d, "method": m, "accuracy": acc, "seconds": seconds,
                         "n_train": len(y_train), "length": length,
                         "params": {k: v for k, v in params.items()}})
            print(f"{d:<22} {m:<11} {100 * acc:6.2f}%  {seconds:7.2f} s", flush=True)
    md = _markdown(rows, list(methods), datasets)
    ours = {m: {r["dataset"]: 100 * r["accuracy"] for r in rows if r["method"] == m}
            for m in methods}
    comparison = compare_with_published({m: a for m, a in ours.items() if a})
    why = write_cd_plot(comparison, out / PLOT_CD, "rntk beside the bake off redux")
    md += "\n" + "\n".join(sota_markdown(comparison, (PLOT_CD, why)))
    write_outputs(out, rows, md)
    _plot(rows, list(methods), out / "time_vs_accuracy.png")
    print(md)


if __name__ == "__main__":
    main()
