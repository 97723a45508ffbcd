"""Nystroem features + RidgeClassifierCV against the exact RNTK on the UCR sets of Table 2.

Issue "Beyond one Gram in memory": with at most 1000 components, Nystroem features and a
linear ridge classifier should be within 1 point of the exact kernel's mean accuracy
under the same model selection. For every dataset (train on TRAIN, accuracy on TEST):

* ``exact``: ``RNTKClassifierCV(param_grid={**GRID, "alpha": ALPHAS})``: kernel ridge on
  the exact RNTK Gram of unit-norm series, 8 kernel settings (``GRID``: the
  bidirectional two-layer ReLU RNTK, ``diff`` off or on, 4 ``sigma_b``, the default
  grid's last-step family) x 9 relative ridges (``ALPHAS`` = ``1e-6 .. 100``, times
  ``trace(K) / n``), selected by the exact leave-one-out accuracy, ties broken by the
  lower leave-one-out squared error;
* ``nystroem``: for ``m`` in ``--components`` (``min(m, n_train)`` landmarks, uniform
  or ``--landmarks kmeans++``, seed 0), ``make_pipeline(RNTKNystroem(m, **setting),
  RidgeClassifierCV(alphas))`` for the same 8 settings and the same ridges (the same
  relative grid times ``trace(K) / n`` of the exact training Gram, from
  ``rntk_diag``), selected by the same rule on the leave-one-out predictions of
  ``RidgeClassifierCV`` (``store_cv_results``; its ``fit_intercept=True`` is the
  exact model's unpenalised intercept), then refit with the chosen ridge.

With ``m >= n_train`` every training series is a landmark and the features reproduce
the exact Gram up to rounding (``RNTKNystroem``'s notes), so the two columns should
agree there; smaller ``m`` shows the accuracy / size trade-off.

Data: ``--data-home`` (default: ``$RNTK_DATA``, else ``../shared/data/ucr`` beside the
repository); the datasets of the RNTK paper's Table 2 found there.

Outputs (``--out``, default this folder): ``bench_nystroem_ucr.csv`` (one row per dataset,
method and ``m``), ``bench_nystroem_ucr.md`` (per-dataset table, means, largest gaps) and
``bench_nystroem_ucr.png`` (Nystroem vs exact per dataset; mean accuracy vs ``m``).

Usage::

    python benchmarks/bench_nystroem_ucr.py [--data-home DIR] [--datasets A,B]
        [--components 100 300 1000] [--landmarks uniform]
    python benchmarks/bench_nystroem_ucr.py --quick --out /tmp/nys   # a smoke test
"""

import argparse
import csv
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import RidgeClassifierCV
from sklearn.model_selection import ParameterGrid
from sklearn.preprocessing import LabelBinarizer
from threadpoolctl import threadpool_limits

from rntk import RNTKClassifierCV, RNTKNystroem, SeriesScaler
from rntk._kernels import rntk_diag
from rntk.benchmarking import load_paper_table
from rntk.datasets import list_ucr, load_ucr

HERE = Path(__file__).resolve().parent
#: The kernel settings compared (fixed here: the package's default grid may grow).
GRID = {"direction": ["bidirectional"], "n_layers": [2], "diff": [False, True],
        "sigma_b": [0.0, 0.1, 0.5, 2.0]}
#: Relative ridges (x trace(K) / n of the exact training Gram).
ALPHAS = [10.0 ** k for k in range(-6, 3)]
KEYS = ["dataset", "n_train", "n_test", "length", "method", "landmarks", "n_components",
        "accuracy", "loo_accuracy", "params", "seconds"]


def _data_home(arg):
    if arg:
        return arg
    if os.environ.get("RNTK_DATA"):
        return os.environ["RNTK_DATA"]
    shared = HERE.parent.parent / "shared" / "data" / "ucr"
    return str(shared) if shared.is_dir() else None


def _exact(X, y, X_test, y_test, n_jobs):
    """Fit and score the default leave-one-out protocol on the exact Gram."""
    t0 = time.perf_counter()
    clf = RNTKClassifierCV(param_grid={**GRID, "alpha": ALPHAS},
                           n_jobs=n_jobs).fit(X, y)
    acc = clf.score(X_test, y_test)
    return {"accuracy": acc, "loo_accuracy": clf.best_score_,
            "params": dict(clf.best_params_), "seconds": time.perf_counter() - t0}


