"""Probabilities of the default classifier against scikit-learn's calibration, one run.

For every dataset of ``--data-home`` listed in ``peer_results.csv`` beside it (the 48-set
UCR panel), the script fits, in the same process and alternating:

* ``RNTKClassifierCV()``, whose ``predict_proba`` scales the decision values by one
  temperature fitted on their exact leave-one-out values;
* the same fit with the temperature fixed at 1 (``fit_temperature`` replaced), the time
  of the default without probabilities;
* ``CalibratedClassifierCV(RNTKClassifierCV(), cv=3)``, scikit-learn's way (Platt's
  sigmoid on 3 folds, each fold's search refitted, the 3 calibrated models averaged; 2
  folds where a class has 2 training series, none where one has a single one).

It reports per set and over the panel the bake off redux's metrics of both probability
models (accuracy, balanced accuracy, negative log-likelihood, macro one-vs-rest AUROC,
expected calibration error; :func:`rntk.benchmarking.stats.probability_metrics`) and the
fit + predict times, and draws the reliability diagram of both, pooled over the panel.

Writes ``results.csv``, ``summary.md`` and ``reliability.png`` into ``--out``.

``--quick`` checks the script in seconds: the smallest set of the panel (or those of
``--datasets``) and a small grid.

Usage::

    python benchmarks/bench_probabilities.py [--data-home DIR] [--datasets A,B] [--out DIR]
        [--quick]
"""

import argparse
import sys
import time
from pathlib import Path
from unittest.mock import patch

import numpy as np
from sklearn.calibration import CalibratedClassifierCV

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_panel import _load, panel_names  # noqa: E402
from bench_ucr_protocols import write_outputs  # noqa: E402

from rntk import RNTKClassifierCV  # noqa: E402
from rntk.benchmarking.stats import calibration_bins, probability_metrics  # noqa: E402

QUICK_GRID = {"sigma_b": [0.0, 1.0], "alpha": [1e-3, 1e-1]}
METRICS = ("accuracy", "balanced_accuracy", "nll", "auroc", "ece")


def _fit_predict(make, X, y, X_test):
    t = time.perf_counter()
    est = make().fit(X, y)
    proba = est.predict_proba(X_test)
    return est, proba, time.perf_counter() - t


def run_set(X, y, X_test, y_test, quick=False):
    """One set: metrics and times of both probability models, and their probabilities."""
    grid = QUICK_GRID if quick else None
    row, probas = {}, {}
    ours, probas["rntk"], row["rntk_s"] = _fit_predict(
        lambda: RNTKClassifierCV(grid), X, y, X_test)
    with patch("rntk._model_selection._calibration.fit_temperature", lambda *a: 1.0):
        _, _, row["no_proba_s"] = _fit_predict(lambda: RNTKClassifierCV(grid), X, y, X_test)
    folds = min(3, int(np.unique(y, return_counts=True)[1].min()))
    if folds >= 2:  # scikit-learn's stratified folds need that many of each class
        _, probas["calibrated"], row["calibrated_s"] = _fit_predict(
            lambda: CalibratedClassifierCV(RNTKClassifierCV(grid), cv=folds), X, y, X_test)
    else:
        row["calibrated_s"] = np.nan
    row["calibrated_folds"] = folds
    for name, proba in probas.items():
        for k, v in probability_metrics(y_test, proba, ours.classes_).items():
            row[f"{name}_{k}"] = v
    return row, probas, ours.classes_


