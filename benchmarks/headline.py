"""The headline results of the README and the docs, from the committed CSVs, and its picture.

One place for the numbers a user reads first: the tables of ``README.md`` and
``docs/index.md`` are printed by this script from

* ``bench_panel.csv`` (the 48 UCR sets of the development panel: ``bench_panel.py
  --repeat 3``, with the published HIVE-COTE 2 and MultiRocket-Hydra accuracies),
* ``bench_panel_uea.csv`` (the 7 UEA multivariate sets of the development panel, the same
  script on their folder),
* ``bench_tser.csv`` (the 6 extrinsic-regression sets of the development panel:
  ``bench_tser.py``),
* ``unseen_panels.csv`` (the summaries of the independent runs on sets used for no choice),
* ``bench_resamples.csv`` and ``bench_resamples_uea.csv`` (``bench_resamples.py``: the
  same comparison on 5 stratified resamples of each development set),

and ``tests/test_docs.py`` checks that the pages hold them verbatim. ``--plot`` writes
``headline.png``: test accuracy against fit + predict time on the UCR development panel.

Usage::

    python benchmarks/headline.py [--plot]
"""

import argparse
import csv
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _rows(name):
    with open(HERE / name, newline="") as f:
        return list(csv.DictReader(f))


def _wtl(ours, theirs, higher_is_better=True, tol=1e-9):
    sign = 1 if higher_is_better else -1
    d = [sign * (a - b) for a, b in zip(ours, theirs)]
    return (sum(x > tol for x in d), sum(abs(x) <= tol for x in d), sum(x < -tol for x in d))


def accuracy_panel(name):
    """Means, wins / ties / losses and total times of a ``bench_panel.py`` CSV."""
    rows = _rows(name)
    ours = [float(r["rntk_acc"]) for r in rows]
    theirs = [float(r["minirocket_acc"]) for r in rows]
    t_ours = sum(float(r["rntk_s"]) for r in rows)
    t_theirs = sum(float(r["minirocket_s"]) for r in rows)
    return dict(n=len(rows), rntk=sum(ours) / len(rows), minirocket=sum(theirs) / len(rows),
                wtl=_wtl(ours, theirs), rntk_s=t_ours, minirocket_s=t_theirs,
                time_ratio=t_ours / t_theirs)


def published(name="bench_panel.csv"):
    """Mean accuracies on the sets with published HIVE-COTE 2 and MultiRocket-Hydra results."""
    rows = [r for r in _rows(name) if r["published_hc2"] and r["published_mr_hydra"]]

    def mean(key):
        return sum(float(r[key]) for r in rows) / len(rows)

    return dict(n=len(rows), rntk=mean("rntk_acc"), minirocket=mean("minirocket_acc"),
                hc2=mean("published_hc2"), mr_hydra=mean("published_mr_hydra"))


def regression_panel(name="bench_tser.csv"):
    """Geometric mean RMSE ratio to MiniRocketRegressor, wins / ties / losses, times."""
    rows = _rows(name)
    ours = [float(r["rntk_rmse"]) for r in rows]
    theirs = [float(r["minirocket_rmse"]) for r in rows]
    ratio = math.exp(sum(math.log(a / b) for a, b in zip(ours, theirs)) / len(rows))
    t_ours = sum(float(r["rntk_seconds"]) for r in rows)
    t_theirs = sum(float(r["minirocket_seconds"]) for r in rows)
    return dict(n=len(rows), ratio=ratio, wtl=_wtl(ours, theirs, higher_is_better=False),
                time_ratio=t_ours / t_theirs)


def resampled(name="bench_resamples.csv", a="rntk", b="minirocket", part=None,
              protocol="resampled"):
    """Per-set means over the resamples of a ``bench_resamples.py`` CSV, compared.

    ``part``: ``None`` for every set, else the half (0 or 1); ``protocol``: the rows
    read, those of the resamples, of the draws of few training series (``"drawn"``:
    ``bench_resamples.py --train-size``) or of the nested CV (``"nested"``, one per set
    and method: ``bench_resamples.py --nested``). Return the number of sets,
    both means, the mean per-set difference and its standard error (in points), the
    wins / ties / losses and the ratio of the summed times of ``a`` to ``b``.
    """
    rows = [r for r in _rows(name) if (part is None or int(r["half"]) == part)
            and r.get("protocol", "resampled") == protocol]
    sets = sorted({r["dataset"] for r in rows})

    def mean(s, m):
        acc = [float(r["accuracy"]) for r in rows if r["dataset"] == s and r["method"] == m]
        return 100 * sum(acc) / len(acc)

    d = [mean(s, a) - mean(s, b) for s in sets]
    avg = sum(d) / len(d)
    se = math.sqrt(sum((x - avg) ** 2 for x in d) / (len(d) - 1) / len(d))
    seconds = {m: sum(float(r["seconds"]) for r in rows if r["method"] == m) for m in (a, b)}
    return dict(n=len(sets), a=sum(mean(s, a) for s in sets) / len(sets),
                b=sum(mean(s, b) for s in sets) / len(sets), diff=avg, se=se,
                wtl=_wtl([mean(s, a) for s in sets], [mean(s, b) for s in sets]),
                time_ratio=seconds[a] / seconds[b])


