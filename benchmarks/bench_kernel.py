"""Throughput of the RNTK Gram engine, against a vectorised-numpy baseline.

Throughput is counted in pair-steps per second, ``n_X * n_Y * T * L / seconds`` (for a
symmetric Gram ``n_X * n_Y`` counts every entry although only half are computed, as a
user would count it). The baseline is the same single-layer recursion written in numpy,
updating whole ``N x N`` matrices per time step; both run in this process, on the same
data, so their ratio is meaningful on a noisy machine.

Run::

    python benchmarks/bench_kernel.py            # full: N=500, T=150, plus scaling
    python benchmarks/bench_kernel.py --quick    # small sizes, seconds
    python benchmarks/bench_kernel.py --compare HEAD~1   # this engine / a git revision's
    python benchmarks/bench_kernel.py --compare-precision  # float32 / float64 engine

``--compare REV`` loads the engine of git revision ``REV`` (``_rntk.py`` and the
``_shared.py`` it inlines) into this process next to the current one and times both on
the same data, alternating, so that their ratio is meaningful on a noisy machine (and
checks that they agree); the cases include the default grid's pooled and banded mean
readouts.

``--compare-precision`` times the engine's float32 arithmetic
(``rntk_kernel(precision="float32")``) against its float64 on the same cases, alternating
(the ratio: float64 time / float32 time), with the largest difference relative to the
largest entry.

Writes ``bench_kernel.json`` and ``bench_kernel.png`` (scaling in N and T) in ``--out``.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from rntk import rntk_kernel


def numpy_rntk(X, sigma_w=2**0.5, sigma_u=1.0, sigma_b=0.0, sigma_h=0.0, sigma_v=1.0):
    """Single-layer ReLU RNTK K(X, X) in plain numpy: whole N x N matrices per step.

    ``X`` is a list of 1-D series (end-aligned when lengths differ).
    """
    n = len(X)
    lengths = np.array([len(x) for x in X])
    t_max = lengths.max()
    data = np.zeros((t_max, n))
    for i, x in enumerate(X):
        data[t_max - len(x):, i] = x
    start = t_max - lengths
    sw2, su2, sb2, sh2, sv2 = sigma_w**2, sigma_u**2, sigma_b**2, sigma_h**2, sigma_v**2
    v = np.eye(n) * sh2          # covariance of the previous hidden states
    d = np.zeros((n, n))         # V_phi' of the previous step
    th = np.zeros((n, n))        # tangent kernel of the previous pre-activations
    self_v = np.full(n, sh2)
    eye = np.eye(n, dtype=bool)
    for p in range(t_max):
        on = start <= p
        active = np.outer(on, on)
        xp = data[p]
        s = sw2 * v + su2 * np.outer(xp, xp) + sb2
        s_self = sw2 * self_v + su2 * xp * xp + sb2
        norm = np.sqrt(np.outer(s_self, s_self))
        c = np.clip(np.divide(s, norm, out=np.zeros_like(s), where=norm > 0), -1.0, 1.0)
        c[eye] = 1.0
        angle = np.arccos(c)
        th = np.where(active, s + sw2 * d * th, 0.0)
        v = np.where(active, norm * (np.sqrt(1 - c * c) + (np.pi - angle) * c) / (2 * np.pi),
                     0.0)
        d = np.where(active, (np.pi - angle) / (2 * np.pi), 0.0)
        self_v = np.where(on, s_self / 2, 0.0)
    return sv2 * (v + d * th)


def _time(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _load_module(name, src, folder):
    path = os.path.join(folder, name.rsplit(".", 1)[1] + ".py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def engine_at(rev):
    """Return the ``rntk_kernel`` of git revision ``rev``'s engine, loaded in this process.

    The engine module and the module below it (``_shared.py``: the V operators it
    inlines) are loaded as siblings of :mod:`rntk._kernels._rntk` (their other relative
    imports resolve against the current package); their numba cache goes to a temporary
    folder.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def show(path):
        return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, check=True,
                              capture_output=True, text=True).stdout

    folder = tempfile.mkdtemp(prefix="rntk_engine_")
    _load_module("rntk._kernels._shared_base", show("rntk/_kernels/_shared.py"), folder)
    src = show("rntk/_kernels/_rntk.py").replace("from ._shared import",
                                                  "from ._shared_base import")
    return _load_module("rntk._kernels._rntk_base", src, folder).rntk_kernel


