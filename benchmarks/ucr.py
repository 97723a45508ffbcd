"""UCR benchmark of the RNTK paper (Tables 1-2), beside the usual peers.

A thin wrapper of the ``rntk-ucr`` console script (``python -m rntk.benchmarking``); see
``benchmarks/README.md`` for the protocol, the options and the recorded results.
Example::

    python benchmarks/ucr.py --data-home ~/data/UCRArchive_2018 --datasets table2 \
        --methods rntk,ntk,rbf,poly --protocol paper --out results/ucr --n-jobs 2

``--quick`` stands for ``--protocol fast --datasets Coffee --methods rntk,rbf`` on the
bundled data (a smoke test of the whole pipeline in seconds; options given after it win).

The paper's Table 2 (Alemohammad et al., "The Recurrent Neural Tangent Kernel", ICLR
2021, Appendix A, Table 2; shipped in ``rntk.benchmarking.published_results``) is shown
beside our numbers.
"""

import runpy
import sys

QUICK = ["--protocol", "fast", "--datasets", "Coffee", "--methods", "rntk,rbf"]


def main(argv=None):
    """Run ``rntk-ucr`` with ``argv`` (``--quick`` expanded); return its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--quick" in argv:
        i = argv.index("--quick")
        argv[i:i + 1] = QUICK
    saved, sys.argv = sys.argv, ["rntk-ucr", *argv]
    try:
        runpy.run_module("rntk.benchmarking", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return exc.code
    finally:
        sys.argv = saved
    return 0


if __name__ == "__main__":
    sys.exit(main())
