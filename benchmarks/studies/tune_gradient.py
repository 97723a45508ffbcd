"""The default's network hyperparameters fitted per dataset on the LOO criterion, by nested CV.

Every setting of the default reads its series with one network: ``sigma_w = 1.2``,
``sigma_u = 0.5``, ``sigma_b = 0.1`` (``rntk.model_selection.MEAN_NETWORK``). This
script fits ``sigma_w`` and ``sigma_b`` of each setting to each training set instead: it
minimises the exact leave-one-out squared error of the setting's one-vs-all ridge (the
best of the default's ridges), a closed form in the Gram, with L-BFGS-B on
``log sigma_w`` and ``log sigma_b`` from the default's values (``sigma_w`` in
``[0.5, 1.4]``, below the mean readout's overflow at ``sqrt(2)``; ``sigma_b`` in
``[0.01, 2]``; gradients by finite differences of the engine's float32 Grams, at most
``--maxfun`` Grams per fit). ``sigma_u`` stays: the ReLU network's kernel is
homogeneous, scaling ``sigma_u`` and ``sigma_b`` together scales the Gram, which a
relative ridge undoes, so the two fitted scales are all the network has.

Nested CV as in ``tune_local_shapes.py``: on each of the 5 outer folds of a training
set, each setting's hyperparameters are fitted on the fold's training part alone, its
Grams recomputed there, and the default's rule (the top-3 average) scored on the
held-out part; the test column fits them on the whole training set (reported only).
The draws of 1 or 2 series per class are not scored: with one series per class LOO has
no criterion to fit, with two little. Variants: each setting fitted in its own place,
and all seven.

``--channels``: a scale per channel of the series instead (the issue's per-channel input
scales, as automatic relevance determination), the network kept: ``log`` scales in
``[log 0.1, log 10]`` from 0, each of a channel's signals (values, spectrum, quantile
functions) scaled by it. ``--several-channels``: the default of series of several
channels (six settings, the band left out), for the UEA panel (``.ts`` sets, as
``tune_local_shapes.py`` reads them).

Writes ``gradient.csv`` (per set and variant), ``gradient.md`` and
``gradient_params.csv`` (the fitted values per set, split and setting; ``channels*``
with ``--channels``) under ``--out``; the fitted Grams are cached under ``--cache``.
Results: see ``benchmarks/README.md``.

Usage::

    python benchmarks/studies/tune_gradient.py [--quick] [--channels] [--several-channels]
        [--data-home DIR] [--cache DIR] [--out DIR] [--settings 1,2,...] [--maxfun N]
        [--datasets A,B,...]
"""

import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
import harness as T  # noqa: E402
import tune_beside as B  # noqa: E402
import tune_local_shapes as LS  # noqa: E402
import tune_panel_ensembles as E  # noqa: E402

from rntk import KernelOverflowError, rntk_kernel  # noqa: E402
from rntk.model_selection import DEFAULT_ALPHA, RidgeLOOScorer  # noqa: E402

#: Positions of the default's seven settings (``tune_beside.SEVEN``: ``LS.SIX`` but the
#: last step, then ``LS.REPLACE``), their keys and their names.
KEYS = dict(enumerate([*LS.SIX[1:], *LS.REPLACE], start=1))
NAMES = B.NAMES
#: Bounds of ``(log sigma_w, log sigma_b)``.
BOUNDS = [(np.log(0.5), np.log(1.4)), (np.log(0.01), np.log(2.0))]
#: Bounds of a channel's log scale (``--channels``).
CHANNEL_BOUNDS = (np.log(0.1), np.log(10.0))


def setting_inputs(pos, data):
    """Return the series setting ``pos`` reads (training, test) and its kernel parameters."""
    key = KEYS[pos]
    return LS.variant_inputs(key, data) if key in LS.VARIANTS else T.setting_inputs(key, data)


