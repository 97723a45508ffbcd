"""Choose the default classifier grid and criterion by nested CV on the whole UCR panel.

For every dataset of ``--data-home`` (the 48-set development panel) the script computes
once, and caches under ``--cache``, the training Gram and the test-vs-train Gram of every
candidate kernel setting below. Then it scores *variants* (a set of settings, a selection
criterion, an ensemble rule) by

* **nested CV** (what the choice is made on): the training set is split into 5 outer
  folds (stratified, shuffled with seed 0; plain K-fold when a class has fewer than 5
  series); on 4 folds the setting and the ridge are selected by exact leave-one-out
  through the package's own engine (:func:`rntk.model_selection.search_grams` with
  :class:`rntk.model_selection.RidgeLOOScorer`, as ``RNTKClassifierCV()`` does), refit,
  and the fifth fold is predicted;
* **few-shot nested CV** (the regime of one or two training series per class, where the
  outer folds of a dataset like ``Fungi`` hold classes absent from the rest): 2 series
  per class are drawn from the training set (3 draws, seeds 0-2), selected on, and the
  other training series predicted;
* **test accuracy** (reported, never used for a choice): the same selection on the whole
  training set, scored on the test set.

Beside the settings of the default, ``SETTINGS`` holds those tried (see
``benchmarks/README.md``): coarser pools, the same networks on amplitude spectra
(:func:`rntk.amplitude_spectrum`; ``_short``: no more frequencies than the longest
series has, as the default grid does), the banded settings on series pooled to at most
128, 256 or 384 steps (``_cap``; 128 is the default's), narrower bands, and cheaper
pooled settings: at most 64 readouts (``_r64``) or a lower cost cap (``_b5``, ``_b7``),
with :func:`rntk.model_selection.readout_stride`. A setting's parameters may hold
``lag=(k, d)``: the network reads the window ``x_t, x_{t-d}, ..., x_{t-(k-1)d}`` at step
``t`` (see :func:`lag_window`). A variant may name its prior
candidates (the pair the default averages with one series per class; :func:`best_pairs`
ranks the pairs).

Missing values inside series (``DodgerLoopWeekend``) are filled by linear interpolation
(:func:`rntk.interpolate_missing`, edge values at the ends), the archive's own adjustment.

Usage::

    python benchmarks/studies/tune_panel_grid.py [--quick] [--grams-only] [--data-home DIR]
        [--cache DIR] [--out DIR]
"""

import argparse
import csv
import hashlib
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
from harness import (  # noqa: E402
    QUICK,
    SETTINGS,
    few_shot_splits,
    grams,
    load,
    outer_folds,
    peer_results,
    predict,
    split_table,
)

from rntk._model_selection._loo import decision_to_labels  # noqa: E402
from rntk.model_selection import DEFAULT_ALPHA  # noqa: E402

#: The prior pair of the default (``rntk.model_selection.DEFAULT_PRIOR``) in this
#: script's setting names.
NEW_PRIORS = [("raw_band8_cap128", 1e-1), ("spec_band8_short", 1e-1)]

