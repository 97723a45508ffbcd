"""Our methods beside the published state of the art (the bake off redux).

Given our test accuracies per method and dataset, and a published table (by default
:func:`rntk.benchmarking.load_published_results` ``("bakeoff_redux")``), this module
computes what the reports of ``rntk-ucr`` and ``benchmarks/bench_ucr_protocols.py``
show beside their own tables: for each of our methods, its mean accuracy and that of
every published method on the datasets they share, with its wins / ties / losses against
each; over the datasets every method has, the average ranks, the Friedman test, the
Nemenyi critical difference and a critical-difference diagram.
"""

import importlib.util
from pathlib import Path

import numpy as np

from .published_results import BAKEOFF_CITATION, BAKEOFF_METHODS, load_published_results
from .stats import critical_difference, win_tie_loss

__all__ = ["compare_with_published", "sota_markdown", "write_cd_plot", "PLOT_CD",
           "PUBLISHED_TIE"]

#: the critical-difference diagram's file name
PLOT_CD = "critical_difference.png"
#: published values are rounded to 4 decimals (in %): closer than this is a tie
PUBLISHED_TIE = 1e-4


def compare_with_published(ours, published=None, labels=None, citation=None,
                           tie=PUBLISHED_TIE, alpha=0.05):
    """Compare our methods with a published table of test accuracies.

    Parameters
    ----------
    ours : dict
        ``{method: {dataset: test accuracy in %}}``.
    published : dict, optional
        ``{dataset: {column: test accuracy in %}}``; default: the bake off redux table
        shipped with the package.
    labels : dict, optional
        ``{column: display name}`` of the published columns (default
        :data:`~rntk.benchmarking.published_results.BAKEOFF_METHODS` for the shipped
        table, else the column names).
    citation : str, optional
        The source, quoted in the report.
    tie : float, default=PUBLISHED_TIE
        Accuracies (%) at most this far apart are a tie.
    alpha : float, default=0.05
        Significance level of the Nemenyi test.

    Returns
    -------
    comparison : dict
        ``"citation"``, ``"published"`` (the published display names, in column
        order), ``"per_method"`` (``{method: {"datasets", "n_datasets", "mean",
        "published_mean": {name: mean %}, "wtl": {name: [wins, ties, losses]}}}``, on
        the datasets the method shares with the table), ``"common"`` (the datasets
        every method, ours and published, has), ``"ranking"`` (None with fewer than
        two common datasets, else ``{"names", "ours", "mean", "average_ranks",
        "friedman_p", "cd", "alpha", "cliques", "acc"}`` over ``common``;
        ``cliques`` as lists of names, ``acc`` the accuracies, a row per common
        dataset and a column per name).
    """
    if published is None:
        published = load_published_results("bakeoff_redux")
        labels = dict(BAKEOFF_METHODS) if labels is None else labels
        citation = BAKEOFF_CITATION if citation is None else citation
    cols = list(dict.fromkeys(c for row in published.values() for c in row))
    labels = {c: (labels or {}).get(c, c) for c in cols}
    full = {d: row for d, row in published.items() if all(c in row for c in cols)}
    per_method = {}
    for m, accs in ours.items():
        ds = [d for d in accs if d in full and np.isfinite(accs[d])]
        a = np.array([accs[d] for d in ds], dtype=float)
        per_method[m] = {
            "datasets": ds, "n_datasets": len(ds),
            "mean": float(a.mean()) if ds else None,
            "published_mean": {labels[c]: float(np.mean([full[d][c] for d in ds]))
                               for c in cols} if ds else {},
            "wtl": {labels[c]: list(win_tie_loss(a, [full[d][c] for d in ds], tie))
                    for c in cols} if ds else {},
        }
    common = [d for d in full if all(d in per_method[m]["datasets"] for m in ours)]
    ranking = None
    if ours and len(common) >= 2:
        names = list(ours) + [labels[c] for c in cols]
        A = np.array([[ours[m][d] for m in ours] + [full[d][c] for c in cols]
                      for d in common], dtype=float)
        # a tie within the published rounding is a tie in the ranks too
        A = np.round(A / tie) * tie
        res = critical_difference(A, alpha=alpha)
        ranking = {"names": names, "ours": list(ours), "acc": A.tolist(),
                   "mean": [float(v) for v in A.mean(axis=0)],
                   "average_ranks": [float(v) for v in res["average_ranks"]],
                   "friedman_p": res["friedman_p"], "cd": res["cd"], "alpha": res["alpha"],
                   "cliques": [[names[i] for i in c] for c in res["cliques"]]}
    return {"citation": citation, "published": [labels[c] for c in cols],
            "per_method": per_method, "common": common, "ranking": ranking}


