"""Test collection settings shared by the test suite and the doctests."""

import importlib.util

collect_ignore = ["setup.py"]
if importlib.util.find_spec("torch") is None:
    # the finite-width models and the torch engine need the optional torch extra
    collect_ignore += ["rntk/nn", "rntk/_kernels/_torch.py"]