VARIANTS = {
    "default 4 (today)": ("last_d0 last_d1 band8 pool4", "best"),
    "default 4 + raw 2": ("last_d0 last_d1 band8 pool4 raw_band8 raw_pool4", "best"),
    "default 4 + pool8": ("last_d0 last_d1 band8 pool4 pool8", "best"),
    "default 4 + raw 2 + pool8": ("last_d0 last_d1 band8 pool4 raw_band8 raw_pool4 pool8",
                                  "best"),
    "default 4, top-2 average": ("last_d0 last_d1 band8 pool4", "top2"),
    "default 4, top-3 average": ("last_d0 last_d1 band8 pool4", "top3"),
    "default 4 + raw 2, top-3 average": ("last_d0 last_d1 band8 pool4 raw_band8 raw_pool4",
                                         "top3"),
    "default 4 + raw 2 + pool8, top-3 average": (
        "last_d0 last_d1 band8 pool4 raw_band8 raw_pool4 pool8", "top3"),
    "default 4 + raw 2, top-2 average": ("last_d0 last_d1 band8 pool4 raw_band8 raw_pool4",
                                         "top2"),
    "default 4 + raw_pool4": ("last_d0 last_d1 band8 pool4 raw_pool4", "best"),
    "default 4 + raw_pool4, top-2 average": ("last_d0 last_d1 band8 pool4 raw_pool4",
                                             "top2"),
    "default 4 + raw_pool4, top-3 average": ("last_d0 last_d1 band8 pool4 raw_pool4",
                                             "top3"),
    "last 2 + band8 + raw_pool4, top-2 average": ("last_d0 last_d1 band8 raw_pool4",
                                                  "top2"),
    "last 2 + band8 + raw_pool4 + pool8, top-2 average": (
        "last_d0 last_d1 band8 raw_pool4 pool8", "top2"),
    "last 2 + band8 + raw_pool4 + pool8, top-3 average": (
        "last_d0 last_d1 band8 raw_pool4 pool8", "top3"),
    "last 2 + band8 + raw_pool4 + pool8": ("last_d0 last_d1 band8 raw_pool4 pool8", "best"),
    "default 4 + raw_pool4 + pool8, top-2 average": (
        "last_d0 last_d1 band8 pool4 raw_pool4 pool8", "top2"),
    "last_d0 + band8 + raw_pool4 + pool8, top-2 average": (
        "last_d0 band8 raw_pool4 pool8", "top2"),
    "last 2 + raw_pool4 + pool8, top-2 average": ("last_d0 last_d1 raw_pool4 pool8", "top2"),
    "last 2 + band8 + raw_band8 + raw_pool4 + pool8, top-2 average": (
        "last_d0 last_d1 band8 raw_band8 raw_pool4 pool8", "top2"),
    "last 2 + band8 + raw_band8 + raw_pool4 + pool8, top-3 average": (
        "last_d0 last_d1 band8 raw_band8 raw_pool4 pool8", "top3"),
    "last_d0 + band8 + raw_band8 + raw_pool4 + pool8, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8", "top2"),
    "last_d0 + band8 + raw_band8 + raw_pool4 + pool8, top-3 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8", "top3"),
    "last_d0 + band8 + raw_pool4 + pool8, top-3 average": (
        "last_d0 band8 raw_pool4 pool8", "top3"),
    # coarser scales (issue 24: pooling helped most on outline and shape sets)
    "the default + pool16, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 pool16", "top2"),
    "the default + raw_pool8, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 raw_pool8", "top2"),
    "the default + pool16 + raw_pool8, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 pool16 raw_pool8", "top2"),
    "the default + pool16, top-3 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 pool16", "top3"),
    "the default + pool16 + raw_pool8, top-3 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 pool16 raw_pool8", "top3"),
    "the default + spec_band8, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 spec_band8", "top2"),
    "the default + spec_last, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 spec_last", "top2"),
    "the default + spec_band8 + spec_last, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 spec_band8 spec_last", "top2"),
    "the default + spec_band8, top-3 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 spec_band8", "top3"),
    "the default, bands capped at 256 steps, top-2 average": (
        "last_d0 band8_cap256 raw_band8_cap256 raw_pool4 pool8", "top2"),
    "the default, bands capped at 384 steps, top-2 average": (
        "last_d0 band8_cap384 raw_band8_cap384 raw_pool4 pool8", "top2"),
    "the default, bands capped at 256 steps, + spec_band8, top-3 average": (
        "last_d0 band8_cap256 raw_band8_cap256 raw_pool4 pool8 spec_band8", "top3"),
    "the default, bands capped at 256 steps, + spec_band8, top-2 average": (
        "last_d0 band8_cap256 raw_band8_cap256 raw_pool4 pool8 spec_band8", "top2"),
    "the default, bands capped at 384 steps, + spec_band8, top-3 average": (
        "last_d0 band8_cap384 raw_band8_cap384 raw_pool4 pool8 spec_band8", "top3"),
    "the default without raw_band8, + spec_band8, top-3 average": (
        "last_d0 band8 raw_pool4 pool8 spec_band8", "top3"),
    "the default with pool16 for pool8, top-2 average": (
        "last_d0 band8 raw_band8 raw_pool4 pool16", "top2"),
    # cheaper bands and pools, the spectrum on fewer bins, and a pair of priors (the best
    # fixed pair with 1 series per class among the variant's settings, see ``best_pairs``;
    # ``NEW_PRIORS``: those of the default's grid)
    "the default, prior pair": (
        "last_d0 band8 raw_band8 raw_pool4 pool8", "top2",
        [("raw_band8", 1e-2), ("pool8", 1e-3)]),
    "the default + spec_band8_short, top-3 average, prior pair": (
        "last_d0 band8 raw_band8 raw_pool4 pool8 spec_band8_short", "top3",
        [("pool8", 1e-4), ("spec_band8_short", 1e-2)]),
    "bands capped at 256 steps + spec_band8_short, top-3 average, prior pair": (
        "last_d0 band8_cap256 raw_band8_cap256 raw_pool4 pool8 spec_band8_short", "top3",
        [("pool8", 1e-4), ("spec_band8_short", 1e-2)]),
    "bands capped at 128 steps, top-2 average, prior pair": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool4 pool8", "top2",
        [("raw_band8_cap128", 1e-1), ("pool8", 1e-1)]),
    "the new default: bands capped at 128 steps + spec_band8_short, top-3 average, "
    "prior pair": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool4 pool8 spec_band8_short", "top3",
        NEW_PRIORS),
    "bands 4 + spec_band8_short, top-3 average, prior pair": (
        "last_d0 band4 raw_band4 raw_pool4 pool8 spec_band8_short", "top3",
        [("pool8", 1e-4), ("spec_band8_short", 1e-2)]),
    "the new default with pools of at most 64 readouts": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool4_r64 pool8_r64 spec_band8_short",
        "top3", NEW_PRIORS),
    "the new default with pools of at most 64 readouts, top-2 average": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool4_r64 pool8_r64 spec_band8_short",
        "top2", NEW_PRIORS),
    "the new default with half the cost cap of the pooled settings": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool4_b5 pool8_b5 spec_band8_short",
        "top3", NEW_PRIORS),
    "the new grid with raw_pool8 for raw_pool4": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool8 pool8 spec_band8_short", "top3",
        NEW_PRIORS),
    "the new grid with pool16 for pool8": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool4 pool16 spec_band8_short", "top3",
        NEW_PRIORS),
    "the new grid with raw_pool8 and pool16": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool8 pool16 spec_band8_short", "top3",
        NEW_PRIORS),
    "the new grid with raw_pool8, last step capped at 256": (
        "last_d0_cap256 band8_cap128 raw_band8_cap128 raw_pool8 pool8 spec_band8_short",
        "top3", NEW_PRIORS),
    "the new default with the cost cap 7e8 of the pooled settings": (
        "last_d0 band8_cap128 raw_band8_cap128 raw_pool4_b7 pool8_b7 spec_band8_short",
        "top3", NEW_PRIORS),
    "the new default with half the cost cap, last step capped at 256": (
        "last_d0_cap256 band8_cap128 raw_band8_cap128 raw_pool4_b5 pool8_b5 "
        "spec_band8_short", "top3", NEW_PRIORS),
    "the new default, last step capped at 256": (
        "last_d0_cap256 band8_cap128 raw_band8_cap128 raw_pool4 pool8 spec_band8_short",
        "top3", NEW_PRIORS),
    "the new default with pools of at most 64 readouts, last step capped at 256": (
        "last_d0_cap256 band8_cap128 raw_band8_cap128 raw_pool4_r64 pool8_r64 "
        "spec_band8_short", "top3", NEW_PRIORS),
}
CRITERIA = ["accuracy", "accuracy_se", "accuracy_prior"]


