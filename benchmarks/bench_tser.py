"""The default regressor against MiniRocket on the extrinsic-regression panel, one run.

For every dataset of ``--data-home`` (one folder per set with ``NAME_TRAIN.ts`` and
``NAME_TEST.ts``, the layout of the TSER archive), the script times ``fit`` + ``predict``
of ``RNTKRegressorCV()`` and of aeon's ``MiniRocketRegressor(random_state=0)`` in the same
process, after a warm-up call of each (numba's compilation excluded), and reports the test
RMSE of both beside the mean of the training targets (the constant predictor) and the
published RMSEs of ``published_rmse.csv`` beside the data (the default train/test split
of the archive's papers: Tan et al. 2021, Guijo-Rubio et al. 2024). Missing values inside
series are filled by linear interpolation for both methods.

``--repeat K`` fits and predicts each set ``K`` times with each method, alternating, and
keeps each method's best time (both are deterministic).

``--resamples K`` pools each set's training and test parts and splits them again at the
official sizes, at random, ``K`` times (resample 0 is the official split, as in the
bake-off's tsml-eval; resample ``r > 0`` draws with seed ``r``), both methods on the same
resamples. The summary then compares the per-set mean RMSEs over the resamples, and the
published columns are the published means over 30 resamples (``mean_rmse_30_resamples``
of ``published_rmse.csv``; other resamples than ours, for context).

Writes ``results.csv`` (one row per set and resample), ``summary.md`` and ``tser.png``
(each method's RMSE over the mean predictor's, per set) into ``--out``.

``--quick`` checks the script in seconds: the first set only, ``RNTKRegressorCV`` on a
small grid, and MiniRocket only when aeon is installed (else its columns are ``nan``).

Usage::

    python benchmarks/bench_tser.py [--data-home DIR] [--datasets A,B] [--out DIR]
        [--repeat K] [--resamples K] [--quick]
"""

import argparse
import csv
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_resamples import resample  # noqa: E402
from bench_ucr_protocols import write_outputs  # noqa: E402

from rntk import RNTKRegressorCV  # noqa: E402
from rntk._utils import as_sequences  # noqa: E402
from rntk.datasets import load_ts  # noqa: E402

#: The published methods reported beside ours (columns of ``published_rmse.csv``).
PUBLISHED = ("FreshPRINCE", "DrCIF", "MultiROCKET", "ROCKET", "5NN-ED")
QUICK_GRID = {"normalize": ["dataset"], "readout": ["mean"], "pool": [4],
              "alpha": [1e-3, 1e-1, 10.0, np.inf]}


def load(name, home):
    """Training and test series and targets (missing values interpolated)."""
    out = []
    for split in ("TRAIN", "TEST"):
        X, y = load_ts(Path(home) / name / f"{name}_{split}.ts", missing="interpolate")
        out += [X, np.asarray(y, dtype=float)]
    return out


def aeon_layout(X):
    """Series as aeon's ``(n, channels, T)`` array (equal lengths)."""
    seqs = as_sequences(X)
    return np.stack([s.T for s in seqs])


def methods(quick=False):
    """Factories of the compared regressors, by name."""
    out = {"rntk": (lambda: RNTKRegressorCV(QUICK_GRID)) if quick else RNTKRegressorCV}
    if importlib.util.find_spec("aeon") is not None:
        from aeon.regression.convolution_based import MiniRocketRegressor

        out["minirocket"] = lambda: MiniRocketRegressor(random_state=0)
    return out


def run(name, make, X_train, y_train, X_test):
    """Fit and predict once; return the predictions and the seconds."""
    est = make()
    if name == "minirocket":
        X_train, X_test = aeon_layout(X_train), aeon_layout(X_test)
    t = time.perf_counter()
    est.fit(X_train, y_train)
    pred = est.predict(X_test)
    return np.asarray(pred, dtype=float), time.perf_counter() - t