def unseen():
    """Return the independent runs' summaries, by panel."""
    out = {}
    for r in _rows("unseen_panels.csv"):
        wtl = tuple(int(r[k]) for k in ("wins", "ties", "losses")) if r["wins"] else None
        out[r["panel"]] = dict(n=int(r["n_sets"]), rntk=float(r["rntk"]),
                               minirocket=float(r["minirocket"]), wtl=wtl,
                               time_ratio=float(r["time_ratio"]) if r["time_ratio"] else None)
    return out


def _cells(wtl, time_ratio):
    return ("/".join(map(str, wtl)) if wtl else "—",
            f"{time_ratio:.2f}x" if time_ratio is not None else "—")


def table():
    """Return the headline table (Markdown), as the README and ``docs/index.md`` show it."""
    seen = {"UCR": accuracy_panel("bench_panel.csv"),
            "UEA": accuracy_panel("bench_panel_uea.csv")}
    new = unseen()
    lines = ["| panel | sets | rntk | MiniRocket | wins/ties/losses | time vs MiniRocket |",
             "|---|---:|---:|---:|---:|---:|"]
    for panel, kind in (("UCR", "univariate"), ("UEA", "multivariate")):
        for label, r in (("development", seen[panel]), ("unseen", new[panel])):
            wtl, time = _cells(r["wtl"], r["time_ratio"])
            lines.append(f"| {panel} {kind}, {label} | {r['n']} | {r['rntk']:.2f}% | "
                         f"{r['minirocket']:.2f}% | {wtl} | {time} |")
    dev, new_t = regression_panel(), new["TSER"]
    for label, r, ratio in (("development", dev, dev["ratio"]), ("unseen", new_t, new_t["rntk"])):
        wtl, time = _cells(r["wtl"], r["time_ratio"])
        lines.append(f"| TSER regression, {label} | {r['n']} | RMSE ratio {ratio:.3f} | 1 | "
                     f"{wtl} | {time} |")
    return "\n".join(lines) + "\n"


def published_sentence():
    """Return the sentence beside the table on the published state of the art."""
    p = published()
    return (f"On the {p['n']} development sets with published results, HIVE-COTE 2 has "
            f"{p['hc2']:.2f}% and MultiRocket-Hydra {p['mr_hydra']:.2f}%, against "
            f"{p['rntk']:.2f}% for rntk and {p['minirocket']:.2f}% for MiniRocket.")


def plot(path=HERE / "headline.png"):
    """Accuracy against fit + predict time on the UCR development panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _rows("bench_panel.csv")
    p, a = published(), accuracy_panel("bench_panel.csv")
    both = [r for r in rows if r["published_hc2"] and r["published_mr_hydra"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    for key, label, color in (("rntk", "rntk RNTKClassifierCV()", "C0"),
                              ("minirocket", "MiniRocket (aeon)", "C1")):
        seconds = sum(float(r[f"{key}_s"]) for r in both)
        left.scatter([seconds], [p[key]], s=90, color=color, label=label, zorder=3)
        left.annotate(f"{p[key]:.2f}%", (seconds, p[key]), textcoords="offset points",
                      xytext=(9, -4))
    for key, label, style in (("hc2", "HIVE-COTE 2", "--"),
                              ("mr_hydra", "MultiRocket-Hydra", ":")):
        left.axhline(p[key], color="0.4", ls=style,
                     label=f"{label}: {p[key]:.2f}% (published, not timed here)")
    values = [p[k] for k in ("rntk", "minirocket", "hc2", "mr_hydra")]
    left.set_ylim(min(values) - 0.6, max(values) + 0.9)
    left.set_xlim(0, 1.6 * max(a["rntk_s"], a["minirocket_s"]))
    left.set_xlabel("fit + predict seconds, all sets together (2 cores)")
    left.set_ylabel("mean test accuracy (%)")
    left.set_title(f"UCR development panel ({p['n']} sets with published results)",
                   fontsize=10)
    left.legend(fontsize=7.5, loc="upper left")
    ours = [float(r["rntk_acc"]) for r in rows]
    theirs = [float(r["minirocket_acc"]) for r in rows]
    right.scatter(theirs, ours, s=18, color="C0")
    lo = min(ours + theirs) - 2
    right.plot([lo, 100], [lo, 100], color="0.6", lw=1)
    right.set_xlabel("MiniRocket test accuracy (%)")
    right.set_ylabel("rntk test accuracy (%)")
    w, t, loss = a["wtl"]
    right.set_title(f"all {a['n']} sets: rntk above the line on {w}, below on {loss}",
                    fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", action="store_true", help="write headline.png")
    args = ap.parse_args(argv)
    print(table())
    print(published_sentence())
    if args.plot:
        print("wrote", plot())


if __name__ == "__main__":
    main()