def held_out_accuracy(ts, picks):
    """Return the held-out accuracy of the averaged decisions of the candidates ``picks``.

    Over the tables ``ts`` (one per split), weighted by their held-out sizes; NaN
    without tables.
    """
    if not ts:
        return np.nan
    return float(np.average([np.mean(decision_to_labels(
        t["classes"], np.mean([t["dec"][p] for p in picks], axis=0)) == t["yte"])
        for t in ts], weights=[len(t["yte"]) for t in ts]))


def best_pairs(all_tables, keys, settings, alphas=(1e-4, 1e-3, 1e-2, 1e-1), top=5):
    """Return the pairs of fixed candidates of ``settings`` best with 1 series per class.

    Each pair's decision functions are averaged; the score is the mean over the datasets
    of the held-out accuracy on the 1-per-class draws (how a pair of priors is chosen).
    """
    cands = [(s, a) for s in settings for a in alphas]
    scored = []
    for i, (s1, a1) in enumerate(cands):
        for s2, a2 in cands[i + 1:]:
            if s1 == s2:
                continue
            picks = [(keys.index(s1), DEFAULT_ALPHA.index(a1)),
                     (keys.index(s2), DEFAULT_ALPHA.index(a2))]
            accs = [held_out_accuracy(tables["shot1"], picks) for tables in all_tables]
            scored.append((100 * float(np.nanmean(accs)), (s1, a1), (s2, a2)))
    return sorted(scored, reverse=True)[:top]


