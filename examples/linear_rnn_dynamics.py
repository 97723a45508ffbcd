"""A wide linear RNN and its scaled 1-D convolution train alike (Emami et al., Fig. 1-2).

Setting (paper, Sec. 5.1): a teacher linear RNN with 4 hidden units, nu_W = 0.3,
nu_F = nu_C = 1, n_x = n_y = 1, T = 10; 50 training and 50 test sequences (x_t i.i.d.
N(0, 1)), output noise at 20 dB SNR. Students: a ``LinearRNN`` with n = 1000 hidden units
(nu_W = 0.3, nu_F = nu_C = 1) and a ``ScaledConv1d`` with the taps rho_j of eq. (21),
full-batch gradient descent with learning rate 1e-4.

Choices the paper leaves open, made here:

* loss: the *sum* of squared errors over sequences and steps (torch ``MSELoss(reduction=
  "sum")``). With the per-element mean, lr = 1e-4 would barely move in the paper's "first
  10 epochs" (Fig. 2); the figures report the mean squared error per step;
* the convolution starts from the RNN's initial impulse response (``ScaledConv1d.
  from_impulse_response``), so both compute the same function at epoch 0 and the
  curves can be compared run by run ("if they are initialised properly");
* a third curve is the infinite-width theory itself: gradient descent in function space
  with the Gram of ``rntk.scaled_conv_kernel(..., output="sequence")``, started from the
  same outputs, ``f <- f - 2 lr K (f - y)``;
* ``--epochs`` = 1000 (the paper does not give its count; the curves are flat long
  before).

Paper: "the dynamics of these models perfectly match" (Fig. 1, train and test loss;
Fig. 2, the first 10 epochs). Ours (seed 0): the scaled convolution and the kernel
recursion agree to rounding (the convolution is linear in its parameters), and the
n = 1000 RNN lies on them: final train / test MSE 0.00801 / 0.00969 for the RNN against
0.00805 / 0.00976 for the scaled convolution (0.5% / 0.7% apart); the largest gap along
the curves, 6.9%, is during the fast initial drop (epochs ~10-30). See ``dynamics.png``.

Run: ``python examples/linear_rnn_dynamics.py [--quick] [--out results/linear_rnn_dynamics]``
(``--quick``: n = 100, 30 epochs, seconds). The default run takes ~2 min on a loaded
2-core machine.
"""

import argparse
import csv
import os
import time

import numpy as np
import torch

from rntk import scaled_conv_kernel, scaled_conv_rho
from rntk.nn import LinearRNN, ScaledConv1d, impulse_response


def make_data(n_train, n_test, T, teacher_hidden, nu_w, snr_db, seed):
    """Teacher linear RNN outputs with Gaussian noise at the given SNR (dB)."""
    torch.manual_seed(seed)
    teacher = LinearRNN(1, 1, teacher_hidden, nu_w=nu_w, dtype=torch.float64)
    X = torch.randn(n_train + n_test, T, 1, dtype=torch.float64)
    with torch.no_grad():
        Y = teacher(X)
    noise_std = Y.pow(2).mean().sqrt() * 10 ** (-snr_db / 20)
    Y = Y + noise_std * torch.randn_like(Y)
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


