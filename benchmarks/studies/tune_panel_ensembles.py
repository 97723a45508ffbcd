"""Rules that combine the default grid's settings, and settings in place of its own, by nested CV.

Uses the Grams cached by ``tune_panel_grid.py`` (same ``--cache``; computed here when
missing) and its protocol: nested CV (5 outer folds of each training set, selection by
exact leave-one-out on 4), draws of 1 and 2 training series per class, and the test set
(reported only). For every split it computes, for each setting and ridge, the exact
leave-one-out predictions of the one-vs-all ridge classifier
(:func:`rntk.model_selection.ridge_dual_fit` and the LOO identity) and the held-out
decision values. The LOO predictions of an average of ridge classifiers are the average
of their LOO predictions, so an average is scored exactly, like a single candidate.

Rules (every one takes the default's prior pair when the LOO accuracy cannot tell the
candidates apart, as with one series per class):

* ``top-k`` (``top-3``: the default): the best candidate of each of the k best settings
  (LOO accuracy, then the lower LOO squared error), averaged;
* ``auto-k``: the first 1, 2 or 3 of those, whichever average has the best LOO score;
* ``greedy``: the best candidate, then twice the candidate of another setting that makes
  the best averaged LOO score (``all ridges``: any ridge of that setting);
* ``subsets``: the best LOO score over every average of 1 to 3 settings' best
  candidates;
* ``stacking``: non-negative least-squares weights of the settings' LOO predictions
  (the three largest kept);
* ``sum of Grams``: one ridge classifier on the mean of the 2, 3 or 6 best settings'
  Grams, each divided by its mean diagonal (multiple kernel learning with equal
  weights), its ridge by LOO; ``or top-3``: that or the default's average, whichever
  has the better LOO score.

``top-3 weighted``: the three decisions weighted by rank. ``CAWPE`` (the weighting of
HIVE-COTE's members): every setting's best candidate, or the top-3, weighted by its LOO
accuracy to the power 4.

``--replace`` scores the default without each of its settings, and settings of the
same family in place of one of the default's (the banded setting, the level-and-scale
banded setting on z-normalised sets, or the last-step setting) or beside them: the
banded network with ``diff``, ``sigma_w`` 1.0 or 1.4, the NNGP kernel, a band of 16,
``sigma_u = 1``, two layers, ``sigma_b = 0.5``; the banded, level-and-scale banded and
pooled networks reading a window of lagged inputs (an input convolution) or running
backward or both ways, in place of their own (``COUNTERPARTS``); the
two pooled settings with twice the cost cap (``_b20``); and the two banded settings on
every step (no pooling to 128 steps), everywhere or where their Gram is cheap
(``n_train^2 x length`` at most a budget), or pooled to at most 256 steps; and the
band's hyperparameters chosen per dataset by LOO among those variants (a group of
settings counted as one setting); and the band on each series' quantile functions of
values and steps (``rntk.value_quantiles``, 64 or 32 levels) as a seventh setting
(64: this release's default), or in place of the last-step setting. "the default" is
the grid's six other settings (the previous release's default). Results: see
``benchmarks/README.md``.

Writes ``rules.csv`` / ``rules.md`` (or ``replace.csv`` / ``replace.md``) under ``--out``.

Usage::

    python benchmarks/studies/tune_panel_ensembles.py [--replace] [--quick] [--data-home DIR]
        [--cache DIR] [--out DIR]
"""

import csv
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
import harness as T  # noqa: E402

from rntk._estimators._ridge import relative_ridge
from rntk._model_selection import unit_rms
from rntk._model_selection._loo import (
    decision_to_labels,
    eigh_gram,
    loo_classification_scores,
    one_vs_all_targets,
    ridge_dual_fit,
    ridge_loo_predictions,
)
from rntk.model_selection import DEFAULT_ALPHA

