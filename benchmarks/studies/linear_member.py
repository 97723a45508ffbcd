"""The linear kernel of the series in place as a member of the classifier, on resamples.

Where the default loses most to MiniRocket on resamples of the development panel, the
training sets are small and the classes differ by amounts at fixed places of the series
(the spectra of ``Beef`` and ``OliveOil``: 30 training series): every setting of the
default compares series up to shifts (bands of 8 readouts, pools compared at any shift)
or reads distributions of values and shapes, and a ReLU network's kernel of series this
alike behaves as a distance (``Beef``: 65% by the MLP NTK of the whole series, 67% by the
nearest neighbour), where a linear readout of the values in place separates the classes
(91% by ridge on the series as given).

The member: ``rntk.RNTK(activation="linear", sigma_w=0, sigma_b=0, readout="mean",
readout_band=0)`` on the series as given (``normalize=False``), the NTK of the one-layer
linear network without recurrence read out at every step, each readout paired with the
same step of the other series only::

    K(x, x') = 2 / (T T') sum_k <x_{T-k}, x'_{T'-k}>   (series aligned at their ends),

the linear kernel of the series in place, divided by the product of their lengths (the
mean readout); the ridges of the default, the same leave-one-out selection.

It is added to the default classifier grid as an eighth setting, plain (``linear``) and
gated (``linear_gated``: in the average only where the paired 0/1 leave-one-out errors
fall by more than two standard errors, :func:`harness.classifier_gate`), by
``bench_resamples.py --with``: the default, MiniRocket and the default with each, on the
same stratified resamples of each development set (and ``--nested K``: nested CV of the
training sets). In the average of three the member is one vote of three, however far
ahead its leave-one-out accuracy: ``--variant rntk_with_linear_level`` adds it with the
rule of :func:`level_members` (the average keeps only the members level with the best),
and ``--variant rntk_with_level_only`` is that rule on the default's seven settings (the
methods of ``bench_resamples.VARIANTS`` this study registers).

``--plot CSV`` draws, from a ``results.csv`` of such runs (``resamples_with_linear.csv``
beside this script: a ``panel`` column added, the UCR resamples, nested folds and draws of
30 training series, and the UEA resamples), the per-set difference of the default with
the plain member from the default under each protocol, into ``CSV`` with ``.png``.

Usage::

    python benchmarks/studies/linear_member.py [bench_resamples.py's options]
    python benchmarks/studies/linear_member.py --plot benchmarks/studies/resamples_with_linear.csv
"""

import sys
from pathlib import Path
from unittest.mock import patch

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402
from harness import (  # noqa: E402
    classifier_gate,
    gated_rules,
    plot_differences,
    resampled_study,
    zero_one_errors,
)

from rntk._model_selection import _grids, _refit, _search  # noqa: E402
from rntk._model_selection._search import BaseKernelSearchCV  # noqa: E402


def level_members(top, loo, y, z=None):
    """Return the positions in ``top`` of the members level with the best one.

    ``top``: the averaged ``(candidate, Gram)``, best first; ``loo``: each candidate's
    leave-one-out decisions. A member is dropped where its 0/1 leave-one-out errors
    exceed the best member's by more than ``z`` standard errors of the mean paired
    difference (``None``: ``GATE_STANDARD_ERRORS``).
    """
    z = _grids.GATE_STANDARD_ERRORS if z is None else z
    err = [zero_one_errors(loo[i], y) for i, _ in top]
    keep = [0]
    for k in range(1, len(err)):
        d = err[k] - err[0]
        if not (d.mean() > 0 and d.mean() > z * d.std(ddof=1) / np.sqrt(len(d))):
            keep.append(k)
    return keep


def level_refit(refit):
    """``refit_best`` that averages only :func:`level_members` (a ``_Level`` fit's)."""
    def refit_best(search, plan, outcome):
        top = outcome.top
        if not (plan.n_average > 1 and len(top) > 1
                and all(i in outcome.loo for i, _ in top)):
            return refit(search, plan, outcome)
        keep = level_members(top, outcome.loo, plan.y)
        n_average, plan.n_average = plan.n_average, len(keep)
        try:
            return refit(search, plan, outcome._replace(top=[top[k] for k in keep]))
        finally:
            plan.n_average = n_average
    return refit_best


class _Level(bench_resamples._Without):
    """The default (with ``extra`` settings) fitted under :func:`level_members`' rule."""

    def __call__(self):
        return _Level(self.names, self.extra)

    def fit(self, X, y):
        with patch.object(_search, "refit_best", level_refit(_search.refit_best)):
            return super().fit(X, y)


def install():
    """Register the setting ``linear_gated`` and the methods of :func:`level_members`' rule.

    ``--with linear_gated``: the member, gated; ``--variant rntk_with_linear_level``: the
    member under the rule; ``--variant rntk_with_level_only``: the rule alone.
    """
    extra = bench_resamples.EXTRA_SETTINGS
    extra["linear_gated"] = extra["linear"]
    BaseKernelSearchCV._default_rules = gated_rules(BaseKernelSearchCV._default_rules,
                                                    ("linear_gated",))
    _refit.gated_top = classifier_gate  # this study fits classifiers only
    bench_resamples.VARIANTS["rntk_with_linear_level"] = _Level((), ("linear",))
    bench_resamples.VARIANTS["rntk_with_level_only"] = _Level(())


def plot(path):
    """Draw the per-set differences of the plain member from the default (``.png``)."""
    return plot_differences(path, "rntk_with_linear",
                            "default + linear member - default (points)",
                            "The linear kernel of the series in place as an eighth setting, "
                            "per set")


def main(argv=None):
    return resampled_study(argv, install, "--with", ("linear", "linear_gated"), plot)


if __name__ == "__main__":
    main()
