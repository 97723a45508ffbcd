"""Private home of the scikit-learn estimators on sequence kernels."""

from ._base import PrecomputedSequenceEstimator
from ._cv import RNTKClassifierCV, RNTKRegressorCV
from ._rntk import RNTKClassifier, RNTKRegressor
from ._scaled_conv import ScaledConvNTKRegressor

__all__ = ["PrecomputedSequenceEstimator", "RNTKClassifier", "RNTKClassifierCV",
           "RNTKRegressor", "RNTKRegressorCV", "ScaledConvNTKRegressor"]