def _matplotlib_missing():
    return importlib.util.find_spec("matplotlib") is None


def write_cd_plot(comparison, path, title=None):
    """Draw the critical-difference diagram of a comparison; None, or why not drawn.

    A diagram that is not drawn has its old file removed.

    Parameters
    ----------
    comparison : dict
        The result of :func:`compare_with_published`.
    path : str or path-like
        The PNG to write.
    title : str, optional
        Title of the diagram.

    Returns
    -------
    why : str or None
        None when drawn, else the reason.
    """
    path = Path(path)
    ranking = comparison["ranking"]
    if ranking is None:
        why = ("fewer than two datasets have a result of every method and a published "
               "value of every published method")
    elif _matplotlib_missing():
        why = "matplotlib is not installed (pip install rntk[plot])"
    else:
        from ._cdplot import plot_critical_difference

        plot_critical_difference(np.array(ranking["acc"]), ranking["names"], path,
                                 alpha=ranking["alpha"], title=title,
                                 highlight=set(ranking["ours"]))
        return None
    if path.is_file() or path.is_symlink():
        path.unlink()
    return why


def sota_markdown(comparison, plot=None):
    """Write the comparison as Markdown lines (a ``##`` section).

    Parameters
    ----------
    comparison : dict
        The result of :func:`compare_with_published`.
    plot : tuple of (str, str or None), optional
        ``(file name, None or why it was not drawn)`` of the critical-difference diagram.

    Returns
    -------
    lines : list of str
    """
    pub = comparison["published"]
    lines = ["## Beside the published state of the art", "",
             f"Published test accuracies on the default train/test splits: "
             f"{comparison['citation']}", ""]
    per = comparison["per_method"]
    if not any(v["n_datasets"] for v in per.values()):
        return lines + ["None of the reported datasets is in the published table.", ""]
    lines += ["Mean test accuracy (%) on the datasets each of our methods shares with the "
              "published table, and W / T / L = datasets where ours is above / equal to / "
              "below each published method.", "",
              "| method | datasets | ours | " + " | ".join(pub) + " |",
              "|---|---:|---:|" + "---:|" * len(pub)]
    for m, v in per.items():
        if not v["n_datasets"]:
            lines.append(f"| {m} | 0 | |" + " |" * len(pub))
            continue
        cells = [f"{v['published_mean'][p]:.2f} ({'/'.join(map(str, v['wtl'][p]))})"
                 for p in pub]
        lines.append(f"| {m} | {v['n_datasets']} | {v['mean']:.2f} | " + " | ".join(cells)
                     + " |")
    r = comparison["ranking"]
    lines.append("")
    if r is None:
        lines.append("Fewer than two datasets have a result of every method: no average "
                     "ranks.")
    else:
        p = r["friedman_p"]
        lines += [f"Average ranks over the {len(comparison['common'])} datasets every "
                  f"method has (1 = best, ties averaged); Friedman test p = "
                  + ("n/a" if p != p else f"{p:.2g}")
                  + f"; Nemenyi critical difference {r['cd']:.2f} at alpha = "
                    f"{r['alpha']:g}.", "",
                  "| | " + " | ".join(r["names"]) + " |",
                  "|---|" + "---:|" * len(r["names"]),
                  "| mean accuracy (%) | " + " | ".join(f"{v:.2f}" for v in r["mean"]) + " |",
                  "| average rank | " + " | ".join(f"{v:.2f}" for v in r["average_ranks"])
                  + " |", ""]
        if r["cliques"]:
            lines.append("Groups not significantly different (Nemenyi): " + "; ".join(
                "{" + ", ".join(c) + "}" for c in r["cliques"]) + ".")
        else:
            lines.append("Every pair of methods differs significantly (Nemenyi).")
    if plot is not None:
        name, why = plot
        lines += ["", f"- `{name}`: " + ("the critical-difference diagram of the average "
                                         "ranks above (the methods run here in red)" if why is None
                                         else f"not drawn: {why}")]
    return lines + [""]
