"""The representations as functions of series, from their algorithms, for the tests.

What the public functions of 0.3 (``rntk.amplitude_spectrum``, ...) returned: the
algorithm of :mod:`rntk._representations._algorithms` on the checked sequences,
stacked (a univariate spectrum as a 2-D array). The transformers must give the same.
"""

import numpy as np

from rntk._representations._algorithms import (
    OCTAVE_DILATIONS,
    quantile_series,
    shape_quantile_series,
    spectrum_series,
)
from rntk._utils import as_sequences


def _flat(X):
    return (all(np.ndim(x) == 1 for x in X) if isinstance(X, (list, tuple))
            else np.ndim(X) == 2)


def amplitude_spectrum(X, n_bins=128):
    out = np.stack(spectrum_series(as_sequences(X), n_bins))
    return out[:, :, 0] if _flat(X) else out


def value_quantiles(X, n_levels=64):
    return np.stack(quantile_series(as_sequences(X), n_levels))


def shape_quantiles(X, n_levels=64):
    return np.stack(shape_quantile_series(as_sequences(X), n_levels))


def octave_shape_quantiles(X, n_levels=64):
    return np.stack(shape_quantile_series(as_sequences(X), n_levels, OCTAVE_DILATIONS))
