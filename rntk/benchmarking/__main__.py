"""``python -m rntk.benchmarking``: the ``rntk-ucr`` command (see :mod:`rntk.benchmarking`)."""

import sys

from ._cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
