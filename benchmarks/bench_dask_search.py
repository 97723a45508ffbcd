"""The default classifier's search on a Dask cluster: agreement, time and memory against n.

``RNTKClassifierCV().fit(SeriesBlocks(...), y)`` runs the large-n search on the workers of a
Dask cluster (:mod:`rntk.distributed`). Two measurements, on a ``LocalCluster`` of worker
processes of one thread each (2 by default: the 2 cores of the machines here):

* ``--check N`` (default 20,000; ``--quick``: 600 with 30 landmarks): ``N`` synthetic
  training series of length 100 (four classes of noisy sines of random phase, as
  ``bench_large_n.py``), the default ``RNTKClassifierCV()`` fitted in this process and on
  the cluster from blocks of 4,096 series (``--block``; ``--quick``: 256): whether the
  selected and averaged candidates are identical, the largest difference of their
  decisions on 2,000 test series, both fit times and test accuracies;
* ``--sizes N [N ...]`` (default 100,000, 300,000 and 1,000,000; ``--quick``: 1,200 and
  2,400): the series are made on the workers, block by block from a seed (no process
  holds them all: the labels alone are made here too), the fit and the prediction of
  20,000 test series (``--quick``: 400) run on the cluster; the fit and predict times,
  the fit time per series relative to the first size (linear in n: 1), the peak memory
  of each worker (its peak resident set as its kernel counts it, ``VmHWM``; new
  worker processes for each size, so that the peak is that size's own) and of this
  process, and
  the test accuracy; for the first size, the same fit in this process (series in memory)
  for its accuracy and decisions (``--no-local`` skips it).

Run with ``MALLOC_MMAP_THRESHOLD_`` set (the workers inherit it), the scaling rows are
labelled with it (``part``), and so is their line in the plot. Dask's statistical
profiler is off in the workers (``--profiler`` keeps it, and its rows are labelled so):
it keeps the call trees of its last 1,000 one-second cycles, which grow a worker's memory
for its first 17 minutes whatever the work.

Rows are appended to ``bench_dask_search.csv`` beside this file (``--out`` to change), and
``--plot`` draws ``bench_dask_search.png`` from it (time and memory per worker against n,
the latest run of each features mode, and the latest that reached its largest size when
another one, changes measured and left out aside).

Usage::

    python benchmarks/bench_dask_search.py [--quick] [--threads] [--check 20000]
        [--sizes 100000 300000 1000000] [--workers 2] [--block 4096]
        [--features disk|memory] [--memory-limit 4GB] [--profiler] [--no-local] [--plot]
"""

import argparse
import csv
import os
import resource
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from rntk import RNTKClassifierCV
from rntk.distributed import SeriesBlocks

HERE = Path(__file__).resolve().parent
KEYS = ["date", "part", "n_train", "length", "workers", "memory_limit", "features", "where",
        "fit_s",
        "predict_s", "fit_s_per_1k_relative", "accuracy", "peak_worker_mb", "peak_client_mb",
        "same_selection", "max_decision_diff", "best_params"]
BLOCK = 4096


def labels(seed, n, n_classes=4):
    """Return the labels of block ``seed`` (made here, and with its series on the workers)."""
    return np.random.default_rng([seed, 0]).integers(0, n_classes, size=n)


def waves_block(seed, n, T=100, noise=0.5):
    """Return the series of block ``seed``: noisy sines, frequency ``class + 1``."""
    y = labels(seed, n)
    rng = np.random.default_rng([seed, 1])
    t = np.linspace(0, 1, T)
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1))
    return np.sin(2 * np.pi * (y[:, None] + 1) * t + phase) + noise * rng.normal(size=(n, T))


def synthetic(n, first_seed=0, block=None, features="disk"):
    """``SeriesBlocks`` that make ``n`` series on the workers, and their labels here."""
    block = block or BLOCK
    sizes = [min(block, n - i) for i in range(0, n, block)]
    seeds = range(first_seed, first_seed + len(sizes))
    blocks = SeriesBlocks([partial(waves_block, s, b) for s, b in zip(seeds, sizes)],
                          features=features)
    return blocks, np.concatenate([labels(s, b) for s, b in zip(seeds, sizes)])


def in_memory(blocks):
    """Return the series of synthetic blocks, made here."""
    return np.concatenate([b() for b in blocks.blocks])


def _peak_rss():
    """Return this process's peak resident set in bytes, as the kernel counts it.

    On Linux, ``VmHWM`` of its memory map: ``getrusage``'s peak also counts the process
    that started it (a worker started from a large process would report that one's).
    """
    try:
        with open("/proc/self/status") as fh:
            kib = next(line for line in fh if line.startswith("VmHWM:")).split()[1]
        return int(kib) * 1024
    except (OSError, StopIteration):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # Linux: KiB


def _worker_peak_mb(client):
    """Return the largest peak resident memory of the cluster's workers, in MB.

    Read once, after the fit (:func:`_peak_rss`: the true peak, not samples of it; asking
    the workers every half second would add to what they keep: Dask logs every such
    call). The workers are new processes for each size (``scaling`` restarts them).
    """
    return max(client.run(_peak_rss).values()) / 2**20


