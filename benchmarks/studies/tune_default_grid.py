"""How the default grid of RNTKClassifierCV was chosen: nested cross-validation on training sets.

For each candidate grid and each dataset, the training set is split into 5 outer folds
(stratified, shuffled with seed 0; plain K-fold when a class has fewer than 5 series);
``RNTKClassifierCV(grid)`` (exact leave-one-out inside) is fitted on 4 of them and
scored on the fifth. The grid with the best mean nested-CV accuracy over the datasets
is the candidate for the default; the test sets are never read. Per-dataset nested
accuracies go to ``OUT/nested_cv.csv`` and the table to ``OUT/nested_cv.md``.

``--quick`` runs the same on the smallest dataset only (a check of the script, seconds on
a small set).

Usage::

    python benchmarks/studies/tune_default_grid.py [--data-home DIR] [--out DIR] [--quick]
"""

import argparse
import csv
import math
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import _safe_indexing

from rntk import RNTKClassifierCV
from rntk._model_selection import LAST_STEP_GRID, MEAN_NETWORK, mean_readouts
from rntk.benchmarking import load_paper_table
from rntk.datasets import list_ucr, load_ucr
from rntk.model_selection import DEFAULT_ALPHA, default_grid

SIGMA_B = [0.0, 0.1, 0.5, 2.0]
ALPHA = {"alpha": list(DEFAULT_ALPHA)}
LAST = LAST_STEP_GRID  # the last-step part of the default grid
MEAN = MEAN_NETWORK  # the mean readout of the previous default (no band, no pooling)


def _with_stride(grid, lengths):
    """Give the mean-readout settings of ``grid`` the default grid's readout stride."""
    stride = max(1, round(max(lengths) / mean_readouts(lengths)))
    return [{**g, "readout_stride": [stride]} if g.get("readout") == ["mean"] else g
            for g in grid]


# each candidate grid is a function of the training lengths (the readout stride)
GRIDS = {
    "forward, sigma_b (4)": lambda lengths: [{"sigma_b": SIGMA_B, **ALPHA}],
    "bidirectional, 2 layers, diff, sigma_b = 2 (2)": lambda lengths: [{**LAST, **ALPHA}],
    "direction x diff x depth x sigma_b (32)": lambda lengths: [{
        "direction": ["forward", "bidirectional"], "diff": [False, True],
        "n_layers": [1, 2], "sigma_b": SIGMA_B, **ALPHA}],
    "mean readout, 128 readouts, rms (1)": lambda lengths: _with_stride(
        [{**MEAN, **ALPHA}], lengths),
    "mean readout, 128 readouts, sigma_w x diff (6)": lambda lengths: _with_stride(
        [{**MEAN, "sigma_w": [1.0, 1.2, math.sqrt(2)], "diff": [False, True], **ALPHA}],
        lengths),
    "the default grid": lambda lengths: default_grid(lengths, DEFAULT_ALPHA),
}


def _outer_folds(y, seed=0):
    _, counts = np.unique(y, return_counts=True)
    cv = (StratifiedKFold(5, shuffle=True, random_state=seed) if counts.min() >= 5
          else KFold(5, shuffle=True, random_state=seed))
    return list(cv.split(np.zeros((len(y), 1)), y))


def _size(row):
    """Cost of a dataset of ``list_ucr``: ``n_train (n_train + n_test) max_length``."""
    return row["n_train"] * (row["n_train"] + row["n_test"]) * row["max_length"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=str(Path(__file__).resolve().parents[3] / "shared"
                                              / "data" / "ucr"))
    p.add_argument("--out", default="results/tune_default_grid")
    p.add_argument("--quick", action="store_true", help="the smallest dataset only")
    args = p.parse_args(argv)
    table = load_paper_table()
    found = [r for r in list_ucr(args.data_home) if r["name"] in table]
    if args.quick:
        found = [min(found, key=_size)]
    datasets = [r["name"] for r in found]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for d in datasets:
        X, y, _, _ = load_ucr(d, data_home=args.data_home)  # the training split only
        y = np.asarray(y)
        folds = _outer_folds(y)
        for name, make_grid in GRIDS.items():
            t = time.perf_counter()
            hits = 0
            for train, test in folds:
                Xt = _safe_indexing(X, train)
                grid = make_grid([len(x) for x in Xt])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = RNTKClassifierCV(grid).fit(Xt, y[train])
                hits += int(np.sum(est.predict(_safe_indexing(X, test)) == y[test]))
            rows.append({"dataset": d, "grid": name, "nested_cv": hits / len(y),
                         "seconds": time.perf_counter() - t})
            print(f"{d:<20} {name:<45} {100 * hits / len(y):6.2f}%", flush=True)
    with open(out / "nested_cv.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["| grid | mean nested-CV accuracy (%) | datasets won / lost vs the first |",
             "|---|---:|---:|"]
    acc = {g: np.array([r["nested_cv"] for r in rows if r["grid"] == g]) for g in GRIDS}
    first = acc[next(iter(GRIDS))]
    for g, a in acc.items():
        lines.append(f"| {g} | {100 * a.mean():.2f} | {int(np.sum(a > first))} / "
                     f"{int(np.sum(a < first))} |")
    md = "\n".join(lines) + "\n"
    (out / "nested_cv.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
