"""The UCR benchmark runner: data, folds, one runner per kind of method, the cache."""

import hashlib
import importlib.util
import itertools
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

from .._estimators import RNTKClassifierCV
from .._estimators._ridge import KernelRidgeClassifier
from .._kernels import KERNELS, KernelSpec
from .._model_selection import (
    DEFAULT_ALPHA,
    DEFAULT_GRID,
    DEFAULT_N_AVERAGE,
    DEFAULT_PRIOR,
    LEVEL_POOL,
    MEAN_BAND,
    MEAN_BUDGET,
    MEAN_POOL,
    MEAN_READOUTS,
    PAPER_C,
    PAPER_GRID,
    SVM_MAX_ITER,
    RidgeLOOScorer,
    SVCFoldScorer,
    search_grams,
)
from ._data import (
    _catalog,
    _Data,
    _dataset_files,
    _fingerprint,
    _folds,
)
from ._reports import _atomic_write_text, _failure_label, _json_default, write_reports

__all__ = ["METHODS", "PROTOCOLS", "run_benchmark", "run_precomputed_kernel"]

KERNEL_METHODS = ("rntk", "ntk", "rbf", "poly")
RNN_METHODS = ("rnn", "irnn", "gru")
PEER_METHODS = ("minirocket", "dtw1nn", "gak")
METHODS = KERNEL_METHODS + RNN_METHODS + PEER_METHODS
PAPER_COLUMNS = {"rntk": "RNTK", "ntk": "NTK", "rbf": "RBF", "poly": "POLY",
                 "rnn": "GaussianRNN", "irnn": "IdentityRNN", "gru": "GRU"}
_RNN_CELL = {"rnn": "ntk", "irnn": "irnn", "gru": "gru"}

#: The paper's grids of the baselines (Appendix A.1); the depth of the MLP NTK varies
#: fastest: one pass gives every depth of a (sigma_w, sigma_b).
_PAPER_BASELINES = {
    "ntk": {"sigma_w": [0.5, 1.0, math.sqrt(2), 2.0, 2.5, 3.0],
            "sigma_b": [0.0, 0.01, 0.1, 0.2, 0.5, 0.8, 1.0, 2.0, 5.0],
            "n_layers": list(range(1, 11))},
    "rbf": {"gamma": [0.01, 0.05, 0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 1.0, 2.0, 3.0, 4.0,
                      5.0, 10.0, 20.0, 30.0, 40.0, 100.0]},
    "poly": {"degree": [1, 2, 3, 4, 5], "coef0": [0.0, 0.1, 0.2, 0.5, 1.0, 2.0]},
    "rnn_cv": 5,
    "rnn": {"n_layers": [1, 2], "hidden_size": [50, 100, 200, 500],
            "lr": [1e-2, 1e-3, 1e-4, 1e-5]},
    "rnn_epochs": 200,
}

PROTOCOLS = {
    "paper": {
        "cv": 10,
        "C": PAPER_C,
        "rntk": {k: PAPER_GRID[k] for k in ("sigma_w", "sigma_b", "sigma_h")},
        **_PAPER_BASELINES,
    },
    "loo": {
        # the estimators' default: kernel ridge selected by exact leave-one-out; the RNTK
        # with RNTKClassifierCV's default grid, the other kernels with the paper's grids
        "cv": None,
        "alpha": DEFAULT_ALPHA,
        "rntk": None,
        # what the default grid is made of: a changed default invalidates cached results
        "rntk_default": [DEFAULT_GRID, MEAN_READOUTS, MEAN_BUDGET, MEAN_POOL, MEAN_BAND,
                         LEVEL_POOL, DEFAULT_N_AVERAGE, DEFAULT_PRIOR],
        **_PAPER_BASELINES,
    },
    "fast": {
        "cv": 5,
        "C": [0.1, 1.0, 10.0, 100.0],
        "rntk": {"sigma_w": [1.36, math.sqrt(2), 1.46], "sigma_b": [0.0, 0.1, 0.5, 1.0],
                 "sigma_h": [0.0]},
        "ntk": {"sigma_w": [math.sqrt(2)], "sigma_b": [0.0, 0.1, 1.0], "n_layers": [1, 2, 3]},
        "rbf": {"gamma": [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]},
        "poly": {"degree": [1, 2, 3], "coef0": [0.5, 1.0]},
        "rnn_cv": 3,
        "rnn": {"n_layers": [1], "hidden_size": [64], "lr": [1e-3]},
        "rnn_epochs": 30,
    },
}


