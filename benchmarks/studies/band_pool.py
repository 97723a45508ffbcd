"""The banded settings pooled for most series rather than for the longest one, on resamples.

The banded settings of the default (on unit-RMS series and on the series as given) read
series averaged over blocks of ``pool = ceil(longest / BAND_STEPS)`` steps, so that the
longest training series has at most ``BAND_STEPS`` (128) steps. Where the lengths spread
over a long tail, the one longest series sets the time scale of all: ``PLAID`` (lengths
101 to 1,344, median 301, 90th percentile 501) is pooled 11 times, its shortest series
to 10 steps; its banded unit-RMS setting alone has a leave-one-out accuracy of 76.9%
pooled 11 times and 83.2% pooled 4 times (the official test split: 78.0% and 82.1%;
MiniRocket 94.0%, the default 87.2%).

The variant ``rntk_band_pool_q90``: the pool of the banded settings from the 90th
percentile of the training lengths (the next length up), ``ceil(q90 / BAND_STEPS)``; at
most a tenth of the series then have more than ``BAND_STEPS`` pooled steps (``PLAID``'s
longest 336). Sets of one length, and those whose 90th percentile needs the same pool
as the longest, keep the default's grid: on the 48 UCR sets six change (``PLAID`` 11 to
4, ``AllGestureWiimoteX`` 4 to 2, ``AllGestureWiimoteZ`` and ``GestureMidAirD2`` 3 to
2, ``GesturePebbleZ1`` and ``ShakeGestureWiimoteZ`` 4 to 3). The variant is registered
in ``bench_resamples.VARIANTS`` and fitted on the same resamples (and nested folds) as
the default and MiniRocket.

Usage::

    python benchmarks/studies/band_pool.py [bench_resamples.py's options]
"""

import sys
from pathlib import Path
from unittest.mock import patch

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402
from harness import PatchedDefault, resampled_study  # noqa: E402

from rntk._model_selection import _grids  # noqa: E402
from rntk._representations import REPRESENTATIONS  # noqa: E402

#: The percentile of the training lengths the banded settings are pooled for.
PERCENTILE = 90


def most_lengths(lengths, percentile=PERCENTILE):
    """Return the ``percentile``-th percentile of the lengths (the next length up)."""
    return int(np.percentile(np.asarray(lengths), percentile, method="higher"))


def _sized(setting, lengths, *args, **kwargs):
    """``_grids._sized``, the banded settings on the series themselves pooled for most."""
    if "readout_band" in setting and not any(k in setting for k in REPRESENTATIONS):
        lengths = [most_lengths(lengths)]
    return _SIZED(setting, lengths, *args, **kwargs)


_SIZED = _grids._sized


class _MostLengths(PatchedDefault):
    """The default with the banded settings pooled for most training lengths."""

    def patches(self, X):
        return [patch.object(_grids, "_sized", _sized)]


def install():
    """Register the variant ``rntk_band_pool_q90`` in ``bench_resamples.VARIANTS``."""
    bench_resamples.VARIANTS["rntk_band_pool_q90"] = _MostLengths()


def main(argv=None):
    return resampled_study(argv, install, "--variant", ("rntk_band_pool_q90",))


if __name__ == "__main__":
    main()
