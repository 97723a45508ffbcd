"""The large-n path of the default classifier: time, memory and accuracy against the exact one.

Above ``large_n`` training series (``"auto"``: ``rntk._model_selection._features.LARGE_N``)
the default ``RNTKClassifierCV()`` runs its leave-one-out search on ``n_components``
Nystroem features per kernel setting instead of the ``n x n`` Gram. Three measurements:

* default (no option): ``n = 10,000`` synthetic training series of length 100 (``--quick``:
  400, the feature path forced with 40 landmarks: a smoke run), four classes of noisy sines
  of random phase (frequencies 1-4); the fit time of the default ``RNTKClassifierCV()`` and
  of aeon's ``MiniRocketClassifier(random_state=0)`` in the same process (the RNTK first, so
  that the peak RSS read after its fit, ``ru_maxrss``, is its own), wall and process CPU
  seconds (the CPU time is steadier on a loaded machine), their ratios, and both test
  accuracies on 2,000 test series (``--only`` fits one of the two);
* ``--scale N [N ...]``: for each ``N`` the fit time of the default grid on the exact Gram
  (``large_n=None``) and on the features (``large_n=0``), on the same synthetic data;
* ``--data DIR --datasets A,B [--components M ...]``: on UCR sets, the test accuracy of the
  exact path and of the feature path with ``M`` landmarks (``M`` below the training size;
  both with the default grid and the same selection), with their fit times;
* ``--multichannel N``: ``N`` synthetic training series of 36 steps and 6 channels (and
  ``N // 2`` test series; four classes of noisy sines whose channels are coupled by a
  class-wise phase shift), just below the ``large_n`` threshold for ``N = 2500``: fit +
  predict of the default and of MiniRocket, alternating, the best of 2 each (``--quick``:
  300 series);
* ``--unit-rms N``: ``N`` synthetic series z-normalised (every series at unit RMS, as
  in the UCR archive), the fit time of the default with its unit-RMS rule and without it
  (:data:`rntk.model_selection.DEFAULT_SAME` emptied: the banded level-and-scale
  features computed too), alternating, the best of 2 each (``--quick``: 400 series, the
  feature path forced with 40 landmarks).

Rows are appended to ``bench_large_n.csv`` beside this file (``--out`` to change).

Usage::

    python benchmarks/bench_large_n.py [--quick] [--scale 500 1000 2000 4000]
        [--data ../shared/data/ucr --datasets MelbournePedestrian,ItalyPowerDemand]
        [--unit-rms 4000] [--multichannel 2500]
"""

import argparse
import csv
import importlib.util
import resource
import time
import warnings
from pathlib import Path
from unittest.mock import patch

import numpy as np

from rntk import RNTKClassifierCV
from rntk._model_selection import DEFAULT_SAME, unit_rms
from rntk._model_selection._features import LARGE_N, LARGE_N_COMPONENTS

HERE = Path(__file__).resolve().parent
KEYS = ["date", "part", "dataset", "n_train", "length", "method", "fit_s", "fit_cpu_s",
        "predict_s",
        "accuracy", "peak_rss_mb", "n_components", "best_params"]


