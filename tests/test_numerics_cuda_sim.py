"""The CUDA engine for a series and its copy, on numba's CUDA simulator (or a GPU).

The simulator is set up by ``tests/cuda_sim.py``. Short series: the simulator runs every
thread in Python.
"""


import numpy as np
import pytest

from tests.cuda_sim import simulated_cuda

cuda = simulated_cuda(module_level=True)

from rntk import rntk_kernel  # noqa: E402
from rntk._kernels._cuda import rntk_kernel_cuda  # noqa: E402


@pytest.mark.parametrize("activation", ["relu", "erf"])
@pytest.mark.parametrize("length, n_layers", [(1, 1), (60, 2), (400, 1)])
def test_cuda_copy_has_the_kernel_of_the_series_with_itself(activation, length, n_layers):
    # before: K[0, 1] / K[0, 0] - 1 was -2e-6 at T=400 (ReLU)
    rng = np.random.default_rng(length)
    x = rng.normal(size=length)
    X = [x, rng.normal(size=max(1, length // 2)), x.copy(), 2.0 * x]
    K = rntk_kernel_cuda(X, activation=activation, n_layers=n_layers)
    assert abs(K[0, 2] / K[0, 0] - 1) <= 1e-12
    assert abs(K[1, 2] / K[1, 0] - 1) <= 1e-12
    if activation == "relu":  # homogeneous: K(x, 2 x) = 2 K(x, x)
        assert abs(K[0, 3] / (2 * K[0, 0]) - 1) <= 1e-12
    Kc = rntk_kernel(X, activation=activation, n_layers=n_layers)
    assert np.max(np.abs(K - Kc)) <= 1e-12 * np.max(np.abs(Kc))


def test_cuda_erf_gram_is_psd_at_large_amplitudes():
    t = np.arange(1, 21)
    X = np.stack([3000 * np.sin(t), 3000 * np.sin(t), 3000 * np.cos(t)])
    K = rntk_kernel_cuda(X, activation="erf")
    ev = np.linalg.eigvalsh(K)
    assert ev.min() >= -1e-14 * ev.max()
    assert abs(K[0, 1] / K[0, 0] - 1) <= 1e-12
