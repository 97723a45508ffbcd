"""``rntk-ucr``: the command line of the UCR benchmark (see :mod:`rntk.benchmarking`)."""

import argparse
import sys
from pathlib import Path

import numpy as np

from .._utils._cli import int_arg, n_jobs_arg
from ..datasets import load_ucr
from ._data import catalog
from ._protocols import METHODS, PROTOCOLS
from ._reports import failure_label
from ._ucr import resolve_datasets, run
from .published_results import load_paper_table

__all__ = ["main"]


def _seed(text):
    n = int_arg(text)
    if not 0 <= n < 2**32:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**32 - 1]; got {n}")
    return n


def _parser():
    p = argparse.ArgumentParser(
        prog="rntk-ucr",
        description="Run the RNTK paper's UCR classification protocol (Appendix A.1) on "
                    "UCR datasets, beside the usual peers. Writes results.csv (this run), "
                    "summary.md, summary.csv, summary.json (every cached result of the "
                    "protocol), accuracy_vs_paper.png, accuracy_vs_minirocket.png and "
                    "critical_difference.png (beside the published bake off redux) into "
                    "--out.")
    p.add_argument("--data-home", default=None,
                   help="folder in the UCR 2018 layout (default: $RNTK_DATA, else the "
                        "bundled datasets)")
    p.add_argument("--datasets", default="all",
                   help="comma-separated names, 'all' (default) or 'table2' (those in the "
                        "paper's Table 2)")
    p.add_argument("--methods", default="rntk,ntk,rbf,poly",
                   help=f"comma-separated among {','.join(METHODS)} or 'all' "
                        "(default: rntk,ntk,rbf,poly)")
    p.add_argument("--protocol", choices=sorted(PROTOCOLS), default="paper",
                   help="'paper' (default): the paper's C-SVM protocol; 'loo': the "
                        "estimators' default, kernel ridge selected by exact leave-one-out "
                        "(seconds); 'fast': small grids, a smoke test")
    p.add_argument("--out", default="results/ucr", help="output folder (default results/ucr)")
    p.add_argument("--n-jobs", type=n_jobs_arg, default=1,
                   help="threads for the Gram matrices (-1: all cores)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the CV folds and networks")
    p.add_argument("--paper-table", default=None,
                   help="CSV of the paper's Table 2 (default: the copy shipped with "
                        "rntk.benchmarking)")
    p.add_argument("--force", action="store_true", help="ignore cached results")
    p.add_argument("--report-only", action="store_true",
                   help="compute nothing: write the reports from the cached results")
    p.add_argument("--list", action="store_true", help="list the datasets and exit")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def _describe(name, data_home):
    """One ``--list`` row: sizes, lengths, channels and classes of a dataset."""
    X_train, y_train, X_test, y_test = load_ucr(name, data_home=data_home, missing="keep")
    seqs = list(X_train) + list(X_test)
    lens = [len(x) for x in seqs]
    length = str(min(lens)) if min(lens) == max(lens) else f"{min(lens)}-{max(lens)}"
    chan = 1 if np.ndim(seqs[0]) == 1 else int(np.shape(seqs[0])[1])
    classes = len(np.unique(np.concatenate([np.asarray(y).astype(str)
                                            for y in (y_train, y_test)])))
    return (f"{name:<32} {len(y_train):>7} {len(y_test):>7} {length:>9} {chan:>4} "
            f"{classes:>7}  {min(lens) != max(lens)}")


def _list(data_home):
    """Print the datasets, one at a time: an unreadable one is reported, not fatal."""
    try:
        available, incomplete = catalog(data_home)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"{'name':<32} {'n_train':>7} {'n_test':>7} {'length':>9} {'chan':>4} "
          f"{'classes':>7}  variable")
    status = 0
    for name in sorted({*available, *incomplete}):
        why = incomplete.get(name) if name not in available else None
        if why is None:
            try:
                print(_describe(name, data_home))
                continue
            except Exception as exc:  # one bad file does not hide the others
                why = str(exc) or type(exc).__name__
        print(f"{name:<32} (unreadable, see stderr)")
        print(f"warning: {why}", file=sys.stderr)
        status = 1
    return status


def main(argv=None):
    """Entry point of the ``rntk-ucr`` console script.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0 on success; 1 when a dataset could not be read or a method failed on one (the
        others still ran, the problems are reported on stderr and in the summaries).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        return _list(args.data_home)
    out = Path(args.out)
    for path in (out, out / "cache"):
        if path.exists() and not path.is_dir():
            parser.error(f"--out {out}" + ("" if path == out else f": {path}")
                         + " exists and is not a folder")
    try:
        paper = load_paper_table(args.paper_table)
        if not paper:
            raise ValueError("it lists no dataset")
    except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:
        what = (exc.strerror if isinstance(exc, OSError) and exc.strerror else
                f"no {exc} column" if isinstance(exc, KeyError) else exc)
        raise SystemExit(f"error: cannot read --paper-table {args.paper_table}: "
                         f"{what}") from None
    methods = list(METHODS) if args.methods == "all" else list(dict.fromkeys(
        m.strip() for m in args.methods.split(",") if m.strip()))
    if not methods:
        raise SystemExit(f"error: no method named in --methods {args.methods!r}")
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise SystemExit(f"error: unknown method(s) {', '.join(bad)}; choose among "
                         f"{', '.join(METHODS)}")
    try:
        datasets = resolve_datasets(args.datasets, args.data_home, paper)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    try:
        (out / "cache").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SystemExit(f"error: cannot create the --out folder {out}: "
                         f"{exc.strerror or exc}") from None
    _, failed = run(datasets, methods, protocol=args.protocol, data_home=args.data_home,
                     out=args.out, n_jobs=args.n_jobs, seed=args.seed, paper=paper,
                     force=args.force, quiet=args.quiet, stream=None,
                     report_only=args.report_only)
    if failed:
        print(f"error: {len(failed)} failure(s): " + "; ".join(map(failure_label, failed))
              + " (details above and in summary.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
