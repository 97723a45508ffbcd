"""The level settings on a signed log of the values, where series keep their level.

On the development sets whose series are not scaled (17 of the 48 UCR sets: the
unit-RMS test of the default, :func:`rntk.model_selection.unit_rms`, is false), the
level settings read the values as given. Where those are counts or powers spread over
decades, a few large values dominate every inner product: ``MelbournePedestrian``
(hourly pedestrian counts, 0 to 9,682; the median 275) is 88.2% by the banded level
setting, and 97.8% once each value ``x`` is replaced by

    ``sign(x) log(1 + |x| / s)``,  ``s``: the median of ``|x|`` over the training values

(per channel: a scale learnt from the training set, so that the map is the same for
every series, scale-free in the units of the data, near linear below ``s`` and
logarithmic above). ``PLAID`` (currents, median 0.017, 95th percentile 78): 46.7% to
77.8%; ``HouseTwenty`` (powers): 77.3% to 86.6% (official splits, that setting alone;
MiniRocket 96.4% and 94.0% on the first two). The default's average of three: 92.8%
on ``MelbournePedestrian``.

Three variants of the default, each only on training sets that are not unit-RMS (on the
others the default itself, by construction):

* ``rntk_with_log_band``: the banded level setting on the signed log as an eighth
  setting (``log_band``);
* ``rntk_log_level_band``: that setting in place of the banded level setting (seven
  settings, the same time);
* ``rntk_log_levels``: both level settings (banded and pooled) on the signed log;
* ``rntk_log_level_band_with_linear``: ``rntk_log_level_band`` with, on every set, the
  linear kernel of the series in place as an eighth setting (``linear_member.py``'s
  member): the two changes closest to the bar, together.

It is a study: the signed log rides on the ``intervals`` parameter of the estimators
(its representation step replaced for the run, the scale fitted with the other
preparations), as ``rocket_front_end.py``'s front end does; the methods are registered
in ``bench_resamples.VARIANTS`` and fitted on the same resamples (and nested folds) as
the default and MiniRocket.

``--plot CSV`` draws, from a ``results.csv`` of such runs (``resamples_with_log_levels.csv``
beside this script: a ``panel`` column added), the per-set difference of
``rntk_log_level_band`` from the default under each protocol, into ``CSV`` with ``.png``
(``resamples_with_log_and_linear.csv``: of ``rntk_log_level_band_with_linear``).

``--scale mean`` scales the log by the mean of ``|x|`` instead of the median (the median
was chosen among five scales looked at on official test splits; the mean is the check
that the gain does not rest on that choice).

Usage::

    python benchmarks/studies/log_levels.py [--scale mean] [bench_resamples.py's options]
    python benchmarks/studies/log_levels.py --plot benchmarks/studies/resamples_with_log_levels.csv
"""

import argparse
import csv
import sys
from pathlib import Path
from unittest.mock import patch

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402
from harness import Assign, PatchedDefault, plot_differences, resampled_study  # noqa: E402

from rntk._estimators import _base  # noqa: E402
from rntk._model_selection import _grids, _sources  # noqa: E402
from rntk._representations import _table  # noqa: E402
from rntk._utils._sequences import as_sequences, log_scales, signed_log  # noqa: E402

#: The value of ``intervals`` that marks the signed log (any size the table accepts).
LOG_MARK = 2
#: The fitted attribute: the scale ``s`` of each channel.
SCALE = "log_scale_"


#: The statistic of ``|x|`` that is the scale (``--scale``): "median", or "mean".
SCALE_STATISTIC = "median"


def log_scale(seqs):
    """Per channel, the median of ``|x|`` over every value of the training series.

    ``normalize="log"``'s scale (:func:`rntk._utils._sequences.log_scales`: the mean of
    ``|x|`` where the median is 0, 1 for an all-zero channel); ``SCALE_STATISTIC =
    "mean"``: the mean of ``|x|`` throughout.
    """
    if SCALE_STATISTIC != "mean":
        return log_scales(seqs)
    mean = np.abs(np.concatenate(seqs)).mean(axis=0)
    return np.where(mean > 0, mean, 1.0)


