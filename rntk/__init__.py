"""rntk: exact Recurrent Neural Tangent Kernels for time series.

Kernels of infinitely wide recurrent networks, as Gram matrices for sequences of any
and of different lengths, with scikit-learn estimators built on them.
"""

from . import datasets
from ._estimators import RNTKClassifier, RNTKClassifierCV, RNTKRegressor, RNTKRegressorCV
from ._kernels import RNTK
from ._mlp_ntk import mlp_ntk_kernel
from ._rntk import rntk_diag, rntk_kernel
from ._scaled_conv import scaled_conv_kernel, scaled_conv_rho
from ._scaled_conv_estimator import ScaledConvNTKRegressor
from ._sensitivity import mean_sensitivity, sensitivity

__version__ = "0.1.0"

__all__ = [
    "RNTK", "RNTKClassifier", "RNTKRegressor", "RNTKClassifierCV", "RNTKRegressorCV",
    "datasets", "rntk_kernel", "rntk_diag", "mlp_ntk_kernel",
    "scaled_conv_rho", "scaled_conv_kernel", "ScaledConvNTKRegressor",
    "sensitivity", "mean_sensitivity"]
