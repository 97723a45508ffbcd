import numpy as np
import pytest


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


@pytest.fixture
def twin_grid(monkeypatch):
    """The default grid with a setting that is another on unit-RMS series, and the rule.

    The banded setting on unit-RMS series (``band``) beside the level-and-scale band, as
    in the default before 0.4.0 left it out: the rule of ``DEFAULT_SAME`` (computed,
    scored and refitted once) stays for grids of such twins. Returns the settings.
    """
    from rntk._model_selection import _grids

    settings = {"band": _grids._MEAN["band"], **_grids.DEFAULT_SETTINGS}
    monkeypatch.setattr(_grids, "DEFAULT_SETTINGS", settings)
    monkeypatch.setattr(_grids, "DEFAULT_SAME", {"level_band": "band"})
    return settings