def install(patch=Assign):
    """Make ``intervals=LOG_MARK`` the signed log for this process; register the variants.

    ``patch``: how each change is made (``setattr``, ``setitem``).
    """
    row = next(p for p in _table.PREPARATIONS if p.name == "intervals")

    def representation(seqs, value, state):
        return signed_log(seqs, state[SCALE])

    patch.setitem(row.steps, "representation", representation)
    fit = _base.fit_preparations

    def fit_preparations(seqs, values):
        state = fit(seqs, values)
        if values.get("intervals") is not None:
            state[SCALE] = log_scale(seqs)
        return state

    patch.setattr(_base, "fit_preparations", fit_preparations)
    sized = _grids._sized

    def sized_as_without(setting, *args, **kwargs):  # pooled as the banded level setting
        if setting.get("intervals") != [LOG_MARK]:
            return sized(setting, *args, **kwargs)
        g = sized({k: v for k, v in setting.items() if k != "intervals"}, *args, **kwargs)
        return {**g, "intervals": [LOG_MARK]}

    patch.setattr(_grids, "_sized", sized_as_without)
    # a refit from the series the search kept prepared restores the scale with them
    patch.setattr(_sources, "_FITTED", _sources._FITTED + (SCALE,))
    log_band = {**_grids._LEVEL["band"], "intervals": [LOG_MARK]}
    log_pool = {**_grids._LEVEL["pool4"], "intervals": [LOG_MARK]}
    for name, settings in (("rntk_with_log_band", {"log_band": log_band}),
                           ("rntk_log_level_band", {"level_band": log_band}),
                           ("rntk_log_levels", {"level_band": log_band,
                                                "level_pool": log_pool})):
        patch.setitem(bench_resamples.VARIANTS, name, _Levels(settings))
    # the two changes closest to the bar, together (linear_member.py's eighth setting on
    # every set, and the log level band where the series keep their level)
    linear = {"linear": bench_resamples.EXTRA_SETTINGS["linear"]}
    patch.setitem(bench_resamples.VARIANTS, "rntk_log_level_band_with_linear",
                  _Levels({"level_band": log_band}, linear))


class _Levels(PatchedDefault):
    """The default, its settings updated by ``settings`` where the series keep their level.

    ``always``: settings added on every set. ``unit_rms_``: whether the training series
    were unit-RMS (the default, unchanged but for ``always``).
    """

    def __init__(self, settings, always=None):
        self.settings, self.always = settings, always or {}

    def patches(self, X):
        self.unit_rms_ = _grids.unit_rms(as_sequences(X))
        grid = dict(_grids.DEFAULT_SETTINGS)
        if not self.unit_rms_:
            grid.update(self.settings)
        grid.update(self.always)
        return [patch.object(_grids, "DEFAULT_SETTINGS", grid)]


def plot(path):
    """Draw the per-set differences of the signed log in place of the level band (``.png``).

    The rows hold only the sets where the variant is not the default (17 UCR sets, the 7
    UEA sets): the means in the titles are over those. Rows of
    ``rntk_log_level_band_with_linear`` (every set): that variant's differences instead.
    """
    with open(path, newline="") as f:
        methods = {r["method"] for r in csv.DictReader(f)}
    if "rntk_log_level_band_with_linear" in methods:
        return plot_differences(path, "rntk_log_level_band_with_linear",
                                "log level band + linear member - default (points)",
                                "The log level band and the linear member together, per set")
    return plot_differences(path, "rntk_log_level_band",
                            "log level band - default (points)",
                            "The banded level setting on a signed log of the values, per "
                            "set whose series are not unit-RMS")


def main(argv=None):
    global SCALE_STATISTIC
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    p.add_argument("--scale", choices=("median", "mean"), default="median",
                   help="the statistic of |x| that scales the log (default: median)")
    args, rest = p.parse_known_args(argv)
    SCALE_STATISTIC = args.scale
    return resampled_study(rest, install, "--variant",
                           ("rntk_with_log_band", "rntk_log_level_band"), plot)


if __name__ == "__main__":
    main()
