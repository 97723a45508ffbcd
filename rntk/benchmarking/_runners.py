"""The UCR benchmark's runners: one method on one dataset, a result dict.

Kernel methods are selected by the estimators' engine (one Gram per kernel setting,
:func:`rntk._model_selection.search_grams`), the RNTK through
:class:`rntk.RNTKClassifierCV`; finite RNNs through :class:`rntk.nn.RNNClassifier`;
the peers through aeon and tslearn.
"""

import time
import warnings

import numpy as np
from sklearn.svm import SVC

from .._estimators import RNTKClassifierCV
from .._kernels import KERNELS, KernelSpec
from .._model_selection import SVM_MAX_ITER, RidgeLOOScorer, SVCFoldScorer, search_grams
from .._model_selection._calibration import (
    cv_decision_values,
    decision_proba,
    fit_temperature,
)
from ..model_selection import KernelRidgeClassifier
from ._data import folds
from ._protocols import KERNEL_METHODS, PROTOCOLS, RNN_CELL, RNN_METHODS, grid
from ._signature import signature_spec
from .stats import calibration_sums, probability_metrics

__all__ = ["run_kernel", "run_method", "run_precomputed_kernel"]


def _probability_result(y_test, proba, classes):
    """Return the bake off redux's metrics of a test set and its calibration bins."""
    proba = np.asarray(proba, dtype=float)
    out = probability_metrics(y_test, proba, classes)
    del out["accuracy"]  # the result's own accuracy, of ``predict``
    correct = np.asarray(classes)[proba.argmax(axis=1)] == np.asarray(y_test)
    out["calibration_bins"] = [[float(s), float(r), int(c)] for s, r, c in
                               zip(*calibration_sums(proba.max(axis=1), correct))]
    return out


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
    data : Dataset
        The dataset.
    settings : list of dict
        Kernel parameters of each setting, in grid order.
    Cs : list of float
        SVC costs (ignored with ``splits=None``).
    splits : list of (train, test) index arrays, or None
        The folds; ``None``: exact leave-one-out of kernel ridge.
    n_jobs : int, default=1
        Threads of the Grams and of the fold fits.
    progress : Progress, optional
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
    # probabilities: one temperature on out-of-sample decision values (the exact LOO
    # values of the ridge, kept by the search; the SVC's on folds of the Gram)
    D = outcome.loo.get(outcome.best_index) if splits is None else cv_decision_values(
        svc, outcome.best_gram, data.y_train)
    scale = 1.0 if D is None else fit_temperature(D, np.searchsorted(svc.classes_,
                                                                      data.y_train))
    proba = decision_proba(svc.decision_function(K_test), scale)
    return {
        "accuracy": float(np.mean(pred == data.y_test)),
        **_probability_result(data.y_test, proba, svc.classes_),
        "cv_score": float(np.mean(outcome.scores[outcome.best_index])),
        "params": best,
        "n_settings": len(candidates),
        "gram_time": gram_time + t_gram_test,
        "fit_time": fit_time,
        "predict_time": time.perf_counter() - t,
        "engine": "kernel ridge, exact LOO" if splits is None else "precomputed-kernel CV",
        "unconverged_fits": int(scorer.unconverged),
    }


def run_kernel(method, data, protocol, splits, n_jobs, progress):
    """Run a kernel method (or the GAK peer) with the grids of ``protocol``."""
    P = PROTOCOLS[protocol]
    if method == "rntk":
        return _run_rntk_estimator(data, protocol, splits, n_jobs, progress)
    if method == "gak":
        from tslearn.metrics import sigma_gak

        spec = _gak_spec()
        settings = [{"sigma": float(sigma_gak(_kernel_inputs(spec, data)[0]))}]
    else:
        spec = KERNELS[method]
        settings = grid(P[method])
    return run_precomputed_kernel(spec, data, settings, P.get("C"), splits, n_jobs, progress,
                                  alphas=P.get("alpha"))


def _run_rntk_estimator(data, protocol, splits, n_jobs, progress):
    """RNTK through ``RNTKClassifierCV`` (one Gram per kernel setting)."""
    P = PROTOCOLS[protocol]
    if splits is None:  # the estimator's default protocol and grid
        est = RNTKClassifierCV(protocol="loo", n_jobs=n_jobs,
                               verbose=0 if progress.quiet else 1)
        inner = "alpha"
    else:
        grid = {**{k: list(v) for k, v in P["rntk"].items()}, "C": list(P["C"])}
        est = RNTKClassifierCV(param_grid=grid, protocol="paper", cv=splits,
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
    proba = est.predict_proba(data.test)  # one test Gram: its argmax is predict's
    pred = est.classes_[proba.argmax(axis=1)]
    predict_time = time.perf_counter() - t
    best = {k: (float(v) if isinstance(v, (int, float, np.floating)) else v)
            for k, v in est.best_params_.items()}
    return {
        "accuracy": float(np.mean(pred == data.y_test)),
        **_probability_result(data.y_test, proba, est.classes_),
        "cv_score": float(est.best_score_),
        "params": best,
        "n_settings": n_settings * n_c,
        "gram_time": gram_time,
        "fit_time": fit_wall - (gram_time if np.isfinite(gram_time) else 0.0),
        "predict_time": predict_time,
        "engine": "RNTKClassifierCV",
    }


def _run_rnn(method, data, protocol, seed, progress):
    from sklearn.model_selection import GridSearchCV

    from ..nn import RNNClassifier

    P = PROTOCOLS[protocol]
    grid = {k: list(v) for k, v in P["rnn"].items()}
    base = RNNClassifier(cell=RNN_CELL[method], max_epochs=P["rnn_epochs"], patience=5,
                         random_state=seed)
    splits = folds(data.y_train, P["rnn_cv"], seed)
    n = len(grid(P["rnn"]))
    t = time.perf_counter()
    search = GridSearchCV(base, grid, cv=splits, refit=True, error_score="raise")
    search.fit(data.X_train_raw, data.y_train)
    fit_time = time.perf_counter() - t
    t = time.perf_counter()
    pred = search.predict(data.X_test_raw)
    return {"accuracy": float(np.mean(pred == data.y_test)),
            **_probability_result(data.y_test, search.predict_proba(data.X_test_raw),
                                  search.classes_),
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
        res = run_kernel("gak", data, protocol, splits, n_jobs, progress)
        res["engine"] = "tslearn cdist_gak + SVC"
        return res
    if method == "sigkernel":
        P = PROTOCOLS[protocol]
        return run_precomputed_kernel(signature_spec(), data, P["sigkernel"], P.get("C"),
                                      splits, n_jobs, progress, alphas=P.get("alpha"))
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
    return {"accuracy": float(np.mean(pred == data.y_test)),
            **_probability_result(data.y_test, clf.predict_proba(Xte), clf.classes_),
            "cv_score": float("nan"),
            "params": {}, "n_settings": 1, "gram_time": 0.0, "fit_time": fit_time,
            "predict_time": time.perf_counter() - t, "engine": f"aeon {type(clf).__name__}"}


def run_method(method, data, protocol, splits, n_jobs, seed, progress):
    """Run one method on one dataset; the result dict, timed."""
    t = time.perf_counter()
    if method in KERNEL_METHODS:
        res = run_kernel(method, data, protocol, splits, n_jobs, progress)
    elif method in RNN_METHODS:
        res = _run_rnn(method, data, protocol, seed, progress)
    else:
        res = _run_peer(method, data, protocol, splits, n_jobs, seed, progress)
    res["total_time"] = time.perf_counter() - t
    return res
