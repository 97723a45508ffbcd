"""The RNTK hyperparameters, defined once.

Each entry gives the name, the default, the scikit-learn constraint, the numpydoc
text and whether it is a variance a Gaussian process can fit. The kernel functions,
the estimators, the GP kernel object and the benchmark read this table: a new
hyperparameter is one entry here plus its use in the engine (a test checks every
public signature against the table).
"""

import math
import numbers
from typing import NamedTuple

from sklearn.utils._param_validation import Interval, StrOptions

__all__ = ["ACTIVATIONS", "DIRECTIONS", "KINDS", "RNTK_CONSTRAINTS", "RNTK_DEFAULTS",
           "RNTK_PARAMS", "RNTK_PARAMS_DOC", "RNTK_PARAM_NAMES", "RNTK_VARIANCES",
           "READOUTS"]

#: Nonlinearities with analytic expectations, and their engine codes.
ACTIVATIONS = {"relu": 0, "erf": 1, "linear": 2}
#: ``"ntk"``: the tangent kernel; ``"nngp"``: the Gaussian-process kernel.
KINDS = ("ntk", "nngp")
#: Which way the network reads each series: the time-reversal flags of its RNNs.
DIRECTIONS = {"forward": (False,), "backward": (True,), "bidirectional": (False, True)}
#: Which hidden states the readout sees: the last step, or the mean over readout steps.
READOUTS = ("last", "mean")


class KernelParam(NamedTuple):
    """One hyperparameter of a kernel."""

    name: str
    default: object
    constraint: list
    doc: str
    variance: bool = False  # a scale a GP may fit (log-positive)
    per_layer: bool = False  # a scalar or one value per layer


_nonneg = Interval(numbers.Real, 0, None, closed="left")

RNTK_PARAMS = (
    KernelParam("n_layers", 1, [Interval(numbers.Integral, 1, None, closed="left")],
                "n_layers : int, default=1\n    Number of recurrent layers ``L``."),
    KernelParam("sigma_w", math.sqrt(2), [_nonneg, "array-like"],
                "sigma_w : float or array-like of shape (n_layers,), default=sqrt(2)\n"
                "    Recurrent weight scale of each layer.", True, True),
    KernelParam("sigma_u", 1.0, [_nonneg, "array-like"],
                "sigma_u : float or array-like of shape (n_layers,), default=1.0\n"
                "    Input weight scale of each layer (layer 1 reads the data, divided by\n"
                "    the channel count).", True, True),
    KernelParam("sigma_b", 0.0, [_nonneg, "array-like"],
                "sigma_b : float or array-like of shape (n_layers,), default=0.0\n"
                "    Bias scale of each layer.", True, True),
    KernelParam("sigma_h", 0.0, [_nonneg],
                "sigma_h : float, default=0.0\n"
                "    Standard deviation of the initial hidden state.", True),
    KernelParam("sigma_v", 1.0, [_nonneg],
                "sigma_v : float, default=1.0\n"
                "    Output weight scale; the kernel is proportional to ``sigma_v ** 2``.",
                True),
    KernelParam("activation", "relu", [StrOptions(set(ACTIVATIONS))],
                'activation : {"relu", "erf", "linear"}, default="relu"\n'
                "    Nonlinearity, with analytic expectations."),
    KernelParam("kind", "ntk", [StrOptions(set(KINDS))],
                'kind : {"ntk", "nngp"}, default="ntk"\n'
                '    ``"ntk"``: the RNTK ``Theta``; ``"nngp"``: the output Gaussian-process\n'
                "    kernel ``K`` of the untrained network."),
    KernelParam("direction", "forward", [StrOptions(set(DIRECTIONS))],
                'direction : {"forward", "backward", "bidirectional"}, default="forward"\n'
                '    ``"forward"``: the RNN reads each series from its first step to its last\n'
                '    and is read out at the last; ``"backward"``: it reads the series\n'
                "    reversed (read out after the first step); ``\"bidirectional\"``: a forward\n"
                "    and a backward RNN with independent weights, the readout of both final\n"
                "    states summed, whose kernel is the sum of the two."),
    KernelParam("diff", False, ["boolean"],
                "diff : bool, default=False\n"
                "    Feed the network the first difference of every channel next to its\n"
                "    values: step ``t`` reads ``(x_t, x_t - x_{t-1})`` (``x_0 = x_1``), twice\n"
                "    the channels."),
    KernelParam("readout", "last", [StrOptions(set(READOUTS))],
                'readout : {"last", "mean"}, default="last"\n'
                '    ``"last"``: a linear readout of the last hidden state; ``"mean"``: the mean\n'
                "    of the readouts of the hidden states at steps ``T, T - s, T - 2s, ...`` of\n"
                "    each series (``s = readout_stride``; the same readout weights at every\n"
                "    step). Its kernel averages the last-step kernel over all pairs of\n"
                "    prefixes, which compares shapes at different times; it costs about\n"
                "    ``T / s`` times the last-step kernel."),
    KernelParam("readout_stride", 1, [Interval(numbers.Integral, 1, None, closed="left")],
                "readout_stride : int, default=1\n"
                '    Steps between two readouts of ``readout="mean"`` (1: every step); ignored\n'
                '    with ``readout="last"``.'),
    KernelParam("readout_band", None, [Interval(numbers.Integral, 0, None, closed="left"),
                                       None],
                "readout_band : int or None, default=None\n"
                '    With ``readout="mean"``, ``None`` weighs every pair of readout steps of two\n'
                "    series alike. An int ``B`` keeps the pairs at most ``B`` readouts apart\n"
                "    (counted from the ends), weighted ``1 - |k| / (B + 1)`` for ``k`` apart:\n"
                "    the kernel of readout weights that vary smoothly in time (moving sums\n"
                "    of ``B + 1`` independent ones), which compares shapes up to ``B`` readouts\n"
                "    apart only and costs about ``(2B + 1) s / (2T)`` of the full mean."),
)

RNTK_PARAM_NAMES = tuple(p.name for p in RNTK_PARAMS)
RNTK_DEFAULTS = {p.name: p.default for p in RNTK_PARAMS}
RNTK_CONSTRAINTS = {p.name: p.constraint for p in RNTK_PARAMS}
RNTK_VARIANCES = tuple(p.name for p in RNTK_PARAMS if p.variance)
#: The numpydoc "Parameters" entries of the kernel hyperparameters.
RNTK_PARAMS_DOC = "\n".join(p.doc for p in RNTK_PARAMS)
