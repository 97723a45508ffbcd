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

    python benchmarks/tune_panel_grid.py [--quick] [--grams-only] [--data-home DIR]
        [--cache DIR] [--out DIR]
"""

import argparse
import csv
import hashlib
import pickle
import re
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from rntk import AmplitudeSpectrum, ValueQuantiles, rntk_kernel  # noqa: E402
from rntk._estimators._ridge import relative_ridge
from rntk._model_selection import mean_readouts, readout_stride
from rntk._model_selection._loo import (
    decision_to_labels,
    eigh_gram,
    one_vs_all_targets,
    ridge_dual_fit,
)
from rntk._preprocessing import interpolate_missing
from rntk._utils import as_sequences, normalize_series, pool_series
from rntk.datasets import read_tsv
from rntk.model_selection import DEFAULT_ALPHA, RidgeLOOScorer, search_grams

#: Sets of the quick run: small, and covering the kinds of loss of issue 24.
QUICK = ["ArrowHead", "Beef", "Chinatown", "DodgerLoopWeekend", "FaceFour", "Fungi",
         "ItalyPowerDemand", "Meat", "OliveOil", "Lightning7", "ShakeGestureWiimoteZ",
         "UMD", "ECG200", "Ham", "GunPointAgeSpan", "Plane"]

MEAN = dict(readout="mean", sigma_u=0.5, sigma_b=0.1, sigma_w=1.2)
LAST = dict(direction="bidirectional", n_layers=2, sigma_b=2.0)
#: name -> (normalize, pool, kernel parameters); mean settings without a band get the
#: readout stride of ``mean_readouts`` (the default's cost cap).
SETTINGS = {
    "last_d0": ("norm", 1, dict(LAST, diff=False)),
    "last_d1": ("norm", 1, dict(LAST, diff=True)),
    "band8": ("rms", 1, dict(MEAN, readout_band=8)),
    "pool4": ("rms", 4, MEAN),
    "raw_band8": (False, 1, dict(MEAN, readout_band=8)),
    "raw_pool4": (False, 4, MEAN),
    "pool8": ("rms", 8, MEAN),
    "pool16": ("rms", 16, MEAN),
    "raw_pool8": (False, 8, MEAN),
    # the banded settings on series pooled to at most 256 steps ("cap": the pool is
    # ceil(longest / 256), 1 for shorter series)
    "band8_cap256": ("rms", "cap256", dict(MEAN, readout_band=8)),
    "raw_band8_cap256": (False, "cap256", dict(MEAN, readout_band=8)),
    "band8_cap384": ("rms", "cap384", dict(MEAN, readout_band=8)),
    "raw_band8_cap384": (False, "cap384", dict(MEAN, readout_band=8)),
    # the same networks on each series' amplitude spectrum (``rntk.amplitude_spectrum``)
    "spec_band8": ("rms", 1, dict(MEAN, readout_band=8)),
    "spec_last": ("norm", 1, dict(LAST, diff=False)),
    # cheaper bands: a narrower band, or series pooled to at most 128 steps
    "band4": ("rms", 1, dict(MEAN, readout_band=4)),
    "raw_band4": (False, 1, dict(MEAN, readout_band=4)),
    "band8_cap128": ("rms", "cap128", dict(MEAN, readout_band=8)),
    "raw_band8_cap128": (False, "cap128", dict(MEAN, readout_band=8)),
    "last_d0_cap256": ("norm", "cap256", dict(LAST, diff=False)),
    # the spectrum on at most as many frequencies as the longest series has
    "spec_band8_short": ("rms", 1, dict(MEAN, readout_band=8)),
    # the band on the quantile functions of the values and steps (``rntk.value_quantiles``)
    "quant_band8": ("rms", 1, dict(MEAN, readout_band=8)),
    "quant32_band8": ("rms", 1, dict(MEAN, readout_band=8)),
    # the pooled settings with at most 64 readouts per series ("_r64")
    "pool8_r64": ("rms", 8, MEAN),
    "raw_pool4_r64": (False, 4, MEAN),
    # the pooled settings with a lower cost cap (MEAN_BUDGET 5e8, "_b5"; 7e8, "_b7")
    "pool8_b5": ("rms", 8, MEAN),
    "raw_pool4_b5": (False, 4, MEAN),
    "pool8_b7": ("rms", 8, MEAN),
    "raw_pool4_b7": (False, 4, MEAN),
}
#: Settings that read ``rntk.amplitude_spectrum(x)`` instead of ``x``.
SPECTRAL = {"spec_band8", "spec_last", "spec_band8_short"}
#: Settings that read ``rntk.value_quantiles(x, n)`` instead of ``x`` (``n``: at most 64
#: levels, as the default grid's ``quantiles`` setting, or 32).
QUANTILE = {"quant_band8": 64, "quant32_band8": 32}


def load(name, data_home):
    """Training and test series (imputed) and labels of one dataset."""
    out = []
    for split in ("TRAIN", "TEST"):
        X, y = read_tsv(Path(data_home) / name / f"{name}_{split}.tsv")
        out += [as_sequences(interpolate_missing(X), "X"), np.asarray(y)]
    return out


def folder_names(data_home, quick=False):
    """Return the sets of a panel folder, one per subfolder (``quick``: those of ``QUICK``)."""
    return sorted(d.name for d in Path(data_home).iterdir() if d.is_dir()
                  and (not quick or d.name in QUICK))


def study_args(argv, description, out, precision=False, options=None):
    """Parse a nested-CV study's command line and create its Gram cache and output folders.

    The options every study shares: ``--data-home`` (a panel folder), ``--cache`` (the
    Grams of ``tune_panel_grid.py``), ``--out`` (``out`` unless told), ``--quick`` (the
    sets of ``QUICK``) and, with ``precision``, ``--precision``; ``options(parser)`` adds
    a study's own. Return ``(args, cache, out)``, the two folders as paths.
    """
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data-home", default="../shared/data/ucr")
    ap.add_argument("--cache", default="results/tune_panel_grid/grams")
    ap.add_argument("--out", default=out)
    ap.add_argument("--quick", action="store_true",
                    help="only the sets of tune_panel_grid.py's quick run")
    if precision:
        ap.add_argument("--precision", choices=["auto", "float64"], default="auto",
                        help="the engine's arithmetic for the default's settings (auto: "
                             "the default's; float64 reads a cache of float64 Grams)")
    if options is not None:
        options(ap)
    args = ap.parse_args(argv)
    folders = Path(args.cache), Path(args.out)
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    return (args, *folders)


def timed_grams(path, xtr, xte, gram=rntk_kernel, **kernel):
    """Training and test-vs-train Grams and their seconds, computed once into ``path``.

    ``gram(X, Y=None, **kernel)`` computes them (the RNTK unless told).
    """
    if not path.exists():
        t0 = time.perf_counter()
        Ktr = gram(xtr, **kernel)
        t1 = time.perf_counter()
        Kte = gram(xte, xtr, **kernel)
        np.savez(path, Ktr=Ktr, Kte=Kte, train_seconds=t1 - t0,
                 test_seconds=time.perf_counter() - t1)
    z = np.load(path)
    return z["Ktr"], z["Kte"], float(z["train_seconds"]), float(z["test_seconds"])


def peer_results(data_home):
    """Rows of ``peer_results.csv`` beside the panel (names, sizes, MiniRocket's scores)."""
    with open(Path(data_home).parent / "peer_results.csv") as f:
        return list(csv.DictReader(f))


def panel_names(data_home, datasets=None, smallest=False):
    """Return the names given (comma-separated), else the panel's (``peer_results.csv``).

    ``smallest``: without ``datasets``, only the set of fewest training steps (``--quick``).
    """
    if datasets:
        return datasets.split(",")
    peers = {r["dataset"]: r for r in peer_results(data_home)}
    names = sorted(peers)
    if smallest:
        names = [min(names, key=lambda n: int(peers[n]["n_train"])
                     * int(peers[n]["max_length"]))]
    return names


def _stride(key, lengths, setting):
    how, pool, kw = setting
    if kw.get("readout") != "mean" or kw.get("readout_band") is not None:
        return 1
    if key.endswith("_r64"):  # the default grid's rule with at most 64 readouts
        return readout_stride(lengths, pool, max_readouts=64)
    budget = re.search(r"_b(\d+)$", key)
    if budget:  # ... with the cost cap 5e8, 7e8 or 2e9 ("_b5", "_b7", "_b20")
        return readout_stride(lengths, pool, budget=int(budget.group(1)) * 1e8)
    # the older keys' Grams were cached with the rounded stride alone (no bounds)
    return max(1, round(-(-max(lengths) // pool) / mean_readouts(lengths, pool)))


def lag_window(x, k, d):
    """Return the windows ``x_t, x_{t-d}, ..., x_{t-(k-1)d}`` of a series, as channels.

    The RNTK of the result is that of an RNN whose input layer reads the window (a
    convolution of ``k`` taps at dilation ``d``, zeros before the first step); the
    windows are divided by ``sqrt(k)``, so that the input's scale stays that of ``x``.
    """
    t, m = x.shape
    out = np.zeros((t, m * k))
    for j in range(min(k, -(-t // d))):
        out[j * d:, j * m:(j + 1) * m] = x[:t - j * d]
    return out / np.sqrt(k)


def setting_inputs(key, data, setting=None):
    """Return the training and test series setting ``key`` reads, and its kernel parameters.

    ``data``: the training and test series as given; the series returned are normalised,
    transformed (spectrum, quantiles, lag windows) and pooled as the setting says.
    ``setting``: ``(normalize, pool, kernel parameters)`` of a setting outside
    ``SETTINGS`` (a study's own), read as ``SETTINGS[key]`` would be.
    """
    xtr, xte = data
    setting = SETTINGS[key] if setting is None else setting
    how, pool, kw = setting
    kw = dict(kw)
    lag = kw.pop("lag", None)
    if kw.get("readout") == "mean":
        kw["readout_stride"] = _stride(key, [len(x) for x in xtr], setting)
    if key in SPECTRAL:
        bins = 128
        if key.endswith("_short"):  # no more bins than rfft gives the longest series
            bins = min(bins, max(len(x) for x in xtr) // 2 + 1)
        spectra = AmplitudeSpectrum(bins)
        xtr, xte = (as_sequences(spectra.fit_transform(x), "X") for x in (xtr, xte))
    if key in QUANTILE:
        levels = max(2, min(QUANTILE[key], max(len(x) for x in xtr)))
        xtr, xte = (as_sequences(ValueQuantiles(levels).fit_transform(x), "X") for x in (xtr, xte))
    if isinstance(pool, str):  # "capN": pool to at most N steps
        pool = max(1, -(-max(len(x) for x in xtr) // int(pool[3:])))
    xtr, xte = (pool_series(normalize_series(x, how), pool) for x in (xtr, xte))
    if lag is not None:
        xtr, xte = ([lag_window(s, *lag) for s in x] for x in (xtr, xte))
    return xtr, xte, kw


def grams(name, key, data, cache, precision="float64", setting=None):
    """Training Gram, test-vs-train Gram and seconds of one setting (cached).

    ``precision``: the engine's arithmetic (``rntk_kernel(precision=...)``); the float32
    Grams are cached under their own names. ``setting``: as in :func:`setting_inputs`.
    """
    tag = "" if precision == "float64" else f"__{precision}"
    path = cache / f"{name}__{key}{tag}.npz"
    if not path.exists():
        xtr, xte, kw = setting_inputs(key, data, setting)
        return timed_grams(path, xtr, xte, precision=precision, **kw)
    return timed_grams(path, None, None)


def outer_folds(y, seed=0):
    _, counts = np.unique(y, return_counts=True)
    cv = (StratifiedKFold(5, shuffle=True, random_state=seed) if counts.min() >= 5
          else KFold(5, shuffle=True, random_state=seed))
    return list(cv.split(np.zeros((len(y), 1)), y))


def few_shot_splits(y, k, seeds=(0, 1, 2)):
    """``k`` training series per class drawn from ``y``; the rest is the held-out part."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        tr = np.concatenate([rng.permutation(np.flatnonzero(y == c))[:k]
                             for c in np.unique(y)])
        te = np.setdiff1d(np.arange(len(y)), tr)
        if len(np.unique(y[tr])) > 1 and len(te):
            out.append((np.sort(tr), te))
    return out


def split_table(Ks, Kts, y, yte):
    """LOO scores of every (setting, alpha) and the held-out decisions of each.

    The scores come from the package's engine (``search_grams`` with
    ``RidgeLOOScorer``), as ``RNTKClassifierCV`` computes them.
    """
    n_a = len(DEFAULT_ALPHA)
    cands = [{"alpha": a} for _ in Ks for a in DEFAULT_ALPHA]
    groups = [list(range(s * n_a, (s + 1) * n_a)) for s in range(len(Ks))]
    loo = [(np.arange(len(y)), np.arange(len(y)))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = search_grams(iter(Ks), groups, cands, y, loo,
                           score_gram=RidgeLOOScorer(True))
    classes, Y = one_vs_all_targets(y)
    dec = []
    for K, Kt in zip(Ks, Kts):
        eig = eigh_gram(K, fit_intercept=True)
        for a in DEFAULT_ALPHA:
            c, b = ridge_dual_fit(eig, Y, float(relative_ridge(K, a)), K=K,
                                  fit_intercept=True)
            dec.append(Kt @ c + b)
    return dict(score=out.scores[:, 0].reshape(len(Ks), n_a),
                tb=out.tiebreak.reshape(len(Ks), n_a), score_n=y, dec=np.array(dec).reshape(
                    (len(Ks), n_a) + dec[0].shape), classes=classes, yte=yte,
                best=out.best_index)


def rank_keys(t, order, criterion):
    """Sort keys of the candidates ``order`` (higher is better) under a criterion.

    ``accuracy``: LOO accuracy, then minus the LOO squared error (the engine's rule);
    ``mse``: minus the LOO squared error; ``accuracy_se``: the accuracies within one
    binomial standard error of the best count as equal, then the squared error;
    ``accuracy_prior``: the engine's rule, but when every candidate has the same LOO
    accuracy the prior candidates ``t["prior"]`` first, in their order.
    """
    acc = np.array([t["score"][sa] for sa in order])
    tb = np.array([t["tb"][sa] for sa in order])
    if criterion == "accuracy":
        return list(zip(acc, tb))
    if criterion == "mse":
        return list(zip(tb))
    if criterion == "accuracy_prior":  # LOO cannot tell: the prior setting first
        if acc.max() > acc.min():
            return list(zip(acc, tb))
        first = {sa: len(t["prior"]) - i for i, sa in enumerate(t["prior"])}
        return list(zip([first.get(sa, 0) for sa in order], tb))
    best = acc.max()
    se = np.sqrt(best * (1 - best) / len(t["score_n"])) if best < 1 else 0.0
    return list(zip(acc >= best - se - 1e-12, tb))


def predict(t, subset, rule, criterion, keys, priors=None):
    """Held-out accuracy of one variant: settings ``subset``, selection ``rule``.

    ``priors``: the (setting, ridge) candidates of ``accuracy_prior``; ``None``: the
    first of ``PRIORS`` in the subset.
    """
    if priors is None:
        priors = [next(((n, a) for n, a in PRIORS if n in keys
                        and keys.index(n) in subset), (None, None))]
    t = dict(t, prior=[(keys.index(n), DEFAULT_ALPHA.index(a)) for n, a in priors
                       if n in keys and keys.index(n) in subset])
    n_a = t["score"].shape[1]
    order = [(s, a) for s in subset for a in range(n_a)]  # grid order
    keys = dict(zip(order, rank_keys(t, order, criterion)))
    keyed = sorted(order, key=lambda sa: keys[sa], reverse=True)  # stable: grid order
    if rule.startswith("top"):  # average the decisions of the best candidate of the
        k = int(rule[3:])       # k best settings
        picked, seen = [], set()
        for s, a in keyed:
            if s not in seen:
                seen.add(s)
                picked.append((s, a))
        picked = picked[:k]
    else:
        picked = keyed[:1]
    D = np.mean([t["dec"][s, a] for s, a in picked], axis=0)
    return (float(np.mean(decision_to_labels(t["classes"], D) == t["yte"])),
            [s for s, _ in picked])


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
#: The prior of ``accuracy_prior`` (setting, ridge): the candidate taken when every
#: candidate has the same LOO accuracy (one series per class): the fixed candidate with
#: the best few-shot accuracy (1 per class) among the settings of the grid.
PRIORS = [("pool4", 1e-3), ("raw_pool4", 1e-2), ("pool8", 1e-3)]


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
    p.add_argument("--data-home", default=str(Path(__file__).resolve().parents[2] / "shared"
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
