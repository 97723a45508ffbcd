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

Settings: ``last_d0``/``last_d1`` are the bidirectional two-layer RNTK read out at its
last step on unit-norm series (``diff`` off/on, ``sigma_b = 2``). The others are the
one-layer forward RNTK with ``readout="mean"`` on series scaled to unit RMS per step,
``sigma_u = 0.5``, ``sigma_b = 0.1``, ``sigma_w = 1.2``: ``band{B}`` reads out every step
with ``readout_band=B``; ``pool4`` reads block means of 4 steps (``pool=4``) with every
pair of readouts and the stride of ``rntk.model_selection.mean_readouts`` (the default's
cost cap); ``full`` reads the unpooled series with every pair of readouts, its stride from
the same cap; ``full_prev`` is the previous default's (128, 64, 32 or 16 readouts, cap
5e8). The grid "default" is ``rntk.model_selection.DEFAULT_GRID``. Results:
``OUT/nested.csv`` (dataset x grid) and ``OUT/nested.md``.

``--quick`` runs the same on the smallest dataset only (a check of the script, seconds on
a small set).

Usage::

    python benchmarks/studies/tune_readout_grid.py [--data-home DIR] [--cache DIR] [--out DIR]
        [--quick]
"""

import argparse
import csv
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from rntk import rntk_kernel
from rntk._model_selection import mean_readouts
from rntk._utils import as_sequences, normalize_series, pool_series
from rntk.benchmarking import load_paper_table
from rntk.datasets import list_ucr, load_ucr
from rntk.model_selection import (
    DEFAULT_ALPHA,
    KernelRidgeClassifier,
    RidgeLOOScorer,
    search_grams,
)

MEAN = dict(readout="mean", sigma_u=0.5, sigma_b=0.1, sigma_w=1.2)
SETTINGS = {
    "last_d0": ("norm", 1, dict(direction="bidirectional", n_layers=2, diff=False,
                                sigma_b=2.0)),
    "last_d1": ("norm", 1, dict(direction="bidirectional", n_layers=2, diff=True,
                                sigma_b=2.0)),
    **{f"band{b}": ("rms", 1, dict(MEAN, readout_band=b)) for b in (4, 8, 16, 32)},
    "pool4": ("rms", 4, MEAN),
    "full": ("rms", 1, MEAN),
    "full_prev": ("rms", 1, MEAN),
}
GRIDS = {
    "previous default: last 2 + full_prev": "last_d0 last_d1 full_prev",
    "last 2 + full": "last_d0 last_d1 full",
    "last 2 + pool4": "last_d0 last_d1 pool4",
    "last 2 + band8": "last_d0 last_d1 band8",
    "last 2 + band4 + pool4": "last_d0 last_d1 band4 pool4",
    "last 2 + band8 + pool4 (the default)": "last_d0 last_d1 band8 pool4",
    "last 2 + band16 + pool4": "last_d0 last_d1 band16 pool4",
    "last 2 + band32 + pool4": "last_d0 last_d1 band32 pool4",
    "last 2 + band8 + band32 + pool4": "last_d0 last_d1 band8 band32 pool4",
    "last 2 + band8 + pool4 + full": "last_d0 last_d1 band8 pool4 full",
}


def _stride(key, lengths):
    """Return the readout stride of a mean setting on these training lengths."""
    if key == "full_prev":  # the previous default: 128 halved while n^2 R T > 5e8
        n, t, r = len(lengths), max(lengths), 128
        while r > 16 and n * n * min(r, t) * t > 5e8:
            r //= 2
        return max(1, round(t / r))
    if key in ("full", "pool4"):
        pool = SETTINGS[key][1]
        return max(1, round(-(-max(lengths) // pool) / mean_readouts(lengths, pool)))
    return 1


def _grams(name, key, data, cache):
    path = cache / f"{name}__{key}.npz"
    if not path.exists():
        xtr, xte = data
        how, pool, kw = SETTINGS[key]
        if kw.get("readout") == "mean":
            kw = dict(kw, readout_stride=_stride(key, [len(x) for x in xtr]))
        xtr, xte = (pool_series(normalize_series(x, how), pool) for x in (xtr, xte))
        t0 = time.perf_counter()
        Ktr, Kte = rntk_kernel(xtr, **kw), rntk_kernel(xte, xtr, **kw)
        np.savez(path, Ktr=Ktr, Kte=Kte, seconds=time.perf_counter() - t0)
    z = np.load(path)
    return z["Ktr"], z["Kte"], float(z["seconds"])


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
    p.add_argument("--data-home", default=str(Path(__file__).resolve().parents[3] / "shared"
                                              / "data" / "ucr"))
    p.add_argument("--cache", default="results/tune_readout_grid/grams")
    p.add_argument("--out", default="results/tune_readout_grid")
    p.add_argument("--quick", action="store_true", help="the smallest dataset only")
    args = p.parse_args(argv)
    cache, out = Path(args.cache), Path(args.out)
    cache.mkdir(parents=True, exist_ok=True)
    table = load_paper_table()
    found = [r for r in list_ucr(args.data_home) if r["name"] in table]
    if args.quick:
        found = [min(found, key=lambda r: r["n_train"] * (r["n_train"] + r["n_test"])
                     * r["max_length"])]
    names = [r["name"] for r in found]
    rows = []
    for name in names:
        t0 = time.perf_counter()
        Xtr, y, Xte, yte = load_ucr(name, data_home=args.data_home, download=False)
        data = as_sequences(Xtr, "X"), as_sequences(Xte, "X")
        _, counts = np.unique(y, return_counts=True)
        cv = (StratifiedKFold(5, shuffle=True, random_state=0) if counts.min() >= 5
              else KFold(5, shuffle=True, random_state=0))
        folds = list(cv.split(np.zeros((len(y), 1)), y))
        for grid, keys in GRIDS.items():
            keys = keys.split()
            grams = [_grams(name, k, data, cache) for k in keys]
            hits = 0
            for tr, te in folds:
                pred = _select_predict([K[np.ix_(tr, tr)] for K, _, _ in grams], y[tr],
                                       [K[np.ix_(te, tr)] for K, _, _ in grams])
                hits += int(np.sum(pred == y[te]))
            pred = _select_predict([K for K, _, _ in grams], y, [Kt for _, Kt, _ in grams])
            rows.append({"dataset": name, "grid": grid, "nested_cv": hits / len(y),
                         "test": float(np.mean(pred == yte)),
                         "gram_seconds": sum(g[2] for g in grams)})
        print(f"{name:<20} {time.perf_counter() - t0:6.1f} s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "nested.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["| grid | mean nested-CV accuracy (%) | mean test accuracy (%) | all Grams (s) |",
             "|---|---:|---:|---:|"]
    for grid in GRIDS:
        r = [row for row in rows if row["grid"] == grid]
        lines.append(f"| {grid} | {100 * np.mean([x['nested_cv'] for x in r]):.2f} | "
                     f"{100 * np.mean([x['test'] for x in r]):.2f} | "
                     f"{sum(x['gram_seconds'] for x in r):.1f} |")
    md = "\n".join(lines) + "\n"
    (out / "nested.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
