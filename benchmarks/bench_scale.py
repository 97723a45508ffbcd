"""Beyond one Gram in memory: time and peak memory of the three ways to many series.

For N synthetic series (random walks of length 150, unit norm) it times, each in a fresh
process (so that its peak resident memory is its own):

* ``exact``: ``rntk_kernel(X)``, the Gram in memory;
* ``memmap``: ``rntk_kernel(X, out=numpy.memmap)``, the Gram written to disk in blocks;
* ``nystroem``: ``RNTKNystroem(n_components=1000).fit_transform(X)``, (N, 1000) features;
  the same process measures the engine's rate (before and after) on a 2000 x 1000 block of
  ``rntk_kernel`` (pair-steps per second, all threads) and reports the raw kernel cost
  ``N x m x T / rate`` of the features and the ratio of the measured time to it (also
  in CPU seconds of the process, robust to a shared machine);
* ``dask1`` / ``dask2``: ``rntk.distributed.rntk_kernel`` on a local cluster of 1 / 2
  worker processes of one thread each (cluster start excluded, each worker warmed up;
  its automatic block size unless ``--block-size``).

``--probe N`` instead prints where the time of ``rntk.distributed`` goes with 1 and 2
workers for N series (per block size: wall time, the tasks' summed compute time from
Dask's task stream, the workers' idle time, the client's CPU time) and the machine's
own scaling: two independent single-thread kernel processes at once against one alone.

Numba's compilation is excluded (a warm-up call first). Run::

    python benchmarks/bench_scale.py                       # N = 1000 ... 20000
    python benchmarks/bench_scale.py --sizes 500 1000      # quick
    python benchmarks/bench_scale.py --quick --out /tmp/s  # a smoke test, seconds
    python benchmarks/bench_scale.py --sizes 100000 --methods nystroem \
        --merge benchmarks/bench_scale.csv                  # add / replace these rows

    python benchmarks/bench_scale.py --probe 6000          # 1 vs 2 Dask workers

Writes ``results.csv``, ``summary.md`` and ``scale.png`` into ``--out`` (the copies in
this folder: ``bench_scale.csv``, ``bench_scale.png``; rows carry the date they were
measured, the rows without one are from an earlier run).
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


def _engine_rate(length, rows=2000, cols=1000, repeat=2):
    """Pair-steps per second of ``rntk_kernel`` on a ``rows x cols`` block.

    Returns the best of ``repeat`` runs per wall-clock second and per CPU second of
    this process (all its threads: robust to another process sharing the cores).
    """
    from rntk import rntk_kernel

    X = _series(rows + cols, length, seed=1)
    wall = cpu = np.inf
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        rntk_kernel(X[:rows], X[rows:])
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return rows * cols * length / wall, rows * cols * length / cpu


def run_one(method, n, length, components, block_size, rate_block=(2000, 1000)):
    """Time one method in this process; return a dict of measurements.

    ``rate_block`` is the ``(rows, cols)`` block on which the engine's rate is measured
    (the ``nystroem`` method).
    """
    from rntk import RNTKNystroem, rntk_kernel

    X = _series(n, length)
    rntk_kernel(X[:20])  # load (or compile) the engine
    res = {"method": method, "n": n, "length": length, "date": time.strftime("%Y-%m-%d")}
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
        m = min(components, n)
        before = _engine_rate(length, *rate_block)
        t0, c0 = time.perf_counter(), time.process_time()
        RNTKNystroem(n_components=m, random_state=0, normalize=False).fit_transform(X)
        res["seconds"] = time.perf_counter() - t0
        cpu = time.process_time() - c0
        after = _engine_rate(length, *rate_block)
        # the rate before and after (the machine may be shared): their mean
        rate, cpu_rate = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
        work = n * m * length
        res["rate"] = f"{rate:.4g}"
        res["raw_seconds"] = round(work / rate, 3)
        res["vs_raw"] = round(res["seconds"] / (work / rate), 3)
        res["cpu_seconds"] = round(cpu, 3)
        res["cpu_vs_raw"] = round(cpu / (work / cpu_rate), 3)
        res["rate_spread"] = round(max(before[0], after[0]) / min(before[0], after[0]), 3)
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


def _alone_or_paired(rows, cols, length, barrier, q):
    """Child of ``probe``: one single-thread ``rntk_kernel`` block, timed after a barrier."""
    from rntk import rntk_kernel

    X = _series(rows + cols, length, seed=2)
    rntk_kernel(X[:20], n_jobs=1)
    barrier.wait()
    t0 = time.perf_counter()
    rntk_kernel(X[:rows], X[rows:], n_jobs=1)
    q.put(time.perf_counter() - t0)


def _machine_scaling(length, rows=1500, cols=1000, repeat=3):
    """Throughput of two single-thread kernel processes at once over one alone.

    Each of ``repeat`` rounds runs one process alone, then two at the same time; the
    ratio ``2 t_alone / t_pair`` is the most two Dask workers can gain on this machine.
    """
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    out = []
    for _ in range(repeat):
        times = {}
        for k in (1, 2):
            q, barrier = ctx.Queue(), ctx.Barrier(k)
            procs = [ctx.Process(target=_alone_or_paired, args=(rows, cols, length, barrier, q))
                     for _ in range(k)]
            for p in procs:
                p.start()
            times[k] = [q.get() for _ in procs]
            for p in procs:
                p.join()
        out.append((times[1][0], max(times[2]), 2 * times[1][0] / max(times[2])))
    return out


def probe(n, length, block_sizes, workers=(1, 2)):
    """Where the time of ``rntk.distributed`` goes with 1 and 2 workers (printed).

    For each block size: wall time, the tasks' summed compute time (Dask's task stream),
    their mean duration, and the time the workers were not computing
    (``workers x wall - compute``: scheduling, transfers, the client's assembly, load
    imbalance at the end). Then the same machine's scaling of two independent kernel
    processes (``_machine_scaling``).
    """
    from distributed import Client, LocalCluster, get_task_stream

    from rntk import rntk_kernel
    from rntk.distributed import rntk_kernel as dask_kernel

    X = _series(n, length)
    rows = []
    for w in workers:
        with LocalCluster(processes=True, n_workers=w, threads_per_worker=1,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            client.run(lambda: rntk_kernel(np.ones((2, 3))))
            for b in block_sizes:
                with get_task_stream(client) as ts:
                    t0, c0 = time.perf_counter(), time.process_time()
                    dask_kernel(X, client=client, block_size=b)
                    wall, client_cpu = time.perf_counter() - t0, time.process_time() - c0
                comp = [ss["stop"] - ss["start"] for t in ts.data for ss in t["startstops"]
                        if ss["action"] == "compute" and "_block" in t["key"]]
                row = {"workers": w, "block_size": b, "tasks": len(comp),
                       "wall": round(wall, 2), "compute": round(sum(comp), 2),
                       "mean_task": round(float(np.mean(comp)), 3),
                       "idle": round(w * wall - sum(comp), 2),
                       "client_cpu": round(client_cpu, 2)}
                rows.append(row)
                print(row, flush=True)
    for b in block_sizes:
        r1, r2 = (next(r for r in rows if r["workers"] == w and r["block_size"] == b)
                  for w in (1, 2))
        print(f"block_size {b}: dask2 / dask1 speed-up {r1['wall'] / r2['wall']:.2f}x; "
              f"task time 2 workers / 1 worker {r2['mean_task'] / r1['mean_task']:.2f}x",
              flush=True)
    for t1, t2, ratio in _machine_scaling(length):
        print(f"machine: one kernel process alone {t1:.2f} s, two at once {t2:.2f} s: "
              f"{ratio:.2f}x the throughput", flush=True)


def _read(path):
    """Rows of a results CSV written by this script (numbers parsed)."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            row = {"method": r["method"]}
            for k, v in r.items():
                if k != "method" and v not in ("", None):
                    row[k] = (int(v) if k in ("n", "length") else v if k == "date"
                              else float(v))
            rows.append(row)
    return rows