def _grid(spec):
    """Cartesian product in the order the keys are given (last key varies fastest)."""
    keys = list(spec)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(spec[k] for k in keys))]


def _grid_hash(protocol, method):
    p = PROTOCOLS[protocol]
    spec = {"cv": p["cv"], "grid": p.get(method),
            "default": p.get("rntk_default") if method == "rntk" else None,
            **{k: p[k] for k in ("C", "alpha") if k in p},
            "rnn": [p["rnn_cv"], p["rnn_epochs"]] if method in RNN_METHODS else None}
    return hashlib.sha1(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:12]


# --------------------------------------------------------------------------- progress
class _Progress:
    """One status line on stderr: task k/N, settings done, elapsed and ETA."""

    def __init__(self, n_tasks, stream=None, quiet=False):
        self.n_tasks = n_tasks
        self.stream = sys.stderr if stream is None else stream
        self.quiet = quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.task = 0
        self.label = ""
        self._last = 0.0
        self.start = time.perf_counter()

    def begin(self, label):
        self.task += 1
        self.label = label
        self.t0 = time.perf_counter()
        if not self.quiet:
            self.stream.write(f"[{self.task}/{self.n_tasks}] {self.label} ...\n")
            self.stream.flush()

    def update(self, done, total, force=False):
        now = time.perf_counter()
        if self.quiet or (not force and now - self._last < (0.5 if self.tty else 10.0)):
            return
        self._last = now
        el = now - self.t0
        eta = f"{el / done * (total - done):7.1f}s" if done else "      ?"
        bar = "#" * int(20 * done / max(total, 1))
        msg = (f"[{self.task}/{self.n_tasks}] {self.label:<34} |{bar:<20}| {done}/{total} "
               f"settings  {el:7.1f}s  ETA {eta}")
        if self.tty:
            self.stream.write("\r" + msg[:150].ljust(150))
        else:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def end(self, text):
        if self.quiet:
            return
        if self.tty:
            self.stream.write("\r" + " " * 150 + "\r")
        self.stream.write(f"[{self.task}/{self.n_tasks}] {self.label}: {text}\n")
        self.stream.flush()

    def notice(self, text):
        if not self.quiet:
            self._say(f"notice: {text}")

    def warn(self, text):
        """Report a problem the user must see (written even when quiet)."""
        self._say(f"warning: {text}")

    def _say(self, line):
        if self.tty:
            self.stream.write("\r" + " " * 150 + "\r")
        self.stream.write(line + "\n")
        self.stream.flush()


# --------------------------------------------------------------------------- kernel CV
def _gak_spec():
    """Tslearn's global alignment kernel, as a registry entry (a peer: needs tslearn)."""
    from tslearn.metrics import cdist_gak

    def gram(A, B=None, *, n_jobs=None, sigma=1.0):
        return cdist_gak(A, B, sigma=sigma, n_jobs=n_jobs)

    return KernelSpec("gak", gram, "tslearn", "tslearn global alignment kernel")


def _kernel_inputs(spec, data):
    """Training and test inputs in the layout the kernel reads."""
    if spec.input == "sequences":
        return data.train_n, data.test_n
    if spec.input == "vectors":
        return data.flat_train, data.flat_test
    from tslearn.utils import to_time_series_dataset

    return to_time_series_dataset(data.train_n), to_time_series_dataset(data.test_n)


