"""What the family offers where training series are few: shift invariance, one ridge.

Two variants of the default, each acting only where the training set has at most
``SMALL`` series (fixed before any run: the drawn-to-30 protocol changes on every set,
the official sizes on 13 of the 48 UCR sets); on larger sets each is the default by
construction.

**Shift invariance** (``rntk_shift_invariant``): kernels augmented by shifts. The
augmentation that keeps a kernel exact is the kernel of the network that reads shifted
copies of its input and averages its outputs,
``f(x) = (1 / S) sum_s g(c_s x)``, with ``c_s`` the ``S`` crops of ``x``: its tangent
kernel (and its NNGP kernel) is the average over pairs of crops,

    K_S(x, y) = (1 / S^2) sum_{s, s'} K(c_s x, c_{s'} y),

positive semi-definite, with one set of weights shared by the copies. Here ``S = 3``:
``c_s x = x[s c : T - (2 - s) c]``, ``c = floor(T / 10)`` steps of each prepared series
(of its own length ``T``), so that two series are compared at every shift of up to a
fifth of their length, triangularly weighted (1, 2, 3, 2, 1 over the shifts ``-2c ..
2c``). The crops are of the series as each setting prepares them (pooled, scaled).

Which settings change: the four that read the series in time order (the banded and
pooled networks on unit-RMS series and on the series as given). The other three read
quantile functions of the values and local shapes, or amplitude spectra: the first are
invariant to where a shape occurs, the second to circular shifts, already. The band
itself compares readouts at most 8 steps apart (up to about 6% of a 128-step
series), the pooled settings every pair of readouts: the crops add shifts up to 20%
to the first, and little to the second.

The variant replaces those four Grams by ``K_S``; it costs ``S^2 = 9`` times them.

**One ridge** (``rntk_one_ridge``). The default picks each setting's ridge among nine
(``1e-6`` to ``1e2``, relative to the Gram's mean diagonal) by leave-one-out, whose
accuracy moves by one series in 30 (3.3 points) between neighbouring ridges: on few
series that choice may be mostly noise. The variant searches the settings at one ridge,
``RIDGE = 1e-1``, the ridge of the default's prior (chosen on draws of one series per
class), so that the leave-one-out ranks the settings only.

Usage::

    python benchmarks/studies/few_series.py [bench_resamples.py's options]
    python benchmarks/studies/few_series.py --plot benchmarks/studies/resamples_few_series.csv

``resamples_few_series.csv`` beside this script (a ``panel`` column added) holds, for each
variant, the runs ``--train-size 30 --resamples 5`` on the 48 UCR sets and ``--resamples 5
--nested 5`` on the 14 whose training sets have at most 50 series or whose nested
training folds do (``Car``, 60); the default's and MiniRocket's rows once (the same
accuracies in both variants' runs). ``--plot`` draws one PNG per variant beside it.
"""

import sys
from pathlib import Path
from unittest.mock import patch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from harness import (  # noqa: E402
    Assign,
    PatchedDefault,
    install_variants,
    plot_variants,
    resampled_study,
)

from rntk._estimators._base import RNTKKernelMixin  # noqa: E402
from rntk._model_selection import _grids  # noqa: E402
from rntk._utils._sequences import as_sequences  # noqa: E402

#: Crops per series.
CROPS = 3
#: Each crop's offset from the last, as a fraction of the series' length.
STEP = 0.1
#: Training sets of at most this many series are changed by the variants.
SMALL = 50
#: The one ridge of ``rntk_one_ridge`` (relative to the Gram's mean diagonal).
RIDGE = 1e-1
#: Representations of a setting that reads the series in time order: none of them set.
_NOT_IN_TIME = ("spectrum", "shapes", "octave_shapes", "quantiles", "intervals")


def crops(xs, n_crops=CROPS, step=STEP):
    """Return the ``n_crops`` crops of each series, series by series (``n * n_crops``).

    Crop ``s`` of a series of ``T`` steps: steps ``s c`` to ``T - (n_crops - 1 - s) c``,
    ``c = floor(step T)`` (every crop the series itself when ``c = 0``).
    """
    out = []
    for x in xs:
        t = len(x)
        c = int(step * t)
        out += [x[s * c:t - (n_crops - 1 - s) * c] for s in range(n_crops)]
    return out


def invariant_gram(gram, xs, ys=None, n_crops=CROPS, step=STEP):
    """Return ``K_S``: ``gram`` of the crops, averaged over each pair's crop pairs."""
    cx = crops(xs, n_crops, step)
    K = gram(cx, None if ys is None else crops(ys, n_crops, step))
    n, m = len(xs), len(xs) if ys is None else len(ys)
    return K.reshape(n, n_crops, m, n_crops).mean(axis=(1, 3))


def in_time(est):
    """Return whether the setting ``est`` reads its series in time order."""
    return est.readout == "mean" and all(getattr(est, k, None) is None for k in _NOT_IN_TIME)


class _ShiftInvariant(PatchedDefault):
    """The default, its settings in time order shift-invariant on small training sets.

    ``small_``: whether the training set had at most :data:`SMALL` series.
    """

    def _patch(self):
        if not self.small_:
            return []
        plain = RNTKKernelMixin._gram

        def gram(est, xs, ys=None):
            if not in_time(est):
                return plain(est, xs, ys)
            return invariant_gram(lambda a, b: plain(est, a, b), xs, ys)

        return [patch.object(RNTKKernelMixin, "_gram", gram)]

    def patches(self, X):
        self.small_ = len(as_sequences(X)) <= SMALL
        return self._patch()

    def patches_at_predict(self):
        return self._patch()


class _OneRidge(PatchedDefault):
    """The default, its settings searched at the one ridge :data:`RIDGE` on small sets.

    ``small_``: whether the training set had at most :data:`SMALL` series.
    """

    def patches(self, X):
        self.small_ = len(as_sequences(X)) <= SMALL
        return [patch.object(_grids, "DEFAULT_ALPHA", [RIDGE])] if self.small_ else []


#: The variants, by method name.
VARIANTS = {"rntk_shift_invariant": _ShiftInvariant, "rntk_one_ridge": _OneRidge}


def install(patch=Assign):
    """Register the variants of :data:`VARIANTS`; ``patch``: how the change is made."""
    install_variants({name: variant() for name, variant in VARIANTS.items()}, patch)


def plot(path):
    """Draw the per-set differences of each variant from the default (``.png`` each)."""
    return plot_variants(path, {
        "rntk_shift_invariant": "the settings in time order averaged over 3 crops, "
                                f"training sets of at most {SMALL} series",
        "rntk_one_ridge": f"the settings searched at the one ridge {RIDGE:g}, training "
                          f"sets of at most {SMALL} series"})


def main(argv=None):
    return resampled_study(argv, install, "--variant", tuple(VARIANTS), plot)


if __name__ == "__main__":
    main()