def _write(rows, out):
    os.makedirs(out, exist_ok=True)
    keys = ["method", "n", "length", "seconds", "peak_mb", "anon_peak_mb", "worker_peak_mb",
            "peak_before_mb", "rate", "raw_seconds", "vs_raw", "cpu_seconds", "cpu_vs_raw",
            "rate_spread", "date"]
    rows = sorted(rows, key=lambda r: (r["n"], METHODS.index(r["method"])))
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{r[k]:.6g}" if isinstance(r.get(k), float) else r.get(k, ""))
                        for k in keys})
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
            extra = (f" ({r['vs_raw']}x raw, CPU time {r['cpu_vs_raw']}x)"
                     if r.get("cpu_vs_raw") not in (None, "") else "")
            cells.append(f"{r['seconds']:.2f} s{extra}, {mem / 1024:.2f} GB")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    text = ("Time and peak anonymous resident memory (without the file pages of a memmap; "
            "for dask: client + workers' peak RSS) per method; for nystroem the time as "
            "a multiple of the raw kernel cost N x m x T at the engine's rate measured in "
            "the same process (before and after; wall clock, and CPU time of the process, "
            "which another process sharing the cores does not inflate).\n\n"
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
    ap.add_argument("--block-size", type=int, default=None,
                    help="block size of rntk.distributed (default: its automatic choice)")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--out", default="bench_scale_out")
    ap.add_argument("--merge", default=None, metavar="CSV",
                    help="start from the rows of this results CSV (rows measured now "
                         "replace those of the same method and N)")
    ap.add_argument("--probe", type=int, default=None, metavar="N",
                    help="print where the time of rntk.distributed goes with 1 and 2 workers "
                         "for N series (block sizes: --probe-blocks), and the machine's "
                         "scaling of two independent kernel processes")
    ap.add_argument("--probe-blocks", type=int, nargs="+", default=[2000, 1000, 500])
    ap.add_argument("--one", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: N = 40 series of length 12, the in-memory, memmap "
                         "and Nystroem paths, in this process (peak memories not separated)")
    args = ap.parse_args(argv)
    if args.quick:
        rows = []
        for m in ("exact", "memmap", "nystroem"):
            res = run_one(m, 40, 12, 16, args.block_size, rate_block=(60, 40))
            print(res, flush=True)
            rows.append(res)
        _write(rows, args.out)
        return
    if args.probe:
        probe(args.probe, args.length, args.probe_blocks)
        return
    if args.one:
        res = run_one(args.one[0], int(args.one[1]), args.length, args.components,
                      args.block_size)
        print(json.dumps(res))
        return
    rows = _read(args.merge) if args.merge else []
    for n in args.sizes:
        for m in args.methods:
            cmd = [sys.executable, __file__, "--one", m, str(n), "--length", str(args.length),
                   "--components", str(args.components)]
            if args.block_size:
                cmd += ["--block-size", str(args.block_size)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                print(f"{m} N={n} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            print(res, flush=True)
            rows = [r for r in rows if (r["method"], r["n"]) != (m, n)] + [res]
            _write(rows, args.out)


if __name__ == "__main__":
    main()