def run_precomputed_kernel(spec, data, settings, Cs, splits, n_jobs=1, progress=None,
                           alphas=None):
    """C-SVM (or kernel ridge) on a registry kernel, selected by the estimators' engine.

    Every (kernel setting, C) candidate is scored on the folds with one training Gram
    per setting (:func:`rntk._model_selection.search_grams`, as in
    :class:`rntk.RNTKClassifierCV`); the best is refit and tested. With ``splits=None``
    the classifier is kernel ridge on the relative ridges ``alphas``, scored by its
    exact leave-one-out (``RNTKClassifierCV``'s default protocol).

    Parameters
    ----------
    spec : KernelSpec
        The kernel (an entry of the registry).
    data : _Data
        The dataset.
    settings : list of dict
        Kernel parameters of each setting, in grid order.
    Cs : list of float
        SVC costs (ignored with ``splits=None``).
    splits : list of (train, test) index arrays, or None
        The folds; ``None``: exact leave-one-out of kernel ridge.
    n_jobs : int, default=1
        Threads of the Grams and of the fold fits.
    progress : _Progress, optional
        Progress line.
    alphas : list of float, optional
        Relative ridges, with ``splits=None``.

    Returns
    -------
    result : dict
        Accuracy, CV score, selected parameters, times and unconverged fits.
    """
    A_train, A_test = _kernel_inputs(spec, data)
    inner, values = ("alpha", alphas) if splits is None else ("C", Cs)
    candidates = [{**p, inner: v} for p in settings for v in values]
    groups = [list(range(k * len(values), (k + 1) * len(values)))
              for k in range(len(settings))]
    scorer = SVCFoldScorer()
    report = None if progress is None else (lambda done, total, best: progress.update(done,
                                                                                     total))
    t = time.perf_counter()
    if splits is None:
        n = len(data.y_train)
        outcome = search_grams(spec.iter_grams(A_train, settings, n_jobs=n_jobs), groups,
                               candidates, data.y_train, [(np.arange(n), np.arange(n))],
                               score_gram=RidgeLOOScorer(classification=True),
                               progress=report)
    else:
        outcome = search_grams(spec.iter_grams(A_train, settings, n_jobs=n_jobs), groups,
                               candidates, data.y_train, splits, scorer, n_jobs=n_jobs,
                               progress=report)
    search_time = time.perf_counter() - t
    gram_time = float(sum(outcome.kernel_time[g[0]] for g in groups))
    if outcome.best_index < 0:
        raise ValueError(f"every {spec.name} setting gave a non-finite Gram on {data.name}")
    best = candidates[outcome.best_index]
    kernel_params = {k: v for k, v in best.items() if k != inner}
    t = time.perf_counter()
    if splits is None:
        svc = KernelRidgeClassifier(alpha=best["alpha"])
    else:
        svc = SVC(kernel="precomputed", C=best["C"], max_iter=SVM_MAX_ITER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(outcome.best_gram, data.y_train)
    fit_time = search_time - gram_time + time.perf_counter() - t
    t = time.perf_counter()
    K_test = spec.gram(A_test, A_train, n_jobs=n_jobs, **kernel_params)
    t_gram_test = time.perf_counter() - t
    pred = svc.predict(K_test)
    return {
        "accuracy": float(np.mean(pred == data.y_test)),
        "cv_score": float(np.mean(outcome.scores[outcome.best_index])),
        "params": best,
        "n_settings": len(candidates),
        "gram_time": gram_time + t_gram_test,
        "fit_time": fit_time,
        "predict_time": time.perf_counter() - t,
        "engine": "kernel ridge, exact LOO" if splits is None else "precomputed-kernel CV",
        "unconverged_fits": int(scorer.unconverged),
    }


def _run_kernel(method, data, protocol, splits, n_jobs, progress):
    P = PROTOCOLS[protocol]
    if method == "rntk":
        return _run_rntk_estimator(data, protocol, splits, n_jobs, progress)
    if method == "gak":
        from tslearn.metrics import sigma_gak

        spec = _gak_spec()
        settings = [{"sigma": float(sigma_gak(_kernel_inputs(spec, data)[0]))}]
    else:
        spec = KERNELS[method]
        settings = _grid(P[method])
    return run_precomputed_kernel(spec, data, settings, P.get("C"), splits, n_jobs, progress,
                                  alphas=P.get("alpha"))


def _run_rntk_estimator(data, protocol, splits, n_jobs, progress):
    """RNTK through ``RNTKClassifierCV`` (one Gram per kernel setting)."""
    P = PROTOCOLS[protocol]
    if splits is None:  # the estimator's default protocol and grid
        est = RNTKClassifierCV(protocol="loo", normalize=True, n_jobs=n_jobs,
                               verbose=0 if progress.quiet else 1)
        inner = "alpha"
    else:
        grid = {**{k: list(v) for k, v in P["rntk"].items()}, "C": list(P["C"])}
        est = RNTKClassifierCV(param_grid=grid, protocol="paper", cv=splits, normalize=True,
                               n_jobs=n_jobs, verbose=0 if progress.quiet else 1)
        inner = "C"
    t = time.perf_counter()
    est.fit(data.train, data.y_train)
    fit_wall = time.perf_counter() - t
    res = est.cv_results_
    # the Gram of a kernel setting is shared by its candidates: count it once
    seen, gram_time = set(), 0.0
    for params, kt in zip(res["params"], res["kernel_time"]):
        key = tuple(sorted((k, v) for k, v in params.items() if k != inner))
        if key not in seen:
            seen.add(key)
            gram_time += float(kt)
    n_settings = len(seen)
    n_c = len(res["params"]) // max(n_settings, 1)
    t = time.perf_counter()
    pred = est.predict(data.test)
    predict_time = time.perf_counter() - t
    best = {k: (float(v) if isinstance(v, (int, float, np.floating)) else v)
            for k, v in est.best_params_.items()}
    return {
        "accuracy": float(np.mean(pred == data.y_test)),
        "cv_score": float(est.best_score_),
        "params": best,
        "n_settings": n_settings * n_c,
        "gram_time": gram_time,
        "fit_time": fit_wall - (gram_time if np.isfinite(gram_time) else 0.0),
        "predict_time": predict_time,
        "engine": "RNTKClassifierCV",
    }


# --------------------------------------------------------------------------- RNNs, peers
def _missing(method):
    """Why a method cannot run here (None when it can)."""
    if method in RNN_METHODS:
        if importlib.util.find_spec("torch") is None:
            return "torch is not installed (pip install rntk[torch])"
        try:
            from ..nn import RNNClassifier  # noqa: F401
        except ImportError as exc:
            return f"rntk.nn.RNNClassifier is not available ({exc})"
        return None
    pkg = {"minirocket": "aeon", "dtw1nn": "aeon", "gak": "tslearn"}.get(method)
    if pkg is not None and importlib.util.find_spec(pkg) is None:
        return f"{pkg} is not installed (pip install rntk[bench])"
    return None


def _run_rnn(method, data, protocol, seed, progress):
    from sklearn.model_selection import GridSearchCV

    from ..nn import RNNClassifier

    P = PROTOCOLS[protocol]
    grid = {k: list(v) for k, v in P["rnn"].items()}
    base = RNNClassifier(cell=_RNN_CELL[method], max_epochs=P["rnn_epochs"], patience=5,
                         random_state=seed)
    splits = _folds(data.y_train, P["rnn_cv"], seed)
    n = len(_grid(P["rnn"]))
    t = time.perf_counter()
    search = GridSearchCV(base, grid, cv=splits, refit=True, error_score="raise")
    search.fit(data.X_train_raw, data.y_train)
    fit_time = time.perf_counter() - t
    t = time.perf_counter()
    pred = search.predict(data.X_test_raw)
    return {"accuracy": float(np.mean(pred == data.y_test)),
            "cv_score": float(search.best_score_), "params": search.best_params_,
            "n_settings": n, "gram_time": 0.0, "fit_time": fit_time,
            "predict_time": time.perf_counter() - t, "engine": "rntk.nn.RNNClassifier"}


def _aeon_layout(seqs, pad_to=None):
    """Convert to aeon's channel-major layout: (n, m, T) array or list of (m, T_i) arrays."""
    if pad_to is not None:
        out = np.zeros((len(seqs), seqs[0].shape[1], pad_to))
        for i, s in enumerate(seqs):
            out[i, :, : len(s)] = s.T
        return out
    if len({len(s) for s in seqs}) == 1:
        return np.stack([s.T for s in seqs])
    return [np.ascontiguousarray(s.T) for s in seqs]


def _run_peer(method, data, protocol, splits, n_jobs, seed, progress):
    if method == "gak":
        res = _run_kernel("gak", data, protocol, splits, n_jobs, progress)
        res["engine"] = "tslearn cdist_gak + SVC"
        return res
    if method == "minirocket":
        from aeon.classification.convolution_based import MiniRocketClassifier

        clf = MiniRocketClassifier(random_state=seed, n_jobs=n_jobs or 1)
        pad = data.t_max if data.variable else None
        Xtr, Xte = _aeon_layout(data.train, pad), _aeon_layout(data.test, pad)
    else:
        from aeon.classification.distance_based import KNeighborsTimeSeriesClassifier

        clf = KNeighborsTimeSeriesClassifier(n_neighbors=1, distance="dtw", n_jobs=n_jobs or 1)
        Xtr, Xte = _aeon_layout(data.train), _aeon_layout(data.test)
    t = time.perf_counter()
    clf.fit(Xtr, data.y_train)
    fit_time = time.perf_counter() - t
    t = time.perf_counter()
    pred = clf.predict(Xte)
    return {"accuracy": float(np.mean(pred == data.y_test)), "cv_score": float("nan"),
            "params": {}, "n_settings": 1, "gram_time": 0.0, "fit_time": fit_time,
            "predict_time": time.perf_counter() - t, "engine": f"aeon {type(clf).__name__}"}


# --------------------------------------------------------------------------- cache
_NUMBER = (int, float)
#: the keys a cached result needs, with their types (bool is not a number here)
_CACHE_KEYS = {
    "dataset": str, "method": str, "protocol": str, "engine": str, "params": dict,
    "accuracy": _NUMBER, "cv_score": _NUMBER, "gram_time": _NUMBER, "fit_time": _NUMBER,
    "predict_time": _NUMBER, "total_time": _NUMBER, "paper": (*_NUMBER, type(None)),
    "n_settings": int, "n_train": int, "n_test": int, "min_length": int, "max_length": int,
    "n_channels": int, "n_classes": int, "padded": bool,
}


def _cache_path(cache, name, method, protocol):
    return cache / f"{name}__{method}__{protocol}.json"


def _read_cache(path, name, method, protocol):
    """Read a cached result: ``(record, None)``, or ``(None, why it is unusable)``."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return None, f"is not valid JSON ({exc})"
    if not isinstance(record, dict):
        return None, f"holds a JSON {type(record).__name__}, not an object"
    missing = [k for k in _CACHE_KEYS if k not in record]
    if missing:
        return None, f"lacks the key(s) {', '.join(missing)}"
    bad = [k for k, t in _CACHE_KEYS.items() if not isinstance(record[k], t)
           or (t is not bool and isinstance(record[k], bool))]
    if bad:
        return None, f"has a wrong type for {', '.join(bad)}"
    if not 0.0 <= record["accuracy"] <= 1.0:
        return None, f"has an accuracy out of [0, 1] ({record['accuracy']!r})"
    found = (record["dataset"], record["method"], record["protocol"])
    if found != (name, method, protocol):
        return None, f"holds the result of {'/'.join(map(str, found))}"
    return record, None


def _stale(record, grid_hash, seed, fingerprint):
    """Why a (valid) cached result does not apply to this run, or None when it does."""
    if record.get("grid_hash") != grid_hash:
        return "computed with other grids"
    if record.get("seed") != seed:
        return f"computed with seed {record.get('seed')!r}"
    if "data_sha256" not in record:
        return "it has no data fingerprint (written by an older rntk)"
    if record["data_sha256"] != fingerprint:
        return "the dataset's files changed since"
    return None


def _write_cache(path, record):
    _atomic_write_text(path, json.dumps(record, indent=1, default=_json_default))


def _reported_results(cache, protocol, seed, data_home, fingerprints, done, skip):
    """Every valid, current cached result of ``protocol``, beside this invocation's.

    Parameters
    ----------
    cache : Path
        The cache folder.
    protocol : str
        The protocol reported; files of other protocols are not read.
    seed : int
        This invocation's seed (a result computed with another one is left out).
    data_home : path-like or None
        Where the datasets are looked up, to check each result's data fingerprint.
    fingerprints : dict
        ``{dataset: SHA-256 or None}`` already computed (None: unreadable); filled in.
    done : dict
        ``{(dataset, method): row}`` of this invocation; kept as they are.
    skip : set
        ``(dataset, method)`` pairs this invocation handled without a result (failed,
        or left out with a warning): not read again.

    Returns
    -------
    rows : list of dict
        Datasets in name order, methods in :data:`METHODS` order.
    left_out : list of dict
        ``{"file", "why"}`` of the cached results of ``protocol`` not reported.
    """
    found, left_out = dict(done), []
    for path in sorted(cache.glob(f"*__*__{protocol}.json")):
        name, method, _ = path.stem.rsplit("__", 2)
        if (name, method) in found or (name, method) in skip:
            continue
        if method not in METHODS:
            left_out.append({"file": path.name, "why": f"unknown method {method!r}"})
            continue
        record, problem = _read_cache(path, name, method, protocol)
        if problem is None:
            if name not in fingerprints:
                try:
                    fingerprints[name] = _fingerprint(_dataset_files(name, data_home))
                except (OSError, ValueError):
                    fingerprints[name] = None
            if fingerprints[name] is None:
                problem = "its dataset is not found or not readable in the data folder in use"
            else:
                problem = _stale(record, _grid_hash(protocol, method), seed,
                                 fingerprints[name])
        if problem is None:
            found[(name, method)] = record
        else:
            left_out.append({"file": path.name, "why": problem})
    order = {m: i for i, m in enumerate(METHODS)}
    keys = sorted(found, key=lambda k: (k[0].lower(), k[0], order.get(k[1], len(order))))
    return [found[k] for k in keys], left_out


# --------------------------------------------------------------------------- driver
def _padded(method, data):
    return bool(data.variable and method in ("ntk", "rbf", "poly", "minirocket"))


def _resolve_datasets(spec, data_home, paper, stream=None):
    """Return the dataset names of ``--datasets``, found without reading any dataset.

    Raises ValueError naming the problem (unknown name, a missing TRAIN or TEST file, no
    name at all); with ``all`` / ``table2`` the incomplete folders are skipped with a
    warning on ``stream`` (default stderr).
    """
    available, incomplete = _catalog(data_home)
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
    recomputed.

    The summaries and plots written into ``out`` (``summary.md``, ``summary.csv``,
    ``summary.json``, the PNGs) cover every such valid, current result cached for
    ``protocol`` -- those of earlier invocations with other datasets or methods too, not
    those of other protocols; ``results.csv`` and the returned rows are this
    invocation's.
    """
    rows, failed = _run(datasets, methods, protocol=protocol, data_home=data_home, out=out,
                        n_jobs=n_jobs, seed=seed, paper=paper, force=force, quiet=quiet,
                        stream=stream, report_only=report_only)
    if failed:
        warnings.warn(f"{len(failed)} failure(s): " + "; ".join(
            f"{_failure_label(f)}: {f['error']}" for f in failed), RuntimeWarning, stacklevel=2)
    return rows


def _run(datasets, methods, protocol, data_home, out, n_jobs, seed, paper, force, quiet,
         stream, report_only):
    """:func:`run_benchmark`, returning ``(rows, failed)``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {sorted(PROTOCOLS)}; got {protocol!r}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose among {', '.join(METHODS)}")
    paper = paper or {}
    out = Path(out)
    cache = out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    progress = _Progress(len(datasets) * len(methods), stream=stream, quiet=quiet)
    runnable = []
    for m in methods:
        why = None if report_only else _missing(m)
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
            files = _dataset_files(name, data_home)
            fingerprint = _fingerprint(files)
        except (OSError, ValueError) as exc:
            fingerprints[name] = None
            fail(name, None, _describe_error(exc), skipped=len(runnable))
            continue
        fingerprints[name] = fingerprint
        source = "bundled" if "bundled" in files else str(files["train"].parent)
        data = None
        for i, method in enumerate(runnable):
            path = _cache_path(cache, name, method, protocol)
            key = _grid_hash(protocol, method)
            if not force and (path.exists() or path.is_symlink()):
                cached, problem = _read_cache(path, name, method, protocol)
                if problem:
                    progress.warn(f"ignoring the cache file {path}: it {problem}"
                                  + ("" if report_only else "; recomputing it"))
                else:
                    why = _stale(cached, key, seed, fingerprint)
                    if why is None:
                        progress.task += 1
                        rows.append(cached)
                        continue
                    progress.notice(f"cached result {path.name} is stale ({why})"
                                    + (": skipped" if report_only else ": recomputing it"))
            elif report_only:
                progress.notice(f"no cached result for {name} / {method}")
            if report_only:
                handled.add((name, method))  # warned about above
                continue
            if data is None:
                try:
                    data = _Data(name, data_home)
                    cv = PROTOCOLS[protocol]["cv"]
                    splits = None if cv is None else _folds(data.y_train, cv, seed)
                except Exception as exc:  # any unreadable file: report it, go on
                    fail(name, None, f"cannot be loaded: {_describe_error(exc)}",
                         skipped=len(runnable) - i)
                    break
            progress.begin(f"{name} | {method}")
            try:
                res = _run_one(method, data, protocol, splits, n_jobs, seed, progress)
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
                _write_cache(path, res)
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
    reported, left_out = _reported_results(
        cache, protocol, seed, data_home, fingerprints,
        {(r["dataset"], r["method"]): r for r in rows}, handled)
    if left_out:
        progress.notice(f"{len(left_out)} cached result(s) of the {protocol} protocol left "
                        "out of the reports (stale or unreadable; listed in summary.md)")
    write_reports(reported, out, paper, wall_time=wall_time, quiet=quiet, stream=stream,
                  failed=failed, protocol=protocol, run_rows=rows, n_computed=n_computed,
                  left_out=left_out, from_cache=True)
    return rows, failed


def _describe_error(exc):
    """``exc`` as one line, its type named unless it is a plain ValueError / OSError."""
    text = str(exc) or type(exc).__name__
    return text if type(exc) in (ValueError, OSError) else f"{type(exc).__name__}: {text}"


def _run_one(method, data, protocol, splits, n_jobs, seed, progress):
    """Run one method on one dataset; the result dict, timed."""
    t = time.perf_counter()
    if method in KERNEL_METHODS:
        res = _run_kernel(method, data, protocol, splits, n_jobs, progress)
    elif method in RNN_METHODS:
        res = _run_rnn(method, data, protocol, seed, progress)
    else:
        res = _run_peer(method, data, protocol, splits, n_jobs, seed, progress)
    res["total_time"] = time.perf_counter() - t
    return res


