"""The fused CUDA engine of the RNTK on a GPU: agreement, throughput, batched grid.

Prepared for a machine with one NVIDIA GPU (H100 / H200) and ``pip install
'rntk[cuda]'`` (numba-cuda; plus ``'numba-cuda[cu12]'`` or ``[cu13]`` without a system
CUDA toolkit) and torch with CUDA for the torch column. It measures, in one process:

1. agreement with the CPU engine (:func:`rntk.rntk_kernel`) on ``N = 2000`` series of
   mixed lengths in float64 (max relative difference, target 1e-12) and float32, and on
   a few option sets (erf, layers, nngp, sigma_h, bidirectional, diff, mean readout,
   banded mean readout),
   on two-channel series (one channel puts every pair's first step at correlation
   +-1, where arccos is ill-conditioned: two correct implementations differ by ~1e-11);
2. throughput of the fused kernel, float64 and float32, on ``K(X, X)`` for
   ``N = 10,000`` series of ``T = 150`` steps, in pair-steps per second (every entry
   of the Gram counted, as in ``bench_kernel.py``), transfers included; the CPU
   engine's rate from step 1 beside it;
3. the torch path (:func:`rntk.nn.rntk_kernel_torch` on ``cuda``) on a block of rows
   against all ``N`` columns (its memory grows with ``n_X n_Y T``), the same rate, and
   the ratio fused / torch;
4. the 900 settings of ``PAPER_GRID`` on 500 series of 150 steps: one
   :func:`rntk.cuda.rntk_kernel_cuda_batched` call, host preparation and
   transfers included, against the CPU engine's time for one setting times 900.

Run::

    python benchmarks/bench_gpu.py              # on a GPU: a few minutes
    python benchmarks/bench_gpu.py --smoke      # tiny sizes on numba's CUDA simulator
                                                # (alias: --quick)

Writes ``bench_gpu.json`` and ``bench_gpu.csv`` (one row per measurement) in ``--out``.
"""

import argparse
import csv
import importlib.util
import json
import os
import sys
import time

import numpy as np


def _enable_simulator():
    """Select numba's CUDA simulator, unless numba.cuda is already imported."""
    import numba

    if "numba.cuda" in sys.modules:
        return
    previous = numba.config.ENABLE_CUDASIM
    numba.config.ENABLE_CUDASIM = 1
    try:
        from numba import cuda  # noqa: F401
    finally:
        numba.config.ENABLE_CUDASIM = previous


