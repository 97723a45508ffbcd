"""Cheaper versions of the default, on resamples: how much accuracy the time bar costs.

The default takes about twice MiniRocket's time on the UCR panel, against a bar of
1.5x; no exact saving larger than about 1% of the panel is left, and dropping any one
of the seven settings costs 0.23-0.55 points by nested CV. Two levers that change
predictions remain, each measured here alone and together:

* **Screening from a few hundred series** (``rntk_screen_150``):
  ``RNTKClassifierCV(screen=150)``. ``screen="auto"`` scores every setting on all the
  training series unless there are more than 2,000 (a stratified subsample of 1,000
  first, then on all series only the settings the refit can use), so it never screens
  on the development panel, whose largest training set has 1,200 series. With 150,
  training sets of more than 300 series (16 of the 48 UCR sets at the official sizes,
  which take 70% of the default's time there) score the seven settings on 150 series
  first, then the best three on all of them.
* **Half the band** (``rntk_band_4``): the five banded settings (the band on unit-RMS
  series and on the series as given, the spectrum, the two shape settings) compare
  readouts at most 4 steps apart instead of ``MEAN_BAND = 8``: 9 recursions per pair
  of series instead of 17. Every set changes.
* Both (``rntk_band_4_screen_150``).

Usage::

    python benchmarks/studies/cheaper_default.py [bench_resamples.py's options]
    python benchmarks/studies/cheaper_default.py --plot
        benchmarks/studies/resamples_cheaper_default.csv

``resamples_cheaper_default.csv`` beside this script (a ``panel`` column added) holds the
runs ``--resamples 5 --nested 5``: of ``rntk_screen_150`` on the 16 sets it changes, of
the other two on the 48 sets; the default's and MiniRocket's rows once (the same
accuracies in each run). ``--plot`` draws one PNG per variant beside it.
"""

import sys
from pathlib import Path
from unittest.mock import patch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402, F401 (the registry the variants join)
from harness import (  # noqa: E402
    Assign,
    PatchedDefault,
    install_variants,
    plot_variants,
    resampled_study,
)

from rntk._model_selection import _grids  # noqa: E402

#: The subsample of the screening variants (the screening runs above twice as many series).
SCREEN = 150
#: The band of the half-band variants.
BAND = 4


class _Cheaper(PatchedDefault):
    """The default with the band ``band`` (``None``: the default's) and ``screen``."""

    def __init__(self, band=None, screen="auto"):
        self.band, self.screen = band, screen

    def patches(self, X):
        if self.band is None:
            return []
        settings = {name: {**s, "readout_band": [self.band]} if "readout_band" in s else s
                    for name, s in _grids.DEFAULT_SETTINGS.items()}
        return [patch.object(_grids, "DEFAULT_SETTINGS", settings)]

    def search(self):
        """Return the unfitted search the variant fits."""
        return super().search().set_params(screen=self.screen)


#: The variants, by method name.
VARIANTS = {f"rntk_screen_{SCREEN}": _Cheaper(screen=SCREEN),
            f"rntk_band_{BAND}": _Cheaper(band=BAND),
            f"rntk_band_{BAND}_screen_{SCREEN}": _Cheaper(band=BAND, screen=SCREEN)}


def install(patch=Assign):
    """Register the variants of :data:`VARIANTS`; ``patch``: how the change is made."""
    install_variants(VARIANTS, patch)


def plot(path):
    """Draw the per-set differences of each variant from the default (``.png`` each)."""
    return plot_variants(path, {name: name for name in VARIANTS})


def main(argv=None):
    return resampled_study(argv, install, "--variant", tuple(VARIANTS), plot)


if __name__ == "__main__":
    main()