#: The previous release's default grid in ``tune_panel_grid.py``'s setting names
#: (``DEFAULT_GRID``'s first six settings: last step, band, level-and-scale band,
#: level-and-scale pool, pool, spectrum; this release adds ``QUANTILES``).
DEFAULT = ["last_d0", "band8_cap128", "raw_band8_cap128", "raw_pool4", "pool8",
           "spec_band8_short"]
#: The default's prior pair: (position in ``DEFAULT``, position in ``DEFAULT_ALPHA``).
PRIOR = [(2, DEFAULT_ALPHA.index(1e-1)), (5, DEFAULT_ALPHA.index(1e-1))]
MEAN, BAND = T.MEAN, dict(T.MEAN, readout_band=8)
#: Settings of the family tried in place of the default's (``--replace``).
NEW = {
    "band8_cap128_d1": ("rms", "cap128", dict(BAND, diff=True)),
    "band8_cap128_w10": ("rms", "cap128", dict(BAND, sigma_w=1.0)),
    "band8_cap128_w14": ("rms", "cap128", dict(BAND, sigma_w=1.4)),
    "band8_cap128_nngp": ("rms", "cap128", dict(BAND, kind="nngp")),
    "band16_cap128": ("rms", "cap128", dict(MEAN, readout_band=16)),
    "band8_cap128_u1": ("rms", "cap128", dict(BAND, sigma_u=1.0)),
    "band8_cap128_L2": ("rms", "cap128", dict(BAND, n_layers=2)),
    "band8_cap128_b05": ("rms", "cap128", dict(BAND, sigma_b=0.5)),
    "raw_pool4_b20": (False, 4, MEAN),
    "pool8_b20": ("rms", 8, MEAN),
}
#: The band's variants of ``NEW`` (the per-dataset choice of :func:`grouped`).
BAND_NETWORKS = [k for k in NEW if k.startswith("band")]
#: Settings tried in place of their counterpart of the default (its position in
#: ``DEFAULT``) or beside it, as ``name -> (position, setting)``: the networks read a
#: window of lagged inputs (``lag=(k, d)``: an input convolution of ``k`` taps at
#: dilation ``d``, see ``tune_panel_grid.lag_window``), or run backward or both ways.
COUNTERPARTS = {
    "band8_cap128_lag3d1": (1, ("rms", "cap128", dict(BAND, lag=(3, 1)))),
    "band8_cap128_lag3d3": (1, ("rms", "cap128", dict(BAND, lag=(3, 3)))),
    "band8_cap128_lag5d1": (1, ("rms", "cap128", dict(BAND, lag=(5, 1)))),
    "raw_band8_cap128_lag3d1": (2, (False, "cap128", dict(BAND, lag=(3, 1)))),
    "pool8_lag3d1": (4, ("rms", 8, dict(MEAN, lag=(3, 1)))),
    "band8_cap128_bi": (1, ("rms", "cap128", dict(BAND, direction="bidirectional"))),
    "band8_cap128_bw": (1, ("rms", "cap128", dict(BAND, direction="backward"))),
    "raw_band8_cap128_bi": (2, (False, "cap128", dict(BAND, direction="bidirectional"))),
    "pool8_bi": (4, ("rms", 8, dict(MEAN, direction="bidirectional"))),
}
NEW.update({key: setting for key, (_, setting) in COUNTERPARTS.items()})


def _with_new_settings():
    """Add ``NEW`` to ``tune_panel_grid``'s settings (their ``_b20`` keys: the cost cap 2e9)."""
    T.SETTINGS.update(NEW)


def split_table(Ks, Kts, y, yte):
    """LOO predictions and held-out decisions of every (setting, ridge) of one split."""
    classes, Y = one_vs_all_targets(y)
    loo, dec = [], []
    for K, Kt in zip(Ks, Kts):
        eig = eigh_gram(K, fit_intercept=True)
        ridges = [float(relative_ridge(K, a)) for a in DEFAULT_ALPHA]
        fits = [ridge_dual_fit(eig, Y, r, K=K, fit_intercept=True) for r in ridges]
        loo.append(ridge_loo_predictions(eig, Y, ridges))
        dec.append([Kt @ c + b for c, b in fits])
    return dict(loo=np.array(loo), dec=np.array(dec), Y=Y, y=y, classes=classes, yte=yte)