def _client_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _row(writer, **kw):
    row = {"date": time.strftime("%Y-%m-%d %H:%M"), **kw}
    writer.writerow({k: row.get(k, "") for k in KEYS})
    getattr(writer, "flush", lambda: None)()  # a long run keeps its rows if stopped
    print(", ".join(f"{k}={v}" for k, v in row.items() if k not in ("date", "best_params")),
          flush=True)


def _fit(clf, X, y, X_test, y_test):
    t0 = time.perf_counter()
    clf.fit(X, y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    D = clf.decision_function(X_test)
    predict_s = time.perf_counter() - t0
    accuracy = float(np.mean(clf.classes_[D.argmax(axis=1)] == y_test))
    return fit_s, predict_s, accuracy, D


def _selection(clf):
    return [clf.best_params_] + list(getattr(clf, "averaged_params_", []))


def check(writer, client, n, workers, estimator, n_test=2000, memory_limit="auto",
          features="disk"):
    """Compare the search on the cluster with the one in this process, on ``n`` series."""
    blocks, y = synthetic(n, features=features)
    test, y_test = synthetic(n_test, first_seed=10**6)
    X, X_test = in_memory(blocks), in_memory(test)
    local = estimator()
    fit_l, pred_l, acc_l, D_l = _fit(local, X, y, X_test, y_test)
    _row(writer, part="check", n_train=n, length=100, workers=0, where="in process",
         fit_s=round(fit_l, 1), predict_s=round(pred_l, 2), accuracy=round(acc_l, 4),
         best_params=local.best_params_)
    cluster = estimator()
    fit_c, pred_c, acc_c, D_c = _fit(cluster, blocks, y, X_test, y_test)
    same = _selection(cluster) == _selection(local)
    diff = float(np.abs(D_c - D_l).max())
    _row(writer, part="check", n_train=n, length=100, workers=workers,
         memory_limit=memory_limit, features=features, where="cluster",
         fit_s=round(fit_c, 1), predict_s=round(pred_c, 2), accuracy=round(acc_c, 4),
         same_selection=same, max_decision_diff=f"{diff:.2e}",
         best_params=cluster.best_params_)
    return same, diff


def scaling(writer, client, sizes, workers, estimator, n_test, local_first=True,
            memory_limit="auto", features="disk", restart=True):
    """Fit and predict on the cluster for each size; the first also in this process.

    ``restart``: new worker processes for each size, so that a size's peak memory is its
    own (a process's resident memory seldom shrinks: the peak of a size run after
    another on the same workers carries the first's heap). Rows of workers without Dask's
    statistical profiler (``main`` turns it off) are labelled so.
    """
    import dask

    test, y_test = synthetic(n_test, first_seed=10**6)
    first = None
    for k, n in enumerate(sizes):
        if restart:
            client.restart()
        blocks, y = synthetic(n, features=features)
        clf = estimator()
        fit_s, pred_s, acc, D = _fit(clf, blocks, y, test, y_test)
        peak_mb = _worker_peak_mb(client)
        first = first or fit_s / n
        # a run with the allocator's threshold fixed, or the profiler off, is its own
        # series of rows
        mmap = os.environ.get("MALLOC_MMAP_THRESHOLD_")
        part = "scaling" + (f" MALLOC_MMAP_THRESHOLD_={mmap}" if mmap else "")
        if not dask.config.get("distributed.worker.profile.enabled"):
            part += (", " if mmap else " ") + "profiler off"
        _row(writer, part=part,
             n_train=n, length=100, workers=workers,
             memory_limit=memory_limit, features=features, where="cluster", fit_s=round(fit_s, 1),
             predict_s=round(pred_s, 1),
             fit_s_per_1k_relative=round(fit_s / n / first, 3), accuracy=round(acc, 4),
             peak_worker_mb=round(peak_mb), peak_client_mb=round(_client_mb()),
             best_params=clf.best_params_)
        if k == 0 and local_first:
            local = estimator()
            fit_l, pred_l, acc_l, D_l = _fit(local, in_memory(blocks), y, in_memory(test),
                                             y_test)
            same = _selection(local) == _selection(clf)
            _row(writer, part="scaling", n_train=n, length=100, workers=0,
                 where="in process", fit_s=round(fit_l, 1), predict_s=round(pred_l, 1),
                 accuracy=round(acc_l, 4), peak_client_mb=round(_client_mb()),
                 same_selection=same, max_decision_diff=f"{np.abs(D - D_l).max():.2e}",
                 best_params=local.best_params_)


def plot(csv_path, png_path):
    """Draw fit time and peak memory per worker against n, per features mode (its runs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # the scaling rows but those of a change measured and left out
    rows = [r for r in csv.DictReader(open(csv_path)) if r["part"].startswith("scaling")
            and "left out" not in r["part"] and r["where"] == "cluster"]
    if not rows:
        raise SystemExit(f"no scaling rows in {csv_path}")
    runs = {}  # per mode, its runs in order: rows of one part and of growing sizes
    for r in rows:
        mode, n = r.get("features") or "disk", int(r["n_train"])
        mode_runs = runs.setdefault(mode, [])
        if not mode_runs or mode_runs[-1][0] != r["part"] or n <= max(mode_runs[-1][1]):
            mode_runs.append((r["part"], {}))
        mode_runs[-1][1][n] = r
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 4.6))
    top = 0.0
    for mode, mode_runs in sorted(runs.items()):
        # its latest run, and the latest that reached its largest size if another one
        largest = max(reversed(mode_runs), key=lambda run: max(run[1]))
        shown = [mode_runs[-1]] + ([largest] if largest is not mode_runs[-1] else [])
        for k, (part, latest) in enumerate(shown):
            n = np.array(sorted(latest))
            fit = np.array([float(latest[i]["fit_s"]) for i in n])
            mem = np.array([float(latest[i]["peak_worker_mb"]) for i in n])
            extra = part.removeprefix("scaling").strip()  # the allocator's setting
            label = f'features="{mode}"' + (f"\n{extra}" if extra else "")
            if len(shown) > 1:
                label += f"\nrun of {latest[n[0]]['date'][:10]}"
            style = "o-" if k == 0 else "s:"
            a.loglog(n, fit, style, label=label)
            b.semilogx(n, mem, style, label=label)
            top = max(top, mem.max())
            if mode == "disk" and k == 0:
                a.loglog(n, fit[0] * n / n[0], "k--", lw=0.8, label="linear in n")
    a.set_xlabel("training series (length 100)")
    a.set_ylabel("fit seconds")
    b.set_ylim(0, top * 1.15)
    b.set_xlabel("training series (length 100)")
    b.set_ylabel("peak memory per worker (MB)")
    fig.legend(*a.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize="small")
    fig.suptitle(f"RNTKClassifierCV() on a Dask cluster of {rows[0]['workers']} workers")
    fig.tight_layout(rect=(0, 0.22, 1, 1))
    fig.savefig(png_path, dpi=120)
    plt.close(fig)
    print(f"wrote {png_path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, the feature path forced with 30 landmarks")
    parser.add_argument("--check", type=int, default=None, metavar="N",
                        help="the cluster against this process on N series")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--block", type=int, default=None,
                        help="series per block (default 4096; --quick: 256)")
    parser.add_argument("--n-test", type=int, default=None)
    parser.add_argument("--features", choices=["disk", "memory"], default="disk",
                        help="where the workers keep each setting's features between the "
                             "two passes (SeriesBlocks(features=...))")
    parser.add_argument("--memory-limit", default="auto",
                        help="memory limit of each worker (Dask spills what the workers "
                             "hold to disk above 70%% of it; default: Dask's, the machine's "
                             "memory shared by the workers)")
    parser.add_argument("--threads", action="store_true",
                        help="workers as threads of this process (a smoke test; the memory "
                             "per worker is then this process's)")
    parser.add_argument("--profiler", action="store_true",
                        help="keep Dask's statistical profiler in the workers (default: "
                             "off; its history of call trees grows a worker's memory for "
                             "its first 17 minutes)")
    parser.add_argument("--no-local", action="store_true",
                        help="no fit in this process at the first size")
    parser.add_argument("--plot", action="store_true", help="draw the PNG from the CSV")
    parser.add_argument("--out", type=Path, default=HERE / "bench_dask_search.csv")
    args = parser.parse_args(argv)
    png = args.out.with_suffix(".png")
    if args.plot and args.check is None and args.sizes is None and not args.quick:
        plot(args.out, png)
        return

    import dask
    from distributed import Client, LocalCluster

    if args.quick:
        def estimator():
            return RNTKClassifierCV(large_n=100, n_components=30)
        check_n, sizes, n_test = args.check or 600, args.sizes or [1200, 2400], 400
    else:
        estimator = RNTKClassifierCV
        check_n, sizes, n_test = args.check, args.sizes, 20000
        if check_n is None and sizes is None:
            check_n, sizes = 20000, [100_000, 300_000, 1_000_000]
    n_test = args.n_test or n_test
    global BLOCK
    BLOCK = args.block or (256 if args.quick else BLOCK)
    new = not args.out.exists()
    # the workers take this process's configuration when they start
    with dask.config.set({"distributed.worker.profile.enabled": args.profiler}), \
            open(args.out, "a", newline="") as fh, \
            LocalCluster(n_workers=args.workers, threads_per_worker=1,
                         processes=not args.threads, memory_limit=args.memory_limit,
                         dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        writer = csv.DictWriter(fh, KEYS)
        writer.flush = fh.flush
        if new:
            writer.writeheader()
        if check_n:
            same, diff = check(writer, client, check_n, args.workers, estimator,
                               memory_limit=args.memory_limit, features=args.features)
            print(f"same candidates: {same}; largest decision difference: {diff:.2e}")
        if sizes:
            scaling(writer, client, sizes, args.workers, estimator, n_test,
                    local_first=not args.no_local, memory_limit=args.memory_limit,
                    features=args.features, restart=not args.threads)
    if args.plot or args.quick:
        plot(args.out, png)


if __name__ == "__main__":
    main()