def waves(n, T=100, n_classes=4, noise=0.5, seed=0):
    """Noisy sines of random phase, frequency ``class + 1``, shape ``(n, T)``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    t = np.linspace(0, 1, T)
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1))
    X = np.sin(2 * np.pi * (y[:, None] + 1) * t + phase) + noise * rng.normal(size=(n, T))
    return X, y


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _cpu_s():
    """CPU seconds of this process (all threads, user and system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _fit_score(clf, X, y, X_test, y_test, cpu=None):
    t0, c0 = time.perf_counter(), _cpu_s()
    clf.fit(X, y)
    fit_s = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(_cpu_s() - c0)
    t0 = time.perf_counter()
    acc = float(np.mean(clf.predict(X_test) == y_test))
    return fit_s, time.perf_counter() - t0, acc


def _row(writer, **kw):
    row = {"date": time.strftime("%Y-%m-%d %H:%M"), **kw}
    writer.writerow({k: row.get(k, "") for k in KEYS})
    print(", ".join(f"{k}={v}" for k, v in row.items() if k != "date"), flush=True)


def _fitted(clf):
    """Return a fitted member of the search's model (the default averages the best ones)."""
    return getattr(clf.best_estimator_, "estimators_", [clf.best_estimator_])[0]


def vs_minirocket(writer, n, T=100, only=None, n_components=LARGE_N_COMPONENTS,
                  large_n="auto", n_test=2000):
    X, y = waves(n + n_test, T)
    X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    rss0 = _rss_mb()
    print(f"RSS before the fits: {rss0:.0f} MB", flush=True)
    cpu = []
    if only != "minirocket":
        clf = RNTKClassifierCV(n_components=n_components, large_n=large_n)
        fit_s, pred_s, acc = _fit_score(clf, X, y, X_test, y_test, cpu)
        path = "features" if len(_fitted(clf).X_fit_) < n else "exact"
        _row(writer, part="minirocket", dataset="waves", n_train=n, length=T,
             method=f"RNTKClassifierCV(n_components={n_components}) [{path}]",
             fit_s=round(fit_s, 2), fit_cpu_s=round(cpu[-1], 1), predict_s=round(pred_s, 2),
             accuracy=round(acc, 4), peak_rss_mb=round(_rss_mb()),
             n_components=len(_fitted(clf).X_fit_), best_params=clf.best_params_)
    if only == "rntk":
        return
    from aeon.classification.convolution_based import MiniRocketClassifier

    mr = MiniRocketClassifier(random_state=0)
    mr_fit, mr_pred, mr_acc = _fit_score(mr, X[:, None, :], y, X_test[:, None, :], y_test,
                                         cpu)
    _row(writer, part="minirocket", dataset="waves", n_train=n, length=T,
         method="MiniRocketClassifier(random_state=0)", fit_s=round(mr_fit, 2),
         fit_cpu_s=round(cpu[-1], 1), predict_s=round(mr_pred, 2),
         accuracy=round(mr_acc, 4), peak_rss_mb=round(_rss_mb()))
    if only is None:
        print(f"RNTK / MiniRocket: fit time {fit_s / mr_fit:.2f}, "
              f"fit CPU time {cpu[0] / cpu[1]:.2f}", flush=True)


def multichannel_waves(n, T=36, m=6, n_classes=4, noise=0.5, seed=0):
    """Noisy sines of random phase on ``m`` channels, shifted per channel by the class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    t = np.linspace(0, 1, T)[None, :, None]
    shift = (y[:, None, None] + 1) * np.arange(m)[None, None, :] * np.pi / (2 * m)
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1, 1))
    X = np.sin(2 * np.pi * 2 * t + phase + shift) + noise * rng.normal(size=(n, T, m))
    return X, y


def multichannel(writer, n, repeat=2):
    """Fit + predict of the default and of MiniRocket on ``n`` series of 36 x 6."""
    X, y = multichannel_waves(n + n // 2)
    X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    methods = {"RNTKClassifierCV()": lambda: RNTKClassifierCV()}
    if importlib.util.find_spec("aeon") is not None:
        from aeon.classification.convolution_based import MiniRocketClassifier

        methods["MiniRocketClassifier(random_state=0)"] = \
            lambda: MiniRocketClassifier(random_state=0)
    best = {}
    for _ in range(repeat):
        for name, make in methods.items():
            aeon = name.startswith("Mini")
            data = (X.transpose(0, 2, 1), y, X_test.transpose(0, 2, 1), y_test) if aeon \
                else (X, y, X_test, y_test)
            fit_s, pred_s, acc = _fit_score(make(), *data)
            if fit_s + pred_s < sum(best.get(name, (np.inf, 0.0))[:2]):
                best[name] = (fit_s, pred_s, acc)
    for name, (fit_s, pred_s, acc) in best.items():
        _row(writer, part="multichannel", dataset="waves 36 x 6", n_train=n, length=36,
             method=name, fit_s=round(fit_s, 2), predict_s=round(pred_s, 2),
             accuracy=round(acc, 4))
    if len(best) == 2:
        (a, b) = (sum(v[:2]) for v in best.values())
        print(f"RNTK / MiniRocket, fit + predict: {a / b:.2f}", flush=True)
    return best


def scale(writer, sizes, T=100):
    for n in sizes:
        X, y = waves(n + 1000, T, seed=n)
        X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
        for method, large_n in (("exact", None), ("features", 0)):
            clf = RNTKClassifierCV(large_n=large_n)
            fit_s, pred_s, acc = _fit_score(clf, X, y, X_test, y_test)
            _row(writer, part="scale", dataset="waves", n_train=n, length=T, method=method,
                 fit_s=round(fit_s, 2), predict_s=round(pred_s, 2), accuracy=round(acc, 4),
                 n_components=len(_fitted(clf).X_fit_), best_params=clf.best_params_)


def ucr(writer, data, names, components):
    from rntk.datasets import load_ucr

    for name in names:
        X, y, X_test, y_test = load_ucr(name, data_home=data, download=False)
        runs = [("exact", None, LARGE_N_COMPONENTS)]
        runs += [(f"features m={m}", 0, m) for m in components if m < len(X)]
        for method, large_n, m in runs:
            clf = RNTKClassifierCV(large_n=large_n, n_components=m)
            fit_s, pred_s, acc = _fit_score(clf, X, y, X_test, y_test)
            _row(writer, part="ucr", dataset=name, n_train=len(X),
                 length=max(len(x) for x in X), method=method, fit_s=round(fit_s, 2),
                 predict_s=round(pred_s, 2), accuracy=round(acc, 4),
                 n_components=len(_fitted(clf).X_fit_), best_params=clf.best_params_)


def unit_rms_rule(writer, n, T=100, large_n="auto", n_components=LARGE_N_COMPONENTS,
                  repeat=2):
    """Fit times of the default with and without its unit-RMS rule, z-normalised series."""
    X, y = waves(n + 1000, T, seed=1)
    X = (X - X.mean(1, keepdims=True)) / X.std(1, ddof=1, keepdims=True)
    assert unit_rms(list(X[:n, :, None]))
    X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    best = {}
    for r in range(repeat):
        for rule in ((True, False) if r % 2 == 0 else (False, True)):
            clf = RNTKClassifierCV(large_n=large_n, n_components=n_components)
            with patch.dict(DEFAULT_SAME, clear=not rule):  # emptied: every setting
                fit_s, pred_s, acc = _fit_score(clf, X, y, X_test, y_test)
            if rule in best and best[rule][2] != acc:
                raise RuntimeError("the repeats' accuracies differ")
            if fit_s < best.get(rule, (np.inf,))[0]:
                best[rule] = (fit_s, pred_s, acc, clf)
    for rule in (True, False):
        fit_s, pred_s, acc, clf = best[rule]
        path = "features" if len(_fitted(clf).X_fit_) < n else "exact"
        _row(writer, part="unit_rms", dataset="waves (z-normalised)", n_train=n, length=T,
             method=f"RNTKClassifierCV() [{path}], unit-RMS rule {'on' if rule else 'off'}",
             fit_s=round(fit_s, 2), predict_s=round(pred_s, 2), accuracy=round(acc, 4),
             n_components=len(_fitted(clf).X_fit_), best_params=clf.best_params_)
    print(f"without / with the rule: fit time {best[False][0] / best[True][0]:.2f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 400 series, the feature path forced (40 landmarks)")
    parser.add_argument("--scale", type=int, nargs="*", default=None,
                        help="training sizes for exact vs features fit times")
    parser.add_argument("--data", default=None, help="UCR folder (with --datasets)")
    parser.add_argument("--datasets", default="", help="comma-separated UCR sets")
    parser.add_argument("--components", type=int, nargs="+", default=[LARGE_N_COMPONENTS],
                        help="landmarks of the feature path (the first: against MiniRocket)")
    parser.add_argument("--only", choices=["rntk", "minirocket"], default=None,
                        help="fit only one of the two (default: both, the RNTK first)")
    parser.add_argument("--unit-rms", type=int, default=None, metavar="N",
                        help="N z-normalised series: the default with and without its "
                             "unit-RMS rule")
    parser.add_argument("--multichannel", type=int, default=None, metavar="N",
                        help="N series of 36 steps x 6 channels: the default against "
                             "MiniRocket, fit + predict")
    parser.add_argument("--out", default=str(HERE / "bench_large_n.csv"))
    args = parser.parse_args(argv)
    print(f"large_n='auto' threshold {LARGE_N}, n_components {LARGE_N_COMPONENTS}", flush=True)
    out = Path(args.out)
    new = not out.exists()
    with out.open("a", newline="") as f, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        writer = csv.DictWriter(f, KEYS)
        if new:
            writer.writeheader()
        if args.scale:
            scale(writer, args.scale)
        if args.datasets:
            ucr(writer, args.data, [d for d in args.datasets.split(",") if d], args.components)
        if args.unit_rms:
            if args.quick:
                unit_rms_rule(writer, args.unit_rms, large_n=0, n_components=40)
            else:
                unit_rms_rule(writer, args.unit_rms)
        if args.multichannel:
            multichannel(writer, 300 if args.quick else args.multichannel)
        if not args.scale and not args.datasets and not args.unit_rms \
                and not args.multichannel:
            if args.quick:
                vs_minirocket(writer, 400, only=args.only, n_components=40, large_n=0,
                              n_test=200)
            else:
                vs_minirocket(writer, 10000, only=args.only, n_components=args.components[0])


if __name__ == "__main__":
    main()
