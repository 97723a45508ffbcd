import os

import numpy as np
import pytest

try:
    from hypothesis import settings
except ImportError:  # the property tests skip themselves
    pass
else:
    # The property tests draw the same examples on every run (a failure is reproducible,
    # and a run passes or fails for the code, not for the draw);
    # HYPOTHESIS_PROFILE=explore draws new ones each run.
    settings.register_profile("fixed", derandomize=True, database=None)
    settings.register_profile("explore")
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def one_torch_thread():
    """Run a test with one torch thread (small tensors: more threads only add contention).

    Skips the test when torch is not installed.
    """
    torch = pytest.importorskip("torch")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
