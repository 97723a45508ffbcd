"""The critical-difference diagram (Demšar 2006).

Average ranks, and bars joining the methods not significantly different. Needs
matplotlib (``pip install rntk[plot]``); drawn on the Agg backend without pyplot's
global state. The statistics come from :func:`rntk.benchmarking.stats.critical_difference`.
"""

import contextlib
import importlib.util
import os
import secrets
from pathlib import Path

import numpy as np

from .stats import critical_difference

__all__ = ["plot_critical_difference"]


def plot_critical_difference(acc, names, path=None, *, alpha=0.05, test="nemenyi",
                             title=None, highlight=()):
    """Draw a critical-difference diagram of methods compared over datasets.

    Each method is placed at its average rank over the datasets (1 = best, on the
    left); a thick bar joins the methods of which no two are significantly different
    (a clique of :func:`rntk.benchmarking.stats.critical_difference`); with the Nemenyi
    test the critical difference is drawn above the axis.

    Parameters
    ----------
    acc : array-like of shape (n_datasets, n_methods)
        Accuracies; rows with a NaN are dropped.
    names : sequence of str
        The methods' names, one per column.
    path : str or path-like, optional
        Where to write the PNG (replaced atomically). ``None``: only return the figure.
    alpha : float, default=0.05
        Significance level.
    test : {"nemenyi", "wilcoxon-holm"}, default="nemenyi"
        How cliques are formed (see :func:`~rntk.benchmarking.stats.critical_difference`).
    title : str, optional
        Title above the diagram.
    highlight : collection of str, default=()
        Names drawn in bold (e.g. our methods).

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure (not attached to pyplot).

    Raises
    ------
    ImportError
        When matplotlib is not installed.

    Examples
    --------
    >>> acc = [[90, 80, 70], [85, 80, 60], [95, 70, 65], [80, 82, 60]]
    >>> from rntk.benchmarking import plot_critical_difference
    >>> fig = plot_critical_difference(acc, ["a", "b", "c"])  # doctest: +SKIP
    """
    if importlib.util.find_spec("matplotlib") is None:
        raise ImportError("the critical-difference plot needs matplotlib "
                          "(pip install rntk[plot])")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = [str(n) for n in names]
    A = np.asarray(acc, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != len(names):
        raise ValueError(f"acc must be 2-D with one column per name ({len(names)}); got "
                         f"shape {A.shape}")
    res = critical_difference(A, alpha=alpha, test=test)
    ranks = res["average_ranks"]
    k = len(names)
    order = np.argsort(ranks, kind="stable")
    left = order[: (k + 1) // 2]  # the best half, labelled on the left
    right = order[(k + 1) // 2:][::-1]
    cliques = res["cliques"]
    # vertical layout in "rows" (0.32 inch each), from the top down
    row_clique, row_label = 0.38, 0.42
    y_axis = (2.7 if res["cd"] is not None else 2.0) + (0.4 if title else 0.0)
    y_first = y_axis + row_clique * (len(cliques) + 1)
    rows = y_first + row_label * max(len(left), len(right)) + 0.3
    fig = Figure(figsize=(max(7.0, 0.6 * k + 4.0), 0.32 * rows))
    FigureCanvasAgg(fig)  # the Agg backend, without pyplot's global state
    ax = fig.add_axes([0.0, 0.0, 1.0, 1.0])
    ax.set_axis_off()
    ax.set_xlim(0, 1)
    ax.set_ylim(rows, 0)  # y grows downwards
    x0, x1 = 0.25, 0.75  # the rank axis

    def xpos(r):  # rank 1 on the left
        return x0 + (x1 - x0) * (r - 1) / max(k - 1, 1)

    ax.plot([x0, x1], [y_axis, y_axis], color="k", lw=1)
    for r in range(1, k + 1):
        ax.plot([xpos(r)] * 2, [y_axis, y_axis - 0.18], color="k", lw=1)
        ax.text(xpos(r), y_axis - 0.25, str(r), ha="center", va="bottom", fontsize=9)
    for r in np.arange(1.5, k, 1.0):
        ax.plot([xpos(r)] * 2, [y_axis, y_axis - 0.09], color="k", lw=0.6)
    for c, clique in enumerate(cliques):
        y = y_axis + row_clique * (c + 0.8)
        a, b = ranks[clique].min(), ranks[clique].max()
        ax.plot([xpos(a) - 0.006, xpos(b) + 0.006], [y, y], color="k", lw=3.5,
                solid_capstyle="round")
    for side, group in (("left", left), ("right", right)):
        for line, i in enumerate(group):
            y = y_first + row_label * line
            x = xpos(ranks[i])
            end = 0.22 if side == "left" else 0.78
            ax.plot([x, x, end], [y_axis, y, y], color="0.35", lw=0.8)
            text = (f"{names[i]}  {ranks[i]:.2f}" if side == "left" else
                    f"{ranks[i]:.2f}  {names[i]}")
            bold = names[i] in highlight
            ax.text(end + (-0.008 if side == "left" else 0.008), y, text,
                    ha="right" if side == "left" else "left", va="center", fontsize=9,
                    fontweight="bold" if bold else "normal",
                    color="tab:red" if bold else "k")
    if res["cd"] is not None:
        cd = min(res["cd"], k - 1.0)
        y = y_axis - 0.85
        ax.plot([xpos(1), xpos(1 + cd)], [y, y], color="k", lw=1.2)
        for r in (1, 1 + cd):
            ax.plot([xpos(r)] * 2, [y - 0.1, y + 0.1], color="k", lw=1.2)
        ax.text(xpos(1 + cd / 2), y - 0.12, f"CD = {res['cd']:.2f}", ha="center",
                va="bottom", fontsize=8)
    how = (f"Nemenyi test, alpha = {res['alpha']:g}" if res["cd"] is not None else
           f"Wilcoxon signed-rank tests with Holm's correction, alpha = {res['alpha']:g}")
    sub = (f"average rank over {res['n_datasets']} datasets (1 = best);\na bar joins "
           f"methods not significantly different ({how})")
    ax.text(0.5, 0.12, (title + "\n" if title else "") + sub, ha="center", va="top",
            fontsize=8.5)
    if path is not None:
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            fig.savefig(tmp, dpi=120, format="png")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return fig
