"""The reports of the UCR benchmark: CSV, Markdown, JSON and the plots.

The summaries (``summary.md``, ``summary.csv``, ``summary.json``) and the plots
(``accuracy_vs_paper.png``, ``accuracy_vs_minirocket.png``) cover the result rows they are
given, all of one protocol: :func:`rntk.benchmarking.run_benchmark` gives every valid
cached result of its protocol, not only those of the invocation; ``results.csv`` lists the
invocation's own results.
"""

import contextlib
import csv
import importlib.util
import io
import json
import math
import sys
import textwrap
from pathlib import Path

import numpy as np

from ._files import atomic_write_text, json_default, replacing
from ._sota import PLOT_CD, compare_with_published, sota_markdown, write_cd_plot
from .stats import summary_metrics

__all__ = ["failure_label", "write_reports"]


def failure_label(failure):
    """``DATASET / METHOD``, or ``DATASET (unreadable)`` when its data could not be read."""
    if failure["method"] is None:
        return f"{failure['dataset']} (unreadable)"
    return f"{failure['dataset']} / {failure['method']}"


def _fmt_params(params):
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


#: the method every other one is compared with, in a table and a plot
REFERENCE = "minirocket"
PLOT_VS_PAPER = "accuracy_vs_paper.png"
PLOT_VS_REFERENCE = "accuracy_vs_minirocket.png"
PLOT_RELIABILITY = "reliability.png"
#: the probability metrics of a result (the bake off redux's, beside accuracy)
PROBABILITY_METRICS = ("balanced_accuracy", "nll", "auroc", "ece")
#: two accuracies (%) closer than this are a tie
_TIE = 1e-9
#: the paper's Table 2 is rounded to 2 decimals: ours within its rounding is "equal"
_PAPER_TIE = 0.005 + _TIE
#: every point of a panel is labelled up to this many datasets, else only the
#: ``_FAR_LABELS`` points farthest from the diagonal
_MAX_LABELS = 30
_FAR_LABELS = 15
_CSV_FIELDS = ["dataset", "method", "protocol", "accuracy", *PROBABILITY_METRICS, "paper",
               "cv_score", "params",
               "gram_time", "fit_time", "predict_time", "total_time", "n_settings", "padded",
               "n_train", "n_test", "min_length", "max_length", "n_channels", "n_classes",
               "engine"]


def _results_csv(rows):
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=_CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({**r, **{k: round(r[k], 6) for k in PROBABILITY_METRICS if k in r},
                    "accuracy": round(100 * r["accuracy"], 2),
                    "cv_score": round(100 * r["cv_score"], 2)
                    if r["cv_score"] == r["cv_score"] else "",
                    "params": json.dumps(r["params"], default=json_default)})
    return f.getvalue()


