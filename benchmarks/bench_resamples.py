"""The default classifier against MiniRocket on stratified resamples of a panel.

Evidence that survives a change of split: for every set of ``--data-home`` (a panel
folder in the UCR or UEA layout), the training and test series are pooled and split
again at the official sizes, stratified by class, ``--resamples`` times (resample 0 is
the official split, as in the bake-off's tsml-eval; resample ``r > 0`` draws with seed
``r``). ``RNTKClassifierCV()`` and aeon's ``MiniRocketClassifier(random_state=0)`` are
fitted and scored on the same resamples in one process, after a warm-up of each.

The panel is split into two halves by a rule fixed before any result is seen: a set's
half is the parity of the CRC-32 of its name (:func:`half`). The summary gives the mean
accuracies over all sets and over each half, the mean per-set difference with its
standard error over sets, and wins / ties / losses of the per-set means.

``--nested K`` adds the other kind of evidence, from the same run: nested cross-validation
on the official training part alone (:func:`nested_folds`: K stratified folds shuffled with
seed 0, every method fitted on K - 1 and scored on the last; a set's score is its accuracy
over all the held-out predictions). Its rows have ``protocol`` "nested" (the resamples'
"resampled"), and the summary has a section for each protocol. ``--resamples 0 --nested 5``
runs the nested folds alone.

``--train-size N`` draws each training part down to about N series instead (protocol
"drawn", :func:`drawn_counts`: each class its share of the official part, at least one;
``--resamples`` draws with seeds 0, 1, ...), every other series tested: the regime of the
sets with few training series, on every set.

``--without band,pool`` also fits the default less those settings of its grid (names of
``DEFAULT_SETTINGS``) on the same resamples, and compares it with the default: a smaller
default that is level is the better one. ``--with intervals`` fits it with settings of
:data:`EXTRA_SETTINGS` added (``linear``: the linear kernel of the series in place,
``benchmarks/studies/linear_member.py``). ``--variant NAME`` fits a method a study
registered in :data:`VARIANTS` (another rule of the search, say), under that name.

Writes ``results.csv`` (one row per set, resample and method) and ``summary.md`` into
``--out``. ``--quick`` runs the two smallest sets, at most 2 resamples, on the small grid of
``bench_ucr_protocols.py --quick`` (MiniRocket only when aeon is installed).

Usage::

    python benchmarks/bench_resamples.py [--data-home DIR] [--datasets A,B]
        [--resamples K] [--nested K] [--train-size N] [--without NAMES]
        [--with NAMES] [--variant NAME] [--out DIR] [--quick]
"""

import argparse
import sys
import warnings
import zlib
from pathlib import Path
from unittest.mock import patch

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import _safe_indexing

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_panel import _load, _peers  # noqa: E402
from bench_ucr_protocols import (  # noqa: E402
    QUICK_GRIDS,
    _methods,
    _run,
    _warm_up,
    write_outputs,
)

from rntk import RNTKClassifierCV  # noqa: E402
from rntk._model_selection import _grids  # noqa: E402


def half(name):
    """Return the half of the panel a set belongs to (0 or 1), from its name alone."""
    return zlib.crc32(name.encode("utf-8")) % 2


def _pooled(X_train, X_test):
    """Both parts in one indexable container (NaN-padded arrays padded to one width)."""
    if isinstance(X_train, np.ndarray) and isinstance(X_test, np.ndarray) \
            and X_train.ndim == X_test.ndim and X_train.shape[2:] == X_test.shape[2:]:
        width = max(X_train.shape[1], X_test.shape[1])

        def pad(X):
            extra = [(0, 0), (0, width - X.shape[1])] + [(0, 0)] * (X.ndim - 2)
            return np.pad(X, extra, constant_values=np.nan)

        return np.concatenate([pad(X_train), pad(X_test)])
    return [*X_train, *X_test]


def drawn_counts(y_train, train_size):
    """Training series per class of a draw of about ``train_size`` series.

    Each class its share of the official training part, rounded, at least one (so a
    draw has at least one series of every class, more than ``train_size`` where the
    classes outnumber it); the official counts where they sum to ``train_size`` or fewer.
    """
    classes, counts = np.unique(y_train, return_counts=True)
    if counts.sum() > train_size:
        counts = np.maximum(1, np.round(counts * train_size / counts.sum())).astype(int)
    return dict(zip(classes, counts))


