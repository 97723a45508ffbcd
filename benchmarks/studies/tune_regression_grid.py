"""Choose the default regression grid by nested cross-validation on training sets.

For every extrinsic-regression dataset of ``--data-home`` (one folder per set with
``NAME_TRAIN.ts`` and ``NAME_TEST.ts``, the layout of the TSER archive), the script
computes the training Gram of every candidate kernel setting once (named settings of
:data:`rntk.model_selection.REGRESSION_SETTINGS`, and cheaper sizes of them), then
scores *grids*, subsets of the settings with a number ``k`` of averaged members, by
nested cross-validation on the training set alone:

* 5 outer folds (``--seeds`` repeats with other shuffles); on each outer-training part,
  every setting's relative ridges (:data:`rntk.model_selection.DEFAULT_REGRESSION_ALPHA`,
  ``inf`` the mean) are scored by their exact leave-one-out ``R^2``, clipped as
  :class:`rntk.model_selection.KernelRidgeRegressor` clips
  (:meth:`rntk.model_selection.RidgeLOOScorer.regression_loo`), as
  :class:`rntk.RNTKRegressorCV` does; the best candidates of the ``k`` best settings are
  averaged (the mean instead, where the average's leave-one-out ``R^2`` is not above
  it) and predict the outer-test part;
* the score of a grid on a set is its outer-test RMSE divided by that of the
  outer-training mean; the panel's score is the geometric mean of those ratios (and the
  worst set).

The test sets are used only to report (``--test``): each grid refitted on the whole
training set, its test RMSE over the mean predictor's, and the seconds of the Grams it
needs (training Grams of its settings and test Grams of its members).

The channel statistics of ``normalize="dataset"`` come from the whole training set
(they use no target), so the outer folds share them.

Writes ``nested.csv`` and ``nested.md`` into ``--out``; the Grams are cached in
``--cache``.

Usage::

    python benchmarks/studies/tune_regression_grid.py [--data-home DIR] [--datasets A,B]
        [--out DIR] [--cache DIR] [--seeds 0,1] [--test] [--quick]
"""

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # the studies, the timing scripts

from bench_tser import dataset_names, default_home  # noqa: E402
from bench_tser import load as load_set  # noqa: E402

from rntk import AmplitudeSpectrum, ValueQuantiles, rntk_kernel  # noqa: E402
from rntk._model_selection._scorers import loo_r2
from rntk._utils import as_sequences, normalize_series, pool_series
from rntk._utils._sequences import channel_statistics, standardize_channels
from rntk.model_selection import (
    DEFAULT_REGRESSION_ALPHA,
    KernelRidgeRegressor,
    RidgeLOOScorer,
    default_regression_grid,
)

#: Candidate settings: a name of ``REGRESSION_SETTINGS`` and its size (``band_steps``: the
#: band on series pooled to at most that many steps; ``bins`` / ``levels``: at most that
#: many frequencies / quantile levels; ``normalize`` / ``diff``: another scaling, or the
#: first differences as extra channels). The default's are ``band64``, ``spectrum64`` and
#: ``quantiles32``; the others are the classifier's sizes, or other scalings.
CANDIDATES = {
    "last": ("last", {}),
    "band": ("band", {"band_steps": 128}),
    "band64": ("band", {"band_steps": 64}),
    "pool8": ("pool8", {}),
    "pool4": ("pool4", {}),
    "spectrum": ("spectrum", {"bins": 128}),
    "spectrum64": ("spectrum", {"bins": 64}),
    "quantiles": ("quantiles", {"levels": 64}),
    "quantiles32": ("quantiles", {"levels": 32}),
    # other scalings and inputs: per series (shape only), the series as given, and the
    # first differences as extra channels
    "band64_rms": ("band", {"band_steps": 64, "normalize": "rms"}),
    "pool8_rms": ("pool8", {"normalize": "rms"}),
    "band64_raw": ("band", {"band_steps": 64, "normalize": False}),
    "pool4_raw": ("pool4", {"normalize": False}),
    "band64_diff": ("band", {"band_steps": 64, "diff": True}),
}

#: Grids scored: tuples of candidate names, each with every ``k`` up to its size (at
#: most 3), beside every single candidate.
GRIDS = [
    ("spectrum", "band"),
    ("spectrum", "band", "quantiles"),
    ("spectrum", "band", "pool8"),
    ("spectrum", "band", "quantiles", "pool4"),
    ("spectrum", "band", "quantiles", "pool8", "last"),
    ("spectrum", "band", "quantiles", "pool4", "pool8", "last"),
    ("spectrum64", "band64", "quantiles32"),
    ("spectrum64", "band64"),
    ("spectrum64", "band64", "pool8"),
    ("spectrum", "band64", "quantiles32"),
    ("band", "quantiles", "pool8"),
    ("spectrum64", "band64", "quantiles32", "band64_rms", "pool8_rms"),
    ("spectrum64", "band64", "quantiles32", "band64_raw", "pool4_raw"),
    ("spectrum64", "band64_diff", "quantiles32"),
]