def _best(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _rel(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def _series(rng, n, T, mixed, m=1):
    lengths = rng.integers(T // 2, T + 1, size=n) if mixed else np.full(n, T)
    return [x / np.linalg.norm(x) for x in (rng.normal(size=(t, m)) for t in lengths)]


def _pair_steps(xs, ys=None):
    lx = np.array([len(x) for x in xs])
    ly = lx if ys is None else np.array([len(y) for y in ys])
    return float(np.minimum.outer(lx, ly).sum())


def _torch_rate(X, T, dtype_name, rows, repeat):
    """Pair-steps/s of rntk_kernel_torch on cuda, rows x all columns (halving on OOM)."""
    try:
        import torch

        from rntk.nn import rntk_kernel_torch
    except ImportError:
        return None
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = getattr(torch, dtype_name)
    Xt = torch.as_tensor(np.stack([x[:, 0] for x in X]), dtype=dtype, device=device)
    while rows >= 1:
        try:
            def run():
                K = rntk_kernel_torch(Xt[:rows], Xt, dtype=dtype, device=device)
                if device == "cuda":
                    torch.cuda.synchronize()
                return K

            run()  # warm-up
            seconds, _ = _best(run, repeat)
            return dict(device=device, rows=rows, cols=len(X), seconds=seconds,
                        pair_steps_per_s=rows * len(X) * T / seconds)
        except RuntimeError as exc:  # CUDA out of memory: fewer rows
            if "out of memory" not in str(exc).lower():
                raise
            torch.cuda.empty_cache()
            rows //= 2
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", "--quick", action="store_true", dest="smoke",
                        help="tiny sizes on numba's CUDA simulator (checks the script)")
    parser.add_argument("--out", default="results/bench_gpu")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if importlib.util.find_spec("numba_cuda") is None:
        raise SystemExit("numba-cuda is not installed: pip install 'rntk[cuda]'")
    if args.smoke:
        _enable_simulator()

    import numba
    from numba import cuda
    from sklearn.model_selection import ParameterGrid

    from rntk import rntk_kernel
    from rntk.cuda import rntk_kernel_cuda, rntk_kernel_cuda_batched
    from rntk.model_selection import PAPER_GRID

    if args.smoke:
        n_agree, n_big, T, n_grid, n_settings, rows, repeat = 7, 9, 5, 6, 5, 3, 1
    else:
        n_agree, n_big, T, n_grid, n_settings, rows, repeat = 2000, 10_000, 150, 500, None, \
            1000, args.repeat
    simulated = "numba.cuda.simulator_init" in sys.modules  # numba's CPU simulator
    device = "numba CUDA simulator" if simulated else cuda.get_current_device().name
    device = device.decode() if isinstance(device, bytes) else str(device)
    import numba_cuda

    result = dict(device=device, simulated=simulated, numba=numba.__version__,
                  numba_cuda=getattr(numba_cuda, "__version__", "?"),
                  cpu_threads=numba.get_num_threads(), smoke=args.smoke)
    rows_csv = []

    def record(section, name, **values):
        result.setdefault(section, {})[name] = values
        rows_csv.append(dict(section=section, name=name, **values))
        shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in values.items())
        print(f"[{section}] {name}: {shown}", flush=True)

    print(f"device: {device}; numba {numba.__version__}; CPU threads {result['cpu_threads']}")
    rng = np.random.default_rng(0)
    # compile outside the timings
    t0 = time.perf_counter()
    tiny = _series(rng, 3, 4, True)
    rntk_kernel(tiny)
    for dt in (np.float64, np.float32):
        rntk_kernel_cuda(tiny, dtype=dt)
    record("setup", "compile", seconds=time.perf_counter() - t0)

    # 1. agreement, mixed lengths. Two channels: with one channel the first step of every
    # pair has correlation exactly +-1, where arccos is ill-conditioned (an ulp of the
    # correlation moves the kernel by ~1e-11 in any two implementations)
    Xa = _series(rng, n_agree, T, mixed=True, m=2)
    t_cpu, K_cpu = _best(lambda: rntk_kernel(Xa), 1)
    steps = _pair_steps(Xa)
    record("cpu", "mixed_N%d" % n_agree, seconds=t_cpu, pair_steps_per_s=steps / t_cpu)
    for dt in ("float64", "float32"):
        t_gpu, K = _best(lambda: rntk_kernel_cuda(Xa, dtype=dt), 1)
        record("agreement", dt, N=n_agree, max_rel_diff=_rel(K, K_cpu), seconds=t_gpu,
               pair_steps_per_s=steps / t_gpu, target=1e-12 if dt == "float64" else 1e-5)
    Xo, Yo = Xa[: max(3, n_agree // 4)], Xa[-max(2, n_agree // 5):]
    options = [dict(activation="erf", n_layers=2, sigma_h=0.5),
               dict(kind="nngp", n_layers=3, sigma_b=0.3),
               dict(activation="linear", sigma_w=0.9),
               dict(direction="bidirectional", diff=True, n_layers=2)]
    import inspect

    if "readout" in inspect.signature(rntk_kernel).parameters:
        options.append(dict(readout="mean", readout_stride=1 if args.smoke else 10))
    if "readout_band" in inspect.signature(rntk_kernel).parameters:
        options.append(dict(readout="mean", readout_band=8))
    for opt in options:
        name = ",".join(f"{k}={v}" for k, v in opt.items())
        for Y in (None, Yo):
            err = _rel(rntk_kernel_cuda(Xo, Y, **opt), rntk_kernel(Xo, Y, **opt))
            record("agreement_options", name + (",XX" if Y is None else ",XY"),
                   max_rel_diff=err)

    # 2. fused kernel throughput, equal lengths
    Xb = _series(rng, n_big, T, mixed=False)
    steps = float(n_big) * n_big * T
    for dt in ("float64", "float32"):
        seconds, _ = _best(lambda: rntk_kernel_cuda(Xb, dtype=dt), repeat)
        record("fused", dt, N=n_big, T=T, seconds=seconds, pair_steps_per_s=steps / seconds,
               G_pair_steps_per_s=steps / seconds / 1e9)

    # 3. the torch path, a block of rows against every column
    for dt in ("float64", "float32"):
        tr = _torch_rate(Xb, T, dt, rows, repeat)
        if tr is None:
            print(f"[torch] {dt}: not available")
            continue
        fused = result["fused"][dt]["pair_steps_per_s"]
        record("torch", dt, **tr, G_pair_steps_per_s=tr["pair_steps_per_s"] / 1e9,
               fused_over_torch=fused / tr["pair_steps_per_s"])

    # 4. the paper's 900-setting grid on 500 series in one batched call
    settings = list(ParameterGrid(PAPER_GRID))[:n_settings]
    Xg = _series(rng, n_grid, T, mixed=False)
    t_grid, Kg = _best(lambda: rntk_kernel_cuda_batched(Xg, None, settings), 1)
    t_one, K1 = _best(lambda: rntk_kernel(Xg, **settings[-1]), 1)
    record("grid", "paper_grid", settings=len(settings), N=n_grid, T=T, seconds=t_grid,
           cpu_one_setting_s=t_one, cpu_estimate_s=t_one * len(settings),
           speedup=t_one * len(settings) / t_grid, max_rel_diff_last=_rel(Kg[-1], K1))
    # (univariate: the last setting agrees to ~1e-11, not 1e-12; see the agreement note)

    with open(os.path.join(args.out, "bench_gpu.json"), "w") as f:
        json.dump(result, f, indent=2)
    keys = sorted({k for r in rows_csv for k in r} - {"section", "name"})
    with open(os.path.join(args.out, "bench_gpu.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["section", "name"] + keys)
        writer.writeheader()
        writer.writerows(rows_csv)
    print(f"wrote {args.out}/bench_gpu.json and .csv")
    return result


if __name__ == "__main__":
    main()