def summary(rows):
    """Markdown: per set, then the panel means and the time ratios."""
    head = ["dataset"] + [f"{m} {k}" for m in ("rntk", "calibrated")
                          for k in ("nll", "ece", "acc")] + ["rntk s", "no-proba s",
                                                             "calibrated s"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        cells = [r["dataset"]] + [f"{r[f'{m}_{k}']:.4f}" if k != "accuracy" else
                                  f"{100 * r[f'{m}_{k}']:.2f}"
                                  for m in ("rntk", "calibrated")
                                  for k in ("nll", "ece", "accuracy")]
        cells += [f"{r['rntk_s']:.2f}", f"{r['no_proba_s']:.2f}", f"{r['calibrated_s']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    both = [r for r in rows if not np.isnan(r["calibrated_nll"])]
    for m in ("rntk", "calibrated"):
        means = {k: np.mean([r[f"{m}_{k}"] for r in both]) for k in METRICS}
        lines.append(f"{m} ({len(both)} sets with both): "
                     + ", ".join(f"mean {k} {v:.4f}" for k, v in means.items()))
    lines.append(f"rntk NLL lower on {sum(r['rntk_nll'] < r['calibrated_nll'] for r in both)} "
                 f"of {len(both)} sets, ECE lower on "
                 f"{sum(r['rntk_ece'] < r['calibrated_ece'] for r in both)}.")
    t = {k: np.nansum([r[f"{k}_s"] for r in rows]) for k in ("rntk", "no_proba", "calibrated")}
    lines.append(f"{len(rows)} sets: the default fit + predict {t['rntk']:.1f} s, without "
                 f"probabilities {t['no_proba']:.1f} s ({t['rntk'] / t['no_proba']:.2f}x); "
                 f"CalibratedClassifierCV {t['calibrated']:.1f} s "
                 f"({t['calibrated'] / t['rntk']:.2f}x the default).")
    return "\n".join(lines) + "\n"


def plot(pooled, path):
    """Draw the reliability diagram of both probability models, pooled over the sets."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - the plot extra
        return
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], "k--", lw=1, label="perfect calibration")
    for name, label in (("rntk", "RNTKClassifierCV().predict_proba"),
                        ("calibrated", "CalibratedClassifierCV(..., cv=3)")):
        conf, acc, _ = calibration_bins(*pooled[name])
        ax.plot(conf, acc, "o-", label=label)
    ax.set_xlabel("confidence of the most probable class")
    ax.set_ylabel("accuracy")
    ax.set_title("Reliability on the test sets (pooled)")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    """Run the benchmark; return the result rows."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-home", default=str(HERE.parent.parent / "shared" / "data" / "ucr"))
    p.add_argument("--datasets", default=None, help="comma list (default: the panel)")
    p.add_argument("--out", default="results/bench_probabilities")
    p.add_argument("--quick", action="store_true", help="the smallest set, a small grid")
    args = p.parse_args(argv)
    names = panel_names(args.data_home, args.datasets, smallest=args.quick)
    rng = np.random.default_rng(0)  # a warm-up: no compilation is timed
    run_set(rng.normal(size=(12, 20)), np.repeat([0, 1, 2], 4), rng.normal(size=(6, 20)),
            np.repeat([0, 1, 2], 2), quick=True)
    rows, pooled = [], {"rntk": ([], []), "calibrated": ([], [])}
    for name in names:
        X, y, X_test, y_test = _load(name, args.data_home)
        row, probas, classes = run_set(X, y, X_test, y_test, args.quick)
        row = {"dataset": name, **row}
        rows.append(row)
        for k in METRICS:
            row.setdefault(f"calibrated_{k}", np.nan)
        for m, proba in probas.items():  # confidence and correctness, pooled
            pooled[m][0].append(proba.max(axis=1))
            pooled[m][1].append(classes[proba.argmax(axis=1)] == np.asarray(y_test))
        print(f"{name:<32} nll {row['rntk_nll']:.4f} vs {row['calibrated_nll']:.4f}, "
              f"{row['rntk_s']:.2f} s / {row['no_proba_s']:.2f} s / "
              f"{row['calibrated_s']:.2f} s", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = summary(rows)
    write_outputs(out, rows, text)
    plot({m: (np.concatenate(c), np.concatenate(k)) for m, (c, k) in pooled.items()},
         out / "reliability.png")
    print(text)
    return rows


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0 if main() else 1)
