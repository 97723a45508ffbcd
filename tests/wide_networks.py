"""The physical check shared by the kernel tests: wide networks tend to their kernel."""

import numpy as np


def assert_wide_networks_converge(torch, K, X, make_net, widths=(100, 2000), seeds=3):
    """Empirical NTKs of ``seeds`` networks at two widths: the error falls, the mean is close.

    ``make_net(width)`` builds a network with an ``ntk(X, seed=...)`` method (torch
    ``float64`` after ``.double()``); its empirical NTKs are compared with ``K``.
    """
    errors = []
    for width in widths:
        Ks = []
        for seed in range(seeds):
            torch.manual_seed(10 * width + seed)
            Ks.append(make_net(width).double().ntk(X, seed=seed))
        errors.append(np.mean([np.linalg.norm(k - K) / np.linalg.norm(K) for k in Ks]))
        averaged = np.linalg.norm(np.mean(Ks, axis=0) - K) / np.linalg.norm(K)
    assert averaged < 0.10
    assert errors[1] < 0.6 * errors[0]
