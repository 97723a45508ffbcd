"""How the mean-readout part of the default grid was chosen: nested CV on cached Grams.

For each of the 24 UCR datasets of the RNTK paper's Table 2 found in ``--data-home``, the
script computes (and caches in ``--cache``) the training Gram and the test-vs-train Gram of
every candidate kernel setting below, then scores candidate *grids* (sets of settings):

* **nested CV** (what the choice was made on): the training set is split into 5 outer
  folds (stratified, shuffled with seed 0; plain K-fold when a class has fewer than 5
  series); on 4 folds the setting and the ridge are selected by exact leave-one-out (as
  ``RNTKClassifierCV()`` does: one-vs-all kernel ridge with intercept, ridges
  ``alpha * trace(K) / n``, ties to the lower LOO squared error, then grid order), and the
  fifth fold is predicted;
* **test accuracy** (reported, never used for the choice): the same selection on the whole
  training set, scored on the test set.

Settings: ``bi2`` is the bidirectional two-layer RNTK read out at its last step on
unit-norm series (``_d0``/``_d1``: ``diff``, ``_b``: ``sigma_b``); ``mK_w..`` is the
one-layer forward RNTK with ``readout="mean"`` and about ``K`` readouts per series
(``readout_stride = round(T / K)``) on series scaled to unit RMS per step, ``sigma_u = 0.5``,
``sigma_b = 0.1`` and the given ``sigma_w``. The grid ``budget`` gives each dataset the
largest ``K`` in {128, 64, 32, 16} allowed by ``rntk._model_selection.mean_readouts`` (the
default's cost cap). Results: ``OUT/nested.csv`` (dataset x grid) and ``OUT/nested.md``.

Usage::

    python benchmarks/tune_readout_grid.py [--data-home DIR] [--cache DIR] [--out DIR]
"""

import argparse
import csv
import re
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from rntk import rntk_kernel
from rntk._estimators._ridge import KernelRidgeClassifier
from rntk._model_selection import DEFAULT_ALPHA, RidgeLOOScorer, mean_readouts, search_grams
from rntk._utils import as_sequences, normalize_series
from rntk.benchmarking import load_paper_table
from rntk.datasets import list_ucr, load_ucr

LAST = {f"bi2_d{int(d)}_b{b}": dict(direction="bidirectional", n_layers=2, diff=d, sigma_b=b)
        for d in (False, True) for b in (0.0, 0.1, 0.5, 2.0)}
MEAN = {f"m{k}_w{w}": (k, w) for k in (16, 32, 64, 128) for w in (1.0, 1.2, 1.41)}
GRIDS = {
    "last step, 8 settings (previous default)": r"bi2_.*",
    "mean, 32 readouts, 3 sigma_w": r"m32_.*",
    "last 8 + mean 32 x 3 sigma_w": r"bi2_.*|m32_.*",
    "last 8 + mean 64 (sigma_w 1.2)": r"bi2_.*|m64_w1.2",
    "last 8 + mean 128 (sigma_w 1.2)": r"bi2_.*|m128_w1.2",
    "last 2 (sigma_b 2) + mean 128 (sigma_w 1.2)": r"bi2_d._b2.0|m128_w1.2",
    "last 2 (sigma_b 2) + mean, budget (the default)": r"bi2_d._b2.0|budget_w1.2",
}


def _setting(key, T):
    if key in LAST:
        return "norm", LAST[key]
    k, w = MEAN[key]
    return "rms", dict(readout="mean", readout_stride=max(1, round(T / k)), sigma_w=w,
                       sigma_u=0.5, sigma_b=0.1)


def _grams(name, key, data, cache):
    path = cache / f"{name}__{key}.npz"
    if not path.exists():
        xtr, xte = data
        how, kw = _setting(key, max(len(x) for x in xtr))
        xtr, xte = normalize_series(xtr, how), normalize_series(xte, how)
        np.savez(path, Ktr=rntk_kernel(xtr, **kw), Kte=rntk_kernel(xte, xtr, **kw))
    z = np.load(path)
    return z["Ktr"], z["Kte"]


def _select_predict(Ks, y, Kts):
    """Select a Gram and a ridge as ``RNTKClassifierCV()`` does, refit, predict."""
    n_alpha = len(DEFAULT_ALPHA)
    candidates = [{"gram": k, "alpha": a} for k in range(len(Ks)) for a in DEFAULT_ALPHA]
    groups = [list(range(k * n_alpha, (k + 1) * n_alpha)) for k in range(len(Ks))]
    splits = [(np.arange(len(y)), np.arange(len(y)))]  # the exact leave-one-out
    best = candidates[search_grams(iter(Ks), groups, candidates, y, splits,
                                   score_gram=RidgeLOOScorer(classification=True)).best_index]
    clf = KernelRidgeClassifier(alpha=best["alpha"]).fit(Ks[best["gram"]], y)
    return clf.predict(Kts[best["gram"]])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=str(Path(__file__).resolve().parents[2] / "shared"
                                              / "data" / "ucr"))
    p.add_argument("--cache", default="results/tune_readout_grid/grams")
    p.add_argument("--out", default="results/tune_readout_grid")
    args = p.parse_args(argv)
    cache, out = Path(args.cache), Path(args.out)
    cache.mkdir(parents=True, exist_ok=True)
    table = load_paper_table()
    names = [r["name"] for r in list_ucr(args.data_home) if r["name"] in table]
    rows = []
    for name in names:
        t0 = time.perf_counter()
        Xtr, y, Xte, yte = load_ucr(name, data_home=args.data_home, download=False)
        data = as_sequences(Xtr, "X"), as_sequences(Xte, "X")
        lengths = [len(x) for x in data[0]]
        budget = f"m{mean_readouts(lengths)}_w1.2"
        _, counts = np.unique(y, return_counts=True)
        cv = (StratifiedKFold(5, shuffle=True, random_state=0) if counts.min() >= 5
              else KFold(5, shuffle=True, random_state=0))
        folds = list(cv.split(np.zeros((len(y), 1)), y))
        for grid, pattern in GRIDS.items():
            keys = [k for k in [*LAST, *MEAN] if re.fullmatch(pattern, k)]
            keys += [budget] if "budget" in pattern else []
            grams = [_grams(name, k, data, cache) for k in keys]
            hits = 0
            for tr, te in folds:
                pred = _select_predict([K[np.ix_(tr, tr)] for K, _ in grams], y[tr],
                                       [K[np.ix_(te, tr)] for K, _ in grams])
                hits += int(np.sum(pred == y[te]))
            pred = _select_predict([K for K, _ in grams], y, [Kt for _, Kt in grams])
            rows.append({"dataset": name, "grid": grid, "nested_cv": hits / len(y),
                         "test": float(np.mean(pred == yte))})
        print(f"{name:<20} {time.perf_counter() - t0:6.1f} s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "nested.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["| grid | mean nested-CV accuracy (%) | mean test accuracy (%) |", "|---|---:|---:|"]
    for grid in GRIDS:
        r = [row for row in rows if row["grid"] == grid]
        lines.append(f"| {grid} | {100 * np.mean([x['nested_cv'] for x in r]):.2f} | "
                     f"{100 * np.mean([x['test'] for x in r]):.2f} |")
    md = "\n".join(lines) + "\n"
    (out / "nested.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
