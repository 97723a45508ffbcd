"""The UCR benchmark's methods and protocols: what runs, with which grids and folds."""

import hashlib
import importlib.util
import itertools
import json
import math

from .._model_selection import (
    BAND_STEPS,
    DEFAULT_ALPHA,
    DEFAULT_GRID,
    DEFAULT_N_AVERAGE,
    DEFAULT_PRIOR,
    LEVEL_POOL,
    MEAN_BAND,
    MEAN_BUDGET,
    MEAN_POOL,
    MEAN_READOUTS,
    MULTICHANNEL_LEFT_OUT,
    PAPER_C,
    PAPER_GRID,
    SPECTRUM_BINS,
)
from ._signature import SIGNATURE_GRID, signature_missing

__all__ = ["KERNEL_METHODS", "METHODS", "PAPER_COLUMNS", "PEER_METHODS", "PROTOCOLS",
           "RNN_CELL", "RNN_METHODS", "grid", "grid_hash", "missing_reason"]

KERNEL_METHODS = ("rntk", "ntk", "rbf", "poly")
RNN_METHODS = ("rnn", "irnn", "gru")
PEER_METHODS = ("minirocket", "dtw1nn", "gak", "sigkernel")
METHODS = KERNEL_METHODS + RNN_METHODS + PEER_METHODS
PAPER_COLUMNS = {"rntk": "RNTK", "ntk": "NTK", "rbf": "RBF", "poly": "POLY",
                 "rnn": "GaussianRNN", "irnn": "IdentityRNN", "gru": "GRU"}
RNN_CELL = {"rnn": "ntk", "irnn": "irnn", "gru": "gru"}

#: The paper's grids of the baselines (Appendix A.1); the depth of the MLP NTK varies
#: fastest: one pass gives every depth of a (sigma_w, sigma_b).
_PAPER_BASELINES = {
    "ntk": {"sigma_w": [0.5, 1.0, math.sqrt(2), 2.0, 2.5, 3.0],
            "sigma_b": [0.0, 0.01, 0.1, 0.2, 0.5, 0.8, 1.0, 2.0, 5.0],
            "n_layers": list(range(1, 11))},
    "rbf": {"gamma": [0.01, 0.05, 0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 1.0, 2.0, 3.0, 4.0,
                      5.0, 10.0, 20.0, 30.0, 40.0, 100.0]},
    "poly": {"degree": [1, 2, 3, 4, 5], "coef0": [0.0, 0.1, 0.2, 0.5, 1.0, 2.0]},
    "rnn_cv": 5,
    "rnn": {"n_layers": [1, 2], "hidden_size": [50, 100, 200, 500],
            "lr": [1e-2, 1e-3, 1e-4, 1e-5]},
    "rnn_epochs": 200,
    "sigkernel": SIGNATURE_GRID,  # the signature kernel's peer grid, in every protocol
}

PROTOCOLS = {
    "paper": {
        "cv": 10,
        "C": PAPER_C,
        "rntk": {k: PAPER_GRID[k] for k in ("sigma_w", "sigma_b", "sigma_h")},
        **_PAPER_BASELINES,
    },
    "loo": {
        # the estimators' default: kernel ridge selected by exact leave-one-out; the RNTK
        # with RNTKClassifierCV's default grid, the other kernels with the paper's grids
        "cv": None,
        "alpha": DEFAULT_ALPHA,
        "rntk": None,
        # what the default grid is made of: a changed default invalidates cached results
        "rntk_default": [DEFAULT_GRID, MEAN_READOUTS, MEAN_BUDGET, MEAN_POOL, MEAN_BAND,
                         LEVEL_POOL, DEFAULT_N_AVERAGE, DEFAULT_PRIOR, BAND_STEPS,
                         SPECTRUM_BINS, MULTICHANNEL_LEFT_OUT],
        **_PAPER_BASELINES,
    },
    "fast": {
        "cv": 5,
        "C": [0.1, 1.0, 10.0, 100.0],
        "rntk": {"sigma_w": [1.36, math.sqrt(2), 1.46], "sigma_b": [0.0, 0.1, 0.5, 1.0],
                 "sigma_h": [0.0]},
        "ntk": {"sigma_w": [math.sqrt(2)], "sigma_b": [0.0, 0.1, 1.0], "n_layers": [1, 2, 3]},
        "rbf": {"gamma": [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]},
        "poly": {"degree": [1, 2, 3], "coef0": [0.5, 1.0]},
        "rnn_cv": 3,
        "rnn": {"n_layers": [1], "hidden_size": [64], "lr": [1e-3]},
        "rnn_epochs": 30,
        "sigkernel": SIGNATURE_GRID,
    },
}


def grid(spec):
    """Cartesian product in the order the keys are given (last key varies fastest)."""
    keys = list(spec)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(spec[k] for k in keys))]


def grid_hash(protocol, method):
    """Return a short hash of the grids and folds ``method`` runs with under ``protocol``."""
    p = PROTOCOLS[protocol]
    spec = {"cv": p["cv"], "grid": p.get(method),
            "default": p.get("rntk_default") if method == "rntk" else None,
            **{k: p[k] for k in ("C", "alpha") if k in p},
            "rnn": [p["rnn_cv"], p["rnn_epochs"]] if method in RNN_METHODS else None}
    return hashlib.sha1(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:12]


def missing_reason(method):
    """Why a method cannot run here (None when it can)."""
    if method in RNN_METHODS:
        if importlib.util.find_spec("torch") is None:
            return "torch is not installed (pip install rntk[torch])"
        try:
            from ..nn import RNNClassifier  # noqa: F401
        except ImportError as exc:
            return f"rntk.nn.RNNClassifier is not available ({exc})"
        return None
    if method == "sigkernel":
        return signature_missing()
    pkg = {"minirocket": "aeon", "dtw1nn": "aeon", "gak": "tslearn"}.get(method)
    if pkg is not None and importlib.util.find_spec(pkg) is None:
        return f"{pkg} is not installed (pip install rntk[bench])"
    return None