def loo_score(t, P):
    """LOO accuracy and minus the LOO squared error of predictions ``P`` (higher: better)."""
    acc, mse = loo_classification_scores(t["y"], t["classes"], t["Y"], P[None])
    return acc[0], -mse[0]


def per_setting(t, subset):
    """Return the best candidate (setting, ridge) of each setting of ``subset``."""
    keys = {(s, a): loo_score(t, t["loo"][s, a]) for s in subset
            for a in range(len(DEFAULT_ALPHA))}
    best = [max(((s, a) for a in range(len(DEFAULT_ALPHA))), key=keys.__getitem__)
            for s in subset]
    return sorted(best, key=keys.__getitem__, reverse=True), keys


def undecided(keys):
    return len({k[0] for k in keys.values()}) == 1


def with_prior(t, subset, keys, best, k=3):
    # the level band's prior is the setting in its place (third of the subset)
    first = [p if p[0] in subset or p[0] != 2 else (list(subset)[2], p[1]) for p in PRIOR]
    first = [p for p in first if p[0] in subset]
    rest = sorted((b for b in best if b[0] not in {p[0] for p in first}),
                  key=lambda b: keys[b][1], reverse=True)
    return (first + rest)[:k]


def ensemble(t, picks):
    return loo_score(t, np.mean([t["loo"][p] for p in picks], axis=0))


def rule_top(t, subset, k=3):
    best, keys = per_setting(t, subset)
    return with_prior(t, subset, keys, best, k) if undecided(keys) else best[:k]


def rule_groups(t, groups, k=3):
    """``top-k`` where each group of settings counts as one (its best candidate).

    A group is one setting whose hyperparameters are chosen per dataset by LOO among its
    members: the study of fitting them per dataset instead of fixing them.
    """
    members = [s for g in groups for s in g]
    best, keys = per_setting(t, members)
    if undecided(keys):
        return with_prior(t, members, keys, best, k)
    tops = [max((b for b in best if b[0] in g), key=keys.__getitem__) for g in groups]
    return sorted(tops, key=keys.__getitem__, reverse=True)[:k]


def rule_auto(t, subset):
    best, keys = per_setting(t, subset)
    if undecided(keys):
        return with_prior(t, subset, keys, best)
    return max((best[:j] for j in (1, 2, 3)), key=lambda p: ensemble(t, p))


def rule_greedy(t, subset, all_ridges=False):
    best, keys = per_setting(t, subset)
    if undecided(keys):
        return with_prior(t, subset, keys, best)
    pool = ([(s, a) for s in subset for a in range(len(DEFAULT_ALPHA))] if all_ridges
            else best)
    picks = [best[0]]
    while len(picks) < 3:
        used = {s for s, _ in picks}
        picks.append(max((c for c in pool if c[0] not in used),
                         key=lambda c: ensemble(t, picks + [c])))
    return picks


def rule_subsets(t, subset):
    best, keys = per_setting(t, subset)
    if undecided(keys):
        return with_prior(t, subset, keys, best)
    return list(max((c for j in (1, 2, 3) for c in itertools.combinations(best, j)),
                    key=lambda c: ensemble(t, list(c))))


def rule_stacking(t, subset):
    best, keys = per_setting(t, subset)
    if undecided(keys):
        return with_prior(t, subset, keys, best)
    A = np.stack([t["loo"][p].ravel() for p in best], axis=1)
    w, _ = nnls(A, t["Y"].ravel())
    order = [i for i in np.argsort(-w)[:3] if w[i] > 0]
    return [(best[i], w[i]) for i in order] if order else best[:1]


