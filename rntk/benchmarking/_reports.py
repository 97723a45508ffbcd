"""The reports of the UCR benchmark: CSV, Markdown, JSON and a plot against the paper."""

import contextlib
import csv
import importlib.util
import io
import json
import math
import os
import secrets
import sys
from pathlib import Path

import numpy as np

from .stats import summary_metrics

__all__ = ["write_reports"]


@contextlib.contextmanager
def _replacing(path):
    """Yield a temporary path beside ``path``; on success move it onto ``path`` atomically.

    The temporary file (``.NAME.<pid>-<random>.tmp`` in the same folder, so that
    ``os.replace`` never crosses file systems) is removed when the block fails: readers
    of ``path`` see the old file or the complete new one, never a partial write.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _atomic_write_text(path, text):
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically, synced to disk."""
    with _replacing(path) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _failure_label(failure):
    """``DATASET / METHOD``, or ``DATASET (unreadable)`` when its data could not be read."""
    if failure["method"] is None:
        return f"{failure['dataset']} (unreadable)"
    return f"{failure['dataset']} / {failure['method']}"


def _fmt_params(params):
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


def write_reports(rows, out, paper=None, wall_time=None, quiet=False, stream=None,
                  failed=None):
    """Write ``results.csv``, ``summary.md``, ``summary.json``, ``summary.csv`` and the PNG.

    Every file is replaced atomically (written beside it, then renamed).

    Parameters
    ----------
    rows : list of dict
        Result rows of :func:`run_benchmark`.
    out : path-like
        Output folder.
    paper : dict, optional
        The paper's Table 2, ``{dataset: {column: accuracy %}}``.
    wall_time : float, optional
        Wall time of this invocation (cached results take no time).
    quiet : bool, default=False
        Do not print the Markdown summary.
    stream : file, optional
        Where the summary is printed (default stdout).
    failed : list of dict, optional
        The (dataset, method) runs that failed, ``{"dataset", "method", "error"}``
        (``method`` None: the dataset could not be read); listed in the summaries.

    Returns
    -------
    summary : dict
        The content of ``summary.json``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paper = paper or {}
    if not rows:
        return {}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    by = {(r["dataset"], r["method"]): r for r in rows}
    fields = ["dataset", "method", "protocol", "accuracy", "paper", "cv_score", "params",
              "gram_time", "fit_time", "predict_time", "total_time", "n_settings", "padded",
              "n_train", "n_test", "min_length", "max_length", "n_channels", "n_classes",
              "engine"]
    failed = list(failed or [])
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({**r, "accuracy": round(100 * r["accuracy"], 2),
                    "cv_score": round(100 * r["cv_score"], 2)
                    if r["cv_score"] == r["cv_score"] else "",
                    "params": json.dumps(r["params"], default=_json_default)})
    _atomic_write_text(out / "results.csv", f.getvalue())
    acc = np.array([[100 * by[(d, m)]["accuracy"] if (d, m) in by else np.nan
                     for m in methods] for d in datasets])
    ours = summary_metrics(acc) if np.isfinite(acc).all(axis=1).any() else None
    # the paper's own columns, on the datasets every method of ours ran
    complete = [d for d, row in zip(datasets, acc) if np.isfinite(row).all()]
    cols = [c for c in ("RNTK", "NTK", "RBF", "POLY", "GaussianRNN", "IdentityRNN", "GRU")
            if complete and all(c in paper.get(d, {}) for d in complete)]
    theirs = None
    if cols:
        P = np.array([[paper[d][c] for c in cols] for d in complete])
        theirs = summary_metrics(P)
    times = {m: float(sum(by[(d, m)]["total_time"] for d in datasets if (d, m) in by))
             for m in methods}
    summary = {
        "datasets": datasets, "methods": methods,
        "accuracy": {m: {d: 100 * by[(d, m)]["accuracy"] for d in datasets if (d, m) in by}
                     for m in methods},
        "paper": {m: {d: by[(d, m)]["paper"] for d in datasets
                      if (d, m) in by and by[(d, m)]["paper"] is not None} for m in methods},
        "metrics": None if ours is None else {
            m: {k: (float(v[j]) if k != "n_datasets" else v) for k, v in ours.items()}
            for j, m in enumerate(methods)},
        "paper_metrics": None if theirs is None else {
            c: {k: (float(v[j]) if k != "n_datasets" else v) for k, v in theirs.items()}
            for j, c in enumerate(cols)},
        "method_time_s": times,
        "wall_time_s": wall_time,
        "failed": failed,
    }
    _atomic_write_text(out / "summary.json",
                       json.dumps(summary, indent=1, default=_json_default))
    if ours is not None:
        f = io.StringIO(newline="")
        w = csv.writer(f)
        w.writerow(["method", "mean_accuracy", "std", "P90", "P95", "PMA",
                    "friedman_rank", "n_datasets", "paper_mean_same_datasets", "time_s"])
        for j, m in enumerate(methods):
            pm = [by[(d, m)]["paper"] for d in datasets if (d, m) in by]
            pmean = np.mean(pm) if pm and all(p is not None for p in pm) else ""
            w.writerow([m, round(ours["mean"][j], 2), round(ours["std"][j], 2),
                        round(ours["P90"][j], 4), round(ours["P95"][j], 4),
                        round(ours["PMA"][j], 4), round(ours["friedman_rank"][j], 3),
                        ours["n_datasets"], pmean if pmean == "" else round(pmean, 2),
                        round(times[m], 1)])
        _atomic_write_text(out / "summary.csv", f.getvalue())
    md = _markdown(rows, methods, datasets, by, ours, theirs, cols, times, wall_time, failed)
    _atomic_write_text(out / "summary.md", md)
    _plot(methods, datasets, by, out / "accuracy_vs_paper.png")
    if not quiet:
        print(md, file=stream or sys.stdout)
    return summary


def _markdown(rows, methods, datasets, by, ours, theirs, cols, times, wall_time, failed=()):
    protocol = rows[0]["protocol"]
    lines = [f"# UCR benchmark ({protocol} protocol)", "",
             "Test accuracy (%). `ours / paper` where the RNTK paper's Table 2 has the "
             "method; `*` = zero-padded to the longest series (variable-length data).", ""]
    lines.append("| dataset | n_train | n_test | length | " + " | ".join(methods) + " |")
    lines.append("|---|---:|---:|---:|" + "---:|" * len(methods))
    for d in datasets:
        first = next(by[(d, m)] for m in methods if (d, m) in by)
        length = (str(first["max_length"]) if first["min_length"] == first["max_length"]
                  else f"{first['min_length']}-{first['max_length']}")
        cells = []
        for m in methods:
            r = by.get((d, m))
            if r is None:
                cells.append("")
                continue
            c = f"{100 * r['accuracy']:.2f}" + ("*" if r["padded"] else "")
            if r["paper"] is not None:
                c += f" / {r['paper']:.2f}"
            cells.append(c)
        lines.append(f"| {d} | {first['n_train']} | {first['n_test']} | {length} | "
                     + " | ".join(cells) + " |")
    if ours is not None:
        lines += ["", f"## Summary over the {ours['n_datasets']} dataset(s) every method ran",
                  "", "| metric | " + " | ".join(methods) + " |",
                  "|---|" + "---:|" * len(methods)]
        lines.append("| mean accuracy (%) | " + " | ".join(
            f"{v:.2f}" for v in ours["mean"]) + " |")
        cells = []
        for m in methods:
            pairs = [(100 * by[(d, m)]["accuracy"], by[(d, m)]["paper"]) for d in datasets
                     if (d, m) in by and by[(d, m)]["paper"] is not None]
            cells.append(f"{np.mean([a for a, _ in pairs]):.2f} / "
                         f"{np.mean([b for _, b in pairs]):.2f} ({len(pairs)})" if pairs else "")
        lines.append("| ours / paper on the datasets of Table 2 (n) | " + " | ".join(cells)
                     + " |")
        for k, label in (("P90", "P90"), ("P95", "P95"), ("PMA", "PMA")):
            lines.append(f"| {label} | " + " | ".join(f"{100 * v:.2f}%" for v in ours[k])
                         + " |")
        lines.append("| Friedman rank (ties averaged) | " + " | ".join(
            f"{v:.2f}" for v in ours["friedman_rank"]) + " |")
        lines.append("| time (s) | " + " | ".join(f"{times[m]:.1f}" for m in methods) + " |")
    if theirs is not None:
        lines += ["", "The paper's Table 2 columns on the same datasets (metrics among the "
                  "paper's seven methods):", "", "| metric | " + " | ".join(cols) + " |",
                  "|---|" + "---:|" * len(cols)]
        lines.append("| mean accuracy (%) | " + " | ".join(f"{v:.2f}" for v in theirs["mean"])
                     + " |")
        for k in ("P90", "P95", "PMA"):
            lines.append(f"| {k} | " + " | ".join(f"{100 * v:.2f}%" for v in theirs[k]) + " |")
        lines.append("| Friedman rank | " + " | ".join(
            f"{v:.2f}" for v in theirs["friedman_rank"]) + " |")
    lines += ["", "Selected hyperparameters:", ""]
    for r in rows:
        lines.append(f"- {r['dataset']} / {r['method']}: {_fmt_params(r['params'])} "
                     f"(CV {100 * r['cv_score']:.1f}%, Gram {r['gram_time']:.1f}s, "
                     f"fit {r['fit_time']:.1f}s, predict {r['predict_time']:.2f}s)"
                     if r["cv_score"] == r["cv_score"] else
                     f"- {r['dataset']} / {r['method']}: fit {r['fit_time']:.1f}s, "
                     f"predict {r['predict_time']:.2f}s")
    if failed:
        lines += ["", "Failed (not in the tables above):", ""]
        lines += [f"- {_failure_label(f)}: {f['error']}" for f in failed]
    if wall_time is not None:
        lines += ["", f"Wall time of this invocation: {wall_time:.1f}s (cached results "
                  "are not recomputed)."]
    return "\n".join(lines) + "\n"


def _plot(methods, datasets, by, path):
    pts = {m: [(by[(d, m)]["paper"], 100 * by[(d, m)]["accuracy"]) for d in datasets
               if (d, m) in by and by[(d, m)]["paper"] is not None] for m in methods}
    pts = {m: p for m, p in pts.items() if p}
    if not pts or importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    lo = min(min(a, b) for p in pts.values() for a, b in p)
    lo = max(0.0, math.floor(lo / 10) * 10 - 5)
    ax.plot([lo, 100], [lo, 100], color="grey", lw=1, ls="--", label="ours = paper")
    for m, p in pts.items():
        a = np.array(p)
        ax.scatter(a[:, 0], a[:, 1], label=m, s=22, alpha=0.8)
    ax.set_xlim(lo, 101)
    ax.set_ylim(lo, 101)
    ax.set_xlabel("paper's Table 2 test accuracy (%)")
    ax.set_ylabel("our test accuracy (%)")
    ax.set_title("UCR, one point per dataset", fontsize=11)
    ax.legend(loc="lower right")
    fig.tight_layout()
    try:
        with _replacing(path) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
    finally:
        plt.close(fig)
    return path
