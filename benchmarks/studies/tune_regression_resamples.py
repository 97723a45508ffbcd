"""Variants of the default regressor on resamples and by nested CV, beside MiniRocket.

The evidence rule of the classifier's studies applied to regression. For every set of
``--data-home`` (the TSER layout of ``bench_tser.py``) each variant of
``RNTKRegressorCV()`` (:data:`VARIANTS`: other settings of
``REGRESSION_SETTINGS``, another number of averaged members, fewer ridges, another
gate for the interval statistics, one kernel per channel, no clipping) and aeon's
``MiniRocketRegressor(random_state=0)`` are fitted and scored

* on ``--resamples`` splits at the official sizes (``bench_tser.py --resamples``:
  resample 0 is the official split), and
* by nested cross-validation on the official training part alone: 5 outer folds
  (``--shuffles`` shuffles), each variant fitted on four and scored on the fifth.

Each score is a set's RMSE (the resamples' mean; the nested folds' RMSE over all their
predictions); the panel's figure is the geometric mean over the sets of the ratio to
MiniRocket's, over all sets and over each half of the panel (the CRC-32 parity of the
name, as ``bench_resamples.py``). Times are summed fit + predict seconds.

Writes ``results.csv`` (one row per set, protocol, split and method) and ``summary.md``
into ``--out``. ``--quick``: the first set, 2 resamples, 1 shuffle, two variants on the
small grid of ``bench_tser.py --quick``.

Usage::

    python benchmarks/studies/tune_regression_resamples.py [--data-home DIR]
        [--datasets A,B] [--variants A,B] [--resamples K] [--shuffles K] [--out DIR]
        [--quick]
"""

import argparse
import csv
import sys
from contextlib import ExitStack, nullcontext
from functools import partial
from pathlib import Path
from unittest.mock import patch

import numpy as np
from sklearn.model_selection import KFold

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # the studies, the timing scripts

from bench_resamples import half  # noqa: E402
from bench_tser import (  # noqa: E402
    QUICK_GRID,
    _rmse,
    dataset_names,
    default_home,
    load,
    methods,
    run,
    run_panel,
    warm_up,
)

from rntk import RNTKRegressor, RNTKRegressorCV  # noqa: E402
from rntk._estimators import _rntk as _rntk_module  # noqa: E402
from rntk._estimators._base import RNTKKernelMixin  # noqa: E402
from rntk._estimators._ridge import KernelRidgeRegressor  # noqa: E402
from rntk._model_selection import _grids, _refit, _scorers  # noqa: E402
from rntk._model_selection._scorers import loo_r2  # noqa: E402
from rntk._utils import as_sequences  # noqa: E402
from rntk.model_selection import (  # noqa: E402
    DEFAULT_REGRESSION_ALPHA,
    default_regression_grid,
)

#: Coarser relative ridges: every other decade of the default's, and the mean.
COARSE_ALPHA = [10.0 ** k for k in range(-6, 3, 2)] + [np.inf]


_AVERAGE_OR_MEAN = _refit.average_or_mean  # the package's rule, patched by the variants


def prefix_average(search, top, candidates, y, scorer, loo_of):
    """``average_or_mean`` on the prefix of ``top`` whose average has the best LOO."""
    loo = _refit.member_loo(top, candidates, y, scorer, loo_of)
    scores = [loo_r2(y, np.mean(loo[:k], axis=0)[None])[0] for k in range(1, len(top) + 1)]
    k = int(np.argmax(scores)) + 1
    return _AVERAGE_OR_MEAN(search, top[:k], candidates, y, scorer, loo_of)


def greedy_average(search, top, candidates, y, scorer, loo_of, picks=8):
    """Caruana's forward selection with replacement on the members' LOO predictions."""
    loo = _refit.member_loo(top, candidates, y, scorer, loo_of)
    chosen, total = [], 0.0
    for _ in range(picks):
        scores = [loo_r2(y, ((total + p) / (len(chosen) + 1))[None])[0] for p in loo]
        j = int(np.argmax(scores))
        if chosen and scores[j] <= loo_r2(y, (total / len(chosen))[None])[0]:
            break
        chosen.append(j)
        total = total + loo[j]
    return _AVERAGE_OR_MEAN(search, [top[j] for j in chosen], candidates, y,
                                  scorer, loo_of)


def _channel_mean_gram(n_channels):
    """``RNTKKernelMixin._gram`` as the mean of one Gram per raw channel.

    The kernel of one network per channel, their outputs averaged; a prepared series'
    columns ``c, c + m, c + 2 m, ...`` are channel ``c``'s (the representations' layout).
    """
    gram = RNTKKernelMixin._gram

    def channel_mean(self, xs, ys=None):
        m = n_channels
        if m == 1 or xs[0].shape[1] % m:
            return gram(self, xs, ys)
        pick = [np.arange(c, xs[0].shape[1], m) for c in range(m)]
        return np.mean([gram(self, [x[:, cols] for x in xs],
                             None if ys is None else [x[:, cols] for x in ys])
                        for cols in pick], axis=0)

    return channel_mean


