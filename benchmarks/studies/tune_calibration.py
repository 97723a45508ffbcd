"""Choose how the default classifier's probabilities are calibrated, by nested CV.

For every dataset of ``--data-home`` listed in ``peer_results.csv`` beside it (the 48-set
UCR panel), on the training set alone: 5 outer folds (stratified where every class has 5
training series, else plain); on each outer-training part ``RNTKClassifierCV()`` is fitted
once, and each calibration candidate is fitted on the out-of-sample (exact leave-one-out)
decision values it keeps (``best_estimator_.oos_decision_``) and scored by the negative
log-likelihood of the outer-test part:

* ``labels``: one temperature minimising the NLL of the training labels;
* ``platt``: one temperature minimising the cross-entropy of Platt's targets (the rule
  of succession, ``(N_c + 1) / (N_c + 2)``; the default);
* ``none``: the decision values' softmax without a temperature (scale 1).

The panel's score of a candidate is its mean outer-test NLL over the sets (and the number
of sets where it is the lowest). Writes ``calibration.csv`` and ``calibration.md`` into
``--out``.

``--quick`` checks the script in seconds: the smallest set of the panel (or those of
``--datasets``) and a small grid.

Usage::

    python benchmarks/studies/tune_calibration.py [--data-home DIR] [--datasets A,B] [--out DIR]
        [--quick]
"""

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # the studies, the timing scripts

from bench_panel import _load  # noqa: E402
from harness import panel_names  # noqa: E402

from rntk import RNTKClassifierCV  # noqa: E402
from rntk._model_selection._calibration import decision_log_proba, fit_temperature

QUICK_GRID = {"sigma_b": [0.0, 1.0], "alpha": [1e-3, 1e-1]}


CANDIDATES = {"labels": lambda D, yi: fit_temperature(D, yi, targets="labels"),
              "platt": lambda D, yi: fit_temperature(D, yi, targets="platt"),
              "none": lambda D, yi: 1.0}


def nested_nll(X, y, grid=None, seed=0):
    """Outer-test NLL of each candidate, pooled over 5 outer folds of the training set."""
    y = np.asarray(y)
    counts = np.unique(y, return_counts=True)[1]
    splitter = (StratifiedKFold(5, shuffle=True, random_state=seed) if counts.min() >= 5
                else KFold(5, shuffle=True, random_state=seed))
    total = {k: 0.0 for k in CANDIDATES}
    n = 0
    for train, test in splitter.split(np.zeros(len(y)), y):
        if len(np.unique(y[train])) < 2:
            continue
        Xtr = [X[i] for i in train] if isinstance(X, list) else X[train]
        Xte = [X[i] for i in test] if isinstance(X, list) else X[test]
        clf = RNTKClassifierCV(grid).fit(Xtr, y[train])
        est = clf.best_estimator_
        classes = clf.classes_
        yi_train = np.searchsorted(classes, y[train])
        D_test = clf.decision_function(Xte)
        known = np.isin(y[test], classes)  # a class absent from the outer-training part
        yi_test = np.searchsorted(classes, y[test][known])
        for k, fit in CANDIDATES.items():
            L = decision_log_proba(D_test[known], fit(est.oos_decision_, yi_train))
            total[k] -= np.sum(np.maximum(L[np.arange(len(yi_test)), yi_test], np.log(1e-15)))
        n += int(known.sum())
    return {k: v / max(n, 1) for k, v in total.items()}


def main(argv=None):
    """Run the nested comparison; return the result rows."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-home", default=str(HERE.parents[2] / "shared" / "data" / "ucr"))
    p.add_argument("--datasets", default=None, help="comma list (default: the panel)")
    p.add_argument("--out", default="results/tune_calibration")
    p.add_argument("--quick", action="store_true", help="the smallest set, a small grid")
    args = p.parse_args(argv)
    names = panel_names(args.data_home, args.datasets, smallest=args.quick)
    rows = []
    for name in names:
        X, y, _, _ = _load(name, args.data_home)
        row = {"dataset": name, **nested_nll(X, y, QUICK_GRID if args.quick else None)}
        rows.append(row)
        print(name, {k: round(v, 4) for k, v in row.items() if k != "dataset"}, flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "calibration.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["| candidate | mean nested NLL | sets where lowest |", "|---|---:|---:|"]
    for k in CANDIDATES:
        best = sum(min(CANDIDATES, key=lambda c: r[c]) == k for r in rows)
        lines.append(f"| {k} | {np.mean([r[k] for r in rows]):.4f} | {best} |")
    text = "\n".join(lines) + "\n"
    (out / "calibration.md").write_text(text, encoding="utf-8")
    print(text)
    return rows


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0 if main() else 1)