def loo_error(K, y):
    """Return the least LOO squared error of the one-vs-all ridge over the default's ridges.

    The tie-break of the default's search (``RidgeLOOScorer``: relative ridges, an
    intercept), as the default computes it.
    """
    minus_mse = RidgeLOOScorer(True)(K, y, [{"alpha": a} for a in DEFAULT_ALPHA]).tiebreak
    return float(-minus_mse.max())


def minimise(gram, y, z0, bounds, maxfun):
    """Return the ``z`` of least :func:`loo_error` of ``gram(z)`` by L-BFGS-B, from ``z0``.

    Finite-difference gradients (steps of 1e-2); a Gram that overflows scores 1e3.
    """
    def objective(z):
        try:
            return loo_error(gram(z), y)
        except KernelOverflowError:
            return 1e3

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return minimize(objective, z0, method="L-BFGS-B", bounds=bounds,
                        options=dict(maxfun=maxfun, eps=1e-2)).x


def fit_network(xs, y, kw, maxfun):
    """Return ``(sigma_w, sigma_b)`` minimising :func:`loo_error` from ``kw``'s values."""
    def gram(z):
        return rntk_kernel(xs, **dict(kw, sigma_w=np.exp(z[0]), sigma_b=np.exp(z[1])),
                           precision="float32")

    z = minimise(gram, y, np.log([kw["sigma_w"], kw["sigma_b"]]), BOUNDS, maxfun)
    return tuple(float(v) for v in np.exp(z))


def scaled(xs, scales):
    """Multiply column ``j`` of each series by ``scales[j % len(scales)]``.

    The settings' inputs hold, per signal, one column per channel of the series
    (``k m + c``: signal ``k`` of channel ``c``), so a channel's scale scales each of its
    signals.
    """
    scales = np.asarray(scales, dtype=float)
    return [x * np.resize(scales, x.shape[1]) for x in xs]


def fit_channels(xs, y, kw, n_channels, maxfun):
    """Return the channel scales minimising :func:`loo_error`, from 1 (``CHANNEL_BOUNDS``)."""
    def gram(z):
        return rntk_kernel(scaled(xs, np.exp(z)), **kw, precision="float32")

    return np.exp(minimise(gram, y, np.zeros(n_channels), [CHANNEL_BOUNDS] * n_channels,
                           maxfun))


def fitted_grams(name, pos, split, tr, te, data, y, cache, maxfun, channels=False):
    """Training and held-out Grams of setting ``pos`` fitted on ``tr`` (cached).

    ``te`` None: the test set against the whole training set. Return them and the fitted
    values: ``(sigma_w, sigma_b)``, or with ``channels`` the channels' scales.
    """
    what = "channels" if channels else "gradient"
    path = cache / f"{name}__{what}_{KEYS[pos]}_{split}_f{maxfun}.npz"
    if not path.exists():
        xtr, xte, kw = setting_inputs(pos, data)
        a = [xtr[i] for i in tr]
        b = xte if te is None else [xtr[i] for i in te]
        if channels:
            values = fit_channels(a, y[tr], kw, data[0][0].shape[1], maxfun)
            a, b = scaled(a, values), scaled(b, values)
        else:
            values = fit_network(a, y[tr], kw, maxfun)
            kw = dict(kw, sigma_w=values[0], sigma_b=values[1])
        Ka = rntk_kernel(a, **kw, precision="float32")
        Kb = rntk_kernel(b, a, **kw, precision="float32")
        np.savez(path, Ka=Ka, Kb=Kb, values=values)
    z = np.load(path)
    return z["Ka"], z["Kb"], [float(v) for v in z["values"]]


def plans(positions, default=tuple(KEYS)):
    """``variant -> {position: fitted?}``: the default, each setting fitted, all fitted.

    ``default``: the default's positions (the six of series of several channels, the
    band left out, with ``--several-channels``).
    """
    out = {f"the default ({len(default)} settings)": {p: False for p in default}}
    for p in positions:
        out[f"{NAMES[p]} fitted"] = {q: q == p for q in default}
    out["every setting fitted" if set(positions) == set(default) else "these fitted"] = \
        {q: q in positions for q in default}
    return out


