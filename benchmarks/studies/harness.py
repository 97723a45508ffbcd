"""The harness of the nested-CV studies: one panel's series, cached Grams, folds, scores.

Every study of this folder imports it (``import harness as T``): the loading of a UCR
panel folder (missing values filled by linear interpolation, the archive's own
adjustment), the candidate kernel settings ``SETTINGS`` and their inputs, the Gram cache
(``timed_grams``, ``grams``), the outer folds of nested CV and the few-shot draws, the
exact leave-one-out table of a set (``split_table``), the held-out accuracy of a
selection rule (``predict``), and the gate of the resampled studies' added settings
(``zero_one_errors``, ``classifier_gate``, ``gated_rules``). The studies themselves and
what each found are in ``benchmarks/studies/README.md``.
"""

import argparse
import copy
import csv
import re
import sys
import time
import warnings
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/
from bench_panel import panel_names, peer_results  # noqa: E402,F401  (the studies' names)

from rntk import AmplitudeSpectrum, RNTKClassifierCV, ValueQuantiles, rntk_kernel  # noqa: E402
from rntk._estimators._ridge import relative_ridge
from rntk._model_selection import _grids, _refit, mean_readouts, readout_stride
from rntk._model_selection._candidates import gated_indices
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


#: The prior of ``accuracy_prior`` (setting, ridge): the candidate taken when every
#: candidate has the same LOO accuracy (one series per class): the fixed candidate with
#: the best few-shot accuracy (1 per class) among the settings of the grid.
PRIORS = [("pool4", 1e-3), ("raw_pool4", 1e-2), ("pool8", 1e-3)]


_PACKAGE_GATED_TOP = _refit.gated_top  # the package's, before a study replaces it


def zero_one_errors(D, y):
    """Per-sample 0/1 errors of one-vs-all decision values ``D``."""
    return (decision_to_labels(np.unique(y), D) != y).astype(float)


def classifier_gate(top, gated, n_average, candidates, y, scorer, loo_of, z=None):
    """``gated_top`` for a classifier: the 0/1 leave-one-out errors of the averages.

    A study that gates an added setting of the classifier (the package gates only the
    regressor's) puts it in place of ``rntk._model_selection._refit.gated_top``. Shut
    (the others' members) where a member has no leave-one-out decisions kept.
    """
    if any(i not in loo_of for i, _ in top):
        return [e for e in top if e[0] not in gated][:n_average] or top[:n_average]
    return _PACKAGE_GATED_TOP(top, gated, n_average, candidates, y, scorer, loo_of, z,
                              errors=zero_one_errors)


def gated_rules(rules, gated):
    """``_default_rules`` of the searches that also gates the classifier settings ``gated``.

    ``gated``: names of settings a study adds to ``DEFAULT_SETTINGS``.
    """
    def default_rules(self, plan):
        rules(self, plan)
        if plan.exact_loo and self.param_grid is None and not plan.base._is_regressor:
            names = list(_grids.default_settings(self.n_channels_in_))
            if any(g in names for g in gated):
                plan.gated = gated_indices(plan.grid, names, gated)
                plan.n_gated = sum(g in names for g in gated)
    return default_rules


def differences(rows, variant, base="rntk"):
    """Per-set mean accuracy differences (points), ``{(panel, protocol): {set: d}}``."""
    acc = defaultdict(list)
    for r in rows:
        acc[r.get("panel", "ucr"), r["protocol"], r["dataset"], r["method"]].append(
            float(r["accuracy"]))
    out = defaultdict(dict)
    for (panel, protocol, name, method), a in acc.items():
        if method == variant and (panel, protocol, name, base) in acc:
            out[panel, protocol][name] = 100 * (np.mean(a) - np.mean(
                acc[panel, protocol, name, base]))
    return dict(out)


