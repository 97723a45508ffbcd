"""The shapes at every octave up to an eighth of the longest series, on resamples.

The setting of the shapes at every octave (``octave_shapes``) reads the quantile
functions of the values and of the differences and curvatures at 1, 2, 4, 8 and 16 steps,
whatever the length of the series. MiniRocket's dilations are the powers of two (about)
up to ``(T - 1) / 8``, so that a kernel of nine taps spans the series: on series of a
thousand steps it reads shapes eight times longer than the longest the octave setting
sees. On the official training sets, the octave setting's own leave-one-out accuracy
with every octave up to ``(T - 1) / 8`` rises where series are long (``Haptics``, 1,092
steps: 42.6% to 60.6%; ``EOGHorizontalSignal``, 1,250: 86.2% to 90.9%; ``OliveOil``, 570:
73.3% to 86.7%) and the default's test accuracy with it (``Haptics`` 50.6% to 55.2%,
``EOGHorizontalSignal`` 58.3% to 61.6%): a first look on the official splits, which
chose nothing; this study is the evidence.

The variant ``rntk_octave_reach``: the default with the octave setting's dilations
``1, 2, 4, ..., D``, ``D`` the largest power of two with ``8 D <= T - 1`` (``T``: the
longest training series), at least 16 (the default's). Training sets of at most 256
steps keep the default, by construction (27 of the 48 UCR sets change). It rides on
the octave setting's representation step, replaced for the fit and the prediction of the
variant only (:meth:`harness.PatchedDefault.patches_at_predict`).

Usage::

    python benchmarks/studies/octave_reach.py [bench_resamples.py's options]
    python benchmarks/studies/octave_reach.py --plot
        benchmarks/studies/resamples_with_octave_reach.csv

``resamples_with_octave_reach.csv`` beside this script (a ``panel`` column added) holds
the runs ``--resamples 5 --nested 5`` on the 27 UCR sets whose training series are
longer than 256 steps and on the two such UEA sets (``StandWalkJump``,
``UWaveGestureLibrary``).
"""

import sys
from pathlib import Path
from unittest.mock import patch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402
from harness import Assign, PatchedDefault, plot_differences, resampled_study  # noqa: E402

from rntk._representations import _algorithms, _table  # noqa: E402
from rntk._utils._sequences import as_sequences  # noqa: E402

#: The octave setting's dilations in the default.
DEFAULT_DILATIONS = _algorithms.OCTAVE_DILATIONS


def octave_reach(longest):
    """Return the dilations ``1, 2, ..., D``: ``8 D <= longest - 1``, ``D >= 16``."""
    top = DEFAULT_DILATIONS[-1]
    while 16 * top <= longest - 1:
        top *= 2
    return tuple(2 ** k for k in range(top.bit_length()))


class _Reach(PatchedDefault):
    """The default, its octave setting at the octaves of :func:`octave_reach`.

    ``dilations_``: those of the training series' longest.
    """

    def _patch(self):
        row = next(p for p in _table.PREPARATIONS if p.name == "octave_shapes")
        dilations = self.dilations_

        def representation(seqs, value, state):
            return _algorithms.shape_quantile_series(seqs, value, dilations=dilations)

        return [patch.dict(row.steps, {"representation": representation})]

    def patches(self, X):
        self.dilations_ = octave_reach(max(len(x) for x in as_sequences(X)))
        return self._patch()

    def patches_at_predict(self):
        return self._patch()


def install(patch=Assign):
    """Register the variant ``rntk_octave_reach``; ``patch``: how the change is made."""
    patch.setitem(bench_resamples.VARIANTS, "rntk_octave_reach", _Reach())


def plot(path):
    """Draw the per-set differences of the variant from the default (``.png``).

    The rows hold only the sets where the variant is not the default (27 UCR sets, 2 UEA
    sets): the means in the titles are over those.
    """
    return plot_differences(path, "rntk_octave_reach", "octaves to (T - 1) / 8 - default "
                            "(points)", "The octave setting up to an eighth of the longest "
                            "series, per set with series over 256 steps")


def main(argv=None):
    return resampled_study(argv, install, "--variant", ("rntk_octave_reach",), plot)


if __name__ == "__main__":
    main()
