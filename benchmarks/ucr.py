"""UCR benchmark of the RNTK paper (Tables 1-2), beside the usual peers.

A thin wrapper of the ``rntk-ucr`` console script (``rntk.benchmarking``); see
``benchmarks/README.md`` for the protocol, the options and the recorded results.
Example::

    python benchmarks/ucr.py --data-home ~/data/UCRArchive_2018 --datasets table2 \
        --methods rntk,ntk,rbf,poly --protocol paper --out results/ucr --n-jobs 2

The paper's Table 2 (Alemohammad et al., "The Recurrent Neural Tangent Kernel", ICLR
2021, Appendix A, Table 2; shipped in ``rntk.benchmarking.published_results``) is shown
beside our numbers.
"""

import sys

from rntk.benchmarking._cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
