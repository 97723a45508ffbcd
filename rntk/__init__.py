"""rntk: exact Recurrent Neural Tangent Kernels for time series.

Kernels of infinitely wide recurrent networks, as Gram matrices for sequences of any
and of different lengths, with scikit-learn estimators built on them.
"""

from . import datasets
from ._estimators import (
    RNTKClassifier,
    RNTKClassifierCV,
    RNTKRegressor,
    RNTKRegressorCV,
    ScaledConvNTKRegressor,
)
from ._kernels import (
    RNTK,
    as_object_array,
    cntk_kernel,
    mean_sensitivity,
    mlp_ntk_kernel,
    rntk_kernel,
    scaled_conv_kernel,
    scaled_conv_rho,
    sensitivity,
)
from ._nystroem import RNTKNystroem
from ._preprocessing import from_aeon
from ._representations._transformers import (
    AmplitudeSpectrum,
    BlockMeans,
    IntervalStatistics,
    SeriesImputer,
    SeriesScaler,
    ShapeQuantiles,
    ValueQuantiles,
)
from ._utils import KernelOverflowError
from ._utils._removed import removed_attribute
from ._version import __version__  # noqa: F401  (public)

__all__ = [
    # estimators
    "RNTKClassifier", "RNTKClassifierCV", "RNTKRegressor", "RNTKRegressorCV",
    "ScaledConvNTKRegressor", "RNTKNystroem",
    # kernels
    "RNTK", "rntk_kernel", "mlp_ntk_kernel", "cntk_kernel", "scaled_conv_kernel",
    "scaled_conv_rho", "sensitivity", "mean_sensitivity", "KernelOverflowError",
    # series: transformers, layouts
    "SeriesScaler", "SeriesImputer", "AmplitudeSpectrum", "ValueQuantiles", "ShapeQuantiles",
    "IntervalStatistics", "BlockMeans", "from_aeon", "as_object_array",
    # data
    "datasets",
]

#: Names public until 0.4, and what replaces them.
_REMOVED = {
    "rntk_diag": "rntk.RNTK(...).diag(X) (the same values: the kernel of each series "
                 "with itself)",
    "interpolate_missing": "rntk.SeriesImputer().fit_transform(X), or missing='interpolate' "
                           "on the estimators and loaders",
    "amplitude_spectrum": "rntk.AmplitudeSpectrum(n_bins).fit_transform(X)",
    "value_quantiles": "rntk.ValueQuantiles(n_levels).fit_transform(X)",
    "shape_quantiles": "rntk.ShapeQuantiles(n_levels).fit_transform(X)",
    "octave_shape_quantiles": "rntk.ShapeQuantiles(n_levels, dilations=(1, 2, 4, 8, 16))"
                              ".fit_transform(X)",
    "OctaveShapeQuantiles": "rntk.ShapeQuantiles(n_levels, dilations=(1, 2, 4, 8, 16))",
    "AveragedClassifier": "rntk.model_selection.AveragedClassifier",
    "AveragedRegressor": "rntk.model_selection.AveragedRegressor",
}


def __getattr__(name):
    raise removed_attribute(__name__, name, _REMOVED)
