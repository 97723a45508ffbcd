"""``rntk-ucr``: the command line of the UCR benchmark (see :mod:`rntk.benchmarking`)."""

import argparse
import sys

from ..datasets import list_ucr
from ._ucr import METHODS, PROTOCOLS, _resolve_datasets, run_benchmark
from .published_results import load_paper_table

__all__ = ["main"]


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
    p.add_argument("--protocol", choices=sorted(PROTOCOLS), default="paper",
                   help="'paper' (default): the paper's C-SVM protocol; 'loo': the "
                        "estimators' default, kernel ridge selected by exact leave-one-out "
                        "(seconds); 'fast': small grids, a smoke test")
    p.add_argument("--out", default="results/ucr", help="output folder (default results/ucr)")
    p.add_argument("--n-jobs", type=int, default=1, help="threads for the Gram matrices")
    p.add_argument("--seed", type=int, default=0, help="seed of the CV folds and networks")
    p.add_argument("--paper-table", default=None,
                   help="CSV of the paper's Table 2 (default: the copy shipped with "
                        "rntk.benchmarking)")
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
    try:
        paper = load_paper_table(args.paper_table)
    except OSError as exc:
        raise SystemExit(f"error: cannot read --paper-table: {exc}") from None
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