def rule_weighted(t, subset, weights):
    """``top-k`` with the decisions weighted by rank (equal where LOO cannot tell)."""
    picks = rule_top(t, subset, len(weights))
    if undecided(per_setting(t, subset)[1]):
        return picks
    return list(zip(picks, weights))


def rule_cawpe(t, subset, k=None, alpha=4):
    """CAWPE (Large et al., 2019): the settings' decisions weighted by LOO accuracy^alpha.

    Every setting's best candidate (``k``: the ``k`` best only), as HIVE-COTE weights its
    members by their estimated accuracy to the power 4; the prior pair where LOO cannot
    tell.
    """
    best, keys = per_setting(t, subset)
    if undecided(keys):
        return with_prior(t, subset, keys, best)
    return [(p, keys[p][0] ** alpha) for p in best[:k]]


def splits_of(y):
    """Return the protocol's splits of a training set: test, nested, 1 and 2 per class."""
    return {"test": [(np.arange(len(y)), None)], "nested": T.outer_folds(y),
            "shot1": T.few_shot_splits(y, 1), "shot2": T.few_shot_splits(y, 2)}


def split_tables(G, y, yte, splits):
    """Yield ``(split_table, held-out size, Ks, Kts)`` of each split of one set.

    ``G``: per setting, ``(training Gram, test-vs-train Gram, ...)``; ``splits``: pairs of
    training and held-out indices (held out ``None``: the test set).
    """
    for tr, te in splits:
        Ks = [g[0][np.ix_(tr, tr)] for g in G]
        Kts = [g[1] if te is None else g[0][np.ix_(te, tr)] for g in G]
        yt = yte if te is None else y[te]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = split_table(Ks, Kts, y[tr], yt)
        yield t, len(yt), Ks, Kts


def default_rule_accuracies(G, y, yte, plans, hows=("nested", "shot1", "shot2", "test"),
                            rules=None):
    """Return ``{plan: {how: accuracy in %}}``: the default's rule (``rule_top``) on Grams.

    ``G``: per setting, ``(training Gram, test-vs-train Gram, ...)`` of one set; ``plans``:
    ``name -> positions in G``; each split's held-out accuracy weighted by its size (NaN
    for a set without such splits). ``rules``: ``name -> rule(table, positions)`` for the
    plans that another rule combines.
    """
    rules = rules or {}
    splits = splits_of(y)
    out = {v: {} for v in plans}
    for how in hows:
        per, sizes = {v: [] for v in plans}, []
        for t, size, _, _ in split_tables(G, y, yte, splits[how]):
            sizes.append(size)
            for v, sub in plans.items():
                per[v].append(held_out(t, rules.get(v, rule_top)(t, sub)))
        for v in plans:
            out[v][how] = 100 * np.average(per[v], weights=sizes) if sizes else np.nan
    return out


def held_out(t, picks):
    """Held-out accuracy of the (weighted) average of the decisions of ``picks``."""
    picks = [p if isinstance(p[0], tuple) else (p, 1.0) for p in picks]
    D = np.average([t["dec"][p] for p, _ in picks], axis=0, weights=[w for _, w in picks])
    return np.mean(decision_to_labels(t["classes"], D) == t["yte"])


RULES = {
    "top-3 (the default)": rule_top,
    "top-2": lambda t, s: rule_top(t, s, 2),
    "top-4": lambda t, s: rule_top(t, s, 4),
    "auto-k": rule_auto,
    "greedy": rule_greedy,
    "greedy, all ridges": lambda t, s: rule_greedy(t, s, True),
    "subsets": rule_subsets,
    "stacking": rule_stacking,
    "top-3 weighted 2:1:1": lambda t, s: rule_weighted(t, s, (2, 1, 1)),
    "top-3 weighted 2:2:1": lambda t, s: rule_weighted(t, s, (2, 2, 1)),
    "top-3 weighted 3:2:1": lambda t, s: rule_weighted(t, s, (3, 2, 1)),
    "CAWPE: every setting weighted by LOO accuracy^4": rule_cawpe,
    "CAWPE: the top-3 weighted by LOO accuracy^4": lambda t, s: rule_cawpe(t, s, 3),
}


