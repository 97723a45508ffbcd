"""The banded setting kept on series of several channels, on resamples.

The default leaves its banded setting on the series scaled to unit RMS (``band``) out
of the grid where the series have several channels (``MULTICHANNEL_LEFT_OUT``): chosen
by nested CV on the 7 UEA development sets (+2.24 +- 1.09, 6 sets up, none down;
``tune_beside.py``), before the rule of the resampled evidence. The variant
``rntk_band_on_channels`` is the default with the band kept on every width, fitted on
the same resamples and nested folds as the default and MiniRocket; on series of one
channel it is the default itself, by construction.

Usage::

    python benchmarks/studies/multichannel_band.py --data-home ../shared/data/uea
        [bench_resamples.py's options]
    python benchmarks/studies/multichannel_band.py --plot
        benchmarks/studies/resamples_band_on_channels.csv

``resamples_band_on_channels.csv`` beside this script (a ``panel`` column added) is the
run ``--resamples 5 --nested 5`` on the 7 UEA development sets.
"""

import sys
from pathlib import Path
from unittest.mock import patch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402
from harness import Assign, PatchedDefault, plot_differences, resampled_study  # noqa: E402

from rntk._model_selection import _grids  # noqa: E402


class _BandOnChannels(PatchedDefault):
    """The default, no setting left out on series of several channels."""

    def patches(self, X):
        return [patch.object(_grids, "MULTICHANNEL_LEFT_OUT", ())]


def install(patch=Assign):
    """Register the variant ``rntk_band_on_channels``; ``patch``: how the change is made."""
    patch.setitem(bench_resamples.VARIANTS, "rntk_band_on_channels", _BandOnChannels())


def plot(path):
    """Draw the per-set differences of the variant from the default (``.png``)."""
    return plot_differences(path, "rntk_band_on_channels", "band on channels - default "
                            "(points)", "The banded setting kept on series of several "
                            "channels, per UEA set")


def main(argv=None):
    return resampled_study(argv, install, "--variant", ("rntk_band_on_channels",), plot)


if __name__ == "__main__":
    main()
