"""Finite-width RNNs converge to the RNTK: the RNTK paper's Fig. 2 (Sections 3.1 and 3.3).

Left: ``Theta(x, x')`` for ``x = (1, -1, 1)`` (length 3) and ``x' = (cos a, sin a)``
(length 2), ``a`` in ``[0, 2 pi]``: the analytic RNTK (:func:`rntk.rntk_kernel`) and
the empirical NTK ``<grad f(x), grad f(x')>`` of single-layer ReLU
:class:`rntk.nn.ElmanRNN` networks of growing width (one network per width).

Right: relative error ``||Theta_n - Theta||_F / ||Theta||_F`` between the empirical
NTK Gram of a width-``n`` network and the RNTK Gram, on 50 Gaussian signals of
length 5, for tied and untied weights, averaged (in log10) over several networks.

Hyperparameters: ReLU, ``sigma_w = sqrt 2``, ``sigma_u = sigma_v = 1``,
``sigma_b = sigma_h = 0`` (the paper does not state those of Fig. 2).

Writes ``fig2_left.csv`` (one row per angle), ``fig2_right.csv`` (one row per width,
weight tying and network), ``summary.json`` (largest gap on the left curve per width,
mean log10 error and fitted slope of log error vs log width on the right) and
``rntk_convergence.png`` into ``--out`` (default ``results/rntk_convergence/``).

Comparison with the paper: both panels reproduce qualitatively. On the left the
width-1000 network follows the analytic curve closely (largest gap 6.8% of the
curve's range, one draw), width 100 visibly less (34%) and width 10 not at all (90%),
as in the paper's plot. On the right the error falls as a power of the width with
slope -0.49 (tied) and -0.47 (untied), the ``n^(-1/2)`` of Monte-Carlo fluctuations,
and tied and untied weights converge to the same kernel at the same rate (mean
error at width 2048: 6.9% tied, 6.8% untied), as Theorem 3 states and the paper's
right panel shows. The paper gives no numbers to compare beyond these trends.

Numbers above: the defaults (widths 16..2048, 3 networks each; about 40 s on 2
cores under load). Run ``python examples/rntk_convergence.py --quick`` for a seconds-long
smoke run.
"""

import argparse
import csv
import json
import math
import time
from pathlib import Path

import numpy as np


def _params():
    return dict(activation="relu", sigma_w=math.sqrt(2.0), sigma_u=1.0, sigma_b=0.0,
                sigma_h=0.0, sigma_v=1.0)


def fig2_left(widths, n_angles, seed):
    """Analytic and empirical ``Theta(x, x'(a))`` over the angles ``a``."""
    import torch

    from rntk import rntk_kernel
    from rntk.nn import ElmanRNN

    alphas = np.linspace(0.0, 2.0 * np.pi, n_angles)
    x = [np.array([1.0, -1.0, 1.0])]
    xs2 = [np.array([np.cos(a), np.sin(a)]) for a in alphas]
    rows = {"alpha": alphas, "analytic": rntk_kernel(x, xs2, **_params())[0]}
    for n in widths:
        torch.manual_seed(seed + n)
        net = ElmanRNN(1, n, **_params()).double()
        rows[f"empirical_n{n}"] = net.ntk(x, xs2, seed=seed)[0]
    return rows


def fig2_right(widths, n_signals, length, n_nets, seed):
    """Relative Frobenius errors of empirical NTK Grams, tied and untied."""
    import torch

    from rntk import rntk_kernel
    from rntk.nn import ElmanRNN

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_signals, length))
    K = rntk_kernel(X, **_params())
    norm = np.linalg.norm(K)
    records = []
    for tied in (True, False):
        for n in widths:
            for k in range(n_nets):
                torch.manual_seed(seed + 7919 * k + n + (0 if tied else 104729))
                net = ElmanRNN(1, n, tied=tied, max_length=length, **_params()).double()
                err = np.linalg.norm(net.ntk(X, seed=seed + k) - K) / norm
                records.append({"width": n, "tied": tied, "network": k, "rel_error": err})
    return records


def summarise(left, right, widths_right):
    """Largest left-panel gaps and right-panel slopes."""
    span = np.ptp(left["analytic"])
    gaps = {key.split("_n")[1]: float(np.max(np.abs(val - left["analytic"])) / span)
            for key, val in left.items() if key.startswith("empirical_n")}
    out = {"left_max_gap_over_range": gaps, "right": {}}
    for tied in (True, False):
        logs = [np.mean([np.log10(r["rel_error"]) for r in right
                         if r["width"] == n and r["tied"] == tied]) for n in widths_right]
        slope = float(np.polyfit(np.log10(widths_right), logs, 1)[0])
        out["right"]["tied" if tied else "untied"] = {
            "mean_log10_error": dict(zip(map(str, widths_right), map(float, logs))),
            "mean_error_at_max_width": float(10 ** logs[-1]),
            "slope_log_error_vs_log_width": slope,
        }
    return out


def plot(left, right, widths_right, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for key, val in left.items():
        if key.startswith("empirical_n"):
            ax1.plot(left["alpha"], val, lw=1, label=f"n = {key.split('_n')[1]}")
    ax1.plot(left["alpha"], left["analytic"], "k--", lw=2, label="n = inf (RNTK)")
    ax1.set_xlabel("alpha")
    ax1.set_ylabel("Theta(x, x')")
    ax1.set_title("x = (1, -1, 1), x' = (cos a, sin a)")
    ax1.legend(fontsize=8)
    for tied, style in ((True, "o-"), (False, "s--")):
        logs = [np.mean([np.log10(r["rel_error"]) for r in right
                         if r["width"] == n and r["tied"] == tied]) for n in widths_right]
        ax2.plot(widths_right, logs, style, label="tied" if tied else "untied")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("width n")
    ax2.set_ylabel("mean log10 relative error")
    ax2.set_title("50 Gaussian signals, T = 5")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/rntk_convergence", help="output folder")
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--networks", type=int, default=3, help="networks per width (right)")
    args = parser.parse_args(argv)
    if args.quick:
        widths_left, widths_right, n_angles, n_signals, n_nets = [10, 100], [16, 64], 25, 10, 1
    else:
        widths_left, widths_right = [10, 100, 1000], [16, 32, 64, 128, 256, 512, 1024, 2048]
        n_angles, n_signals, n_nets = 181, 50, args.networks
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    left = fig2_left(widths_left, n_angles, args.seed)
    right = fig2_right(widths_right, n_signals, 5, n_nets, args.seed)
    with open(out / "fig2_left.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(left))
        w.writerows(zip(*left.values()))
    with open(out / "fig2_right.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["width", "tied", "network", "rel_error"])
        w.writeheader()
        w.writerows(right)
    summary = summarise(left, right, widths_right)
    summary["seconds"] = time.perf_counter() - t0
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    plot(left, right, widths_right, out / "rntk_convergence.png")
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