def load(name, home):
    """Training and test series (as sequences) and targets of one set (bench_tser's)."""
    X, y, X_test, y_test = load_set(name, home)
    return [as_sequences(X), y, as_sequences(X_test), y_test]


def _setting(key, lengths):
    """Kernel parameters and preparation of a candidate for these training lengths."""
    name, size = CANDIDATES[key]
    params = {k: v[0] for k, v in default_regression_grid(lengths, settings=[name])[0].items()}
    longest = max(lengths)
    if "band_steps" in size:
        params["pool"] = max(1, -(-longest // size["band_steps"]))
    if "bins" in size:
        params["spectrum"] = max(2, min(size["bins"], longest // 2 + 1))
    if "levels" in size:
        params["quantiles"] = max(2, min(size["levels"], longest))
    for key in ("normalize", "diff"):
        if key in size:
            params[key] = size[key]
    return params


def _prepare(params, xs, stats):
    """Return the series as ``RNTKRegressor(**params)`` prepares them (public functions)."""
    if params.get("normalize") == "dataset":
        xs = standardize_channels(xs, *stats)
    if params.get("spectrum"):
        xs = as_sequences(AmplitudeSpectrum(params["spectrum"]).fit_transform(xs))
    if params.get("quantiles"):
        xs = as_sequences(ValueQuantiles(params["quantiles"]).fit_transform(xs))
    xs = normalize_series(xs, params.get("normalize", False))
    return pool_series(xs, params.get("pool", 1))


def grams(name, key, data, cache):
    """Training Gram, test-vs-train Gram and their seconds for one candidate (cached)."""
    path = Path(cache) / f"{name}__{key}.npz"
    if not path.exists():
        xtr, _, xte, _ = data
        params = _setting(key, [len(x) for x in xtr])
        kernel = {k: v for k, v in params.items()
                  if k not in ("normalize", "pool", "spectrum", "quantiles")}
        stats = channel_statistics(xtr)  # used by normalize="dataset" only
        t0 = time.perf_counter()
        ptr, pte = _prepare(params, xtr, stats), _prepare(params, xte, stats)
        Ktr = rntk_kernel(ptr, **kernel)
        t1 = time.perf_counter()
        Kte = rntk_kernel(pte, ptr, **kernel)
        np.savez(path, Ktr=Ktr, Kte=Kte, train_seconds=t1 - t0,
                 test_seconds=time.perf_counter() - t1)
    z = np.load(path)
    return z["Ktr"], z["Kte"], float(z["train_seconds"]), float(z["test_seconds"])


def best_candidate(K, y):
    """Return a setting's best candidate: ``(LOO R^2, alpha, LOO predictions)``."""
    alphas = np.array(DEFAULT_REGRESSION_ALPHA)
    loo = RidgeLOOScorer(classification=False).regression_loo(K, y, alphas)
    r2 = loo_r2(y, loo)
    a = int(np.argmax(r2))  # the first best, as the search
    return r2[a], alphas[a], loo[a]


def select(best, y, keys, k):
    """Members ``[(key, alpha)]`` the default search refits, from ``best[key]``."""
    ranked = sorted(keys, key=lambda key: -best[key][0])  # stable: grid order on ties
    top = ranked[:k]
    n = len(y)
    mean_loo = (y.sum() - y) / (n - 1)
    mean_r2 = loo_r2(y, mean_loo[None, :, None])[0]
    if loo_r2(y, np.mean([best[key][2] for key in top], axis=0)[None])[0] <= mean_r2:
        return [(keys[0], np.inf)]
    return [(key, best[key][1]) for key in top]


def predict(members, Ks_train, Ks_test, y, memo=None):
    """Mean prediction of the refitted members (``memo`` keeps each member's)."""
    memo = {} if memo is None else memo
    for key, a in members:
        if (key, a) not in memo:
            memo[key, a] = KernelRidgeRegressor(alpha=a).fit(Ks_train[key], y).predict(
                Ks_test[key])
    return np.mean([memo[m] for m in members], axis=0)


def outer_folds(n, seed):
    """Five shuffled folds of ``range(n)``."""
    order = np.random.default_rng(seed).permutation(n)
    return [np.sort(f) for f in np.array_split(order, 5)]


class OuterFolds:
    """The outer folds of one set, with each setting's best candidate per fold, once."""

    def __init__(self, Ks, y, seeds):
        self.Ks, self.y = Ks, y
        self.folds = [te for seed in seeds for te in outer_folds(len(y), seed)]
        self.best, self.memo = {}, {}

    def ratio(self, keys, k):
        """Outer-test RMSE of the grid over the outer-training mean's, folds pooled."""
        y, sse, sse_mean = self.y, 0.0, 0.0
        for f, te in enumerate(self.folds):
            tr = np.setdiff1d(np.arange(len(y)), te)
            Ktr = {key: self.Ks[key][np.ix_(tr, tr)] for key in keys}
            Kte = {key: self.Ks[key][np.ix_(te, tr)] for key in keys}
            for key in keys:
                if (f, key) not in self.best:
                    self.best[f, key] = best_candidate(Ktr[key], y[tr])
            best = {key: self.best[f, key] for key in keys}
            pred = predict(select(best, y[tr], keys, k), Ktr, Kte, y[tr],
                           self.memo.setdefault(f, {}))
            sse += np.sum((y[te] - pred) ** 2)
            sse_mean += np.sum((y[te] - y[tr].mean()) ** 2)
        return float(np.sqrt(sse / sse_mean))


def grids(candidates):
    """Return the scored grids: every single candidate, then ``GRIDS``, with their ``k``."""
    out = [((key,), 1) for key in candidates]
    for g in GRIDS:
        if all(key in candidates for key in g):
            out += [(g, k) for k in range(1, min(3, len(g)) + 1)]
    return out


def main(argv=None):
    """Run the nested cross-validation of the regression grids; return the result rows."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-home", default=default_home(),
                   help="folder of NAME/NAME_TRAIN.ts and NAME/NAME_TEST.ts")
    p.add_argument("--datasets", default=None, help="comma-separated names (default: all)")
    p.add_argument("--out", default="tune_regression_out")
    p.add_argument("--cache", default=None, help="Gram cache (default: OUT/grams)")
    p.add_argument("--seeds", default="0", help="comma-separated outer-fold seeds")
    p.add_argument("--grids", default=None,
                   help="grids to score instead of the built-in ones, e.g. "
                        "'spectrum64+band64:2,band:1'")
    p.add_argument("--test", action="store_true", help="also report the test sets")
    p.add_argument("--quick", action="store_true",
                   help="seconds: three candidates, the first set only")
    args = p.parse_args(argv)
    names = dataset_names(args.data_home, args.datasets)
    candidates = list(CANDIDATES)
    if args.quick:
        names, candidates = names[:1], ["spectrum", "band", "pool8"]
    seeds = [int(s) for s in args.seeds.split(",")]
    out = Path(args.out)
    cache = Path(args.cache) if args.cache else out / "grams"
    cache.mkdir(parents=True, exist_ok=True)
    scored = grids(candidates)
    if args.grids:
        scored = [(tuple(g.split(":")[0].split("+")), int(g.split(":")[1]))
                  for g in args.grids.split(",")]
        candidates = sorted({key for keys, _ in scored for key in keys})
    rows = []
    for name in names:
        data = load(name, args.data_home)
        y, yte = data[1], data[3]
        G = {key: grams(name, key, data, cache) for key in candidates}
        Ks = {key: g[0] for key, g in G.items()}
        mean_rmse = np.sqrt(np.mean((yte - y.mean()) ** 2))
        folds = OuterFolds(Ks, y, seeds)
        best = {key: best_candidate(Ks[key], y) for key in candidates} if args.test else None
        memo = {}
        for keys, k in scored:
            row = {"dataset": name, "grid": "+".join(keys), "k": k,
                   "nested_ratio": folds.ratio(keys, k)}
            if args.test:
                members = select(best, y, keys, k)
                pred = predict(members, Ks, {key: G[key][1] for key in keys}, y, memo)
                row["test_ratio"] = float(np.sqrt(np.mean((yte - pred) ** 2)) / mean_rmse)
                row["gram_seconds"] = sum(G[key][2] for key in keys) + sum(
                    G[key][3] for key in {m[0] for m in members if np.isfinite(m[1])})
            rows.append(row)
        print(f"{name}: {len(scored)} grids scored", flush=True)
    report(rows, out, args.test)
    return rows


def report(rows, out, test):
    """Write the rows and the panel summary (geometric means over the sets)."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "nested.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["| grid | k | nested RMSE / mean (geo. mean) | worst set | "
             + ("test RMSE / mean (geo. mean) | worst set | Gram s |" if test else ""),
             "|---|---:|---:|---:|" + ("---:|---:|---:|" if test else "")]
    by_grid = {}
    for r in rows:
        by_grid.setdefault((r["grid"], r["k"]), []).append(r)
    summary = []
    for (grid, k), rs in by_grid.items():
        nested = np.array([r["nested_ratio"] for r in rs])
        cells = [grid, str(k), f"{np.exp(np.log(nested).mean()):.3f}", f"{nested.max():.3f}"]
        if test:
            t = np.array([r["test_ratio"] for r in rs])
            cells += [f"{np.exp(np.log(t).mean()):.3f}", f"{t.max():.3f}",
                      f"{sum(r['gram_seconds'] for r in rs):.1f}"]
        summary.append((np.exp(np.log(nested).mean()), cells))
    for _, cells in sorted(summary, key=lambda e: e[0]):
        lines.append("| " + " | ".join(cells) + " |")
    (out / "nested.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0 if main() else 1)
