"""Screening the kernel settings on a subsample: what it costs the default, by nested CV.

``RNTKClassifierCV(screen=...)`` scores every kernel setting on a stratified subsample
of ``screen`` series first and only the ``n_average`` best on all of them, on more than
twice as many training series (``"auto"``: 1000, so from 2,001 series up to the
``large_n`` switch at 3,000: subsamples of a third to a half of the series). No set of
the development panels is that large; this script screens their larger sets at the
same ratio instead, the harshest the default meets, a third of the series
(``screen = n // 3`` of each training part), where the subsample's leave-one-out is
noisier than at 1,000 series.

Per set (``--min-train`` training series at least), the default with and without the
screening, by **nested CV** (5 outer folds of the training set, stratified and shuffled
with seed 0, or K-fold when a class has fewer than 5 series; the search on 4 folds, the
fifth predicted) and on the **test** set (reported only): accuracy, whether the
averaged settings are the same, and the fit time of both (same process, alternating).

Writes ``screening.csv`` (per set) and ``screening.md`` (means, paired differences and
their standard errors) under ``--out``. Results: see ``benchmarks/README.md``.

Usage::

    python benchmarks/studies/tune_screening.py [--data-home DIR ...] [--min-train N]
        [--out DIR] [--quick]
"""

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
from bench_panel import _load  # noqa: E402
from harness import outer_folds  # noqa: E402

from rntk import RNTKClassifierCV  # noqa: E402

HERE = Path(__file__).resolve().parent
#: The screening ratio: a subsample of a third of the series (the default's harshest).
RATIO = 3


def _fit(X, y, X_test, y_test, screen):
    t = time.perf_counter()
    clf = RNTKClassifierCV(screen=screen).fit(X, y)
    fit_s = time.perf_counter() - t
    kept = sorted(str(p) for p in getattr(clf, "averaged_params_", [clf.best_params_]))
    return float(np.mean(clf.predict(X_test) == y_test)), kept, fit_s


def _pair(X, y, X_test, y_test):
    """Score the default without and with a screening of a third of ``X`` on ``X_test``."""
    screen = max(2, len(X) // RATIO)
    if len(X) <= 2 * screen:
        screen = (len(X) - 1) // 2
    a, kept_a, s_a = _fit(X, y, X_test, y_test, None)
    b, kept_b, s_b = _fit(X, y, X_test, y_test, screen)
    return a, b, kept_a == kept_b, s_a, s_b


def evaluate(name, X, y, X_test, y_test):
    """Return the row of one set: nested CV and test, without and with the screening."""
    X, X_test = list(X), list(X_test)
    nested = []
    for train, test in outer_folds(y):
        nested.append(_pair([X[i] for i in train], y[train], [X[i] for i in test], y[test]))
    n = np.array([r[:3] for r in nested], dtype=float)
    t = np.array([r[3:] for r in nested])
    test = _pair(X, y, X_test, y_test)
    return dict(dataset=name, n_train=len(X), nested_none=100 * n[:, 0].mean(),
                nested_screen=100 * n[:, 1].mean(), nested_same=n[:, 2].mean(),
                test_none=100 * test[0], test_screen=100 * test[1], test_same=test[2],
                fit_s_none=t[:, 0].sum() + test[3], fit_s_screen=t[:, 1].sum() + test[4])


def report(rows):
    """Return the Markdown summary of the rows."""
    if not rows:
        return "no set is large enough\n"
    d = np.array([r["nested_screen"] - r["nested_none"] for r in rows])
    dt = np.array([r["test_screen"] - r["test_none"] for r in rows])
    se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
    mean = {k: np.mean([r[k] for r in rows]) for k in rows[0] if k not in ("dataset",)}
    lines = [
        f"{len(rows)} sets; screening on a third of each training part.",
        "",
        "| | nested CV | test (reported only) | same settings (nested folds) | fit s |",
        "|---|---:|---:|---:|---:|",
        f"| without | {mean['nested_none']:.2f} | {mean['test_none']:.2f} | | "
        f"{sum(r['fit_s_none'] for r in rows):.1f} |",
        f"| screened | {mean['nested_screen']:.2f} | {mean['test_screen']:.2f} | "
        f"{100 * mean['nested_same']:.0f}% | {sum(r['fit_s_screen'] for r in rows):.1f} |",
        "",
        f"Nested CV difference {d.mean():+.2f} +- {se:.2f} (standard error over sets); "
        f"test {dt.mean():+.2f}; sets lower / equal / higher under nested CV: "
        f"{(d < 0).sum()} / {(d == 0).sum()} / {(d > 0).sum()}.",
        "",
        "| dataset | n_train | nested without | nested screened | test without | "
        "test screened |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {r['dataset']} | {r['n_train']} | {r['nested_none']:.2f} | "
              f"{r['nested_screen']:.2f} | {r['test_none']:.2f} | {r['test_screen']:.2f} |"
              for r in rows]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Run the study; return the rows."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", nargs="+",
                    default=[str(HERE.parents[2] / "shared" / "data" / "ucr")])
    ap.add_argument("--min-train", type=int, default=300,
                    help="screen the sets of at least this many training series")
    ap.add_argument("--out", default="results/tune_screening")
    ap.add_argument("--quick", action="store_true", help="the smallest eligible set only")
    args = ap.parse_args(argv)
    sets = []  # (n_train, name, its data), each set read once
    for home in args.data_home:
        for d in sorted(Path(home).iterdir()):
            if d.is_dir():
                data = _load(d.name, home)
                if len(data[1]) >= args.min_train:
                    sets.append((len(data[1]), d.name, data))
    if args.quick:
        sets = sorted(sets, key=lambda s: s[:2])[:1]
    rows = []
    for _, name, data in sets:
        rows.append(evaluate(name, *data))
        r = rows[-1]
        print(f"{name:32s} nested {r['nested_none']:6.2f} -> {r['nested_screen']:6.2f}  "
              f"test {r['test_none']:6.2f} -> {r['test_screen']:6.2f}  "
              f"fit {r['fit_s_none']:6.1f} s -> {r['fit_s_screen']:6.1f} s", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if rows:
        with open(out / "screening.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    (out / "screening.md").write_text(report(rows))
    print(report(rows))
    return rows


if __name__ == "__main__":
    main()
