"""Target transforms for the default regressor, by nested CV on the extrinsic-regression panel.

Heavy-tailed non-negative targets (``ChilledWaterPredictor``: 6 of 321 training targets
between 6,220 and 29,015, the test targets below 2,713) pull a squared-loss fit towards
their outliers. This script fits ``RNTKRegressorCV()`` on ``f(y)`` and predicts
``f^{-1}`` of its predictions, for ``f`` the identity (the default), ``log1p`` and
``sqrt`` (sets with a negative target keep the identity alone), and scores each by

* **nested CV** (what a choice would be made on): 5 outer folds of each training set
  (shuffled, seed 0), the search fitted on 4, the RMSE of the fifth on the original scale;
* **test RMSE** (reported only).

Writes ``target_transform.csv`` and ``target_transform.md`` under ``--out``. Results: see
``benchmarks/README.md``.

Usage::

    python benchmarks/studies/tune_target_transform.py [--quick] [--data-home DIR] [--out DIR]
"""

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
import bench_tser as R  # noqa: E402

from rntk import RNTKRegressorCV  # noqa: E402

#: name -> (f, f^{-1}); the non-identity ones need non-negative targets.
TRANSFORMS = {"identity": (lambda y: y, lambda y: y),
              "log1p": (np.log1p, np.expm1),
              "sqrt": (np.sqrt, np.square)}


def _rmse(y, p):
    return float(np.sqrt(np.mean((np.asarray(y) - np.asarray(p)) ** 2)))


def scores(X, y, X_test, y_test, grid=None):
    """Return ``{transform: (nested RMSE, test RMSE)}`` on one set."""
    out = {}
    for name, (f, inv) in TRANSFORMS.items():
        if name != "identity" and np.min(y) < 0:
            continue
        sq = []
        for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
            fold = RNTKRegressorCV(grid).fit(X[tr], f(y[tr]))
            sq.append(np.mean((inv(fold.predict(X[te])) - y[te]) ** 2))
        test = inv(RNTKRegressorCV(grid).fit(X, f(y)).predict(X_test))
        out[name] = (float(np.sqrt(np.mean(sq))), _rmse(y_test, test))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=R.default_home())
    p.add_argument("--out", default="results/tune_target_transform")
    p.add_argument("--quick", action="store_true",
                   help="the first set only, on bench_tser.py's small grid")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = R.dataset_names(args.data_home)[:1 if args.quick else None]
    rows = []
    for name in names:
        X, y, X_test, y_test = R.load(name, args.data_home)
        mean = _rmse(y_test, np.full(len(y_test), np.mean(y)))
        for t, (nested, test) in scores(X, y, X_test, y_test,
                                        R.QUICK_GRID if args.quick else None).items():
            rows.append({"dataset": name, "transform": t, "nested_rmse": nested,
                         "test_rmse": test, "mean_predictor_test_rmse": mean})
            print(f"{name:<24} {t:<9} nested {nested:.5g}  test {test:.5g}  (mean {mean:.5g})",
                  flush=True)
    with open(out / "target_transform.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["| dataset | transform | nested RMSE | test RMSE (reported only) | mean predictor "
             "(test) |", "|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['transform']} | {r['nested_rmse']:.4g} | "
                     f"{r['test_rmse']:.4g} | {r['mean_predictor_test_rmse']:.4g} |")
    (out / "target_transform.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
