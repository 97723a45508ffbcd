"""UCR benchmark of the RNTK paper (Tables 1-2), beside the usual peers.

A thin wrapper of the ``rntk-ucr`` console script (``rntk._ucr_cli.main``); see
``benchmarks/README.md`` for the protocol, the options and the recorded results.
Example::

    python benchmarks/ucr.py --data-home ~/data/UCRArchive_2018 --datasets table2 \
        --methods rntk,ntk,rbf,poly --protocol paper --out results/ucr --n-jobs 2

The paper's Table 2 (``rntk_paper_table2.csv`` beside this file: Alemohammad et al.,
"The Recurrent Neural Tangent Kernel", ICLR 2021, Appendix A, Table 2) is shown beside
our numbers.
"""

import sys
from pathlib import Path

from rntk._ucr_cli import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if not any(a.startswith("--paper-table") for a in argv):
        argv += ["--paper-table", str(Path(__file__).with_name("rntk_paper_table2.csv"))]
    sys.exit(main(argv))