_MEAN = {"readout": "mean", "sigma_u": 0.5, "sigma_b": 0.1, "sigma_w": 1.2}


def compare(rev, quick=False, repeat=5):
    """Time the current engine against revision ``rev``'s, alternating, in one process.

    ``rev=None``: the float32 engine (current) against the float64 one (in place of
    ``rev``'s). Returns a dict of per-case best times and ratios ``rev time / current
    time`` (above 1: the current engine is faster).
    """
    if rev is None:
        rev = "float64"
        current = lambda data, **kw: rntk_kernel(data, precision="float32", **kw)  # noqa: E731
        base = rntk_kernel
    else:
        current, base = rntk_kernel, engine_at(rev)
    rng = np.random.default_rng(0)
    n, T = (120, 60) if quick else (300, 150)
    X = rng.normal(size=(n, T))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Xm = [x[:t] for x, t in zip(X, rng.integers(T // 2, T + 1, size=n))]
    cases = {
        "relu": (X, {}), "relu mixed lengths": (Xm, {}), "erf": (X, {"activation": "erf"}),
        "relu L3": (X, {"n_layers": 3}), "relu 3 channels": (X.reshape(n, -1, 3)[:, :T // 3],
                                                             {}),
        "relu mean readout": (X[:, :T // 3], {"readout": "mean", "readout_stride": 2}),
        # the default grid's pooled and banded mean readouts (one ReLU layer, sigma_w 1.2)
        "default pooled": (X[:, :T // 2], {**_MEAN, "readout_stride": 1}),
        "default banded": (X, {**_MEAN, "readout_band": 8}),
    }
    out = {}
    print(f"engine of {rev} vs this one: best of {repeat}, alternating (N={n}, T={T})")
    for name, (data, kw) in cases.items():
        new_k, old_k = current(data, **kw), base(data, **kw)  # compile, and compare
        diff = float(np.max(np.abs(new_k - old_k)) / np.max(np.abs(old_k)))
        t_new = t_old = np.inf
        for _ in range(repeat):
            t_old = min(t_old, _time(lambda: base(data, **kw), 1))
            t_new = min(t_new, _time(lambda: current(data, **kw), 1))
        out[name] = dict(rev_s=t_old, current_s=t_new, ratio=t_old / t_new, max_rel_diff=diff)
        print(f"{name:20s}: {rev} {t_old:.4f} s, current {t_new:.4f} s, speed ratio "
              f"{t_old / t_new:.3f} (rel. diff {diff:.1e})")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--out", default="results/bench_kernel")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", metavar="REV", default=None,
                        help="time this engine against git revision REV's, and stop")
    parser.add_argument("--compare-precision", action="store_true",
                        help="time the float32 engine against the float64 one, and stop")
    args = parser.parse_args(argv)
    if args.compare or args.compare_precision:
        return compare(args.compare, args.quick, max(args.repeat, 5))
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    n, T = (150, 60) if args.quick else (500, 150)
    threads = numba.get_num_threads()
    print(f"numba threads: {threads}; N={n}, T={T}, L=1, ReLU")

    X = rng.normal(size=(n, T))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    rntk_kernel(X[:4])  # compile (or load from cache) outside the timings
    result = {"threads": threads, "N": n, "T": T}

    t_numba = _time(lambda: rntk_kernel(X), args.repeat)
    t_numpy = _time(lambda: numpy_rntk(list(X)), max(1, args.repeat - 1))
    err = np.max(np.abs(rntk_kernel(X) - numpy_rntk(list(X)))) / np.max(np.abs(rntk_kernel(X)))
    result["equal"] = dict(numba_s=t_numba, numpy_s=t_numpy, ratio=t_numpy / t_numba,
                           pair_steps_per_s=n * n * T / t_numba, max_rel_diff=err)
    print(f"equal lengths : rntk {t_numba:.3f} s ({n * n * T / t_numba:.3g} pair-steps/s), "
          f"numpy {t_numpy:.3f} s, ratio {t_numpy / t_numba:.1f}x (rel. diff {err:.1e})")

    lengths = rng.integers(T // 2, T + 1, size=n)
    Xm = [x[:t] for x, t in zip(X, lengths)]
    pair_steps = float(np.minimum.outer(lengths, lengths).sum())
    t_mixed = _time(lambda: rntk_kernel(Xm), args.repeat)
    t_mixed_np = _time(lambda: numpy_rntk(Xm), max(1, args.repeat - 1))
    result["mixed"] = dict(numba_s=t_mixed, numpy_s=t_mixed_np, ratio=t_mixed_np / t_mixed,
                           pair_steps_per_s=pair_steps / t_mixed)
    print(f"mixed lengths : rntk {t_mixed:.3f} s ({pair_steps / t_mixed:.3g} aligned "
          f"pair-steps/s), numpy {t_mixed_np:.3f} s, ratio {t_mixed_np / t_mixed:.1f}x")

    for name, act, L in (("erf", "erf", 1), ("relu_L3", "relu", 3)):
        t = _time(lambda: rntk_kernel(X, activation=act, n_layers=L), 1)
        result[name] = dict(seconds=t, pair_steps_per_s=n * n * T * L / t)
        print(f"{name:14s}: {t:.3f} s ({n * n * T * L / t:.3g} pair-steps/s)")

    # scaling in N (T fixed) and in T (N fixed)
    sizes_n = [50, 100, 200, 400] if args.quick else [100, 200, 400, 800, 1600]
    sizes_t = [25, 50, 100, 200] if args.quick else [50, 100, 200, 400, 800]
    t_fixed, n_fixed = (60, 100) if args.quick else (150, 300)
    scal_n = [_time(lambda: rntk_kernel(rng.normal(size=(k, t_fixed))), 1) for k in sizes_n]
    scal_t = [_time(lambda: rntk_kernel(rng.normal(size=(n_fixed, k))), 1) for k in sizes_t]
    result["scaling_N"] = dict(T=t_fixed, N=sizes_n, seconds=scal_n)
    result["scaling_T"] = dict(N=n_fixed, T=sizes_t, seconds=scal_t)
    for k, s in zip(sizes_n, scal_n):
        print(f"N={k:5d} T={t_fixed}: {s:.3f} s")
    for k, s in zip(sizes_t, scal_t):
        print(f"N={n_fixed} T={k:5d}: {s:.3f} s")

    with open(os.path.join(args.out, "bench_kernel.json"), "w") as f:
        json.dump(result, f, indent=2)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return result
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    axes[0].loglog(sizes_n, scal_n, "o-", label="rntk")
    axes[0].loglog(sizes_n, scal_n[-1] * (np.array(sizes_n) / sizes_n[-1]) ** 2, "k:",
                   label="$\\propto N^2$")
    axes[0].set(xlabel="N (series)", ylabel="seconds", title=f"Gram K(X, X), T = {t_fixed}")
    axes[1].loglog(sizes_t, scal_t, "o-", label="rntk")
    axes[1].loglog(sizes_t, scal_t[-1] * np.array(sizes_t) / sizes_t[-1], "k:",
                   label="$\\propto T$")
    axes[1].set(xlabel="T (steps)", title=f"Gram K(X, X), N = {n_fixed}")
    axes[0].set_xticks(sizes_n, [str(k) for k in sizes_n])
    axes[1].set_xticks(sizes_t, [str(k) for k in sizes_t])
    axes[1].minorticks_off()
    axes[0].minorticks_off()
    for ax in axes:
        ax.legend()
        ax.grid(alpha=0.3, which="both")
    fig.suptitle(f"RNTK engine, {threads} threads: {t_numpy / t_numba:.0f}x numpy "
                 f"(N={n}, T={T})")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "bench_kernel.png"), dpi=120)
    print(f"wrote {args.out}/bench_kernel.json and .png")
    return result


if __name__ == "__main__":
    main()