def _loo_scores(ridge, y, n_alphas):
    """LOO accuracy and squared error per ridge, from RidgeClassifierCV's LOO predictions."""
    # RidgeClassifierCV's targets: +-1 one-vs-all, one column (classes[1]) for two classes
    binarizer = LabelBinarizer(neg_label=-1, pos_label=1).fit(y)
    classes, Y = binarizer.classes_, binarizer.transform(y)
    n = len(y)
    loo = np.moveaxis(ridge.cv_results_.reshape(n, -1, n_alphas), 2, 0)  # (alphas, n, y)
    if loo.shape[-1] == 1:
        pred = classes[(loo[..., 0] > 0).astype(np.intp)]
    else:
        pred = classes[np.argmax(loo, axis=-1)]
    acc = (pred == np.asarray(y)[None, :]).mean(axis=1)
    return acc, ((loo - Y[None]) ** 2).mean(axis=(1, 2))


def _nystroem(X, y, X_test, y_test, m, landmarks, n_jobs, seed=0):
    """Nystroem + RidgeClassifierCV, selected over the same settings and ridges."""
    t0 = time.perf_counter()
    xs = SeriesScaler(method="unit").fit_transform(X)
    best = None
    for setting in ParameterGrid(GRID):
        nys = RNTKNystroem(n_components=m, landmarks=landmarks, random_state=seed,
                           n_jobs=n_jobs, **setting)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # m > n_train: all of them
            F = nys.fit_transform(X)
        # the exact model's ridges: relative ridges x trace(K) / n of the exact Gram
        alphas = np.asarray(ALPHAS) * rntk_diag(xs, n_jobs=n_jobs, **setting).mean()
        ridge = RidgeClassifierCV(alphas=alphas, scoring="accuracy",
                                  store_cv_results=True).fit(F, y)
        acc, mse = _loo_scores(ridge, y, len(alphas))
        for k, alpha in enumerate(alphas):
            key = (acc[k], -mse[k])
            if best is None or key > best[0]:  # ties: the first in grid order
                best = (key, setting, float(alpha), ALPHAS[k], nys, F)
    (loo_acc, _), setting, alpha, rel, nys, F = best
    # the pipeline's classifier refit with the chosen ridge
    final = RidgeClassifierCV(alphas=[alpha]).fit(F, y)
    acc = float(np.mean(final.predict(nys.transform(X_test)) == np.asarray(y_test)))
    return {"accuracy": acc, "loo_accuracy": loo_acc, "n_components": nys.n_components_,
            "params": {"alpha": rel, **setting}, "seconds": time.perf_counter() - t0}


def _length(X):
    return int(max(len(x) for x in X)) if isinstance(X, list) else X.shape[1]


def run(names, data_home, components, landmarks, n_jobs, out):
    rows = []
    path = os.path.join(out, "bench_nystroem_ucr.csv")
    for name in names:
        X, y, X_test, y_test = load_ucr(name, data_home=data_home, download=False,
                                                    missing="interpolate")
        base = {"dataset": name, "n_train": len(y), "n_test": len(y_test),
                "length": _length(X)}
        res = _exact(X, y, X_test, y_test, n_jobs)
        rows.append({**base, "method": "exact", "landmarks": "", "n_components": len(y),
                     **res})
        print(f"{name:28s} exact      {res['accuracy']:.4f} (LOO {res['loo_accuracy']:.4f}) "
              f"{res['seconds']:.1f} s", flush=True)
        done = {}
        for m in components:
            m_eff = min(m, len(y))
            if m_eff not in done:  # m > n_train: the same model as with m = n_train
                # one BLAS thread for these small problems, as the exact search's eigh
                with threadpool_limits(limits=1, user_api="blas"):
                    done[m_eff] = _nystroem(X, y, X_test, y_test, m_eff, landmarks, n_jobs)
            res = done[m_eff]
            rows.append({**base, "method": f"nystroem{m}", "landmarks": landmarks, **res})
            print(f"{name:28s} nystroem{m:<5d}{res['accuracy']:.4f} (LOO "
                  f"{res['loo_accuracy']:.4f}, m={res['n_components']}) "
                  f"{res['seconds']:.1f} s", flush=True)
        _write_csv(rows, path)
    return rows


def _write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, KEYS)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{r[k]:.6g}" if isinstance(r[k], float) else r[k])
                        for k in KEYS})


