"""The fused CUDA engine of the RNTK, for one or many kernel settings at once.

:func:`rntk.rntk_kernel` with ``device="cuda"`` runs this engine in float64; this module
adds float32 and the batched call that computes the Grams of many settings in one
launch (what the searches of :class:`rntk.RNTKClassifierCV` use with
``device="cuda"``). It needs the extra ``cuda`` (``pip install "rntk[cuda]"``); importing
it never imports ``numba.cuda``, which loads on the first kernel call.
"""

from ._kernels._cuda import MAX_LAYERS, cuda_available, rntk_kernel_cuda, rntk_kernel_cuda_batched

__all__ = ["MAX_LAYERS", "cuda_available", "rntk_kernel_cuda", "rntk_kernel_cuda_batched"]
