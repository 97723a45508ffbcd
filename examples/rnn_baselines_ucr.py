"""Trained finite RNNs on UCR data: the RNTK paper's three RNN columns (Table 2).

For each dataset, trains :class:`rntk.nn.RNNClassifier` with the three cells of the
paper's comparison -- ReLU RNN with Gaussian NTK initialisation (``"ntk"``), ReLU RNN
with identity initialisation (``"irnn"``), GRU (``"gru"``) -- with RMSProp and early
stopping on validation accuracy (patience 5, at most 200 epochs), and reports test
accuracy next to the paper's Table 2 columns "Gaussian RNN", "Identity RNN", "GRU".

Protocol (cheaper than the paper's): one layer of ``--hidden`` units; the learning
rate is chosen in ``--lrs`` by the best early-stopping validation accuracy (20% of
the training set) instead of the paper's 5-fold cross-validation over layers, widths
and learning rates; mini-batches of ``--batch-size`` (the paper does not say); one
seed. Series are used as given (UCR series are z-normalised). Two settings of
:class:`~rntk.nn.RNNClassifier` go beyond the paper's text, which names only
RMSProp, 200 epochs and patience 5: the gradient norm is clipped to ``--clip-norm``
and early stopping cannot end training before ``--min-epochs`` (see its Notes;
``--clip-norm 0 --min-epochs 0`` gives the paper's rule as written).

Comparison with the paper (defaults: ECG200, GunPoint, Coffee, Trace; 100 units,
lr in {1e-3, 1e-4, 1e-5}, batches of 8, gradient norm clipped to 1, early stopping
not before epoch 50; seed 0; 14 minutes for ECG200, GunPoint and Coffee plus 25
minutes for Trace, run as two processes on 2 busy cores). Test accuracy in %, ours /
paper:

=========  ===============  ===============  ===============
dataset    Gaussian (ntk)   identity (irnn)  GRU
=========  ===============  ===============  ===============
ECG200     74.0 / 86.0      75.0 / 72.0      69.0 / 76.0
GunPoint   93.3 / 82.0      75.3 / 74.7      87.3 / 80.7
Coffee     75.0 / 100.0     78.6 / 42.9      53.6 / 57.1
Trace      32.0 / 70.0      53.0 / 71.0      68.0 / 100.0
mean       68.6 / 84.5      70.5 / 65.1      69.5 / 78.5
=========  ===============  ===============  ===============

Before clipping and the ``min_epochs`` grace period (lr in {1e-3, 1e-4}, batches of
16, patience 5 from the first epoch) the same script gave ECG200 69 / 64 / 70,
GunPoint 49 / 55 / 49, Coffee 46 / 54 / 54, Trace 17 / 43 / 41 (ntk / irnn / gru):
near chance on three of four datasets (means 45.4 / 54.0 / 53.5). The new
learning-rate grid and batch size alone do not explain the change: with
``--clip-norm 0 --min-epochs 0`` and the new defaults otherwise, GunPoint gives 49 /
57 / 47 and ECG200 69 / 64 / 70. Without clipping, the Gaussian ReLU RNN
(``sigma_w = sqrt 2``: at the edge of chaos only at infinite width) has initial outputs of 1 to
1e5 at width 100 over 150 steps, and training never leaves chance; without the grace
period, the validation accuracy on 6-20 series sits at chance for the first few
epochs (a few RMSProp steps each) and patience 5 stopped training at epoch 6.

Our networks now match or beat the paper on GunPoint, and the identity RNN does on
ECG200 and Coffee; they remain below it on Coffee (Gaussian RNN, GRU), ECG200
(Gaussian RNN, GRU) and Trace. One seed, a validation split of 6-20 series and a
3-value learning-rate search at one width are noisy and narrow: the paper's 5-fold
search over 32 settings (layers 1-2, widths 50-500, learning rates 1e-2 to 1e-5) is
what this cheap protocol leaves out; run it with ``--lrs 1e-2 1e-3 1e-4 1e-5`` and
other ``--hidden`` values to get closer. Trace (four classes, 275 steps, a
20-series validation split) is the weakest: its series are the longest for the
Gaussian RNN's outputs to grow over, and the GRU, best in the paper there, stopped
at epoch 50 (best epoch 37). Every network here stays below the paper's RNTK on
these datasets (93-100%).

Run ``python examples/rnn_baselines_ucr.py --quick`` for a seconds-long smoke run.
"""

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np