def report(rows, components, out):
    """Markdown table and plot; return the markdown text."""
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    acc = {(r["dataset"], r["method"]): 100 * float(r["accuracy"]) for r in rows}
    m_eff = {(r["dataset"], r["method"]): int(r["n_components"]) for r in rows}
    chosen = {(r["dataset"], r["method"]): str(r["params"]) for r in rows}
    methods = ["exact"] + [f"nystroem{m}" for m in components]
    names = [n for n in names if all((n, k) in acc for k in methods)]
    head = ["dataset", "n_train", "exact"] + [f"Nystroem m={m}" for m in components]
    lines = ["| " + " | ".join(head) + " |", "|---|---:|" + "---:|" * (len(head) - 2)]
    n_train = {r["dataset"]: int(r["n_train"]) for r in rows}
    for n in names:
        cells = [f"{acc[n, 'exact']:.2f}"]
        for m in components:
            k = f"nystroem{m}"
            gap = acc[n, k] - acc[n, "exact"]
            note = "" if m_eff[n, k] == m else f" (m={m_eff[n, k]})"
            cells.append(f"{acc[n, k]:.2f} ({gap:+.2f}){note}")
        lines.append(f"| {n} | {n_train[n]} | " + " | ".join(cells) + " |")
    means = {k: np.mean([acc[n, k] for n in names]) for k in methods}
    lines.append("| **mean** | | " + " | ".join(f"**{means[k]:.2f}**" for k in methods) + " |")
    secs = {k: sum(float(r["seconds"]) for r in rows if r["method"] == k and r["dataset"] in names)
            for k in methods}
    summary = [f"Datasets: {len(names)}. Mean test accuracy (%): exact {means['exact']:.2f}"]
    for m in components:
        k = f"nystroem{m}"
        gaps = [(acc[n, k] - acc[n, "exact"], n) for n in names]
        worst = min(gaps)
        fewer = sum(n_train[n] > m for n in names)
        summary.append(
            f"* Nystroem m = min({m}, n_train) (fewer landmarks than training series on "
            f"{fewer} sets): mean {means[k]:.2f} "
            f"({means[k] - means['exact']:+.2f} points); largest per-set loss "
            f"{worst[0]:+.2f} ({worst[1]}); largest gain {max(gaps)[0]:+.2f}; "
            f"sets within 1 point: {sum(abs(g) <= 1 for g, _ in gaps)}/{len(names)}; "
            f"the same kernel setting and ridge selected as by exact on "
            f"{sum(chosen[n, k] == chosen[n, 'exact'] for n in names)}/{len(names)}")
    summary.append("* Seconds (fit with selection + test prediction, summed over the sets; "
                   "shared machine, indicative): " + ", ".join(f"{k} {secs[k]:.0f}"
                                                             for k in methods))
    text = ("Test accuracy (%) of the exact RNTK (`RNTKClassifierCV()`, exact leave-one-out "
            "over 8 kernel settings x 9 ridges) and of Nystroem features + "
            "`RidgeClassifierCV` under the same selection (same settings, same ridges, "
            "same leave-one-out rule), in brackets the difference to exact.\n\n"
            + "\n".join(summary) + "\n\n" + "\n".join(lines) + "\n")
    with open(os.path.join(out, "bench_nystroem_ucr.md"), "w") as f:
        f.write(text)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return text
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    ex = np.array([acc[n, "exact"] for n in names])
    for m in components:
        axes[0].scatter(ex, [acc[n, f"nystroem{m}"] for n in names], s=18,
                        label=f"m = min({m}, n_train)")
    axes[0].plot([0, 100], [0, 100], "k--", lw=0.8)
    lo = min(min(ex), *(acc[n, f"nystroem{m}"] for n in names for m in components)) - 3
    axes[0].set(xlim=(lo, 101), ylim=(lo, 101), xlabel="exact RNTK test accuracy (%)",
                ylabel="Nystroem + RidgeClassifierCV (%)", title="per dataset")
    axes[0].legend(fontsize=8)
    axes[1].plot(components, [means[f"nystroem{m}"] for m in components], "o-",
                 label="Nystroem (m = min(m, n_train))")
    axes[1].axhline(means["exact"], color="k", ls="--", label="exact")
    axes[1].axhspan(means["exact"] - 1, means["exact"] + 1, color="0.9", label="exact +- 1")
    axes[1].set(xscale="log", xlabel="n_components m", ylabel="mean test accuracy (%)",
                title=f"mean over {len(names)} datasets")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bench_nystroem_ucr.png"), dpi=110)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--datasets", default="table2",
                    help="comma-separated names, or 'table2' (default)")
    ap.add_argument("--components", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--landmarks", choices=["uniform", "kmeans++"], default="uniform")
    ap.add_argument("--n-jobs", type=int, default=None)
    ap.add_argument("--out", default=str(HERE))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the table and plot from the CSV in --out")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: the bundled Coffee data, m in {8, 16}")
    args = ap.parse_args(argv)
    if args.quick:
        args.data_home, args.datasets, args.components = "", "Coffee", [8, 16]
    os.makedirs(args.out, exist_ok=True)
    if args.report_only:
        with open(os.path.join(args.out, "bench_nystroem_ucr.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    else:
        home = None if args.quick else _data_home(args.data_home)
        if args.datasets == "table2":
            paper = load_paper_table()
            names = [d["name"] for d in list_ucr(data_home=home) if d["name"] in paper]
        else:
            names = args.datasets.split(",")
        rows = run(names, home, args.components, args.landmarks, args.n_jobs, args.out)
    print(report(rows, args.components, args.out))


if __name__ == "__main__":
    main()
