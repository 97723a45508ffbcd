"""Memoryless teacher, "adversarial data" models, and the drift of GD toward symmetry.

Reproduces Figs. 1, 2 and 4 and App. D (Fig. 5) of Cohen-Karlik, Ben David, Cohen & Globerson,
"On the implicit bias of gradient descent for temporal extrapolation" (AISTATS 2022).

1. Figs. 1-2. A linear RNN, a GRU and an LSTM (width d = 30, Xavier initialisation, Adam with
   learning rate 1e-3) learn from length-k = 5 Gaussian sequences labelled by a memoryless
   teacher ``y_t = x_t`` (Fig. 1) or a teacher with a 3-dimensional state (Fig. 2; here a
   balanced teacher, ``balanced_teacher(3)``). "Adversarial data" models see the same
   teacher on lengths <= 5 but are also fitted on lengths 6..15 with wrong labels (the
   teacher's impulse response plus 1 at every lag >= 5): solutions that fit length 5 yet do
   not extrapolate exist, and gradient descent on the honest data does not find them. The
   test error of the last output is measured for every sequence length 1..15.
2. Fig. 4. Gradient descent on the population loss (eq. 4), memoryless teacher, k = 5,
   d = 30, A_0 = alpha I (alpha ~ U[0, 1]) and B, C i.i.d. Gaussian: the norms of A - A^T and
   B - C^T, compared with those of A, B, C.
3. App. D. Teacher dimension d* in {1, 2, 4, 6, 8}, k = 5: the linear RNN's extrapolation MSE
   on lengths 6..10. Teachers: random stable linear RNNs (Gaussian A rescaled to spectral
   radius 0.9).

Deviations (compute): both kinds of models are supervised at every step up to their training
length (sequence-to-sequence; the paper uses the last output of length-k sequences), 2000 Adam
steps on 5000 training sequences (the paper: "many" sequences, steps unstated); B and C in
Fig. 4 have variance 1/d (the paper: "random normal"); App. D uses the linear RNN only with
d = 100 (the paper: d = 200, also GRU and LSTM). ``--quick`` trims widths and steps (seconds).

Paper: all three architectures extrapolate (test error stays near zero up to length 15) while
the adversarial-data models fit length <= 5 and fail beyond; the same with d* = 3; under GD the
norms of A - A^T and B - C^T become much smaller than those of A, B, C; in App. D extrapolation
is good for d* < k and deteriorates for d* > k.
Ours (default run), test MSE at length 15 (at length 5 all fit, <= 8e-2): memoryless teacher,
linear 0.19 (adversarial 9.9), GRU 4e-4 (9.7), LSTM 2.5e-4 (10.0); d* = 3, linear 0.26 (9.9),
GRU 7e-3 (9.6), LSTM 5e-2 (10.1): GD extrapolates, the linear RNN only partly (its Xavier
transition matrix starts at spectral radius ~1). Fig. 4: ||A - A^T|| grows from 0 to 0.25
while ||A|| ~ 3.4, and ||B - C^T|| falls from 1.47 to 0.61 with ||B||, ||C|| ~ 1.0-1.1: a drift
toward balancedness, weaker than the paper's "much smaller". App. D: MSE 7e-7, 7e-3, 1e-2,
3e5, 1.6 for d* = 1, 2, 4, 6, 8: the paper's two regimes, split at d* ~ k.

Run: ``python examples/extrapolation_memoryless.py [--quick] [--out results/...memoryless]``
"""

import argparse
import csv
import os
import time

import numpy as np
import torch

from rntk.nn.extrapolation import (
    RecurrentRegressor,
    StateSpaceRNN,
    balanced_teacher,
    fit_empirical,
    fit_population,
    memoryless_teacher,
)


def make_model(arch, width, seed):
    if arch == "linear":
        return StateSpaceRNN(width, transition="full", init="xavier", init_scale=1.0, seed=seed)
    return RecurrentRegressor(width, cell=arch, init="xavier", seed=seed)