def gram_sums(Ks, Kts, t, subset):
    """Held-out accuracies of the sums of Grams, and of the best of the sum and top-3."""
    best, keys = per_setting(t, subset)
    top3 = rule_top(t, subset)
    out = {}
    if undecided(keys):
        acc = held_out(t, top3)
        return {"sum of 2 Grams": acc, "sum of 3 Grams": acc, "sum of 6 Grams": acc,
                "sum of 3 Grams or top-3": acc}
    for j in (2, 3, 6):
        s = [b[0] for b in best[:j]]
        K = sum(Ks[i] / np.trace(Ks[i]) * len(Ks[i]) for i in s) / j
        Kt = sum(Kts[i] / np.trace(Ks[i]) * len(Ks[i]) for i in s) / j
        u = split_table([K], [Kt], t["y"], t["yte"])
        a = max(range(len(DEFAULT_ALPHA)), key=lambda a: loo_score(u, u["loo"][0, a]))
        out[f"sum of {j} Grams"] = held_out(u, [(0, a)])
        if j == 3:
            take = loo_score(u, u["loo"][0, a]) > ensemble(t, top3)
            out["sum of 3 Grams or top-3"] = (out["sum of 3 Grams"] if take
                                              else held_out(t, top3))
    return out


#: Settings of the ``--replace`` study besides ``NEW`` (in ``tune_panel_grid.py``): the
#: banded settings on every step, or on series pooled to at most 256 steps.
BANDS = ["band8", "raw_band8", "band8_cap256", "raw_band8_cap256"]
#: ... and the band on each series' quantile functions of values and steps
#: (``rntk.value_quantiles``, at most 64 levels: this release's seventh setting; or 32).
QUANTILES = ["quant_band8", "quant32_band8"]


def variants(keys, z, cost):
    """``name -> settings`` (positions in ``keys``) of the ``--replace`` study.

    ``z``: the training series have unit RMS (:func:`rntk.model_selection.unit_rms`);
    ``cost``: ``n_train^2 x longest length``, the cost of a banded Gram on every step.
    """
    out = {"the default": list(range(6))}
    for key in QUANTILES:
        x = keys.index(key)
        default = " (this release's default)" if key == QUANTILES[0] else ""
        out[f"+ {key}{default}"] = list(range(6)) + [x]
        out[f"{key} for the last step"] = [x, 1, 2, 3, 4, 5]
    every, at256 = ([keys.index(k) for k in BANDS[i:i + 2]] for i in (0, 2))
    out["bands on every step"] = [0, *every, 3, 4, 5]
    out["bands pooled to at most 256 steps"] = [0, *at256, 3, 4, 5]
    for budget in (1e7, 3e7, 1e8):
        out[f"bands on every step where n^2 T <= {budget:.0e}"] = (
            [0, *every, 3, 4, 5] if cost <= budget else list(range(6)))
    for i, key in enumerate(DEFAULT):
        out[f"without {key}"] = [j for j in range(6) if j != i]
    for key in NEW:
        x = keys.index(key)
        if key in COUNTERPARTS:
            out[f"{key} for {DEFAULT[COUNTERPARTS[key][0]]}"] = [
                x if j == COUNTERPARTS[key][0] else j for j in range(6)]
            out[f"+ {key}"] = list(range(6)) + [x]
            continue
        if key.endswith("_b20"):
            continue
        out[f"{key} for the level band on z-normalised sets"] = (
            [0, 1, x, 3, 4, 5] if z else list(range(6)))
        out[f"{key} for the band"] = [0, x, 2, 3, 4, 5]
        out[f"{key} for the last step"] = [x, 1, 2, 3, 4, 5]
        out[f"+ {key}"] = list(range(6)) + [x]
    if "raw_pool4_b20" in keys:
        out["pooled settings with the cost cap 2e9"] = [
            0, 1, 2, keys.index("raw_pool4_b20"), keys.index("pool8_b20"), 5]
    return out