#: The averaging rules of ``Variant(members=...)``, by name.
RULES = {"prefix": prefix_average, "greedy": greedy_average}


class Variant:
    """``RNTKRegressorCV`` on named settings of ``REGRESSION_SETTINGS``, sized by default.

    ``settings``: names (``None``: the default's); ``n_average``: members averaged;
    ``alphas``: the relative ridges of every setting; ``members``: ``None`` (the
    ``n_average`` best, the default's rule), ``"prefix"`` (the best prefix of them by
    the LOO of their average) or ``"greedy"`` (forward selection with replacement).
    """

    def __init__(self, settings=None, n_average=2, alphas=None, members=None,
                 channels="joint", gate=None, clip=True):
        self.settings, self.n_average, self.members = settings, n_average, members
        self.alphas = DEFAULT_REGRESSION_ALPHA if alphas is None else alphas
        self.channels, self.gate, self.clip = channels, gate, clip

    def __call__(self):
        return Variant(self.settings, self.n_average, self.alphas, self.members,
                       self.channels, self.gate, self.clip)

    def _kernel(self):
        stack = ExitStack()
        if self.channels != "joint":
            stack.enter_context(patch.object(RNTKRegressor, "_gram",
                                             _channel_mean_gram(self.n_channels_)))
        if not self.clip:  # neither the predictions nor their leave-one-out clipped
            stack.enter_context(patch.object(_rntk_module, "KernelRidgeRegressor",
                                             partial(KernelRidgeRegressor, clip=False)))
            stack.enter_context(patch.object(_scorers, "clip_loo_predictions",
                                             lambda loo, Y: loo))
        return stack

    def fit(self, X, y):
        seqs = as_sequences(X)
        lengths = [len(s) for s in seqs]
        self.n_channels_ = seqs[0].shape[1]
        if self.gate is None:  # a grid given: every setting competes on its LOO alone
            with patch.dict(_grids.REGRESSION_SETTINGS, EXTRA_SETTINGS):
                grid = default_regression_grid(lengths, self.alphas, self.settings)
            search = RNTKRegressorCV(grid, n_average=self.n_average)
            gate = nullcontext()
        else:  # the default grid and its gate, at ``gate`` standard errors
            search = RNTKRegressorCV(n_average=self.n_average)
            gate = patch.object(_grids, "GATE_STANDARD_ERRORS", self.gate)
        rule = RULES.get(self.members, _AVERAGE_OR_MEAN)
        with patch.object(_refit, "average_or_mean", rule), self._kernel(), gate:
            self.search_ = search.fit(X, y)
        return self

    def predict(self, X):
        with self._kernel():
            return self.search_.predict(X)


_DEFAULT = ("spectrum", "band", "quantiles")  # the default's settings before the gate

_ALL = _DEFAULT + ("intervals",)
_INTERVALS = _grids.REGRESSION_SETTINGS["intervals"]

#: Other interval settings: other cuts, other networks (study names only).
EXTRA_SETTINGS = {
    "intervals4": {**_INTERVALS, "intervals": [4]},
    "intervals16": {**_INTERVALS, "intervals": [16]},
    "intervals_b1": {**_INTERVALS, "sigma_b": [1.0]},
    "intervals_u1": {**_INTERVALS, "sigma_u": [1.0]},
    "intervals_2layers": {**_INTERVALS, "n_layers": [2]},
}

#: The variants, by name.
VARIANTS = {
    "default": RNTKRegressorCV,  # the three settings and the gated interval statistics
    "three_settings": Variant(_DEFAULT),
    "default_gate1": Variant(gate=1.0),
    "default_unclipped": Variant(gate=2.0, clip=False),
    "+intervals": Variant(_ALL),
    "+intervals_k3": Variant(_ALL, 3),
    "+intervals_k4": Variant(_ALL, 4),
    "intervals": Variant(("intervals",), 1),
    "spectrum+intervals": Variant(("spectrum", "intervals")),
    "band+intervals": Variant(("band", "intervals")),
    "spectrum+band+intervals": Variant(("spectrum", "band", "intervals")),
    "three_k1": Variant(_DEFAULT, 1),
    "three_k3": Variant(_DEFAULT, 3),
    "three_coarse_alpha": Variant(_DEFAULT, 2, COARSE_ALPHA),
    "three_prefix": Variant(_DEFAULT, 3, members="prefix"),
    "three_greedy": Variant(_DEFAULT, 3, members="greedy"),
    "+intervals_prefix": Variant(_ALL, 4, members="prefix"),
    "+intervals_greedy": Variant(_ALL, 4, members="greedy"),
    "three_settings_channels": Variant(_DEFAULT, channels="separate"),
    **{f"+{k}": Variant(_DEFAULT + (k,)) for k in EXTRA_SETTINGS},
    **{k: Variant((k,), 1) for k in EXTRA_SETTINGS},
}


