"""Beyond one Gram in memory: time and peak memory of the three ways to many series.

For N synthetic series (random walks of length 150, unit norm) it times, each in a fresh
process (so that its peak resident memory is its own):

* ``exact``: ``rntk_kernel(X)``, the Gram in memory;
* ``memmap``: ``rntk_kernel(X, out=numpy.memmap)``, the Gram written to disk in blocks;
* ``nystroem``: ``RNTKNystroem(n_components=1000).fit_transform(X)``, (N, 1000) features;
* ``dask1`` / ``dask2``: ``rntk.distributed.rntk_kernel`` on a local cluster of 1 / 2
  worker processes of one thread each (cluster start excluded, each worker warmed up).

Numba's compilation is excluded (a warm-up call first). Run::

    python benchmarks/bench_scale.py                       # N = 1000 ... 20000
    python benchmarks/bench_scale.py --sizes 500 1000      # quick

Writes ``results.csv``, ``summary.md`` and ``scale.png`` into ``--out``.
"""

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

METHODS = ("exact", "memmap", "nystroem", "dask1", "dask2")


def _series(n, length, seed=0):
    rng = np.random.default_rng(seed)
    X = np.cumsum(rng.normal(size=(n, length)), axis=1)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _AnonPeak(threading.Thread):
    """Peak anonymous resident memory, sampled every 5 ms.

    RssAnon leaves out the file pages of a memmap, which the OS may drop.
    """

    def __init__(self):
        super().__init__(daemon=True)
        self.peak, self.running = 0.0, True

    def run(self):
        while self.running:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        self.peak = max(self.peak, int(line.split()[1]) / 1024)
            time.sleep(0.005)


def run_one(method, n, length, components, block_size):
    """Time one method in this process; return a dict of measurements."""
    from rntk import RNTKNystroem, rntk_kernel

    X = _series(n, length)
    rntk_kernel(X[:20])  # load (or compile) the engine
    res = {"method": method, "n": n, "length": length}
    base = _peak_mb()
    anon = _AnonPeak()
    anon.start()
    if method == "exact":
        t0 = time.perf_counter()
        rntk_kernel(X)
        res["seconds"] = time.perf_counter() - t0
    elif method == "memmap":
        with tempfile.TemporaryDirectory() as tmp:
            out = np.lib.format.open_memmap(os.path.join(tmp, "K.npy"), mode="w+",
                                            shape=(n, n))
            t0 = time.perf_counter()
            rntk_kernel(X, out=out)
            out.flush()
            res["seconds"] = time.perf_counter() - t0
            del out
    elif method == "nystroem":
        t0 = time.perf_counter()
        RNTKNystroem(n_components=min(components, n), random_state=0,
                     normalize=False).fit_transform(X)
        res["seconds"] = time.perf_counter() - t0
    else:
        from distributed import Client, LocalCluster

        from rntk.distributed import rntk_kernel as dask_kernel

        workers = int(method[-1])
        with LocalCluster(processes=True, n_workers=workers, threads_per_worker=1,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            client.run(lambda: rntk_kernel(np.ones((2, 3))))  # load the engine in each
            t0 = time.perf_counter()
            dask_kernel(X, client=client, block_size=block_size)
            res["seconds"] = time.perf_counter() - t0
            peaks = client.run(_peak_mb)
            res["worker_peak_mb"] = round(max(peaks.values()), 1)
    anon.running = False
    anon.join()
    res["peak_mb"] = round(_peak_mb(), 1)
    res["anon_peak_mb"] = round(anon.peak, 1)
    res["peak_before_mb"] = round(base, 1)
    res["seconds"] = round(res["seconds"], 3)
    return res


def _write(rows, out):
    os.makedirs(out, exist_ok=True)
    keys = ["method", "n", "length", "seconds", "peak_mb", "anon_peak_mb", "worker_peak_mb",
            "peak_before_mb"]
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in keys})
    sizes = sorted({r["n"] for r in rows})
    lines = ["| N | " + " | ".join(METHODS) + " |", "|---:|" + "---:|" * len(METHODS)]
    for n in sizes:
        cells = []
        for m in METHODS:
            r = next((r for r in rows if r["n"] == n and r["method"] == m), None)
            if r is None:
                cells.append("")
                continue
            mem = r["anon_peak_mb"] + r.get("worker_peak_mb", 0) * int(m[-1]) if m.startswith(
                "dask") else r["anon_peak_mb"]
            cells.append(f"{r['seconds']:.2f} s, {mem / 1024:.2f} GB")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    text = ("Time and peak anonymous resident memory (without the file pages of a memmap; "
            "for dask: client + workers' peak RSS) per method.\n\n"
            + "\n".join(lines) + "\n")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for m in METHODS:
        rs = sorted((r for r in rows if r["method"] == m), key=lambda r: r["n"])
        if not rs:
            continue
        ns = [r["n"] for r in rs]
        axes[0].loglog(ns, [r["seconds"] for r in rs], "o-", label=m)
        axes[1].loglog(ns, [r["anon_peak_mb"] + (r.get("worker_peak_mb", 0) * int(m[-1])
                                            if m.startswith("dask") else 0) for r in rs],
                       "o-", label=m)
    axes[0].set(xlabel="series N", ylabel="seconds", title="time")
    axes[1].set(xlabel="series N", ylabel="peak memory (MB)", title="peak memory")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scale.png"), dpi=120)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000])
    ap.add_argument("--length", type=int, default=150)
    ap.add_argument("--components", type=int, default=1000)
    ap.add_argument("--block-size", type=int, default=2000)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--out", default="bench_scale_out")
    ap.add_argument("--one", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        res = run_one(args.one[0], int(args.one[1]), args.length, args.components,
                      args.block_size)
        print(json.dumps(res))
        return
    rows = []
    for n in args.sizes:
        for m in args.methods:
            cmd = [sys.executable, __file__, "--one", m, str(n), "--length", str(args.length),
                   "--components", str(args.components), "--block-size", str(args.block_size)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                print(f"{m} N={n} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            print(res, flush=True)
            rows.append(res)
            _write(rows, args.out)


if __name__ == "__main__":
    main()