def resample(X_train, y_train, X_test, y_test, seed, stratify=True, train_size=None):
    """Pool both parts and split again at the official sizes, stratified by class.

    ``seed`` 0 returns the official split. Each class keeps its count in the official
    training part, as far as its pooled series allow while leaving one to test.
    ``stratify=False`` (targets of a regression) draws the training part at random.
    ``train_size``: the training part drawn down to about that many series (the
    counts of :func:`drawn_counts`; a draw with ``seed`` 0 too), every other pooled
    series tested.
    """
    if seed == 0 and train_size is None:
        return X_train, y_train, X_test, y_test
    X = _pooled(X_train, X_test)
    y = np.concatenate([y_train, y_test])
    rng = np.random.default_rng(seed)
    wanted = {}
    if stratify:
        wanted = ({c: int(np.sum(y_train == c)) for c in np.unique(y_train)}
                  if train_size is None else drawn_counts(y_train, train_size))
    n_train = (sum(wanted.values()) if stratify
               else min(len(y_train), train_size or len(y_train)))
    train = []
    for c in np.unique(y) if stratify else ():
        members = rng.permutation(np.flatnonzero(y == c))
        k = wanted.get(c, 0)
        train += list(members[:min(k, len(members) - 1) if len(members) > 1 else k])
    train = np.array(sorted(train), dtype=int)
    if len(train) < n_train:  # a class too small to keep its count: fill at random
        rest = rng.permutation(np.setdiff1d(np.arange(len(y)), train))
        train = np.sort(np.r_[train, rest[:n_train - len(train)]])
    test = np.setdiff1d(np.arange(len(y)), train)
    return _safe_indexing(X, train), y[train], _safe_indexing(X, test), y[test]


def nested_folds(y, k, seed=0):
    """Outer folds of the nested CV on a training part: (train, test) index pairs.

    ``k`` folds stratified by class and shuffled with ``seed``, fewer where no class has
    ``k`` series (none where none has two): a class smaller than the folds is spread over
    as many as it has series.
    """
    k = min(k, int(np.max(np.unique(y, return_counts=True)[1])))
    if k < 2:
        return []
    with warnings.catch_warnings():  # "the least populated class has only ... members"
        warnings.simplefilter("ignore", UserWarning)
        return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(
            np.zeros(len(y)), y))


def nested(name, X, y, methods, k):
    """Rows of the nested CV of every method on one training part."""
    folds = nested_folds(y, k)
    rows = []
    for m, make in methods.items():
        correct = seconds = 0.0
        for train, test in folds:
            acc, sec, _ = _run(m, make, _safe_indexing(X, train), y[train],
                               _safe_indexing(X, test), y[test])
            correct += acc * len(test)
            seconds += sec
        if folds:
            rows.append(dict(dataset=name, half=half(name), protocol="nested", resample=0,
                             method=m, accuracy=correct / len(y), seconds=seconds))
    return rows


def _pair_table(mean, sets, a_name, b_name):
    """Rows of the comparison of two methods: all sets, then each half."""
    lines = [f"| sets | n | {a_name} | {b_name} | difference (+- s.e. over sets) | W/T/L |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, keep in (("all", lambda s: True), ("half 0", lambda s: half(s) == 0),
                        ("half 1", lambda s: half(s) == 1)):
        chosen = [s for s in sets if keep(s)]
        if not chosen:
            continue
        a = np.array([100 * mean[s, a_name] for s in chosen])
        b = np.array([100 * mean[s, b_name] for s in chosen])
        d = a - b
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        wtl = f"{np.sum(d > 1e-9)}/{np.sum(np.abs(d) <= 1e-9)}/{np.sum(d < -1e-9)}"
        lines.append(f"| {label} | {len(chosen)} | {a.mean():.2f} | {b.mean():.2f} | "
                     f"{d.mean():+.2f} +- {se:.2f} | {wtl} |")
    return lines


