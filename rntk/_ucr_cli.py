"""``rntk-ucr``: the RNTK paper's UCR classification benchmark, beside the usual peers.

Runs the protocol of the RNTK paper (Alemohammad et al., ICLR 2021, Section 4 and
Appendix A.1) on any datasets in the UCR 2018 layout and writes, per dataset and
method, the test accuracy, the selected hyperparameters and the Gram / fit / predict
times; then a summary with the paper's metrics (mean accuracy, P90, P95, PMA,
Friedman rank) and the paper's Table 2 value beside ours (Markdown, CSV, JSON, PNG).

Protocols
---------
``paper``
    Unit-norm series, C-SVM on a precomputed kernel, the Appendix A.1 grids
    (RNTK: 900 settings; NTK: 540; RBF: 18; polynomial: 30; each x 5 values of C),
    10-fold stratified cross-validation on the training set, refit on all of it,
    test accuracy. Finite RNNs: 5-fold CV over the Appendix A.1 grid (32 settings).
``fast``
    The same pipeline with small grids (RNTK 12 settings, NTK 18, RBF 6, polynomial
    6; C in {0.1, 1, 10, 100}) and 5-fold CV; RNNs with one setting and 30 epochs.
    Seconds per small dataset: a smoke test, not a reproduction.

Kernel methods compute one Gram per kernel setting on the training set and score
every fold and every C on slices of it. The RNTK runs natively on variable-length
data; the other kernels (and MiniRocket) get each series zero-padded at its end to the
longest one, which the tables mark with ``*``.

Peers (when installed, ``pip install rntk[bench]``): aeon's MiniRocket and 1-NN DTW,
tslearn's GAK (SVC on the precomputed GAK Gram, same CV as the kernels). Finite RNNs
(``rnn``: NTK-initialised ReLU RNN, ``irnn``: identity-initialised, ``gru``) come from
:class:`rntk.nn.RNNClassifier` (needs torch). Methods whose package is missing are
skipped with a notice. Kernel methods see unit-norm series (the paper's
pre-processing); RNNs and peers see the series as stored.

Results are cached per (dataset, method, protocol) under ``OUT/cache/`` so an
interrupted run resumes where it stopped.
"""

import argparse
import csv
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

from ._inputs import as_sequences
from ._metrics import summary_metrics
from ._mlp_ntk import _mlp_ntk_depths, mlp_ntk_kernel
from ._paper import PAPER_C, PAPER_GRID
from ._rntk import rntk_kernel
from .datasets import list_ucr, load_ucr

__all__ = ["main", "run_benchmark", "PROTOCOLS", "METHODS"]

KERNEL_METHODS = ("rntk", "ntk", "rbf", "poly")
RNN_METHODS = ("rnn", "irnn", "gru")
PEER_METHODS = ("minirocket", "dtw1nn", "gak")
METHODS = KERNEL_METHODS + RNN_METHODS + PEER_METHODS
PAPER_COLUMNS = {"rntk": "RNTK", "ntk": "NTK", "rbf": "RBF", "poly": "POLY",
                 "rnn": "GaussianRNN", "irnn": "IdentityRNN", "gru": "GRU"}
_RNN_CELL = {"rnn": "ntk", "irnn": "irnn", "gru": "gru"}

