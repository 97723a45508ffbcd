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
    rntk_diag,
    rntk_kernel,
    scaled_conv_kernel,
    scaled_conv_rho,
    sensitivity,
)
from ._model_selection import AveragedClassifier, AveragedRegressor
from ._nystroem import RNTKNystroem
from ._preprocessing import (
    amplitude_spectrum,
    from_aeon,
    interpolate_missing,
    octave_shape_quantiles,
    shape_quantiles,
    value_quantiles,
)
from ._transformers import (
    AmplitudeSpectrum,
    BlockMeans,
    OctaveShapeQuantiles,
    SeriesImputer,
    SeriesScaler,
    ShapeQuantiles,
    ValueQuantiles,
)
from ._utils import KernelOverflowError
from ._version import __version__  # noqa: F401  (public)

__all__ = [
    "RNTK", "RNTKClassifier", "RNTKRegressor", "RNTKClassifierCV", "RNTKRegressorCV",
    "datasets", "rntk_kernel", "rntk_diag", "mlp_ntk_kernel", "cntk_kernel",
    "scaled_conv_rho", "scaled_conv_kernel", "ScaledConvNTKRegressor",
    "sensitivity", "mean_sensitivity", "KernelOverflowError", "SeriesScaler",
    "as_object_array", "RNTKNystroem", "interpolate_missing", "AveragedClassifier",
    "AveragedRegressor", "AmplitudeSpectrum", "ValueQuantiles", "ShapeQuantiles", "BlockMeans",
    "SeriesImputer", "amplitude_spectrum", "value_quantiles", "shape_quantiles", "from_aeon",
    "OctaveShapeQuantiles", "octave_shape_quantiles"]