def plot_differences(path, variant, ylabel, title, base="rntk", out=None):
    """Draw, from the rows of a study's ``results.csv`` at ``path``, each set's difference.

    One panel per (panel, protocol) of the rows: the per-set difference of
    :func:`differences` (``variant`` from ``base``), sorted, its mean and standard error
    in the title; written to ``out`` (default: beside ``path`` with ``.png``), whose path
    is returned.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(path, newline="") as f:
        diffs = differences(list(csv.DictReader(f)), variant, base)
    fig, axes = plt.subplots(1, len(diffs), figsize=(3.2 * len(diffs), 3.6), sharey=True,
                             squeeze=False)
    for ax, ((panel, protocol), d) in zip(axes[0], sorted(diffs.items())):
        names = sorted(d, key=d.get)
        v = np.array([d[n] for n in names])
        ax.bar(range(len(v)), v, color=np.where(v >= 0, "tab:green", "tab:red"))
        ax.axhline(0, color="k", lw=0.6)
        se = v.std(ddof=1) / np.sqrt(len(v))
        ax.set_title(f"{panel.upper()} {protocol}: {v.mean():+.2f} +- {se:.2f}", fontsize=9)
        ax.set_xticks([])
        for i in (0, len(v) - 1):
            if abs(v[i]) > 1:
                ax.annotate(names[i], (i, v[i]), fontsize=7, ha="center",
                            va="bottom" if v[i] > 0 else "top")
    axes[0][0].set_ylabel(ylabel)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = Path(path).with_suffix(".png") if out is None else Path(out)
    fig.savefig(out, dpi=110)
    return out


class Assign:
    """Plain assignments: the changes a study's ``install`` makes for its run.

    A test passes pytest's ``monkeypatch`` in its place, whose changes are undone after
    the test.
    """

    @staticmethod
    def setattr(obj, name, value):
        """``setattr(obj, name, value)``."""
        setattr(obj, name, value)

    @staticmethod
    def setitem(mapping, key, value):
        """``mapping[key] = value``."""
        mapping[key] = value


class PatchedDefault:
    """``RNTKClassifierCV()`` fitted under a study's patches: a method of ``VARIANTS``.

    A study subclasses it and returns from :meth:`patches` the context managers
    (``unittest.mock.patch.object``, ...) that its fit on the training series ``X``
    runs under (and from :meth:`patches_at_predict` those of the prediction, where a
    patch changes how series are prepared). An instance is the zero-argument factory
    ``bench_resamples.VARIANTS`` takes: calling it gives an unfitted copy.
    """

    def __call__(self):
        new = copy.copy(self)
        new.__dict__ = {k: v for k, v in vars(self).items() if not k.endswith("_")}
        return new

    def patches(self, X):
        """Return the context managers the fit on ``X`` runs under (none here)."""
        return []

    def search(self):
        """Return the unfitted search the patches apply to: ``RNTKClassifierCV()``."""
        return RNTKClassifierCV()

    def fit(self, X, y):
        with ExitStack() as stack:
            for context in self.patches(X):
                stack.enter_context(context)
            self.search_ = self.search().fit(X, y)
        return self

    def patches_at_predict(self):
        """Return the context managers the prediction runs under (none here)."""
        return []

    def predict(self, X):
        with ExitStack() as stack:
            for context in self.patches_at_predict():
                stack.enter_context(context)
            return self.search_.predict(X)


def install_variants(variants, patch=Assign):
    """Register each of ``{name: factory}`` in ``bench_resamples.VARIANTS`` (by ``patch``)."""
    import bench_resamples

    for name, variant in variants.items():
        patch.setitem(bench_resamples.VARIANTS, name, variant)


def plot_variants(path, titles, ylabel="variant - default (points)"):
    """Draw :func:`plot_differences` of each variant of ``{name: title}``, a PNG each.

    Written beside ``path`` as ``<stem>_<name>.png``; their paths are returned.
    """
    return [plot_differences(path, name, ylabel, title,
                             out=Path(path).with_name(f"{Path(path).stem}_{name}.png"))
            for name, title in titles.items()]


def resampled_study(argv, install, option, names, plot=None):
    """Run a resampled study: ``bench_resamples.py`` with the methods it registers.

    ``--plot CSV`` as the first argument calls ``plot(CSV)`` instead (when given);
    otherwise ``install()`` runs, and ``option`` (``"--with"`` or ``"--variant"``) with
    each of ``names`` is added unless the arguments name that option already.
    """
    import bench_resamples

    argv = list(sys.argv[1:] if argv is None else argv)
    if plot is not None and argv[:1] == ["--plot"]:
        return plot(argv[1])
    install()
    if option not in argv:
        argv += [a for name in names for a in (option, name)]
    return bench_resamples.main(argv)
