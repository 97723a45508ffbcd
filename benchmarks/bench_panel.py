"""The default classifier against MiniRocket on the whole UCR development panel, one run.

For every dataset of ``--data-home`` listed in ``peer_results.csv`` beside it (the 48-set
panel; a panel of ``.ts`` files, as the UEA multivariate panel ``../shared/data/uea``, is
read from its folders, its published columns empty), the script times ``fit`` +
``predict`` of ``RNTKClassifierCV()`` and of aeon's
``MiniRocketClassifier(random_state=0)`` in the same process, after a warm-up call of
each (numba's compilation excluded), with ``bench_ucr_protocols.py``'s runner. Missing
values inside series (``DodgerLoopWeekend``) are filled by linear interpolation
(:func:`rntk.interpolate_missing`, edge values at the ends; the archive's own adjustment) for both
methods; trailing ``NaN`` stay as padding of variable-length series.

Writes ``results.csv`` and ``summary.md`` (per set: ours, MiniRocket, the published
HIVE-COTE 2 and MultiRocket-Hydra accuracies, the difference; W/T/L, means, worst gaps,
total times) into ``--out``.

``--repeat K`` fits and predicts each set ``K`` times with each method, the methods
alternating, and keeps each method's best time (the accuracies of the repeats are the
same: both methods are deterministic). On a shared machine whose speed drifts during a
run, the ratio of best times moves far less than that of single times.

``--compare-unit-rms`` also runs the default without its unit-RMS rule (every setting's
Gram computed, :data:`rntk.model_selection.DEFAULT_SAME` emptied), alternating with the
others, and reports its time beside ours (the same accuracies are expected on every set).

``--compare-precision P`` also runs the default with ``precision=P`` (``"float32"`` or
``"float64"``: the engine's arithmetic), alternating with the others, and reports its time
and accuracy beside ours (column ``precision``) and the sets where they differ.

``--quick`` checks the script in seconds: only the smallest set of the panel (or those of
``--datasets``), ``RNTKClassifierCV`` on the small grid of ``bench_ucr_protocols.py
--quick``, and MiniRocket only when aeon is installed (else its columns are ``nan``).

Usage::

    python benchmarks/bench_panel.py [--data-home DIR] [--datasets A,B] [--out DIR]
        [--repeat K] [--compare-unit-rms] [--compare-precision P] [--quick]
"""

import argparse
import csv
import sys
from pathlib import Path
from unittest.mock import patch

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_ucr_protocols import (  # noqa: E402
    QUICK_GRIDS,
    _methods,
    _run,
    _warm_up,
    write_outputs,
)

from rntk import RNTKClassifierCV
from rntk._model_selection import DEFAULT_SAME
from rntk._preprocessing import interpolate_missing
from rntk.datasets import load_ts, read_tsv  # noqa: E402


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

def _load(name, home):
    out = []
    for split in ("TRAIN", "TEST"):
        ts = Path(home) / name / f"{name}_{split}.ts"
        if ts.exists():  # the UEA layout: multivariate, perhaps of unequal lengths
            X, y = load_ts(ts, missing="interpolate")
            out += [X, np.asarray(y)]
            continue
        X, y = read_tsv(Path(home) / name / f"{name}_{split}.tsv")
        out += [interpolate_missing(X), np.asarray(y)]
    return out


def _peers(home):
    """Return a row per ``.ts`` set of ``home`` (no peers' scores), else the peers' rows."""
    names = sorted(d.name for d in Path(home).iterdir() if (d / f"{d.name}_TRAIN.ts").exists())
    if not names:
        return {r["dataset"]: r for r in peer_results(home)}
    out = {}
    for name in names:
        X, _, X_test, _ = _load(name, home)
        lengths = [len(x) for x in (*X, *X_test)]
        out[name] = {"dataset": name, "n_train": len(X), "n_test": len(X_test),
                     "max_length": max(lengths), "published_hc2": "",
                     "published_mr_hydra": ""}
    return out


def _f(x):
    return float(x) if x not in ("", None) else np.nan


class _EveryGram(RNTKClassifierCV):
    """The default classifier without the unit-RMS rule: every setting's Gram computed."""

    def fit(self, X, y):
        """Fit with ``DEFAULT_SAME`` emptied.

        Parameters
        ----------
        X, y
            As :meth:`rntk.RNTKClassifierCV.fit`.

        Returns
        -------
        self : _EveryGram
            The fitted classifier.
        """
        with patch.dict(DEFAULT_SAME, clear=True):
            return super().fit(X, y)


