"""Private home of the kernels: one module per family, the hyperparameter table, a registry.

The RNTK has three engines side by side, below one resolver of its options
(``_params.resolve_params``) and above one module of shared preparation (``_shared``):
Numba (``_rntk``), CUDA (``_cuda``, imported on first use) and torch (``_torch``,
differentiable; imported on first use, re-exported by :mod:`rntk.nn`).
"""

from ._cntk import cntk_kernel
from ._gp import RNTK, as_object_array
from ._mlp_ntk import mlp_ntk_kernel
from ._params import RNTK_DEFAULTS, RNTK_PARAM_NAMES, RNTK_PARAMS, RNTK_PARAMS_DOC
from ._registry import KERNELS, KernelSpec
from ._rntk import rntk_diag, rntk_kernel
from ._scaled_conv import scaled_conv_kernel, scaled_conv_rho
from ._sensitivity import mean_sensitivity, sensitivity

__all__ = ["KERNELS", "RNTK", "as_object_array", "RNTK_DEFAULTS", "RNTK_PARAMS", "RNTK_PARAMS_DOC",
           "RNTK_PARAM_NAMES", "cntk_kernel", "KernelSpec", "mean_sensitivity", "mlp_ntk_kernel",
           "rntk_diag", "rntk_kernel", "scaled_conv_kernel", "scaled_conv_rho", "sensitivity"]