def evaluate(names, keys, args, cache):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, fixed, all_tables = [], [], []
    for name in names:
        t0 = time.perf_counter()
        xtr, y, xte, yte = load(name, args.data_home)
        G = [grams(name, k, (xtr, xte), cache) for k in keys]
        train_s = np.array([g[2] for g in G])
        test_s = np.array([g[3] for g in G])
        tag = "_".join(keys)
        if len(tag) > 150:  # file names have a length limit
            tag = hashlib.sha1(tag.encode()).hexdigest()[:16]
        path = cache / f"tables__{name}__{tag}.pkl"
        if path.exists():
            tables = pickle.loads(path.read_bytes())
        else:
            splits = {"nested": outer_folds(y), "shot1": few_shot_splits(y, 1),
                      "shot2": few_shot_splits(y, 2)}
            tables = {"test": [split_table([g[0] for g in G], [g[1] for g in G], y, yte)]}
            for how, folds in splits.items():
                tables[how] = [split_table([g[0][np.ix_(tr, tr)] for g in G],
                                           [g[0][np.ix_(te, tr)] for g in G], y[tr], y[te])
                               for tr, te in folds]
            path.write_bytes(pickle.dumps(tables))
        all_tables.append(tables)
        for how, ts in tables.items():  # every fixed candidate, for the prior
            for s, k in enumerate(keys):
                for a, alpha in enumerate(DEFAULT_ALPHA):
                    fixed.append({"dataset": name, "how": how, "setting": k, "alpha": alpha,
                                  "acc": held_out_accuracy(ts, [(s, a)])})
        for crit in CRITERIA:
            for var, (settings, rule, *priors) in VARIANTS.items():
                if not set(settings.split()) <= set(keys):
                    continue  # a setting left out of --settings
                sub = [keys.index(k) for k in settings.split()]
                row = {"dataset": name, "variant": var, "criterion": crit}
                for how, ts in tables.items():
                    w = [len(t["yte"]) for t in ts]
                    res = [predict(t, sub, rule, crit, keys, *priors) for t in ts]
                    row[how] = (float(np.average([r[0] for r in res], weights=w))
                                if ts else np.nan)
                    if how == "test":  # fit + predict: every training Gram, the test
                        row["seconds"] = train_s[sub].sum() + test_s[res[0][1]].sum()
                rows.append(row)
        print(f"{name:<32} {time.perf_counter() - t0:6.1f} s", flush=True)
    with open(out / "nested.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(out / "fixed.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fixed[0]))
        w.writeheader()
        w.writerows(fixed)
    report(rows, out)
    lines = ["| fixed setting | alpha | nested CV (%) | 1 per class (%) | 2 per class (%) |",
             "|---|---:|---:|---:|---:|"]
    res = []
    for k in keys:
        for alpha in DEFAULT_ALPHA:
            m = {h: 100 * np.nanmean([x["acc"] for x in fixed if x["setting"] == k
                                      and x["alpha"] == alpha and x["how"] == h])
                 for h in ("nested", "shot1", "shot2")}
            res.append((m["shot1"], k, alpha, m))
    for _, k, alpha, m in sorted(res, key=lambda r: -r[0])[:12]:
        lines.append(f"| {k} | {alpha:g} | {m['nested']:.2f} | {m['shot1']:.2f} | "
                     f"{m['shot2']:.2f} |")
    for var, (settings, _, *priors) in VARIANTS.items():
        if priors and set(settings.split()) <= set(keys):
            lines += ["", f"Best prior pairs (1 per class, %) of {var}:"]
            lines += [f"- {acc:.2f}: {p1}, {p2}"
                      for acc, p1, p2 in best_pairs(all_tables, keys, settings.split())]
    md = "\n".join(lines) + "\n"
    (out / "fixed.md").write_text(md)
    print(md)


