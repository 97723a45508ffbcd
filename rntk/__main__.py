"""``python -m rntk``: RNTK classification of a bundled UCR dataset.

Fits :class:`rntk.RNTKClassifierCV` on the training split of a UCR dataset (GunPoint
by default, bundled with the package), then prints its test accuracy next to the
value of the RNTK paper's Table 2. The default protocol selects kernel ridge on the
RNTK by exact leave-one-out (a second); ``--protocol paper`` runs the paper's
(C-SVM, 10-fold cross-validation over the Appendix A.1 grid, unit-norm series;
``--quick`` uses a small grid). Missing values inside series are filled by linear
interpolation (:class:`rntk.SeriesImputer`), as in ``rntk-ucr``.
"""

import argparse
import sys
import time

import numpy as np

from . import __version__
from ._estimators import RNTKClassifierCV
from ._model_selection import PAPER_C, PAPER_GRID
from ._utils import as_sequences
from ._utils._cli import int_arg, n_jobs_arg
from .benchmarking.published_results import CITATION, paper_accuracy
from .datasets import load_ucr

QUICK_GRID = {"sigma_w": [1.4, 2**0.5], "sigma_b": [0.0, 0.5, 1.0], "sigma_h": [0.0],
              "C": [0.01, 1.0, 100.0]}


def _folds(text):
    n = int_arg(text)
    if n < 2:
        raise argparse.ArgumentTypeError(f"must be a number of folds >= 2; got {n}")
    return n


def _verbosity(text):
    n = int_arg(text)
    if n not in (0, 1, 2):
        raise argparse.ArgumentTypeError(f"must be 0, 1 or 2; got {n}")
    return n


def _dataset(text):
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a dataset name, e.g. GunPoint; got an "
                                         "empty one")
    return text.strip()


def _describe(X):
    if isinstance(X, list):
        lengths = [len(x) for x in X]
        return f"lengths {min(lengths)}..{max(lengths)}"
    return f"length {X.shape[1]}"


def _params(params):
    """``k=v, ...`` of a candidate, floats to 4 significant digits."""
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in sorted(params.items()))


def main(argv=None):
    """Run the main job; return the test accuracy (a fraction).

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    accuracy : float
        Test accuracy of the selected model.
    """
    parser = argparse.ArgumentParser(
        prog="python -m rntk",
        description="Fit RNTKClassifierCV on a UCR dataset and compare its test accuracy "
                    "with the RNTK paper's Table 2.")
    parser.add_argument("--dataset", default="GunPoint", type=_dataset,
                        help="UCR dataset name (bundled: GunPoint, Coffee, ECG200, Trace, "
                             "PickupGestureWiimoteZ; others are read from --data-home, "
                             "else downloaded once)")
    parser.add_argument("--data-home", default=None,
                        help="folder with NAME/NAME_TRAIN.tsv and NAME/NAME_TEST.tsv")
    parser.add_argument("--protocol", choices=("loo", "paper"), default="loo",
                        help="'loo' (default): kernel ridge selected by exact leave-one-out; "
                             "'paper': the paper's C-SVM protocol")
    parser.add_argument("--quick", action="store_true",
                        help="with --protocol paper: a small grid (18 candidates) instead of "
                             "the paper's 4500")
    parser.add_argument("--cv", type=_folds, default=None,
                        help="number of CV folds, >= 2 (default: leave-one-out for 'loo', "
                             "10 for 'paper')")
    parser.add_argument("--n-jobs", type=n_jobs_arg, default=-1,
                        help="kernel threads (default -1: all cores)")
    parser.add_argument("--verbose", type=_verbosity, default=1,
                        help="progress level (0, 1, 2)")
    args = parser.parse_args(argv)
    if args.quick and args.protocol != "paper":
        parser.error("--quick applies to --protocol paper only (it replaces the paper's "
                     "grid; the default protocol's grid is already small)")

    try:
        X_train, y_train, X_test, y_test = load_ucr(args.dataset, data_home=args.data_home,
                                                    missing="interpolate")
    except (OSError, ValueError) as exc:  # unknown name, unreadable file, offline download
        # the library's messages name its keyword; here the option is the way
        raise SystemExit("error: " + str(exc).replace("data_home=", "--data-home")
                         .replace("data_home ", "--data-home ")) from None
    if args.cv is not None and args.cv > len(y_train):
        parser.error(f"argument --cv: {args.cv} folds, more than the {len(y_train)} training "
                     f"series of {args.dataset}")
    clf = RNTKClassifierCV(protocol=args.protocol, cv=args.cv, n_jobs=args.n_jobs,
                           verbose=args.verbose)
    if args.protocol == "paper":
        clf.set_params(param_grid=QUICK_GRID if args.quick else {**PAPER_GRID, "C": PAPER_C})
    grid = (clf._default_grid(as_sequences(X_train, "X_train")) if clf.param_grid is None
            else clf.param_grid)
    inner = "C" if args.protocol == "paper" else "alpha"
    grids = grid if isinstance(grid, list) else [grid]
    n_kernel = sum(int(np.prod([len(v) for k, v in g.items() if k != inner])) for g in grids)
    n_inner = len(grids[0][inner])
    model = "C-SVM" if args.protocol == "paper" else "kernel ridge"
    folds = (f"{args.cv or 10}-fold CV" if args.protocol == "paper" or args.cv
             else "exact leave-one-out")
    what = ("default grid" if args.protocol == "loo" else "quick grid" if args.quick
            else "RNTK paper grid (App. A.1)")
    print(f"rntk {__version__}: RNTK + {model} on UCR {args.dataset}: {len(y_train)} train / "
          f"{len(y_test)} test series, {_describe(X_train)}, "
          f"{len(np.unique(y_train))} classes")
    print(f"model selection: {what}, {n_kernel} kernel settings x {n_inner} values "
          f"of {inner}, {folds}", flush=True)

    start = time.perf_counter()
    clf.fit(X_train, y_train)
    accuracy = clf.score(X_test, y_test)
    elapsed = time.perf_counter() - start

    n_right = int(round(accuracy * len(y_test)))
    score = "LOO" if folds == "exact leave-one-out" else "CV"
    members = getattr(clf, "averaged_params_", None)
    if members is None:
        print(f"fitted: the best candidate, {_params(clf.best_params_)} "
              f"({score} accuracy {100 * clf.best_score_:.2f}%)")
    else:
        print(f"fitted: the mean decision function of {len(members)} kernel ridge "
              f"classifiers (n_average), the best candidates of the best kernel settings:")
        distinct = [p for k, p in enumerate(members) if p not in members[:k]]
        for k, params in enumerate(distinct, 1):
            i = clf.cv_results_["params"].index(params)
            acc = clf.cv_results_["mean_test_score"][i]
            times = members.count(params)
            weight = f", counted {times} times" if times > 1 else ""
            print(f"  {k}. {_params(params)} ({score} accuracy {100 * acc:.2f}%{weight})")
    print(f"test accuracy:   {100 * accuracy:.2f}% ({n_right}/{len(y_test)})")
    reference = paper_accuracy(args.dataset)
    if reference is not None:
        print(f"RNTK paper:      {reference:.2f}% (Table 2)")
    else:
        print("RNTK paper:      (dataset not in Table 2)")
    print(f"time: {elapsed:.1f} s")
    if reference is not None:
        print(f"reference: {CITATION}")
    return accuracy


if __name__ == "__main__":  # pragma: no cover
    main()
    sys.exit(0)