PROTOCOLS = {
    "paper": {
        "cv": 10,
        "C": PAPER_C,
        "rntk": {k: PAPER_GRID[k] for k in ("sigma_w", "sigma_b", "sigma_h")},
        "ntk": {"n_layers": list(range(1, 11)),
                "sigma_w": [0.5, 1.0, math.sqrt(2), 2.0, 2.5, 3.0],
                "sigma_b": [0.0, 0.01, 0.1, 0.2, 0.5, 0.8, 1.0, 2.0, 5.0]},
        "rbf": {"gamma": [0.01, 0.05, 0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 1.0, 2.0, 3.0, 4.0,
                          5.0, 10.0, 20.0, 30.0, 40.0, 100.0]},
        "poly": {"degree": [1, 2, 3, 4, 5], "coef0": [0.0, 0.1, 0.2, 0.5, 1.0, 2.0]},
        "rnn_cv": 5,
        "rnn": {"n_layers": [1, 2], "hidden_size": [50, 100, 200, 500],
                "lr": [1e-2, 1e-3, 1e-4, 1e-5]},
        "rnn_epochs": 200,
    },
    "fast": {
        "cv": 5,
        "C": [0.1, 1.0, 10.0, 100.0],
        "rntk": {"sigma_w": [1.36, math.sqrt(2), 1.46], "sigma_b": [0.0, 0.1, 0.5, 1.0],
                 "sigma_h": [0.0]},
        "ntk": {"n_layers": [1, 2, 3], "sigma_w": [math.sqrt(2)], "sigma_b": [0.0, 0.1, 1.0]},
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
    spec = {"cv": p["cv"], "C": p["C"], "grid": p.get(method),
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
            if self.tty:
                self.stream.write("\r" + " " * 150 + "\r")
            self.stream.write(f"notice: {text}\n")
            self.stream.flush()


# --------------------------------------------------------------------------- data
def _unit_norm(seqs):
    out = []
    for s in seqs:
        n = np.linalg.norm(s)
        out.append(s / n if n > 0 else s)
    return out


def _flatten(seqs, length):
    m = seqs[0].shape[1]
    A = np.zeros((len(seqs), length * m))
    for i, s in enumerate(seqs):
        A[i, : s.size] = s.ravel()
    return A


class _Data:
    """One dataset: raw and unit-norm series, flattened zero-padded versions."""

    def __init__(self, name, data_home):
        X_train, y_train, X_test, y_test = load_ucr(name, data_home=data_home)
        self.name = name
        self.X_train_raw, self.X_test_raw = X_train, X_test
        self.y_train, self.y_test = np.asarray(y_train), np.asarray(y_test)
        self.train = as_sequences(X_train, "X_train")
        self.test = as_sequences(X_test, "X_test")
        lengths = [len(s) for s in self.train + self.test]
        self.t_max = max(lengths)
        self.variable = min(lengths) != self.t_max
        self.n_channels = self.train[0].shape[1]
        self.train_n = _unit_norm(self.train)
        self.test_n = _unit_norm(self.test)
        # padding then unit norm = unit norm then padding (zeros do not change the norm)
        self.flat_train = _flatten(self.train_n, self.t_max)
        self.flat_test = _flatten(self.test_n, self.t_max)

    def info(self):
        lens = [len(s) for s in self.train + self.test]
        return {"n_train": len(self.train), "n_test": len(self.test),
                "min_length": int(min(lens)), "max_length": int(max(lens)),
                "n_channels": int(self.n_channels),
                "n_classes": int(len(np.unique(self.y_train))),
                "variable_length": bool(self.variable)}


def _folds(y, n_splits, seed):
    from sklearn.model_selection import KFold, StratifiedKFold

    n_splits = max(2, min(n_splits, len(y)))
    _, counts = np.unique(y, return_counts=True)
    if counts.max() >= n_splits:
        cv = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    else:
        cv = KFold(n_splits=n_splits, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(cv.split(np.zeros((len(y), 1)), y))


# --------------------------------------------------------------------------- kernel CV
# libsvm's own command-line tools stop after 10^7 iterations; scikit-learn's default is no
# limit, and a nearly constant Gram with a large offset (deep NTK, large sigma_w and sigma_b)
# can make the solver cycle for ever. A fit that reaches the cap is counted as unconverged.
_MAX_ITER = 1_000_000


def _svc_accuracy(K_tr, y_tr, K_te, y_te, C):
    """Accuracy of ``SVC(kernel="precomputed", C)`` on one fold, and whether it hit the cap."""
    from ._estimators import _FastSVC

    acc, converged = _FastSVC.fold(K_tr, y_tr, K_te, y_te, C, max_iter=_MAX_ITER)
    return acc, not converged


def _select_precomputed(grams, n_settings, y, Cs, splits, progress):
    """Cross-validate an SVC over (kernel setting, C), one training Gram per setting.

    ``grams`` yields ``(params, K_train)``. Ties are broken by grid order (the first
    best wins, as in GridSearchCV). Returns the best params, C, CV score, the best
    Gram, the Gram time, the SVM time and the number of fits that hit the iteration cap.
    """
    best = (-np.inf, None, None, None)
    gram_time = svm_time = 0.0
    unconverged = 0
    t = time.perf_counter()
    for done, (params, K) in enumerate(grams, 1):
        gram_time += time.perf_counter() - t
        t = time.perf_counter()
        for C in Cs:
            accs = []
            for tr, va in splits:
                acc, bad = _svc_accuracy(K[np.ix_(tr, tr)], y[tr], K[np.ix_(va, tr)], y[va], C)
                accs.append(acc)
                unconverged += bad
            mean = float(np.mean(accs))
            if mean > best[0]:
                best = (mean, params, C, K)
        svm_time += time.perf_counter() - t
        progress.update(done, n_settings)
        t = time.perf_counter()
    mean, params, C, K = best
    return params, C, mean, K, gram_time, svm_time, unconverged


def _kernel_grams(method, data, grid, n_jobs):
    """Return the settings, a generator of ``(params, K_train)`` and the test-Gram function."""
    from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

    if method == "rntk":
        settings = _grid(grid)

        def gen():
            for p in settings:
                yield p, rntk_kernel(data.train_n, n_jobs=n_jobs, **p)

        def test(p):
            return rntk_kernel(data.test_n, data.train_n, n_jobs=n_jobs, **p)
    elif method == "ntk":
        depths = list(grid["n_layers"])
        outer = _grid({k: v for k, v in grid.items() if k != "n_layers"})
        settings = [{**o, "n_layers": L} for o in outer for L in depths]
        A = data.flat_train

        def gen():
            for o in outer:
                Ks = _mlp_ntk_depths(A, A, max(depths), o["sigma_w"], o["sigma_b"], 1.0,
                                     symmetric=True)
                for L in depths:
                    yield {**o, "n_layers": L}, Ks[L - 1]

        def test(p):
            return mlp_ntk_kernel(data.flat_test, data.flat_train, **p)
    elif method == "rbf":
        settings = _grid(grid)

        def gen():
            for p in settings:
                yield p, rbf_kernel(data.flat_train, gamma=p["gamma"])

        def test(p):
            return rbf_kernel(data.flat_test, data.flat_train, gamma=p["gamma"])
    elif method == "poly":
        settings = _grid(grid)

        def gen():
            for p in settings:
                yield p, polynomial_kernel(data.flat_train, gamma=1.0, **p)

        def test(p):
            return polynomial_kernel(data.flat_test, data.flat_train, gamma=1.0, **p)
    elif method == "gak":
        from tslearn.metrics import cdist_gak, sigma_gak
        from tslearn.utils import to_time_series_dataset

        tr = to_time_series_dataset(data.train_n)
        te = to_time_series_dataset(data.test_n)
        settings = [{"sigma": float(sigma_gak(tr))}]

        def gen():
            yield settings[0], cdist_gak(tr, sigma=settings[0]["sigma"], n_jobs=n_jobs)

        def test(p):
            return cdist_gak(te, tr, sigma=p["sigma"], n_jobs=n_jobs)
    else:  # pragma: no cover
        raise ValueError(method)
    return settings, gen(), test


def _run_kernel(method, data, protocol, splits, n_jobs, progress):
    from sklearn.svm import SVC

    P = PROTOCOLS[protocol]
    if method == "rntk":
        est_cls = _rntk_cv_class()
        if est_cls is not None:
            return _run_rntk_estimator(est_cls, data, protocol, splits, n_jobs, progress)
    grid = P.get(method)
    settings, grams, test_gram = _kernel_grams(method, data, grid, n_jobs)
    params, C, cv_score, K, gram_time, svm_time, unconverged = _select_precomputed(
        grams, len(settings), data.y_train, P["C"], splits, progress)
    t = time.perf_counter()
    svc = SVC(kernel="precomputed", C=C, max_iter=_MAX_ITER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(K, data.y_train)
    fit_time = svm_time + time.perf_counter() - t
    t = time.perf_counter()
    K_test = test_gram(params)
    t_gram_test = time.perf_counter() - t
    pred = svc.predict(K_test)
    predict_time = time.perf_counter() - t
    return {
        "accuracy": float(np.mean(pred == data.y_test)),
        "cv_score": cv_score,
        "params": {**params, "C": C},
        "n_settings": len(settings) * len(P["C"]),
        "gram_time": gram_time + t_gram_test,
        "fit_time": fit_time,
        "predict_time": predict_time,
        "engine": "precomputed-kernel CV",
        "unconverged_fits": int(unconverged),
    }


def _rntk_cv_class():
    try:
        from ._estimators import RNTKClassifierCV
    except ImportError:
        return None
    return RNTKClassifierCV


def _run_rntk_estimator(est_cls, data, protocol, splits, n_jobs, progress):
    """RNTK through ``RNTKClassifierCV`` (one Gram per kernel setting)."""
    P = PROTOCOLS[protocol]
    grid = {**{k: list(v) for k, v in P["rntk"].items()}, "C": list(P["C"])}
    n_settings = len(_grid(P["rntk"]))
    est = est_cls(param_grid=grid, cv=splits, normalize=True, n_jobs=n_jobs,
                  verbose=0 if progress.quiet else 1)
    t = time.perf_counter()
    est.fit(data.train, data.y_train)
    fit_wall = time.perf_counter() - t
    res = est.cv_results_
    n_c = len(P["C"])
    first_c = np.array([c["C"] == P["C"][0] for c in res["params"]])
    gram_time = float(np.sum(np.asarray(res["kernel_time"])[first_c]))
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
            from .nn import RNNClassifier  # noqa: F401
        except ImportError as exc:
            return f"rntk.nn.RNNClassifier is not available ({exc})"
        return None
    pkg = {"minirocket": "aeon", "dtw1nn": "aeon", "gak": "tslearn"}.get(method)
    if pkg is not None and importlib.util.find_spec(pkg) is None:
        return f"{pkg} is not installed (pip install rntk[bench])"
    return None


def _run_rnn(method, data, protocol, seed, progress):
    from sklearn.model_selection import GridSearchCV

    from .nn import RNNClassifier

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


# --------------------------------------------------------------------------- driver
def _padded(method, data):
    return bool(data.variable and method in ("ntk", "rbf", "poly", "minirocket"))


def _paper_table(path):
    """{dataset: {paper column: accuracy %}} from a CSV like the paper's Table 2."""
    if path is None:
        return {}
    table = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            name = row.pop("dataset")
            table[name] = {k: float(v) for k, v in row.items() if v not in ("", None)}
    return table


def _default_paper_table():
    here = Path(__file__).resolve().parent.parent / "benchmarks" / "rntk_paper_table2.csv"
    return here if here.is_file() else None


def _paper_fallback():
    try:
        from ._paper import PAPER_ACCURACY
    except ImportError:
        return {}
    return {k: {"RNTK": v} for k, v in PAPER_ACCURACY.items()}


def _resolve_datasets(spec, data_home, paper):
    rows = list_ucr(data_home)
    available = [r["name"] for r in rows]
    if spec in ("all", None):
        return available
    if spec == "table2":
        chosen = [n for n in available if n in paper]
        if not chosen:
            raise SystemExit("error: none of the available datasets is in the paper's Table 2")
        return chosen
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise SystemExit(f"error: unknown dataset(s) {', '.join(unknown)}; available: "
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
    protocol : {"paper", "fast"}, default="paper"
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
    """
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
    rows = []
    for name in datasets:
        data = None
        for method in runnable:
            path = cache / f"{name}__{method}__{protocol}.json"
            key = _grid_hash(protocol, method)
            if path.is_file() and not force:
                cached = json.loads(path.read_text())
                if cached.get("grid_hash") == key and cached.get("seed") == seed:
                    progress.task += 1
                    rows.append(cached)
                    continue
            if report_only:
                progress.notice(f"no cached result for {name} / {method}")
                continue
            if data is None:
                data = _Data(name, data_home)
                splits = _folds(data.y_train, PROTOCOLS[protocol]["cv"], seed)
            progress.begin(f"{name} | {method}")
            t = time.perf_counter()
            if method in KERNEL_METHODS:
                res = _run_kernel(method, data, protocol, splits, n_jobs, progress)
            elif method in RNN_METHODS:
                res = _run_rnn(method, data, protocol, seed, progress)
            else:
                res = _run_peer(method, data, protocol, splits, n_jobs, seed, progress)
            res["total_time"] = time.perf_counter() - t
            col = PAPER_COLUMNS.get(method)
            res.update({
                "dataset": name, "method": method, "protocol": protocol, "seed": seed,
                "padded": _padded(method, data),
                "paper": paper.get(name, {}).get(col) if col else None,
                "grid_hash": key, **data.info(),
            })
            res["params"] = {k: (float(v) if isinstance(v, np.floating) else v)
                             for k, v in res["params"].items()}
            path.write_text(json.dumps(res, indent=1, default=_json_default))
            progress.end(f"accuracy {100 * res['accuracy']:.2f}%"
                         + (f" (paper {res['paper']:.2f}%)" if res["paper"] is not None else "")
                         + f" in {res['total_time']:.1f}s")
            rows.append(res)
    write_reports(rows, out, paper, wall_time=time.perf_counter() - t_run, quiet=quiet,
                  stream=stream)
    return rows


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _fmt_params(params):
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


def write_reports(rows, out, paper=None, wall_time=None, quiet=False, stream=None):
    """Write ``results.csv``, ``summary.md``, ``summary.json``, ``summary.csv`` and the PNG.

    Parameters
    ----------
    rows : list of dict
        Result rows of :func:`run_benchmark`.
    out : path-like
        Output folder.
    paper : dict, optional
        The paper's Table 2, ``{dataset: {column: accuracy %}}``.
    wall_time : float, optional
        Wall time of this invocation (cached results take no time).
    quiet : bool, default=False
        Do not print the Markdown summary.
    stream : file, optional
        Where the summary is printed (default stdout).

    Returns
    -------
    summary : dict
        The content of ``summary.json``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paper = paper or {}
    if not rows:
        return {}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    by = {(r["dataset"], r["method"]): r for r in rows}
    fields = ["dataset", "method", "protocol", "accuracy", "paper", "cv_score", "params",
              "gram_time", "fit_time", "predict_time", "total_time", "n_settings", "padded",
              "n_train", "n_test", "min_length", "max_length", "n_channels", "n_classes",
              "engine"]
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "accuracy": round(100 * r["accuracy"], 2),
                        "cv_score": round(100 * r["cv_score"], 2)
                        if r["cv_score"] == r["cv_score"] else "",
                        "params": json.dumps(r["params"], default=_json_default)})
    acc = np.array([[100 * by[(d, m)]["accuracy"] if (d, m) in by else np.nan
                     for m in methods] for d in datasets])
    ours = summary_metrics(acc) if np.isfinite(acc).all(axis=1).any() else None
    # the paper's own columns, on the datasets every method of ours ran
    complete = [d for d, row in zip(datasets, acc) if np.isfinite(row).all()]
    cols = [c for c in ("RNTK", "NTK", "RBF", "POLY", "GaussianRNN", "IdentityRNN", "GRU")
            if complete and all(c in paper.get(d, {}) for d in complete)]
    theirs = None
    if cols:
        P = np.array([[paper[d][c] for c in cols] for d in complete])
        theirs = summary_metrics(P)
    times = {m: float(sum(by[(d, m)]["total_time"] for d in datasets if (d, m) in by))
             for m in methods}
    summary = {
        "datasets": datasets, "methods": methods,
        "accuracy": {m: {d: 100 * by[(d, m)]["accuracy"] for d in datasets if (d, m) in by}
                     for m in methods},
        "paper": {m: {d: by[(d, m)]["paper"] for d in datasets
                      if (d, m) in by and by[(d, m)]["paper"] is not None} for m in methods},
        "metrics": None if ours is None else {
            m: {k: (float(v[j]) if k != "n_datasets" else v) for k, v in ours.items()}
            for j, m in enumerate(methods)},
        "paper_metrics": None if theirs is None else {
            c: {k: (float(v[j]) if k != "n_datasets" else v) for k, v in theirs.items()}
            for j, c in enumerate(cols)},
        "method_time_s": times,
        "wall_time_s": wall_time,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=_json_default))
    if ours is not None:
        with open(out / "summary.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["method", "mean_accuracy", "std", "P90", "P95", "PMA",
                        "friedman_rank", "n_datasets", "paper_mean_same_datasets",
                        "time_s"])
            for j, m in enumerate(methods):
                pm = [by[(d, m)]["paper"] for d in datasets if (d, m) in by]
                pmean = np.mean(pm) if pm and all(p is not None for p in pm) else ""
                w.writerow([m, round(ours["mean"][j], 2), round(ours["std"][j], 2),
                            round(ours["P90"][j], 4), round(ours["P95"][j], 4),
                            round(ours["PMA"][j], 4), round(ours["friedman_rank"][j], 3),
                            ours["n_datasets"], pmean if pmean == "" else round(pmean, 2),
                            round(times[m], 1)])
    md = _markdown(rows, methods, datasets, by, ours, theirs, cols, times, wall_time)
    (out / "summary.md").write_text(md)
    _plot(methods, datasets, by, out / "accuracy_vs_paper.png")
    if not quiet:
        print(md, file=stream or sys.stdout)
    return summary


def _markdown(rows, methods, datasets, by, ours, theirs, cols, times, wall_time):
    protocol = rows[0]["protocol"]
    lines = [f"# UCR benchmark ({protocol} protocol)", "",
             "Test accuracy (%). `ours / paper` where the RNTK paper's Table 2 has the "
             "method; `*` = zero-padded to the longest series (variable-length data).", ""]
    lines.append("| dataset | n_train | n_test | length | " + " | ".join(methods) + " |")
    lines.append("|---|---:|---:|---:|" + "---:|" * len(methods))
    for d in datasets:
        first = next(by[(d, m)] for m in methods if (d, m) in by)
        length = (str(first["max_length"]) if first["min_length"] == first["max_length"]
                  else f"{first['min_length']}-{first['max_length']}")
        cells = []
        for m in methods:
            r = by.get((d, m))
            if r is None:
                cells.append("")
                continue
            c = f"{100 * r['accuracy']:.2f}" + ("*" if r["padded"] else "")
            if r["paper"] is not None:
                c += f" / {r['paper']:.2f}"
            cells.append(c)
        lines.append(f"| {d} | {first['n_train']} | {first['n_test']} | {length} | "
                     + " | ".join(cells) + " |")
    if ours is not None:
        lines += ["", f"## Summary over the {ours['n_datasets']} dataset(s) every method ran",
                  "", "| metric | " + " | ".join(methods) + " |",
                  "|---|" + "---:|" * len(methods)]
        lines.append("| mean accuracy (%) | " + " | ".join(
            f"{v:.2f}" for v in ours["mean"]) + " |")
        cells = []
        for m in methods:
            pairs = [(100 * by[(d, m)]["accuracy"], by[(d, m)]["paper"]) for d in datasets
                     if (d, m) in by and by[(d, m)]["paper"] is not None]
            cells.append(f"{np.mean([a for a, _ in pairs]):.2f} / "
                         f"{np.mean([b for _, b in pairs]):.2f} ({len(pairs)})" if pairs else "")
        lines.append("| ours / paper on the datasets of Table 2 (n) | " + " | ".join(cells)
                     + " |")
        for k, label in (("P90", "P90"), ("P95", "P95"), ("PMA", "PMA")):
            lines.append(f"| {label} | " + " | ".join(f"{100 * v:.2f}%" for v in ours[k])
                         + " |")
        lines.append("| Friedman rank (ties averaged) | " + " | ".join(
            f"{v:.2f}" for v in ours["friedman_rank"]) + " |")
        lines.append("| time (s) | " + " | ".join(f"{times[m]:.1f}" for m in methods) + " |")
    if theirs is not None:
        lines += ["", "The paper's Table 2 columns on the same datasets (metrics among the "
                  "paper's seven methods):", "", "| metric | " + " | ".join(cols) + " |",
                  "|---|" + "---:|" * len(cols)]
        lines.append("| mean accuracy (%) | " + " | ".join(f"{v:.2f}" for v in theirs["mean"])
                     + " |")
        for k in ("P90", "P95", "PMA"):
            lines.append(f"| {k} | " + " | ".join(f"{100 * v:.2f}%" for v in theirs[k]) + " |")
        lines.append("| Friedman rank | " + " | ".join(
            f"{v:.2f}" for v in theirs["friedman_rank"]) + " |")
    lines += ["", "Selected hyperparameters:", ""]
    for r in rows:
        lines.append(f"- {r['dataset']} / {r['method']}: {_fmt_params(r['params'])} "
                     f"(CV {100 * r['cv_score']:.1f}%, Gram {r['gram_time']:.1f}s, "
                     f"fit {r['fit_time']:.1f}s, predict {r['predict_time']:.2f}s)"
                     if r["cv_score"] == r["cv_score"] else
                     f"- {r['dataset']} / {r['method']}: fit {r['fit_time']:.1f}s, "
                     f"predict {r['predict_time']:.2f}s")
    if wall_time is not None:
        lines += ["", f"Wall time of this invocation: {wall_time:.1f}s (cached results "
                  "are not recomputed)."]
    return "\n".join(lines) + "\n"


def _plot(methods, datasets, by, path):
    pts = {m: [(by[(d, m)]["paper"], 100 * by[(d, m)]["accuracy"]) for d in datasets
               if (d, m) in by and by[(d, m)]["paper"] is not None] for m in methods}
    pts = {m: p for m, p in pts.items() if p}
    if not pts or importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    lo = min(min(a, b) for p in pts.values() for a, b in p)
    lo = max(0.0, math.floor(lo / 10) * 10 - 5)
    ax.plot([lo, 100], [lo, 100], color="grey", lw=1, ls="--", label="ours = paper")
    for m, p in pts.items():
        a = np.array(p)
        ax.scatter(a[:, 0], a[:, 1], label=m, s=22, alpha=0.8)
    ax.set_xlim(lo, 101)
    ax.set_ylim(lo, 101)
    ax.set_xlabel("paper's Table 2 test accuracy (%)")
    ax.set_ylabel("our test accuracy (%)")
    ax.set_title("UCR, one point per dataset", fontsize=11)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _parser():
    p = argparse.ArgumentParser(
        prog="rntk-ucr",
        description="Run the RNTK paper's UCR classification protocol (Appendix A.1) on "
                    "UCR datasets, beside the usual peers. Writes results.csv, summary.md, "
                    "summary.csv, summary.json and accuracy_vs_paper.png into --out.")
    p.add_argument("--data-home", default=None,
                   help="folder in the UCR 2018 layout (default: $RNTK_DATA, else the "
                        "bundled datasets)")
    p.add_argument("--datasets", default="all",
                   help="comma-separated names, 'all' (default) or 'table2' (those in the "
                        "paper's Table 2)")
    p.add_argument("--methods", default="rntk,ntk,rbf,poly",
                   help=f"comma-separated among {','.join(METHODS)} or 'all' "
                        "(default: rntk,ntk,rbf,poly)")
    p.add_argument("--protocol", choices=sorted(PROTOCOLS), default="paper")
    p.add_argument("--out", default="results/ucr", help="output folder (default results/ucr)")
    p.add_argument("--n-jobs", type=int, default=1, help="threads for the Gram matrices")
    p.add_argument("--seed", type=int, default=0, help="seed of the CV folds and networks")
    p.add_argument("--paper-table", default=None,
                   help="CSV of the paper's Table 2 (default: benchmarks/"
                        "rntk_paper_table2.csv of the source tree when present)")
    p.add_argument("--force", action="store_true", help="ignore cached results")
    p.add_argument("--report-only", action="store_true",
                   help="compute nothing: write the reports from the cached results")
    p.add_argument("--list", action="store_true", help="list the datasets and exit")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def main(argv=None):
    """Entry point of the ``rntk-ucr`` console script.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0 on success.
    """
    args = _parser().parse_args(argv)
    if args.list:
        rows = list_ucr(args.data_home)
        print(f"{'name':<32} {'n_train':>7} {'n_test':>7} {'length':>9} {'chan':>4} "
              f"{'classes':>7}  variable")
        for r in rows:
            length = (f"{r['min_length']}" if r["min_length"] == r["max_length"]
                      else f"{r['min_length']}-{r['max_length']}")
            print(f"{r['name']:<32} {r['n_train']:>7} {r['n_test']:>7} {length:>9} "
                  f"{r['n_channels']:>4} {r['n_classes']:>7}  {r['variable_length']}")
        return 0
    table = args.paper_table or _default_paper_table()
    paper = _paper_table(table) if table else _paper_fallback()
    methods = list(METHODS) if args.methods == "all" else [
        m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise SystemExit(f"error: unknown method(s) {', '.join(bad)}; choose among "
                         f"{', '.join(METHODS)}")
    try:
        datasets = _resolve_datasets(args.datasets, args.data_home, paper)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    run_benchmark(datasets, methods, protocol=args.protocol, data_home=args.data_home,
                  out=args.out, n_jobs=args.n_jobs, seed=args.seed, paper=paper,
                  force=args.force, quiet=args.quiet, report_only=args.report_only)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