def write_reports(rows, out, paper=None, wall_time=None, quiet=False, stream=None,
                  failed=None, *, protocol=None, run_rows=None, n_computed=None,
                  left_out=None, from_cache=False):
    """Write ``results.csv``, ``summary.md``, ``summary.json``, ``summary.csv`` and the PNGs.

    Every file is replaced atomically (written beside it, then renamed). The summaries
    and the plots cover ``rows``, all of one protocol; ``results.csv`` lists
    ``run_rows``.

    Parameters
    ----------
    rows : list of dict
        Result rows of :func:`run_benchmark` (its cache records), one per (dataset,
        method); rows of another protocol than ``protocol`` are left out.
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
    protocol : str, optional
        The protocol reported (default: that of the first row).
    run_rows : list of dict, optional
        This invocation's rows, written to ``results.csv`` (default ``rows``).
    n_computed : int, optional
        How many of ``run_rows`` were computed (the others were read from the cache).
    left_out : list of dict, optional
        Cached results not reported, ``{"file", "why"}``; listed in the summaries.
    from_cache : bool, default=False
        ``rows`` are every valid cached result of the protocol (said in the summary).

    Returns
    -------
    summary : dict
        The content of ``summary.json`` (empty when there is no row to report).

    Notes
    -----
    When :data:`REFERENCE` (MiniRocket) has results, the summaries compare every other
    method with it on the datasets both ran (mean difference, wins / ties / losses) and
    ``accuracy_vs_minirocket.png`` shows one panel per method (its accuracy against
    MiniRocket's, one labelled point per dataset); ``accuracy_vs_paper.png`` shows each
    method of the paper's Table 2 against the paper's value. Every method is set beside
    the published bake off redux (:mod:`rntk.benchmarking._sota`): mean accuracies and
    W/T/L on the shared datasets, average ranks, and ``critical_difference.png``.
    Plots need matplotlib (Agg
    backend, pyplot untouched); a plot that is not drawn is removed, with the reason in
    the summaries.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paper = paper or {}
    rows = list(rows)
    run_rows = rows if run_rows is None else list(run_rows)
    if protocol is None:
        protocol = next((r["protocol"] for r in (*run_rows, *rows)), None)
    by = {(r["dataset"], r["method"]): r for r in rows if r["protocol"] == protocol}
    run_rows = [r for r in run_rows if r["protocol"] == protocol]
    rows = list(by.values())
    if not rows:
        return {}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    failed = list(failed or [])
    left_out = list(left_out or [])
    atomic_write_text(out / "results.csv", _results_csv(run_rows))
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
    versus = _versus(REFERENCE, methods, datasets, by)
    accuracy = {m: {d: 100 * by[(d, m)]["accuracy"] for d in datasets if (d, m) in by}
                for m in methods}
    sota = compare_with_published(accuracy)
    sota_plot = write_cd_plot(sota, out / PLOT_CD, f"UCR, {protocol} protocol, beside the "
                                                   "bake off redux (published)")
    plots = {PLOT_VS_REFERENCE: _plot_vs_reference(versus, by, protocol,
                                                   out / PLOT_VS_REFERENCE),
             PLOT_VS_PAPER: _plot_vs_paper(methods, datasets, by, protocol,
                                           out / PLOT_VS_PAPER)}
    reliability = _plot_reliability(methods, datasets, by, protocol, out / PLOT_RELIABILITY)
    if reliability != _NO_PROBABILITIES:  # results cached before probabilities have none
        plots[PLOT_RELIABILITY] = reliability
    probabilities = _probability_means(methods, datasets, by)
    summary = {
        "protocol": protocol,
        "datasets": datasets, "methods": methods,
        "accuracy": accuracy,
        "paper": {m: {d: by[(d, m)]["paper"] for d in datasets
                      if (d, m) in by and by[(d, m)]["paper"] is not None} for m in methods},
        "probability_metrics": probabilities,
        "metrics": None if ours is None else {
            m: {k: (float(v[j]) if k != "n_datasets" else v) for k, v in ours.items()}
            for j, m in enumerate(methods)},
        "paper_metrics": None if theirs is None else {
            c: {k: (float(v[j]) if k != "n_datasets" else v) for k, v in theirs.items()}
            for j, c in enumerate(cols)},
        "vs_minirocket": versus,
        "state_of_the_art": {**sota, "plot": "drawn" if sota_plot is None else sota_plot},
        "method_time_s": times,
        "wall_time_s": wall_time,
        "this_invocation": {"n_results": len(run_rows), "n_computed": n_computed,
                            "wall_time_s": wall_time},
        "plots": {name: ("drawn" if why is None else f"not drawn: {why}")
                  for name, why in plots.items()},
        "failed": failed,
        "left_out": left_out,
    }
    atomic_write_text(out / "summary.json",
                       json.dumps(summary, indent=1, default=json_default))
    if ours is not None:
        f = io.StringIO(newline="")
        w = csv.writer(f)
        w.writerow(["method", "mean_accuracy", "std", "P90", "P95", "PMA",
                    "friedman_rank", "n_datasets", "paper_mean_same_datasets", "time_s",
                    "vs_minirocket_n_datasets", "vs_minirocket_mean_difference",
                    "vs_minirocket_wins", "vs_minirocket_ties", "vs_minirocket_losses"])
        for j, m in enumerate(methods):
            pm = [by[(d, m)]["paper"] for d in datasets if (d, m) in by]
            pmean = np.mean(pm) if pm and all(p is not None for p in pm) else ""
            v = (versus or {}).get(m)
            vs = ["", "", "", "", ""] if v is None or not v["n_datasets"] else [
                v["n_datasets"], round(v["mean_difference"], 2), v["wins"], v["ties"],
                v["losses"]]
            w.writerow([m, round(ours["mean"][j], 2), round(ours["std"][j], 2),
                        round(ours["P90"][j], 4), round(ours["P95"][j], 4),
                        round(ours["PMA"][j], 4), round(ours["friedman_rank"][j], 3),
                        ours["n_datasets"], pmean if pmean == "" else round(pmean, 2),
                        round(times[m], 1), *vs])
        atomic_write_text(out / "summary.csv", f.getvalue())
    md = _markdown(rows, methods, datasets, by, ours, theirs, cols, times, wall_time, failed,
                   protocol=protocol, versus=versus, plots=plots, run_rows=run_rows,
                   n_computed=n_computed, left_out=left_out, from_cache=from_cache,
                   extra=_probability_markdown(probabilities)
                   + sota_markdown(sota, (PLOT_CD, sota_plot)))
    atomic_write_text(out / "summary.md", md)
    if not quiet:
        print(md, file=stream or sys.stdout)
    return summary


def _versus(ref, methods, datasets, by):
    """Each method against ``ref`` on the datasets both ran; None when ``ref`` has none.

    ``{method: {"n_datasets", "datasets", "mean", "mean_reference", "mean_difference",
    "wins", "ties", "losses"}}`` (accuracies in %, difference = method - ``ref``).
    """
    if ref not in methods:
        return None
    result = {}
    for m in methods:
        if m == ref:
            continue
        common = [d for d in datasets if (d, m) in by and (d, ref) in by]
        a = np.array([100 * by[(d, m)]["accuracy"] for d in common])
        b = np.array([100 * by[(d, ref)]["accuracy"] for d in common])
        diff = a - b
        tie = np.abs(diff) <= _TIE
        result[m] = {
            "n_datasets": len(common), "datasets": common,
            "mean": float(a.mean()) if common else None,
            "mean_reference": float(b.mean()) if common else None,
            "mean_difference": float(diff.mean()) if common else None,
            "wins": int(np.sum((diff > 0) & ~tie)), "ties": int(np.sum(tie)),
            "losses": int(np.sum((diff < 0) & ~tie)),
        }
    return result


def _markdown(rows, methods, datasets, by, ours, theirs, cols, times, wall_time, failed=(),
              *, protocol=None, versus=None, plots=None, run_rows=None, n_computed=None,
              left_out=(), from_cache=False, extra=()):
    protocol = protocol or rows[0]["protocol"]
    plots = plots or {}
    lines = [f"# UCR benchmark ({protocol} protocol)", ""]
    scope = (f"Protocol `{protocol}`: {len(rows)} result(s), {len(methods)} method(s) on "
             f"{len(datasets)} dataset(s)")
    if from_cache:
        scope += (" — every valid result of this protocol in the cache (`cache/`, computed "
                  "with this seed, these grids and the dataset files in use), not only this "
                  "invocation's. Results of other protocols are not included: each protocol "
                  "has its own report, written by a run of that protocol.")
    else:
        scope += "."
    lines += [scope, "",
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
    lines += ["", "## Per method, on the datasets it ran", "",
              "| method | datasets | mean accuracy (%) | compute time (s) |",
              "|---|---:|---:|---:|"]
    for m in methods:
        a = [100 * by[(d, m)]["accuracy"] for d in datasets if (d, m) in by]
        lines.append(f"| {m} | {len(a)} | {np.mean(a):.2f} | {times[m]:.1f} |")
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
    elif len(methods) > 1:
        lines += ["", "No dataset has a result of every method: no common summary (P90, "
                  "P95, PMA, Friedman rank)."]
    lines += ["", "## Methods vs MiniRocket", ""]
    if versus is None:
        lines.append(f"No MiniRocket result for the `{protocol}` protocol: no comparison, "
                     f"and `{PLOT_VS_REFERENCE}` is not drawn (run with `--methods "
                     f"{REFERENCE}`, which needs aeon: `pip install rntk[bench]`).")
    elif not versus:
        lines.append("MiniRocket is the only method: nothing to compare with it.")
    else:
        lines += ["Each method against MiniRocket on the datasets both ran: mean "
                  "difference = method − MiniRocket (percentage points); W / T / L = "
                  "datasets where the method's test accuracy is above / equal to / below "
                  "MiniRocket's.", "",
                  "| method | datasets | mean (%) | MiniRocket mean (%) | "
                  "mean difference (pp) | W / T / L |",
                  "|---|---:|---:|---:|---:|---:|"]
        for m, v in versus.items():
            if not v["n_datasets"]:
                lines.append(f"| {m} | 0 | | | | |")
                continue
            lines.append(f"| {m} | {v['n_datasets']} | {v['mean']:.2f} | "
                         f"{v['mean_reference']:.2f} | {v['mean_difference']:+.2f} | "
                         f"{v['wins']} / {v['ties']} / {v['losses']} |")
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
    if plots:
        what = {PLOT_VS_REFERENCE: "each method's test accuracy against MiniRocket's, a "
                                   "panel per method",
                PLOT_VS_PAPER: "our test accuracy against the paper's Table 2, a panel per "
                               "method of the paper"}
        lines += ["", "## Plots", ""]
        for name, why in plots.items():
            lines.append(f"- `{name}`: " + (
                f"{what.get(name, name)}; one point per dataset, labelled with its name "
                f"(beyond {_MAX_LABELS} datasets, only up to {_FAR_LABELS} of those "
                "farthest from the diagonal, crowded ones unnamed)" if why is None
                else f"not drawn: {why}"))
    lines += ["", *extra]
    lines += ["", "Selected hyperparameters:", ""]
    for r in rows:
        lines.append(f"- {r['dataset']} / {r['method']}: {_fmt_params(r['params'])} "
                     f"(CV {100 * r['cv_score']:.1f}%, Gram {r['gram_time']:.1f}s, "
                     f"fit {r['fit_time']:.1f}s, predict {r['predict_time']:.2f}s)"
                     if r["cv_score"] == r["cv_score"] else
                     f"- {r['dataset']} / {r['method']}: fit {r['fit_time']:.1f}s, "
                     f"predict {r['predict_time']:.2f}s")
    if failed:
        lines += ["", "Failed in this invocation (not in the tables above):", ""]
        lines += [f"- {failure_label(f)}: {f['error']}" for f in failed]
    if left_out:
        lines += ["", "Cached results left out (not in the tables above):", ""]
        lines += [f"- `{x['file']}`: {x['why']}" for x in left_out]
    if wall_time is not None:
        n_run = len(rows) if run_rows is None else len(run_rows)
        how = ("" if n_computed is None else
               f": {n_computed} computed, {n_run - n_computed} read from the cache")
        lines += ["", f"Wall time of this invocation only: {wall_time:.1f}s for its {n_run} "
                  f"result(s){how} (cached results are not recomputed; `results.csv` lists "
                  "this invocation's results, the tables above every reported one)."]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- plots
def _remove(path):
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        Path(path).unlink()


def _plot_vs_reference(versus, by, protocol, path):
    """Draw ``accuracy_vs_minirocket.png``; None when drawn, else why not (file removed)."""
    if versus is None:
        why = "no MiniRocket result for this protocol"
    else:
        panels = []
        for m, v in versus.items():
            if not v["n_datasets"]:
                continue
            ds = v["datasets"]
            panels.append({
                "x": [100 * by[(d, REFERENCE)]["accuracy"] for d in ds],
                "y": [100 * by[(d, m)]["accuracy"] for d in ds], "names": ds,
                "title": f"{m} vs MiniRocket, {v['n_datasets']} dataset(s)\n"
                         f"mean {v['mean']:.2f}% vs {v['mean_reference']:.2f}% "
                         f"({v['mean_difference']:+.2f} pp), W/T/L {v['wins']}/{v['ties']}/"
                         f"{v['losses']}",
                "xlabel": "MiniRocket test accuracy (%)",
                "ylabel": f"{m} test accuracy (%)",
                "legend": (f"{m} better", "tie", "MiniRocket better")})
        why = None if panels else "no other method ran on a dataset MiniRocket ran"
    if why is None:
        why = _draw(panels, path, f"UCR, {protocol} protocol: each method against MiniRocket,"
                                  " one point per dataset")
    if why is not None:
        _remove(path)
    return why


def _plot_vs_paper(methods, datasets, by, protocol, path):
    """Draw ``accuracy_vs_paper.png``; None when drawn, else why not (file removed)."""
    panels = []
    for m in methods:
        ds = [d for d in datasets if (d, m) in by and by[(d, m)]["paper"] is not None]
        if not ds:
            continue
        x = np.array([by[(d, m)]["paper"] for d in ds], dtype=float)
        y = np.array([100 * by[(d, m)]["accuracy"] for d in ds])
        diff = y - x
        tie = np.abs(diff) <= _PAPER_TIE
        panels.append({
            "x": x, "y": y, "names": ds, "tie": _PAPER_TIE,
            "title": f"{m}: ours vs the paper, {len(ds)} dataset(s)\n"
                     f"mean {y.mean():.2f}% vs {x.mean():.2f}%, higher/equal/lower "
                     f"{int(np.sum((diff > 0) & ~tie))}/{int(np.sum(tie))}/"
                     f"{int(np.sum((diff < 0) & ~tie))}",
            "xlabel": "paper's Table 2 test accuracy (%)",
            "ylabel": f"{m}, our test accuracy (%)",
            "legend": ("ours higher", "equal", "paper higher")})
    why = (_draw(panels, path, f"UCR, {protocol} protocol: ours against the RNTK paper's "
                               "Table 2, one point per dataset")
           if panels else "no reported result has a value in the paper's Table 2 (one of its "
           "methods on one of its datasets)")
    if why is not None:
        _remove(path)
    return why


def _probability_means(methods, datasets, by):
    """Return, per method, each probability metric's mean over the datasets with it."""
    out = {}
    for m in methods:
        rows = [by[(d, m)] for d in datasets if (d, m) in by
                and all(k in by[(d, m)] for k in PROBABILITY_METRICS)]
        if rows:
            out[m] = {"n_datasets": len(rows),
                      **{k: float(np.nanmean([r[k] for r in rows]))
                         for k in PROBABILITY_METRICS}}
    return out