def report(rows, out):
    lines = ["| variant | criterion | nested CV (%) | 1 per class (%) | 2 per class (%) | "
             "test, reported only (%) | Gram s |", "|---|---|---:|---:|---:|---:|---:|"]
    for var in VARIANTS:
        for crit in CRITERIA:
            r = [x for x in rows if x["variant"] == var and x["criterion"] == crit]
            if not r:
                continue
            m = {h: 100 * np.nanmean([x[h] for x in r])
                 for h in ("nested", "shot1", "shot2", "test")}
            lines.append(f"| {var} | {crit} | {m['nested']:.2f} | {m['shot1']:.2f} | "
                         f"{m['shot2']:.2f} | {m['test']:.2f} | "
                         f"{sum(x['seconds'] for x in r):.0f} |")
    md = f"{len({x['dataset'] for x in rows})} datasets\n\n" + "\n".join(lines) + "\n"
    (out / "nested.md").write_text(md)
    print(md)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=str(Path(__file__).resolve().parents[3] / "shared"
                                              / "data" / "ucr"))
    p.add_argument("--cache", default="results/tune_panel_grid/grams")
    p.add_argument("--out", default="results/tune_panel_grid")
    p.add_argument("--quick", action="store_true", help="only the small sets of QUICK")
    p.add_argument("--grams-only", action="store_true", help="only fill the Gram cache")
    p.add_argument("--settings", default=",".join(SETTINGS))
    p.add_argument("--cached-only", action="store_true",
                   help="evaluate only the sets whose Grams are all cached")
    args = p.parse_args(argv)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    rows = peer_results(args.data_home)
    rows.sort(key=lambda r: int(r["n_train"]) * (int(r["n_train"]) + int(r["n_test"]))
              * int(r["max_length"]))
    names = [r["dataset"] for r in rows if not args.quick or r["dataset"] in QUICK]
    keys = args.settings.split(",")
    if args.cached_only:
        names = [n for n in names if all((cache / f"{n}__{k}.npz").exists() for k in keys)]
    if args.grams_only:
        for name in names:
            t0 = time.perf_counter()
            xtr, _, xte, _ = load(name, args.data_home)
            for k in keys:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    grams(name, k, (xtr, xte), cache)
            print(f"{name:<32} {time.perf_counter() - t0:7.1f} s", flush=True)
        return
    evaluate(names, keys, args, cache)


if __name__ == "__main__":
    main()
