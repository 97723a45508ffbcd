"""Finite-width recurrent networks in PyTorch (requires the ``torch`` extra).

``import rntk`` never needs torch; ``import rntk.nn`` does.
"""

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "rntk.nn needs PyTorch: install the CPU wheel with `pip install torch` "
        "(or `pip install rntk[torch]`)"
    ) from exc

from .._kernels._torch import rntk_gram_log_gradient, rntk_kernel_torch  # noqa: E402
from . import extrapolation  # noqa: E402, F401  (public submodule)
from ._classifier import RNNClassifier  # noqa: E402
from ._elman import ElmanRNN  # noqa: E402
from ._family import RNTKNetwork  # noqa: E402
from ._linear import LinearRNN, ScaledConv1d, impulse_response  # noqa: E402
from ._ntk import empirical_ntk  # noqa: E402

__all__ = ["ElmanRNN", "RNTKNetwork", "empirical_ntk", "RNNClassifier",
           "LinearRNN", "ScaledConv1d", "impulse_response",
           "rntk_kernel_torch", "rntk_gram_log_gradient"]