def _probability_markdown(means):
    """Return the lines of the probability section (none when no result has them)."""
    if not means:
        return []
    lines = ["## Probabilities", "",
             "Means over the datasets of each method (the bake off redux's metrics, from "
             "`predict_proba`; `rntk.benchmarking.stats.probability_metrics`): balanced "
             "accuracy, negative log-likelihood, macro one-vs-rest AUROC, expected "
             f"calibration error; `{PLOT_RELIABILITY}` is the reliability diagram, the test "
             "predictions of all datasets pooled.", "",
             "| method | datasets | balanced accuracy | NLL | AUROC | ECE |",
             "|---|---:|---:|---:|---:|---:|"]
    for m, v in means.items():
        lines.append(f"| {m} | {v['n_datasets']} | {100 * v['balanced_accuracy']:.2f} | "
                     f"{v['nll']:.4f} | {v['auroc']:.4f} | {v['ece']:.4f} |")
    return lines + [""]


_NO_PROBABILITIES = "no result has probabilities"


def _plot_reliability(methods, datasets, by, protocol, path):
    """Draw the pooled reliability diagram of each method; None, or why not drawn."""
    pooled = {}
    for m in methods:
        bins = [by[(d, m)]["calibration_bins"] for d in datasets
                if (d, m) in by and "calibration_bins" in by[(d, m)]]
        if bins:
            pooled[m] = np.sum(np.asarray(bins, dtype=float), axis=0)
    why = _NO_PROBABILITIES if not pooled else (
        "matplotlib is not installed" if _matplotlib_missing() else None)
    if why is not None:
        _remove(path)
        return why
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.2, 5.2))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], "k--", lw=1, label="perfect calibration")
    for m, b in pooled.items():
        keep = b[:, 2] > 0
        ax.plot(b[keep, 0] / b[keep, 2], b[keep, 1] / b[keep, 2], "o-", label=m)
    ax.set_xlabel("confidence of the most probable class")
    ax.set_ylabel("accuracy")
    ax.set_title(f"UCR, {protocol} protocol: reliability (test sets pooled)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with replacing(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    return None


def _matplotlib_missing():
    return importlib.util.find_spec("matplotlib") is None


def _draw(panels, path, title):
    """One PNG, a scatter panel per entry of ``panels``; None, or why it was not drawn."""
    if _matplotlib_missing():
        return "matplotlib is not installed"
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(4.6 * ncols, 4.6 * nrows + 0.5))
    FigureCanvasAgg(fig)  # the Agg backend, without pyplot's global state
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        _scatter(ax, panel)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    if any(len(p["names"]) > _MAX_LABELS for p in panels):
        title += (f"\n(panels of more than {_MAX_LABELS} datasets: labels on up to "
                  f"{_FAR_LABELS} of those farthest from the diagonal)")
    # wrap the title to the figure's width (a single panel is narrow)
    width = int(9 * 4.6 * ncols)
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in title.split("\n")),
                 fontsize=11)
    fig.tight_layout()
    with replacing(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    return None


def _scatter(ax, panel):
    """Accuracy ``y`` against ``x`` (%), the diagonal, coloured by side, labelled."""
    x = np.asarray(panel["x"], dtype=float)
    y = np.asarray(panel["y"], dtype=float)
    lo = min(x.min(), y.min())
    lo = max(0.0, math.floor(lo / 10) * 10 - 5)
    ax.plot([lo, 100], [lo, 100], color="0.6", lw=1, ls="--", zorder=1)
    diff = y - x
    tie = np.abs(diff) <= panel.get("tie", _TIE)
    sides = ((diff > 0) & ~tie, tie, (diff < 0) & ~tie)
    for mask, label, color, marker in zip(sides, panel["legend"],
                                          ("tab:green", "0.45", "tab:red"), ("^", "o", "v")):
        if mask.any():
            ax.scatter(x[mask], y[mask], s=26, color=color, marker=marker, alpha=0.85,
                       edgecolors="none", zorder=3, label=f"{label} ({int(mask.sum())})")
    _label_points(ax, x, y, list(panel["names"]), lo)
    ax.set_xlim(lo, 101)
    ax.set_ylim(lo, 101)
    ax.set_aspect("equal")
    ax.grid(alpha=0.25, lw=0.5)
    ax.set_xlabel(panel["xlabel"], fontsize=9)
    ax.set_ylabel(panel["ylabel"], fontsize=9)
    ax.set_title(panel["title"], fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(loc="lower right", fontsize=7, framealpha=0.8)


def _label_points(ax, x, y, names, lo):
    """Name the points: all up to ``_MAX_LABELS``, else those farthest from the diagonal.

    Beyond ``_MAX_LABELS`` points, at most ``_FAR_LABELS`` are named, farthest first,
    passing over a point next to one already named (their labels would overlap).
    Datasets on the same point share one label (at most three names, then ``+k``).
    """
    dist = np.abs(y - x)
    if len(names) <= _MAX_LABELS:
        chosen = range(len(names))
    else:
        span = 100 - lo
        chosen = []
        for i in np.argsort(-dist, kind="stable"):
            if len(chosen) == _FAR_LABELS or dist[i] <= _TIE:
                break
            if all(abs(x[i] - x[j]) > 0.2 * span or abs(y[i] - y[j]) > 0.04 * span
                   for j in chosen):
                chosen.append(i)
    spots = {}
    for i in chosen:
        spots.setdefault((round(float(x[i]), 2), round(float(y[i]), 2)), []).append(names[i])
    mid = (lo + 100) / 2
    for (px, py), group in spots.items():
        text = ", ".join(group[:3]) + (f" +{len(group) - 3}" if len(group) > 3 else "")
        right, top = px > mid, py > 100 - (100 - lo) * 0.04
        ax.annotate(text, (px, py), xytext=(-4 if right else 4, -4 if top else 3),
                    textcoords="offset points", ha="right" if right else "left",
                    va="top" if top else "bottom", fontsize=6, color="0.2", zorder=4)