def summary(rows, folds=None, train_size=None):
    """Return the Markdown summary of the rows of :func:`main`.

    Each method against MiniRocket, and each variant of the default against it: a
    section for the resamples, one for the draws of about ``train_size`` training
    series, one for the nested CV (``folds`` outer folds) where ``rows`` have some.
    """
    sections = []
    for protocol in ("resampled", "drawn", "nested"):
        part = [r for r in rows if r.get("protocol", "resampled") == protocol]
        if not part:
            continue
        sets = sorted({r["dataset"] for r in part})
        n_res = max(r["resample"] for r in part) + 1
        if protocol == "drawn":
            title = (f"{len(sets)} sets, {n_res} draws each of about {train_size or 'N'} "
                     "training series (stratified), every other series tested; per-set "
                     "means over the draws")
        elif protocol == "resampled":
            title = (f"{len(sets)} sets, {n_res} resamples each (resample 0: the official "
                     "split); per-set means over the resamples")
        else:
            title = (f"Nested CV on the official training parts: {len(sets)} sets, "
                     f"{folds or 'k'} stratified outer folds (seed 0); per-set accuracy "
                     "over the held-out predictions")
        sections.append(_section(part, sets, title))
    return "\n\n".join(sections)


def _section(rows, sets, title):
    methods = list(dict.fromkeys(r["method"] for r in rows))
    mean = {(s, m): np.mean([r["accuracy"] for r in rows if r["dataset"] == s
                             and r["method"] == m]) for s in sets for m in methods}
    lines = [title, ""]
    pairs = [(m, "minirocket") for m in methods if m != "minirocket" and "minirocket" in methods]
    pairs += [(m, "rntk") for m in methods if m.startswith("rntk_")]
    for a_name, b_name in pairs:
        lines += _pair_table(mean, sets, a_name, b_name) + [""]
    if not pairs:
        lines += [f"- {m}: {100 * np.mean([mean[s, m] for s in sets]):.2f}%" for m in methods]
    t = {m: sum(r["seconds"] for r in rows if r["method"] == m) for m in methods}
    lines += ["", "fit + predict: " + ", ".join(f"{m} {v:.1f} s" for m, v in t.items())]
    return "\n".join(lines) + "\n"


#: Settings ``--with`` can add to the default grid, by name: the interval statistics
#: (on the series as given, and scaled to unit RMS), and ``linear``, the NTK of the
#: one-layer linear network without recurrence read out at every step against the same
#: step of the other series, ``2 / (T T') sum_k <x_{T-k}, x'_{T'-k}>`` on the series as
#: given (``benchmarks/studies/linear_member.py``).
EXTRA_SETTINGS = {"intervals": _grids._LEVEL["intervals"],
                  "rms_intervals": _grids._MEAN["intervals"],
                  "linear": {"activation": ["linear"], "sigma_w": [0.0], "readout": ["mean"],
                             "readout_band": [0], "normalize": [False], "sigma_b": [0.0]}}


#: Methods a study adds by name for ``--variant NAME``: zero-argument factories of
#: estimators with ``fit`` and ``predict`` (e.g. the default under another rule of its
#: search); each is fitted on the same resamples as the others and reported as ``NAME``.
VARIANTS = {}