#: Table 2 of Alemohammad et al. (ICLR 2021), test accuracy in %, finite-RNN columns.
PAPER_RNN = {
    "Coffee": {"ntk": 100.0, "irnn": 42.85, "gru": 57.14},
    "ECG200": {"ntk": 86.0, "irnn": 72.0, "gru": 76.0},
    "GunPoint": {"ntk": 82.0, "irnn": 74.66, "gru": 80.66},
    "Trace": {"ntk": 70.0, "irnn": 71.0, "gru": 100.0},
}
CELLS = ("ntk", "irnn", "gru")


def run_dataset(name, lrs, hidden, max_epochs, seed, data_home, batch_size=8, min_epochs=50,
                clip_norm=1.0):
    """Fit the three cells on one dataset, choosing the lr on validation accuracy."""
    from rntk.datasets import load_ucr
    from rntk.nn import RNNClassifier

    X_train, y_train, X_test, y_test = load_ucr(name, data_home=data_home)
    rows = []
    for cell in CELLS:
        best = None
        t0 = time.perf_counter()
        for lr in lrs:
            clf = RNNClassifier(cell, hidden_size=hidden, lr=lr, max_epochs=max_epochs,
                                patience=5, validation_fraction=0.2, batch_size=batch_size,
                                min_epochs=min_epochs, clip_norm=clip_norm, random_state=seed)
            clf.fit(X_train, y_train)
            val = max(clf.validation_scores_) if clf.validation_scores_ else 0.0
            if best is None or val > best[0]:
                best = (val, lr, clf)
        val, lr, clf = best
        rows.append({
            "dataset": name, "cell": cell, "lr": lr, "epochs": clf.n_epochs_,
            "best_epoch": clf.best_epoch_, "val_accuracy": round(100 * val, 2),
            "test_accuracy": round(100 * clf.score(X_test, y_test), 2),
            "paper_accuracy": PAPER_RNN.get(name, {}).get(cell, float("nan")),
            "seconds": round(time.perf_counter() - t0, 1),
        })
        print(rows[-1], flush=True)
    return rows


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, ax = plt.subplots(figsize=(2 + 2 * len(names), 3.5))
    width = 0.13
    for k, cell in enumerate(CELLS):
        ours = [next(r["test_accuracy"] for r in rows if r["dataset"] == n and r["cell"] == cell)
                for n in names]
        paper = [PAPER_RNN.get(n, {}).get(cell, np.nan) for n in names]
        x = np.arange(len(names)) + (2 * k - 2.5) * width
        ax.bar(x, ours, width, label=f"{cell} (ours)", color=f"C{k}")
        ax.bar(x + width, paper, width, label=f"{cell} (paper)", color=f"C{k}", alpha=0.4)
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7, ncol=3, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/rnn_baselines_ucr", help="output folder")
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--datasets", nargs="+", default=list(PAPER_RNN))
    parser.add_argument("--lrs", nargs="+", type=float, default=[1e-3, 1e-4, 1e-5])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--min-epochs", type=int, default=50)
    parser.add_argument("--clip-norm", type=float, default=1.0,
                        help="gradient-norm clipping (0: none)")
    parser.add_argument("--hidden", type=int, default=100)
    parser.add_argument("--max-epochs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-home", default=None, help="folder of UCR datasets")
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets, args.lrs, args.hidden, args.max_epochs = ["Coffee"], [1e-3], 16, 3
        args.min_epochs = 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = []
    for name in args.datasets:
        rows += run_dataset(name, args.lrs, args.hidden, args.max_epochs, args.seed,
                            args.data_home, args.batch_size, args.min_epochs,
                            args.clip_norm or None)
    with open(out / "rnn_baselines.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    summary = {"settings": {k: v for k, v in vars(args).items() if k != "out"},
               "mean_test_accuracy": {}, "mean_paper_accuracy": {},
               "seconds": time.perf_counter() - t0}
    for cell in CELLS:
        mine = [r["test_accuracy"] for r in rows if r["cell"] == cell]
        paper = [r["paper_accuracy"] for r in rows if r["cell"] == cell]
        summary["mean_test_accuracy"][cell] = float(np.mean(mine))
        summary["mean_paper_accuracy"][cell] = float(np.nanmean(paper)) \
            if not np.all(np.isnan(paper)) else None
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    plot(rows, out / "rnn_baselines.png")
    print(f"{'dataset':<10} {'cell':<5} {'ours':>7} {'paper':>7}")
    for r in rows:
        print(f"{r['dataset']:<10} {r['cell']:<5} {r['test_accuracy']:7.2f} "
              f"{r['paper_accuracy']:7.2f}")
    return summary


if __name__ == "__main__":
    main()