def warm_up(ms):
    """One small fit of each method, so that no compilation is timed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 30))
    y = X[:, -1] + 0.1 * rng.normal(size=20)
    for name, make in ms.items():
        run(name, make, X, y, X)


def published(home, column="rmse"):
    """``{dataset: {method: rmse}}`` of ``published_rmse.csv`` beside the data, if any.

    ``column``: ``"rmse"`` (the default split) or ``"mean_rmse_30_resamples"``.
    """
    path = Path(home) / "published_rmse.csv"
    out = {}
    if path.exists():
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r.get(column) not in (None, ""):
                    out.setdefault(r["dataset"], {})[r["method"]] = float(r[column])
    return out


def _rmse(y, p):
    return float(np.sqrt(np.mean((np.asarray(y) - p) ** 2)))


def summary(rows, ms):
    """Markdown table and the panel's figures (W/T/L, geometric means, times)."""
    pub = [m for m in PUBLISHED if any(f"published_{m}" in r for r in rows)]
    head = ["dataset", "n_train", "mean of y_train"] + [f"{m} RMSE" for m in ms] + pub \
        + [f"{m} s" for m in ms]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        cells = [r["dataset"], str(r["n_train"]), f"{r['mean_rmse']:.4g}"]
        cells += [f"{r[f'{m}_rmse']:.4g}" for m in ms]
        cells += [f"{r.get(f'published_{m}', np.nan):.4g}" for m in pub]
        cells += [f"{r[f'{m}_seconds']:.2f}" for m in ms]
        lines.append("| " + " | ".join(cells) + " |")
    ours = np.array([r["rntk_rmse"] for r in rows])
    mean = np.array([r["mean_rmse"] for r in rows])
    lines += ["", f"{len(rows)} sets: rntk below the mean predictor on "
              f"{int(np.sum(ours < mean))}; geometric mean RMSE / mean predictor's "
              f"{np.exp(np.mean(np.log(ours / mean))):.3f}; rntk time "
              f"{sum(r['rntk_seconds'] for r in rows):.1f} s."]
    if "minirocket" in ms:
        mr = np.array([r["minirocket_rmse"] for r in rows])
        t_ours = sum(r["rntk_seconds"] for r in rows)
        t_mr = sum(r["minirocket_seconds"] for r in rows)
        lines.append(
            f"Against MiniRocketRegressor: rntk lower RMSE on {int(np.sum(ours < mr))} of "
            f"{len(rows)}, geometric mean RMSE ratio {np.exp(np.mean(np.log(ours / mr))):.3f}"
            f" (MiniRocket / mean predictor {np.exp(np.mean(np.log(mr / mean))):.3f}); "
            f"time {t_ours:.1f} s against {t_mr:.1f} s ({t_ours / t_mr:.2f}x).")
    return "\n".join(lines) + "\n"


def plot(rows, ms, path):
    """Bars of each method's RMSE over the mean predictor's, per set (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - the plot extra
        return
    names = [r["dataset"] for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(1.3 * len(rows) + 3, 4))
    width = 0.8 / len(ms)
    for j, m in enumerate(ms):
        ax.bar(x + (j - (len(ms) - 1) / 2) * width,
               [r[f"{m}_rmse"] / r["mean_rmse"] for r in rows], width, label=m)
    ax.axhline(1.0, color="k", lw=1, ls="--", label="mean of y_train")
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_ylabel("test RMSE / mean predictor's")
    ax.set_title("Extrinsic regression: lower is better")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def default_home():
    """Return the panel's folder: ``$RNTK_TSER_DATA``, else the development panel, or None."""
    if os.environ.get("RNTK_TSER_DATA"):
        return os.environ["RNTK_TSER_DATA"]
    shared = HERE.parent.parent / "shared" / "data" / "tser"
    return str(shared) if shared.is_dir() else None