class _Without:
    """``RNTKClassifierCV()`` on the default grid less some settings, plus others.

    ``names``: settings of ``DEFAULT_SETTINGS`` left out; ``extra``: names of
    :data:`EXTRA_SETTINGS` added.
    """

    def __init__(self, names, extra=()):
        self.names, self.extra = names, extra

    def __call__(self):
        return _Without(self.names, self.extra)

    def fit(self, X, y):
        kept = {k: v for k, v in _grids.DEFAULT_SETTINGS.items() if k not in self.names}
        kept.update({k: EXTRA_SETTINGS[k] for k in self.extra})
        with patch.object(_grids, "DEFAULT_SETTINGS", kept):
            self.search_ = RNTKClassifierCV().fit(X, y)
        return self

    def predict(self, X):
        return self.search_.predict(X)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=str(HERE.parent.parent / "shared" / "data" / "ucr"))
    p.add_argument("--datasets", default=None, help="comma list (default: the panel)")
    p.add_argument("--resamples", type=int, default=5)
    p.add_argument("--out", default="results/bench_resamples")
    p.add_argument("--nested", type=int, default=0, metavar="K",
                   help="also score every method by nested CV on the official training "
                        "parts, K stratified outer folds (0: none)")
    p.add_argument("--train-size", type=int, default=None, metavar="N",
                   help="draw the training parts down to about N series instead "
                        "(protocol 'drawn': --resamples draws, seeds 0, 1, ...; each "
                        "class its share, at least one), every other series tested")
    p.add_argument("--quick", action="store_true",
                   help="the two smallest sets, at most 2 resamples, the small grid")
    p.add_argument("--without", action="append", default=[],
                   help="also fit the default less these settings (comma list of names "
                        "of DEFAULT_SETTINGS), on the same resamples; repeatable")
    p.add_argument("--with", dest="added", action="append", default=[],
                   help="also fit the default with these settings added (comma list of "
                        "names of EXTRA_SETTINGS), on the same resamples; repeatable")
    p.add_argument("--variant", dest="variants", action="append", default=[],
                   help="also fit the method a study registered under this name in "
                        "VARIANTS; repeatable")
    args = p.parse_args(argv)
    if args.train_size is not None and args.train_size < 1:
        p.error(f"--train-size must be at least 1, got {args.train_size}")
    peers = _peers(args.data_home)
    names = args.datasets.split(",") if args.datasets else sorted(peers)
    resamples = args.resamples
    methods = {m: f for m, f in _methods(None).items() if m == "minirocket"}
    if args.quick:
        if not args.datasets:
            names = sorted(names, key=lambda n: int(peers[n]["n_train"])
                           * int(peers[n]["max_length"]))[:2]
        resamples = min(resamples, 2)
        methods = {"rntk": lambda: RNTKClassifierCV(QUICK_GRIDS["rntk"]), **methods}
    else:
        if "minirocket" not in methods:
            raise SystemExit("MiniRocket needs aeon: pip install aeon (or run with --quick)")
        methods = {"rntk": RNTKClassifierCV, **methods}
    for spec in args.added:
        added = tuple(spec.split(","))
        unknown = set(added) - set(EXTRA_SETTINGS)
        if unknown:
            p.error(f"--with: no setting {sorted(unknown)} in {list(EXTRA_SETTINGS)}")
        methods["rntk_with_" + "_".join(added)] = _Without((), added)
    for spec in args.without:
        dropped = tuple(spec.split(","))
        unknown = set(dropped) - set(_grids.DEFAULT_SETTINGS)
        if unknown:
            p.error(f"--without: no setting {sorted(unknown)} in {list(_grids.DEFAULT_SETTINGS)}")
        methods["rntk_without_" + "_".join(dropped)] = _Without(dropped)
    for name in args.variants:
        if name not in VARIANTS:
            p.error(f"--variant: no method {name!r} in {sorted(VARIANTS)} (a study "
                    "registers them)")
        methods[name] = VARIANTS[name]
    _warm_up(methods)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in names:
        X_train, y_train, X_test, y_test = _load(name, args.data_home)
        protocol = "resampled" if args.train_size is None else "drawn"
        for r in range(resamples):
            data = resample(X_train, y_train, X_test, y_test, r, train_size=args.train_size)
            for m, make in methods.items():
                acc, sec, _ = _run(m, make, *data)
                rows.append(dict(dataset=name, half=half(name), protocol=protocol,
                                 resample=r, method=m, accuracy=acc, seconds=sec))
        if args.nested:
            rows += nested(name, X_train, np.asarray(y_train), methods, args.nested)
        for protocol in ("resampled", "drawn", "nested"):
            got = {m: [q["accuracy"] for q in rows if q["dataset"] == name
                       and q["method"] == m and q["protocol"] == protocol] for m in methods}
            if any(got.values()):
                print(f"{name:<32} {protocol:<9} " + "  ".join(
                    f"{m} {100 * np.mean(a):6.2f}" for m, a in got.items()), flush=True)
    md = summary(rows, args.nested, args.train_size)
    write_outputs(out, rows, md)
    print(md)
    return rows


if __name__ == "__main__":
    main()