def summary(rows, peers):
    """Markdown of the per-set table and the totals."""
    lines = ["| dataset | n_train | rntk (%) | MiniRocket (%) | diff | HC2 published (%) | "
             "MR-Hydra published (%) | rntk s | MiniRocket s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    d = []
    for r in rows:
        p = peers[r["dataset"]]
        diff = r["rntk_acc"] - r["minirocket_acc"]
        d.append(diff)
        lines.append(f"| {r['dataset']} | {p['n_train']} | {r['rntk_acc']:.2f} | "
                     f"{r['minirocket_acc']:.2f} | {diff:+.2f} | {_f(p['published_hc2']):.2f} "
                     f"| {_f(p['published_mr_hydra']):.2f} | {r['rntk_s']:.2f} | "
                     f"{r['minirocket_s']:.2f} |")
    d = np.round(np.array(d), 6)
    ours = np.mean([r["rntk_acc"] for r in rows])
    mr = np.mean([r["minirocket_acc"] for r in rows])
    t_ours = sum(r["rntk_s"] for r in rows)
    t_mr = sum(r["minirocket_s"] for r in rows)
    worst = sorted(zip(d, [r["dataset"] for r in rows]))[:5]
    lines += ["", f"{len(rows)} sets: rntk {ours:.2f}%, MiniRocket {mr:.2f}% (gap "
              f"{ours - mr:+.2f}); W/T/L {int(np.sum(d > 0))}/{int(np.sum(d == 0))}/"
              f"{int(np.sum(d < 0))}; sets more than 10 points below: "
              f"{int(np.sum(d < -10))}; worst: "
              + ", ".join(f"{n} {x:+.1f}" for x, n in worst)
              + f"; time {t_ours:.1f} s against {t_mr:.1f} s ({t_ours / t_mr:.2f}x)."]
    if "precision_s" in rows[0]:
        t_p = sum(r["precision_s"] for r in rows)
        differ = [(r["dataset"], r["precision_acc"] - r["rntk_acc"]) for r in rows
                  if r["precision_acc"] != r["rntk_acc"]]
        mean_p = np.mean([r["precision_acc"] for r in rows])
        lines += ["", f"With the other precision (same process): {mean_p:.2f}% "
                  f"({mean_p - ours:+.2f}), {t_p:.1f} s, {t_p / t_ours:.2f}x ours "
                  f"({t_p / t_mr:.2f}x MiniRocket); accuracy different on {len(differ)} of "
                  f"{len(rows)} sets" + (": " + ", ".join(f"{n} {x:+.2f}" for n, x in differ)
                                         if differ else "") + "."]
    if "every_s" in rows[0]:
        t_every = sum(r["every_s"] for r in rows)
        same = sum(r["every_acc"] == r["rntk_acc"] for r in rows)
        lines += ["", f"Without the unit-RMS rule (every Gram computed, same process): "
                  f"{t_every:.1f} s, {t_every / t_ours:.2f}x ours; the same accuracy on "
                  f"{same} of {len(rows)} sets."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-home", default=str(HERE.parent.parent / "shared" / "data" / "ucr"))
    p.add_argument("--datasets", default=None, help="comma list (default: the panel)")
    p.add_argument("--out", default="results/bench_panel")
    p.add_argument("--repeat", type=int, default=1,
                   help="fits per set and method, alternating; the best time is kept")
    p.add_argument("--compare-unit-rms", action="store_true",
                   help="also the default without its unit-RMS rule (column every)")
    p.add_argument("--compare-precision", choices=("float32", "float64"), default=None,
                   help="also the default with this engine precision (column precision)")
    p.add_argument("--quick", action="store_true",
                   help="smallest set, small grid, MiniRocket only with aeon (seconds)")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error(f"--repeat must be at least 1, got {args.repeat}")
    peers = _peers(args.data_home)
    names = args.datasets.split(",") if args.datasets else sorted(peers)
    methods = {k: v for k, v in _methods(None).items() if k in ("rntk", "minirocket")}
    if args.quick:
        if not args.datasets:
            names = [min(names, key=lambda n: int(peers[n]["n_train"])
                         * (int(peers[n]["n_train"]) + int(peers[n]["n_test"]))
                         * int(peers[n]["max_length"]))]
        methods["rntk"] = lambda: RNTKClassifierCV(QUICK_GRIDS["rntk"])
    elif "minirocket" not in methods:
        raise SystemExit("MiniRocket needs aeon: pip install aeon (or run with --quick)")
    if args.compare_unit_rms:
        methods["every"] = (lambda: _EveryGram(QUICK_GRIDS["rntk"])) if args.quick \
            else _EveryGram
    if args.compare_precision:
        grid = QUICK_GRIDS["rntk"] if args.quick else None
        methods["precision"] = lambda: RNTKClassifierCV(grid, precision=args.compare_precision)
    _warm_up(methods)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in names:
        data = _load(name, args.data_home)
        row = {"dataset": name}
        for _ in range(args.repeat):
            for m, make in methods.items():
                acc, sec, params = _run(m, make, *data)
                if f"{m}_acc" in row and row[f"{m}_acc"] != 100 * acc:
                    raise RuntimeError(f"{m} on {name}: the repeats' accuracies differ")
                row[f"{m}_acc"] = 100 * acc
                row[f"{m}_s"] = min(sec, row.get(f"{m}_s", np.inf))
                if m == "rntk":
                    row["rntk_params"] = repr(params)
        if "minirocket" not in methods:  # --quick without aeon
            row["minirocket_acc"] = row["minirocket_s"] = np.nan
        for col in ("published_hc2", "published_mr_hydra"):  # the README's picture
            row[col] = peers.get(name, {}).get(col, "")
        rows.append(row)
        print(f"{name:<32} rntk {row['rntk_acc']:6.2f} ({row['rntk_s']:6.2f} s)  minirocket "
              f"{row['minirocket_acc']:6.2f} ({row['minirocket_s']:6.2f} s)"
              + (f"  every {row['every_acc']:6.2f} ({row['every_s']:6.2f} s)"
                 if "every_s" in row else "")
              + (f"  precision {row['precision_acc']:6.2f} ({row['precision_s']:6.2f} s)"
                 if "precision_s" in row else ""), flush=True)
    md = summary(rows, peers)
    write_outputs(out, rows, md)
    print(md)


if __name__ == "__main__":
    main()
