"""The UCR benchmark's main loop: datasets x methods, cached results, the reports.

The concerns live beside it: the methods and protocols (``_protocols``), the data and
folds (``_data``), the runners (``_runners``), the cache (``_cache``), the progress line
(``_progress``), the reports (``_reports``) and the atomic file writes they share
(``_files``).
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ._cache import (
    cache_path,
    current_kept,
    keep_aside,
    read_cache,
    reported_results,
    stale_reason,
    write_cache,
)
from ._data import Dataset, catalog, data_fingerprint, dataset_files, folds
from ._files import remove_stale_temporaries
from ._progress import Progress
from ._protocols import METHODS, PAPER_COLUMNS, PROTOCOLS, grid_hash, missing_reason
from ._reports import failure_label, write_reports
from ._runners import run_method

__all__ = ["run", "run_benchmark", "resolve_datasets"]


def _padded(method, data):
    return bool(data.variable and method in ("ntk", "rbf", "poly", "minirocket"))


def resolve_datasets(spec, data_home, paper, stream=None):
    """Return the dataset names of ``--datasets``, found without reading any dataset.

    Raises ValueError naming the problem (unknown name, a missing TRAIN or TEST file, no
    name at all); with ``all`` / ``table2`` the incomplete folders are skipped with a
    warning on ``stream`` (default stderr).
    """
    available, incomplete = catalog(data_home)
    if spec in ("all", None, "table2"):
        for why in incomplete.values():
            print(f"warning: skipping {why}", file=stream or sys.stderr)
        if spec != "table2":
            return list(available)
        chosen = [n for n in available if n in paper]
        if not chosen:
            raise ValueError("none of the available datasets is in the paper's Table 2")
        return chosen
    names = list(dict.fromkeys(s.strip() for s in spec.split(",") if s.strip()))
    if not names:
        raise ValueError(f"no dataset named in --datasets {spec!r}")
    broken = [incomplete[n] for n in names if n in incomplete and n not in available]
    if broken:
        raise ValueError("; ".join(broken))
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ValueError(f"unknown dataset(s) {', '.join(unknown)}; available: "
                         f"{', '.join(available)}")
    return names


def run_benchmark(datasets, methods, protocol="paper", data_home=None, out="results/ucr",
                  n_jobs=1, seed=0, paper=None, force=False, quiet=False, stream=None,
                  report_only=False):
    """Run the benchmark and write the result files; return the list of result rows.

    Parameters
    ----------
    datasets : list of str
        Dataset names (see :func:`rntk.datasets.list_ucr`).
    methods : list of str
        Methods among :data:`METHODS`; missing packages are skipped with a notice.
    protocol : {"paper", "loo", "fast"}, default="paper"
        Grids and number of folds (see the module docstring).
    data_home : str or path-like, optional
        UCR folder (default ``$RNTK_DATA``, then the bundled datasets).
    out : str or path-like, default="results/ucr"
        Output folder; ``out/cache`` holds one JSON per (dataset, method, protocol).
    n_jobs : int, default=1
        Threads of the Gram computations.
    seed : int, default=0
        Seed of the fold shuffling and of the finite networks.
    paper : dict, optional
        ``{dataset: {column: accuracy %}}``, the paper's Table 2.
    force : bool, default=False
        Recompute even when a cached result exists.
    quiet : bool, default=False
        No progress output.
    stream : file, optional
        Where progress goes (default stderr).
    report_only : bool, default=False
        Compute nothing: write the reports from the cached results only.

    Returns
    -------
    rows : list of dict
        One row per (dataset, method) that ran (or was cached).

    Notes
    -----
    A dataset that cannot be read, or a method that fails on it, is reported (a warning
    on ``stream``, a :class:`RuntimeWarning` at the end, a "failed" entry in the
    summaries) and the run goes on with the others. A cached result is reused when it is
    valid and was computed with the same grids, seed and dataset files (SHA-256 of the
    TRAIN and TEST files, or of the bundled file); an unreadable one is reported and
    recomputed. A valid result that a run with another seed, other grids or changed
    files replaces is kept beside it (``NAME__METHOD__PROTOCOL__KEY.json``) and reused
    when that seed, those grids and files come back. Temporary files that writers
    killed mid-write left in ``out`` are removed.

    The summaries and plots written into ``out`` (``summary.md``, ``summary.csv``,
    ``summary.json``, the PNGs) cover every such valid, current result cached for
    ``protocol`` -- those of earlier invocations with other datasets or methods too, not
    those of other protocols; ``results.csv`` and the returned rows are this
    invocation's.
    """
    rows, failed = run(datasets, methods, protocol=protocol, data_home=data_home, out=out,
                        n_jobs=n_jobs, seed=seed, paper=paper, force=force, quiet=quiet,
                        stream=stream, report_only=report_only)
    if failed:
        warnings.warn(f"{len(failed)} failure(s): " + "; ".join(
            f"{failure_label(f)}: {f['error']}" for f in failed), RuntimeWarning, stacklevel=2)
    return rows


def run(datasets, methods, protocol, data_home, out, n_jobs, seed, paper, force, quiet,
         stream, report_only):
    """Run :func:`run_benchmark`, returning ``(rows, failed)``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {sorted(PROTOCOLS)}; got {protocol!r}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose among {', '.join(METHODS)}")
    paper = paper or {}
    out = Path(out)
    cache = out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    progress = Progress(len(datasets) * len(methods), stream=stream, quiet=quiet)
    _clean(out, cache, progress)
    runnable = []
    for m in methods:
        why = None if report_only else missing_reason(m)
        if why:
            progress.notice(f"skipping method {m!r}: {why}")
        else:
            runnable.append(m)
    progress.n_tasks = len(datasets) * len(runnable)
    t_run = time.perf_counter()
    rows, failed, n_computed = [], [], 0
    fingerprints, handled = {}, set()  # datasets' SHA-256; pairs handled without a row

    def fail(name, method, error, skipped=0):
        failed.append({"dataset": name, "method": method, "error": error})
        handled.update((name, m) for m in ([method] if method else METHODS))
        what = f"dataset {name}" + (f" / {method}" if method else "")
        progress.warn(f"{what} failed: {error}; going on with the others")
        progress.task += skipped

    for name in datasets:
        try:
            files = dataset_files(name, data_home)
            fingerprint = data_fingerprint(files)
        except (OSError, ValueError) as exc:
            fingerprints[name] = None
            fail(name, None, _describe_error(exc), skipped=len(runnable))
            continue
        fingerprints[name] = fingerprint
        # a bundled dataset is one file holding both parts
        source = "bundled" if files["train"] == files["test"] else str(files["train"].parent)
        data = None
        for i, method in enumerate(runnable):
            path = cache_path(cache, name, method, protocol)
            key = grid_hash(protocol, method)
            previous = None  # a valid result of another key at ``path``: kept aside
            if not force and (path.exists() or path.is_symlink()):
                cached, problem = read_cache(path, name, method, protocol)
                if problem:
                    progress.warn(f"ignoring the cache file {path}: it {problem}"
                                  + ("" if report_only else "; recomputing it"))
                else:
                    why = stale_reason(cached, key, seed, fingerprint)
                    if why is None:
                        progress.task += 1
                        rows.append(cached)
                        continue
                    previous = cached
                    kept = current_kept(cache, name, method, protocol, seed, key, fingerprint)
                    if kept is not None:
                        progress.task += 1
                        rows.append(kept)
                        continue
                    progress.notice(f"cached result {path.name} is stale ({why})"
                                    + (": skipped" if report_only else
                                       ": recomputing it (the old result is kept beside it)"))
            elif not force:  # only a kept result of this key (an interrupted update)?
                kept = current_kept(cache, name, method, protocol, seed, key, fingerprint)
                if kept is not None:
                    progress.task += 1
                    rows.append(kept)
                    continue
                if report_only:
                    progress.notice(f"no cached result for {name} / {method}")
            elif path.is_file():
                cached, problem = read_cache(path, name, method, protocol)
                if problem is None and stale_reason(cached, key, seed, fingerprint) is not None:
                    previous = cached
            if report_only:
                handled.add((name, method))  # warned about above
                continue
            if data is None:
                try:
                    data = Dataset(name, data_home)
                    cv = PROTOCOLS[protocol]["cv"]
                    splits = None if cv is None else folds(data.y_train, cv, seed)
                except Exception as exc:  # any unreadable file: report it, go on
                    fail(name, None, f"cannot be loaded: {_describe_error(exc)}",
                         skipped=len(runnable) - i)
                    break
            progress.begin(f"{name} | {method}")
            try:
                res = run_method(method, data, protocol, splits, n_jobs, seed, progress)
            except Exception as exc:  # one failed method does not stop the others
                fail(name, method, _describe_error(exc))
                continue
            col = PAPER_COLUMNS.get(method)
            res.update({
                "dataset": name, "method": method, "protocol": protocol, "seed": seed,
                "padded": _padded(method, data),
                "paper": paper.get(name, {}).get(col) if col else None,
                "grid_hash": key, "data_sha256": fingerprint, "data_source": source,
                **data.info(),
            })
            res["params"] = {k: (float(v) if isinstance(v, np.floating) else v)
                             for k, v in res["params"].items()}
            try:
                if previous is not None:
                    keep_aside(path, previous)
                write_cache(path, res)
            except OSError as exc:
                progress.warn(f"cannot write the cache file {path} ({exc}); the result "
                              "is kept for this run's reports only")
            progress.end(f"accuracy {100 * res['accuracy']:.2f}%"
                         + (f" (paper {res['paper']:.2f}%)" if res["paper"] is not None else "")
                         + f" in {res['total_time']:.1f}s")
            rows.append(res)
            n_computed += 1
    wall_time = time.perf_counter() - t_run
    # the reports cover every valid cached result of the protocol, not only this run's
    reported, left_out = reported_results(
        cache, protocol, seed, data_home, fingerprints,
        {(r["dataset"], r["method"]): r for r in rows}, handled)
    if left_out:
        progress.notice(f"{len(left_out)} cached result(s) of the {protocol} protocol left "
                        "out of the reports (stale or unreadable; listed in summary.md)")
    write_reports(reported, out, paper, wall_time=wall_time, quiet=quiet, stream=stream,
                  failed=failed, protocol=protocol, run_rows=rows, n_computed=n_computed,
                  left_out=left_out, from_cache=True)
    _clean(out, cache, progress)  # again: a temporary file may have come of age since
    return rows, failed


def _clean(out, cache, progress):
    """Remove the temporary files that writers killed mid-write left (see ``_files``)."""
    for folder in (out, cache):
        for path in remove_stale_temporaries(folder):
            progress.notice(f"removed {path}, a temporary file of a writer that was stopped")


def _describe_error(exc):
    """``exc`` as one line, its type named unless it is a plain ValueError / OSError."""
    text = str(exc) or type(exc).__name__
    return text if type(exc) in (ValueError, OSError) else f"{type(exc).__name__}: {text}"
