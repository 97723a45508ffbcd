"""The series representations, in one place: algorithms, table and transformers.

A representation replaces each series by another sequence that the network reads (its
amplitude spectrum, quantile functions of its values and local shapes); a preparation
more generally changes the series before the kernel (also ``normalize`` and ``pool``).

* :mod:`._algorithms`: the transforms of sequences (list of ``(T_i, m)`` arrays);
* :mod:`._table`: :data:`PREPARATIONS`, one row per estimator parameter (name, default,
  constraint, documentation, transform), from which the estimators, the searches and the
  grids take them;
* :mod:`._transformers`: the scikit-learn transformers of the public API (exported by
  :mod:`rntk`).
"""

from ._algorithms import OCTAVE_DILATIONS, SHAPE_DILATIONS
from ._table import (
    MISSING_CONSTRAINT,
    PREPARATION_CONSTRAINTS,
    PREPARATION_DEFAULTS,
    PREPARATION_NAMES,
    PREPARATIONS,
    REPRESENTATIONS,
    Preparation,
    check_preparation,
    fit_preparations,
    preparation_doc,
    prepare_series,
)

__all__ = ["MISSING_CONSTRAINT", "OCTAVE_DILATIONS", "PREPARATIONS", "PREPARATION_CONSTRAINTS",
           "PREPARATION_DEFAULTS", "PREPARATION_NAMES", "REPRESENTATIONS", "SHAPE_DILATIONS",
           "Preparation", "check_preparation", "fit_preparations",
           "prepare_series", "preparation_doc"]