def grouped(keys):
    """``name -> groups`` of the ``--replace`` study: the band's hyperparameters by LOO."""
    band = [1] + [keys.index(k) for k in BAND_NETWORKS]
    w = [1, keys.index("band8_cap128_w10"), keys.index("band8_cap128_w14")]
    rest = [[2], [3], [4], [5]]
    return {"the band's sigma_w (1.0, 1.2, 1.4) by LOO per dataset": [[0], w] + rest,
            "the band's network (the 9 above) by LOO per dataset": [[0], band] + rest}


def main(argv=None):
    def options(ap):
        ap.add_argument("--replace", action="store_true",
                        help="settings in place of the default's instead of the rules")

    args, cache, out = T.study_args(argv, __doc__.splitlines()[0],
                                    "results/tune_panel_ensembles", options=options)
    if args.replace:
        _with_new_settings()
    keys = DEFAULT + (list(NEW) + BANDS + QUANTILES if args.replace else [])
    names = T.folder_names(args.data_home, args.quick)
    hows = ("nested", "shot1", "shot2", "test")
    scores = {}
    for name in names:
        t0 = time.perf_counter()
        xtr, y, xte, yte = T.load(name, args.data_home)
        G = [T.grams(name, k, (xtr, xte), cache) for k in keys]
        if args.replace:  # the same settings for every split of the set
            cost = len(y) ** 2 * max(len(x) for x in xtr)
            plan, groups_plan = variants(keys, unit_rms(xtr), cost), grouped(keys)
        splits = splits_of(y)
        for how in hows:
            accs, sizes = {}, []
            for t, size, Ks, Kts in split_tables(G, y, yte, splits[how]):
                sizes.append(size)
                if args.replace:
                    for var, sub in plan.items():
                        accs.setdefault(var, []).append(held_out(t, rule_top(t, sub)))
                    for var, groups in groups_plan.items():
                        accs.setdefault(var, []).append(held_out(t, rule_groups(t, groups)))
                    continue
                for rule, f in RULES.items():
                    accs.setdefault(rule, []).append(held_out(t, f(t, range(6))))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    for rule, acc in gram_sums(Ks, Kts, t, range(6)).items():
                        accs.setdefault(rule, []).append(acc)
            for rule, a in accs.items():
                scores.setdefault(rule, {}).setdefault(how, []).append(
                    np.average(a, weights=sizes) if a else np.nan)
            if not splits[how]:
                for rule in scores:
                    scores[rule].setdefault(how, []).append(np.nan)
        print(f"{name:<32} {time.perf_counter() - t0:6.1f} s", flush=True)
    tag = "replace" if args.replace else "rules"
    base = np.array(next(iter(scores.values()))["nested"])
    rows = []
    for rule, r in scores.items():
        d = 100 * (np.array(r["nested"]) - base)
        d = d[~np.isnan(d)]
        rows.append({"variant": rule, **{h: 100 * float(np.nanmean(r[h])) for h in hows},
                     "nested_diff": float(d.mean()),
                     "nested_diff_se": float(d.std(ddof=1) / np.sqrt(len(d)))
                     if len(d) > 1 else np.nan})
    with open(out / f"{tag}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"{len(names)} sets, means in %; nested CV against the first row: the mean "
             "of the per-set differences and its standard error.", "",
             "| variant | nested CV | vs first | 1 per class | 2 per class | test |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['variant']} | {r['nested']:.2f} | {r['nested_diff']:+.2f} ± "
              f"{r['nested_diff_se']:.2f} | " + " | ".join(f"{r[h]:.2f}" for h in hows[1:])
              + " |" for r in rows]
    (out / f"{tag}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return rows


if __name__ == "__main__":
    main()
