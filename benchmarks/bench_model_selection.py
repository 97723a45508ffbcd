"""RNTKClassifierCV against GridSearchCV(RNTKClassifier()): same grid, same folds.

Both searches run in this process, one after the other, on a bundled UCR dataset
(GunPoint by default) with the same deterministic ``StratifiedKFold`` folds and the
same number of kernel threads. ``GridSearchCV`` recomputes the RNTK Gram of every
training fold and the test-vs-train kernel for every (candidate, fold) pair;
``RNTKClassifierCV`` computes the Gram of the whole training set once per kernel
setting and evaluates every fold and every ``C`` on slices of it. The script
reports both times, their ratio, and checks that both select the same parameters
with the same cross-validation scores.

The default grid is a 200-candidate slice of the RNTK paper's Appendix A.1 grid
(GridSearchCV then takes tens of seconds); ``--full`` runs the paper's whole grid
(4500 candidates x 10 folds = 45000 GridSearchCV fits: many minutes), ``--quick``
a 12-candidate grid on the bundled Coffee data with 3 folds (a smoke test).

Usage::

    python benchmarks/bench_model_selection.py [--dataset GunPoint] [--full | --quick]
"""

import argparse
import json
import os
import platform
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold

from rntk import RNTKClassifier, RNTKClassifierCV
from rntk.benchmarking import PROTOCOLS
from rntk.datasets import load_ucr

#: The paper's grid of the RNTK (Appendix A.1) and its values of C.
PAPER_GRID, PAPER_C = PROTOCOLS["paper"]["rntk"], PROTOCOLS["paper"]["C"]
GRIDS = {
    "quick": {"sigma_w": [1.40, 2**0.5], "sigma_b": [0.0, 1.0], "sigma_h": [0.0],
              "C": [0.01, 1.0, 100.0]},
    "default": {"sigma_w": [1.36, 1.40, 2**0.5, 1.44], "sigma_b": [0.0, 0.1, 0.5, 1.0, 2.0],
                "sigma_h": [0.0, 0.5], "C": PAPER_C},
    "full": {**PAPER_GRID, "C": PAPER_C},
}


QUICK_DATASET = "Coffee"


def run(dataset="GunPoint", grid_name="default", n_jobs=None, cv=10, data_home=None):
    X, y = load_ucr(dataset, split="train", data_home=data_home)
    grid = GRIDS[grid_name]
    folds = StratifiedKFold(cv)
    n_cand = len(ParameterGrid(grid))
    print(f"{dataset}: {len(y)} training series; grid '{grid_name}': {n_cand} candidates x "
          f"{cv} folds")

    y = np.asarray(y)
    two = np.r_[np.flatnonzero(y == y[0])[:2], np.flatnonzero(y != y[0])[:2]]
    RNTKClassifier().fit(X[two], y[two])  # compile the kernel before timing either search

    t0 = time.perf_counter()
    fast = RNTKClassifierCV(grid, protocol="paper", cv=folds, n_jobs=n_jobs).fit(X, y)
    t_fast = time.perf_counter() - t0
    print(f"RNTKClassifierCV:                 {t_fast:8.2f} s", flush=True)

    t0 = time.perf_counter()
    slow = GridSearchCV(RNTKClassifier(n_jobs=n_jobs), grid, cv=folds).fit(X, y)
    t_slow = time.perf_counter() - t0
    print(f"GridSearchCV(RNTKClassifier()):   {t_slow:8.2f} s")

    same_params = fast.best_params_ == slow.best_params_
    diff = float(np.max(np.abs(fast.cv_results_["mean_test_score"]
                               - slow.cv_results_["mean_test_score"])))
    ratio = t_slow / t_fast
    print(f"speed-up: {ratio:.1f}x | same best parameters: {same_params} "
          f"({fast.best_params_}) | max |mean CV score difference|: {diff:.2g}")
    return dict(dataset=dataset, grid=grid_name, n_candidates=n_cand, n_folds=cv,
                n_train=int(len(y)), time_rntk_cv_s=t_fast, time_gridsearchcv_s=t_slow,
                speedup=ratio, same_best_params=bool(same_params),
                best_params=fast.best_params_, best_score=fast.best_score_,
                max_mean_score_difference=diff, machine=platform.processor() or
                platform.machine(), cpu_count=os.cpu_count())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="GunPoint")
    parser.add_argument("--data-home", default=None)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--full", action="store_true", help="the paper's whole grid (slow)")
    group.add_argument("--quick", action="store_true",
                       help="a 12-candidate grid on Coffee with 3 folds (a smoke test)")
    parser.add_argument("--cv", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--out", default="results/bench_model_selection")
    args = parser.parse_args(argv)
    grid_name = "full" if args.full else "quick" if args.quick else "default"
    if args.quick:  # a smoke test: small bundled data, few folds
        args.dataset, args.cv = QUICK_DATASET, min(args.cv, 3)
    result = run(args.dataset, grid_name, args.n_jobs, args.cv, args.data_home)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.dataset}_{grid_name}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    main()