def nested(name, home, ms, shuffles=1):
    """Rows of the nested CV of every method on the official training part of a set."""
    X, y, _, _ = load(name, home)
    seqs = as_sequences(X)
    rows = []
    for shuffle in range(shuffles):
        folds = KFold(5, shuffle=True, random_state=shuffle).split(np.zeros(len(y)))
        pred = {m: np.empty(len(y)) for m in ms}
        mean = np.empty(len(y))
        seconds = dict.fromkeys(ms, 0.0)
        for train, test in folds:
            Xa, Xb = [seqs[i] for i in train], [seqs[i] for i in test]
            mean[test] = y[train].mean()
            for m, make in ms.items():
                p, s = run(m, make, Xa, y[train], Xb)
                pred[m][test] = p
                seconds[m] += s
        for m in ms:
            rows.append(dict(dataset=name, protocol="nested", split=shuffle, method=m,
                             rmse=_rmse(y, pred[m]), mean_rmse=_rmse(y, mean),
                             seconds=seconds[m]))
    return rows


def _gmean(values):
    return float(np.exp(np.mean(np.log(values))))


def summary(rows):
    """Markdown table: each variant's geometric mean ratio to MiniRocket's RMSE."""
    sets = sorted({r["dataset"] for r in rows})
    ms = list(dict.fromkeys(r["method"] for r in rows))
    variants = [m for m in ms if m != "minirocket"]
    score = {}
    for r in rows:
        score.setdefault((r["protocol"], r["dataset"], r["method"]), []).append(r)
    mean = {k: (np.mean([r["rmse"] for r in v]), np.sum([r["seconds"] for r in v]))
            for k, v in score.items()}
    protocols = [p for p in ("resampled", "nested") if any(r["protocol"] == p for r in rows)]
    head = ["variant"]
    for p in protocols:
        head += [f"{p}: all", "half 0", "half 1", "W/L"]
    head += ["time / MiniRocket's"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    base = "minirocket" if "minirocket" in ms else variants[0]
    for m in variants:
        cells = [m]
        for p in protocols:
            ratio = {s: mean[p, s, m][0] / mean[p, s, base][0] for s in sets}
            cells += [f"{_gmean(list(ratio.values())):.3f}"]
            for h in (0, 1):
                chosen = [ratio[s] for s in sets if half(s) == h]
                cells += [f"{_gmean(chosen):.3f}" if chosen else "-"]
            cells += [f"{sum(v < 1 for v in ratio.values())}/"
                      f"{sum(v > 1 for v in ratio.values())}"]
        t = sum(mean[p, s, m][1] for p in protocols for s in sets)
        tb = sum(mean[p, s, base][1] for p in protocols for s in sets)
        cells += [f"{t / tb:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    per_set = ["", "Per set, resampled RMSE over MiniRocket's:", "",
               "| variant | " + " | ".join(sets) + " |", "|---|" + "---:|" * len(sets)]
    if "resampled" in protocols:
        for m in variants:
            per_set.append(f"| {m} | " + " | ".join(
                f"{mean['resampled', s, m][0] / mean['resampled', s, base][0]:.3f}"
                for s in sets) + " |")
        lines += per_set
    return (f"{len(sets)} sets; geometric mean over the sets of the RMSE ratio to "
            f"{base}'s (below 1: lower RMSE)\n\n" + "\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=default_home())
    p.add_argument("--datasets", default=None)
    p.add_argument("--variants", default=None, help="comma list of names of VARIANTS")
    p.add_argument("--resamples", type=int, default=10)
    p.add_argument("--shuffles", type=int, default=2)
    p.add_argument("--out", default="results/tune_regression_resamples")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    names = dataset_names(args.data_home, args.datasets)
    chosen = args.variants.split(",") if args.variants else list(VARIANTS)
    unknown = set(chosen) - set(VARIANTS)
    if unknown:
        p.error(f"--variants: unknown {sorted(unknown)}; known: {list(VARIANTS)}")
    ms = {m: VARIANTS[m] for m in chosen}
    if args.quick:
        names, args.resamples, args.shuffles = names[:1], 2, 1
        ms = {"default": lambda: RNTKRegressorCV(QUICK_GRID),
              "intervals": Variant(("intervals",), 1, QUICK_GRID["alpha"])}
    ms.update({m: f for m, f in methods().items() if m == "minirocket"})
    warm_up(ms)
    rows = []
    for r in run_panel(names, args.data_home, ms, args.resamples, verbose=False):
        for m in ms:
            rows.append(dict(dataset=r["dataset"], protocol="resampled",
                             split=r["resample"], method=m, rmse=r[f"{m}_rmse"],
                             mean_rmse=r["mean_rmse"], seconds=r[f"{m}_seconds"]))
    for name in names:
        rows += nested(name, args.data_home, ms, args.shuffles)
        print(name, flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    text = summary(rows)
    (out / "summary.md").write_text(text, encoding="utf-8")
    print(text)
    return rows


if __name__ == "__main__":
    main()