def score_set(name, args, cache, positions, default):
    """Nested and test accuracy of each plan on one set, and the fitted values."""
    xtr, y, xte, yte = LS.load(name, args.data_home)
    G = LS.default_grams(name, (xtr, xte), cache, "float64")
    variants = plans(positions, default)
    splits = {"nested": T.outer_folds(y), "test": [(np.arange(len(y)), None)]}
    acc, params = {v: {} for v in variants}, []
    for how, folds in splits.items():
        per, sizes = {v: [] for v in variants}, []
        for i, (tr, te) in enumerate(folds):
            fitted = {}
            for p in positions:
                Ka, Kb, values = fitted_grams(name, p, f"{how}{i}", tr, te, (xtr, xte), y,
                                              cache, args.maxfun, args.channels)
                fitted[p] = (Ka, Kb)
                params.append(dict(dataset=name, split=f"{how}{i}", setting=NAMES[p],
                                   values=" ".join(f"{v:.4g}" for v in values)))
            # positions 1-7 the default's Grams, 8-14 the fitted ones (where fitted)
            Ks = [g[0][np.ix_(tr, tr)] for g in G]
            Kts = [g[1] if te is None else g[0][np.ix_(te, tr)] for g in G]
            for p in KEYS:
                Ks.append(fitted.get(p, (Ks[p], None))[0])
                Kts.append(fitted.get(p, (None, Kts[p]))[1])
            yt = yte if te is None else y[te]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = E.split_table(Ks, Kts, y[tr], yt)
            sizes.append(len(yt))
            for v, plan in variants.items():
                subset = [p + 7 if on else p for p, on in plan.items()]
                per[v].append(E.held_out(t, E.rule_top(t, subset)))
        for v in variants:
            acc[v][how] = 100 * np.average(per[v], weights=sizes)
    return acc, params


def main(argv=None):
    def options(ap):
        ap.add_argument("--settings",
                        help="positions of the settings to fit (1-7: " + ", ".join(
                            f"{p} {n}" for p, n in NAMES.items()) + "; default: the "
                            "default's)")
        ap.add_argument("--maxfun", type=int, default=12,
                        help="at most this many Grams per fit (L-BFGS-B's maxfun)")
        ap.add_argument("--channels", action="store_true",
                        help="fit a scale per channel instead of the network")
        ap.add_argument("--several-channels", action="store_true",
                        help="the default of series of several channels (the band left "
                             "out)")
        ap.add_argument("--datasets", help="comma-separated sets (default: the panel's)")

    args, cache, out = T.study_args(argv, __doc__.splitlines()[0], "results/tune_gradient",
                                    options=options)
    default = tuple(KEYS)[1:] if args.several_channels else tuple(KEYS)
    positions = [int(p) for p in args.settings.split(",")] if args.settings else default
    names = (args.datasets.split(",") if args.datasets
             else T.folder_names(args.data_home, args.quick))
    rows, params = [], []
    variants = list(plans(positions, default))
    stem = "channels" if args.channels else "gradient"
    for name in names:
        t0 = time.perf_counter()
        acc, p = score_set(name, args, cache, positions, default)
        rows += [{"dataset": name, "variant": v, **acc[v]} for v in variants]
        params += p
        print(f"{name:<32} nested {acc[variants[0]]['nested']:6.2f} -> "
              + " ".join(f"{acc[v]['nested']:6.2f}" for v in variants[1:])
              + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    for file, table in ((stem, rows), (f"{stem}_params", params)):
        with open(out / f"{file}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0]))
            w.writeheader()
            w.writerows(table)
    md = LS.report(rows, variants, against="the default")
    (out / f"{stem}.md").write_text(md)
    print(md)
    return rows


if __name__ == "__main__":
    main()