def train(model, X, Y, Xt, Yt, lr, epochs):
    """Full-batch GD on the summed squared error; MSE per step before every update."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    tr, te = [], []
    for _ in range(epochs + 1):
        opt.zero_grad()
        loss = ((model(X) - Y) ** 2).sum()
        with torch.no_grad():
            te.append(((model(Xt) - Yt) ** 2).mean().item())
        tr.append(loss.item() / Y.numel())
        loss.backward()
        opt.step()
    return np.array(tr), np.array(te)


def kernel_dynamics(X, Y, Xt, Yt, f0, f0t, rho, lr, epochs):
    """Function-space GD with the scaled conv NTK: the infinite-width prediction."""
    x, xt = X[..., 0].numpy(), Xt[..., 0].numpy()
    n, T = x.shape
    K = scaled_conv_kernel(x, rho=rho, output="sequence").reshape(n * T, n * T)
    Kt = scaled_conv_kernel(xt, x, rho=rho, output="sequence").reshape(-1, n * T)
    f, ft = f0.ravel().copy(), f0t.ravel().copy()
    y, yt = Y.numpy().ravel(), Yt.numpy().ravel()
    tr, te = [], []
    for _ in range(epochs + 1):
        r = f - y
        tr.append(np.mean(r ** 2))
        te.append(np.mean((ft - yt) ** 2))
        f, ft = f - 2 * lr * (K @ r), ft - 2 * lr * (Kt @ r)
    return np.array(tr), np.array(te)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join("results", "linear_rnn_dynamics"))
    p.add_argument("--quick", action="store_true", help="small width, few epochs (seconds)")
    p.add_argument("--width", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=1000)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.quick:
        args.width, args.epochs = 100, 30
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)  # small matrices: one thread is fastest
    T, nu_w = 10, 0.3
    X, Y, Xt, Yt = make_data(50, 50, T, teacher_hidden=4, nu_w=nu_w, snr_db=20.0,
                             seed=args.seed)
    torch.manual_seed(args.seed + 1)
    rnn = LinearRNN(1, 1, args.width, nu_w=nu_w, dtype=torch.float64)
    rho = scaled_conv_rho(T, nu_w=nu_w)
    conv = ScaledConv1d.from_impulse_response(impulse_response(rnn, T), rho)
    with torch.no_grad():
        f0, f0t = rnn(X)[..., 0].numpy(), rnn(Xt)[..., 0].numpy()

    t0 = time.perf_counter()
    curves = {"rnn": train(rnn, X, Y, Xt, Yt, args.lr, args.epochs)}
    t_rnn = time.perf_counter() - t0
    curves["scaled_conv"] = train(conv, X, Y, Xt, Yt, args.lr, args.epochs)
    curves["ntk"] = kernel_dynamics(X, Y, Xt, Yt, f0, f0t, rho, args.lr, args.epochs)

    path = os.path.join(args.out, "dynamics.csv")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["epoch"] + [f"{m}_{s}" for m in curves for s in ("train", "test")])
        for e in range(args.epochs + 1):
            w.writerow([e] + [f"{curves[m][k][e]:.8g}" for m in curves for k in (0, 1)])

    print(f"width {args.width}, {args.epochs} epochs, lr {args.lr} (RNN: {t_rnn:.1f} s)")
    print(f"{'':12s}{'train MSE':>12s}{'test MSE':>12s}   (epoch 0 -> final)")
    for m, (tr, te) in curves.items():
        print(f"{m:12s}{tr[-1]:12.4g}{te[-1]:12.4g}   ({tr[0]:.3g} -> {tr[-1]:.3g})")
    for a, b in (("rnn", "scaled_conv"), ("scaled_conv", "ntk")):
        gaps = [np.abs(curves[a][k] / curves[b][k] - 1) for k in (0, 1)]
        print(f"relative gap {a} vs {b}: max train {gaps[0].max():.2%}, test "
              f"{gaps[1].max():.2%}; final train {gaps[0][-1]:.2%}, test {gaps[1][-1]:.2%}")
    print("paper (Fig. 1-2): the RNN and scaled Conv-1D curves 'perfectly match'")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    styles = {"rnn": dict(lw=2.5, alpha=0.6), "scaled_conv": dict(ls="--"),
              "ntk": dict(ls=":", color="k")}
    labels = {"rnn": f"linear RNN (n = {args.width})", "scaled_conv": "scaled Conv-1D",
              "ntk": "NTK theory"}
    epochs = np.arange(args.epochs + 1)
    for m, (tr, te) in curves.items():
        axes[0].plot(epochs, tr, label=f"{labels[m]}, train", **styles[m])
        axes[0].plot(epochs, te, label=f"{labels[m]}, test", **styles[m])
        zoom = slice(0, min(11, args.epochs + 1))
        axes[1].plot(epochs[zoom], tr[zoom], marker="o", label=labels[m], **styles[m])
    axes[0].set(yscale="log", xlabel="epoch (full-batch GD step)",
                ylabel="MSE per step", title="Training dynamics (cf. paper Fig. 1)")
    axes[1].set(xlabel="epoch", ylabel="train MSE per step", title="First 10 epochs (Fig. 2)")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "dynamics.png"), dpi=120)
    print(f"wrote {path} and dynamics.png")
    return curves


if __name__ == "__main__":
    main()