def length_errors(model, teacher_response, T, n=2000, seed=123):
    """MSE of the output after t + 1 steps, t = 0..T-1, on fresh Gaussian sequences."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, T, dtype=torch.float64, generator=g)
    w = torch.as_tensor(teacher_response[:T])
    y = torch.stack([(x[:, : t + 1].flip(1) * w[: t + 1]).sum(1) for t in range(T)], 1)
    with torch.no_grad():
        pred = model(x)
    return ((pred - y) ** 2).mean(0).numpy()


def figs_1_2(args, out_rows):
    T, k = 15, args.k
    teachers = {"memoryless": memoryless_teacher(1.0), "d*=3": balanced_teacher(3, seed=0)}
    results = {}
    for tname, teacher in teachers.items():
        w = teacher.impulse_response(T).numpy()
        w_adv = w.copy()
        w_adv[k:] += 1.0
        for arch in ("linear", "gru", "lstm"):
            for kind, target, length in (("GD", w, k), ("adversarial data", w_adv, T)):
                model = make_model(arch, args.width, seed=0)
                t0 = time.perf_counter()
                fit_empirical(model, target, length, n_train=args.n_train, lr=1e-3,
                              n_steps=args.steps, eval_every=100, all_steps=True, n_val=500,
                              seed=1)
                errs = length_errors(model, w, T)
                results[(tname, arch, kind)] = errs
                for t, e in enumerate(errs):
                    out_rows.append(dict(part="fig1-2", teacher=tname, arch=arch, model=kind,
                                         length=t + 1, mse=e))
                print(f"{tname:10s} {arch:6s} {kind:16s} MSE at length k={k}: {errs[k - 1]:.2e}"
                      f"  at length 15: {errs[-1]:.2e}  ({time.perf_counter() - t0:.0f} s)")
    return results


def fig_4(args, out_rows):
    d, k = args.width, args.k
    rng = np.random.default_rng(0)
    alpha = rng.uniform(0, 1)
    model = StateSpaceRNN.from_weights(alpha * np.eye(d), rng.normal(0, d**-0.5, d),
                                       rng.normal(0, d**-0.5, d))
    hist = fit_population(model, memoryless_teacher(1.0), k, optimizer="gd", lr=args.gd_lr,
                          n_steps=args.gd_steps, record_every=max(args.gd_steps // 200, 1),
                          record_weights=True)
    keys = ["loss", "norm_A", "norm_B", "norm_C", "asymmetry", "imbalance"]
    for i, step in enumerate(hist["step"]):
        out_rows.append(dict(part="fig4", step=int(step), alpha=alpha,
                             **{key: float(hist[key][i]) for key in keys}))
    print(f"\nFig. 4 (GD, d={d}, k={k}, alpha={alpha:.2f}): start -> end")
    for key in keys:
        print(f"  {key:10s} {hist[key][0]:.3e} -> {hist[key][-1]:.3e}")
    return hist


def random_teacher(dim, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(dim, dim))
    A *= 0.9 / max(np.abs(np.linalg.eigvals(A)).max(), 1e-12)
    B, C = rng.normal(size=dim), rng.normal(size=dim)
    t = StateSpaceRNN.from_weights(A, B, C)
    scale = np.abs(t.impulse_response(20).detach().numpy()).max()
    return StateSpaceRNN.from_weights(A, B / scale, C).requires_grad_(False)


def app_d(args, out_rows):
    res = {}
    for dstar in (1, 2, 4, 6, 8):
        errs = []
        for seed in range(args.seeds):
            teacher = random_teacher(dstar, seed)
            model = StateSpaceRNN(args.d_app, transition="full", init="xavier", seed=seed)
            fit_empirical(model, teacher, args.k, n_train=args.n_train, lr=1e-3,
                          n_steps=args.steps, eval_every=100, seed=seed)
            e = length_errors(model, teacher.impulse_response(10).numpy(), 10)[args.k:].mean()
            errs.append(e)
            out_rows.append(dict(part="appD", teacher=f"d*={dstar}", arch="linear",
                                 seed=seed, mse=e))
        res[dstar] = np.array(errs)
        print(f"App. D: d*={dstar}  extrapolation MSE (lengths 6-10) = {np.mean(errs):.3e}")
    return res


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/extrapolation_memoryless")
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--width", type=int, default=30)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--n-train", type=int, default=5000)
    parser.add_argument("--gd-steps", type=int, default=20000)
    parser.add_argument("--gd-lr", type=float, default=0.05)
    parser.add_argument("--d-app", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args(argv)
    if args.quick:
        args.width, args.steps, args.n_train = 10, 100, 500
        args.gd_steps, args.d_app, args.seeds = 500, 20, 1
    os.makedirs(args.out, exist_ok=True)
    rows = []
    res12 = figs_1_2(args, rows)
    hist = fig_4(args, rows)
    resd = app_d(args, rows)
    fields = sorted({key for r in rows for key in r}, key=lambda s: (s != "part", s))
    with open(os.path.join(args.out, "extrapolation_memoryless.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        print("matplotlib missing: no figure")
        return rows
    fig, axes = plt.subplots(1, 4, figsize=(18, 3.8))
    lengths = np.arange(1, 16)
    for ax, tname in zip(axes[:2], ("memoryless", "d*=3")):
        for color, arch in zip(("C0", "C1", "C2"), ("linear", "gru", "lstm")):
            ax.semilogy(lengths, res12[(tname, arch, "GD")], "-o", color=color, ms=3,
                        label=f"{arch}")
            ax.semilogy(lengths, res12[(tname, arch, "adversarial data")], "--", color=color,
                        label=f"{arch}, adversarial data")
        ax.axvline(args.k, color="k", ls=":")
        ax.set_ylim(bottom=1e-8)  # exact fits reach 1e-32
        ax.set_xlabel("test sequence length")
        ax.set_ylabel("test MSE")
        ax.set_title(f"{tname} teacher, trained on k={args.k}")
        ax.legend(fontsize=7)
    ax = axes[2]
    for key in ("norm_A", "norm_B", "norm_C", "asymmetry", "imbalance"):
        label = {"asymmetry": "||A - A^T||", "imbalance": "||B - C^T||"}.get(key, key)
        ax.semilogy(hist["step"], hist[key], label=label)
    ax.set_xlabel("GD step")
    ax.set_title("weight dynamics (memoryless teacher)")
    ax.legend(fontsize=8)
    ax = axes[3]
    ds = sorted(resd)
    ax.semilogy(ds, [resd[d].mean() for d in ds], "o-", label="linear RNN")
    ax.axvline(args.k, color="k", ls=":", label="k")
    ax.set_xlabel("teacher dimension d*")
    ax.set_ylabel("extrapolation MSE (lengths 6-10)")
    ax.set_title(f"App. D: k={args.k}, d={args.d_app}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "extrapolation_memoryless.png"), dpi=120)
    return rows


if __name__ == "__main__":
    main()
