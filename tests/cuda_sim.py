"""numba's CUDA simulator for the tests of the CUDA engine, set up in one place.

numba.cuda picks the simulator when it is first imported, from
``numba.config.ENABLE_CUDASIM`` (which ``NUMBA_ENABLE_CUDASIM`` sets): the flag is set
just before that import and restored after, so the rest of the suite is unaffected. If
numba.cuda was imported before (a real GPU target), the tests run on the GPU when one is
usable and are skipped otherwise. Without numba-cuda they are skipped.
"""

import importlib.util
import sys

import pytest


def simulated_cuda(module_level=False):
    """Return ``numba.cuda`` on the simulator (or a usable GPU), else skip the test(s).

    Parameters
    ----------
    module_level : bool, default=False
        Skip the whole calling module (a call at import time) rather than one test.

    Returns
    -------
    cuda : module
        ``numba.cuda``.
    """
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed (extra 'cuda')",
                    allow_module_level=module_level)
    import numba

    if "numba.cuda" not in sys.modules:
        previous = numba.config.ENABLE_CUDASIM
        numba.config.ENABLE_CUDASIM = 1
        try:
            from numba import cuda
        finally:
            numba.config.ENABLE_CUDASIM = previous
    else:
        from numba import cuda
    if not cuda.is_available():
        pytest.skip("numba.cuda was imported for a GPU, and none is usable",
                    allow_module_level=module_level)
    return cuda