def dataset_names(home, datasets=None):
    """Return the names given (comma-separated), else every set of ``home``."""
    if home is None or not Path(home).is_dir():
        raise SystemExit("no data: give --data-home (or set RNTK_TSER_DATA)")
    if datasets:
        return datasets.split(",")
    return sorted(d.name for d in Path(home).iterdir() if (d / f"{d.name}_TRAIN.ts").exists())


def run_panel(names, home, ms, resamples=1, repeat=1, verbose=True):
    """Fit and score every method on every set and resample; return one row per pair.

    Each row has ``dataset``, ``resample``, ``n_train``, ``mean_rmse`` (the training
    mean's test RMSE) and, per method ``m``, ``m_rmse`` and ``m_seconds`` (the best of
    ``repeat`` fits).
    """
    rows = []
    for name in names:
        X_train, y_train, X_test, y_test = load(name, home)
        for r in range(max(1, resamples)):
            Xa, ya, Xb, yb = resample(X_train, y_train, X_test, y_test, r, stratify=False)
            row = {"dataset": name, "resample": r, "n_train": len(ya),
                   "mean_rmse": _rmse(yb, ya.mean())}
            for _ in range(max(1, repeat)):
                for m, make in ms.items():
                    pred, seconds = run(m, make, Xa, ya, Xb)
                    row[f"{m}_rmse"] = _rmse(yb, pred)
                    row[f"{m}_seconds"] = min(seconds, row.get(f"{m}_seconds", np.inf))
            rows.append(row)
        if verbose:
            got = [q for q in rows if q["dataset"] == name]
            print(f"{name:<24} " + "  ".join(
                f"{m} {np.mean([q[f'{m}_rmse'] for q in got]):.4g}"
                for m in ["mean", *ms]), flush=True)
    return rows


def per_set(rows, ms, pub=None):
    """Return one row per set: means over its resamples.

    The mean RMSEs, the summed seconds, and the published columns of ``pub``
    (``{dataset: {method: rmse}}``).
    """
    out = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        got = [r for r in rows if r["dataset"] == name]
        row = {"dataset": name, "n_train": got[0]["n_train"], "resamples": len(got),
               "mean_rmse": float(np.mean([r["mean_rmse"] for r in got]))}
        for m in ms:
            row[f"{m}_rmse"] = float(np.mean([r[f"{m}_rmse"] for r in got]))
            row[f"{m}_seconds"] = float(np.sum([r[f"{m}_seconds"] for r in got]))
        for m in PUBLISHED:
            if m in (pub or {}).get(name, {}):
                row[f"published_{m}"] = pub[name][m]
        out.append(row)
    return out


def main(argv=None):
    """Run the benchmark; return the result rows (one per set, means over resamples)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-home", default=default_home(),
                   help="folder of NAME/NAME_TRAIN.ts and NAME/NAME_TEST.ts")
    p.add_argument("--datasets", default=None, help="comma-separated names (default: all)")
    p.add_argument("--out", default="bench_tser_out")
    p.add_argument("--repeat", type=int, default=1, help="fits per set and method (best time)")
    p.add_argument("--resamples", type=int, default=1,
                   help="splits per set at the official sizes (the first: the official one)")
    p.add_argument("--quick", action="store_true",
                   help="seconds: the first set, a small grid, MiniRocket if aeon is there")
    args = p.parse_args(argv)
    names = dataset_names(args.data_home, args.datasets)
    if args.quick:
        names = names[:1]
    ms = methods(args.quick)
    warm_up(ms)
    column = "rmse" if args.resamples <= 1 else "mean_rmse_30_resamples"
    raw = run_panel(names, args.data_home, ms, args.resamples, args.repeat)
    rows = per_set(raw, ms, published(args.data_home, column))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = summary(rows, list(ms))
    if args.resamples > 1:
        text = (f"Means over {args.resamples} resamples per set (resample 0: the official "
                "split); published: means over 30 resamples of the bake-off.\n\n" + text)
    write_outputs(out, raw, text)
    plot(rows, list(ms), out / "tser.png")
    print(text)
    return rows


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0 if main() else 1)
