"""Argument checks, seeding and threading helpers shared by the extrapolation modules."""

from __future__ import annotations

import functools
import math
from numbers import Integral

import numpy as np
import torch


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_positive_float(value, name, allow_zero=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a finite {kind} number, got {value!r}")
    return v


def _check_sizes(size, size_name, n_inputs, n_outputs):
    """Validate a network's width and its input and output dimensions (positive integers)."""
    return (
        _check_positive_int(size, size_name),
        _check_positive_int(n_inputs, "n_inputs"),
        _check_positive_int(n_outputs, "n_outputs"),
    )


def _check_choice(value, name, choices):
    """Raise a ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")


def _single_threaded(func):
    """Run a training loop of tiny tensor operations on one thread (threads only add overhead)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        n = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return func(*args, **kwargs)
        finally:
            torch.set_num_threads(n)

    return wrapper


def _generator(seed):
    if isinstance(seed, torch.Generator):
        return seed
    g = torch.Generator()
    if seed is None:
        g.seed()
    else:
        if isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2**31))
        g.manual_seed(int(seed))
    return g
