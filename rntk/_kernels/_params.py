"""The RNTK hyperparameters, defined once, and the one resolver that checks them.

Each entry of :data:`RNTK_PARAMS` gives the name, the default, the scikit-learn
constraint, the numpydoc text and whether it is a variance a Gaussian process can fit.
The signatures and docstrings of the kernel functions, the estimators, the GP kernel
object and the benchmark read this table (a test checks every public signature
against it). :func:`resolve_params` validates every option at one place and returns
the frozen :class:`RNTKOptions` the engines read; every entry point calls it.

A new option is one entry here, its check (and field) in :func:`resolve_params`, and
its use in every engine and reference it must reach (``tests/test_parity.py`` fails
for an option it does not vary, and then for every engine that lacks it):

* the engines: Numba (:mod:`rntk._kernels._rntk`: ``rntk_kernel``, ``rntk_diag``, the
  blocks into ``out``), the fused CUDA engine (:mod:`rntk._kernels._cuda`; an option
  that changes the packed data also joins its ``_GROUP_KEYS``), the differentiable
  torch engine (:mod:`rntk._kernels._torch`: ``rntk_kernel_torch``,
  ``rntk_gram_log_gradient``); the preparation they share is
  :mod:`rntk._kernels._shared`;
* the signatures that pass the options on by name (their bodies read them with
  :func:`table_options`, their docstrings from :data:`RNTK_PARAMS_DOC` or
  :data:`RNTK_PARAM_LIST`; a test checks every signature against this table): the GP
  kernel :class:`rntk.RNTK` (``_gp.py``), ``sensitivity`` and ``mean_sensitivity``
  (``_sensitivity.py``), the estimators (``rntk/_estimators/_rntk.py``; the searches take
  them whole, ``estimator=``),
  :class:`rntk.RNTKNystroem` (``rntk/_nystroem.py``); ``rntk.distributed`` takes them
  as ``**kernel`` and needs nothing;
* the finite networks whose wide limit is the kernel, where the option is part of the
  architecture: ``rntk.nn.ElmanRNN`` (``nn/_elman.py``), ``rntk.nn.RNTKNetwork``
  (``nn/_family.py``);
* the references of the tests: ``tests/reference.py`` (slow, from the spec) and the
  option values of ``tests/test_parity.py``, which runs every engine on them.
"""

import math
import numbers
import warnings
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, NamedTuple

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._utils import check_int, check_nonnegative, finite_square

__all__ = ["ACTIVATIONS", "DIRECTIONS", "KINDS", "RNTK_CONSTRAINTS", "RNTK_DEFAULTS",
           "RNTK_PARAMS", "RNTK_PARAMS_DOC", "RNTK_PARAM_NAMES", "RNTK_VARIANCES",
           "RNTK_PARAM_LIST", "READOUTS", "RNTKOptions", "resolve_params", "table_options"]

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
                '    Steps between two readouts of ``readout="mean"`` (1: every step); not\n'
                '    used with ``readout="last"`` (a warning says so).'),
    KernelParam("readout_band", None, [Interval(numbers.Integral, 0, None, closed="left"),
                                       None],
                "readout_band : int or None, default=None\n"
                '    With ``readout="mean"``, ``None`` weighs every pair of readout steps of two\n'
                "    series alike. An int ``B`` keeps the pairs at most ``B`` readouts apart\n"
                "    (counted from the ends), weighted ``1 - |k| / (B + 1)`` for ``k`` apart:\n"
                "    the kernel of readout weights that vary smoothly in time (moving sums\n"
                "    of ``B + 1`` independent ones), which compares shapes up to ``B`` readouts\n"
                "    apart only and costs about ``(2B + 1) s / (2T)`` of the full mean; not\n"
                '    used with ``readout="last"`` (a warning says so).'),
)

RNTK_PARAM_NAMES = tuple(p.name for p in RNTK_PARAMS)
RNTK_DEFAULTS = {p.name: p.default for p in RNTK_PARAMS}
#: The least value of each integer option, read from its constraint (checked by
#: ``resolve_params`` for the functions, by scikit-learn for the estimators).
_LEAST = {p.name: c.left for p in RNTK_PARAMS for c in p.constraint
          if isinstance(c, Interval) and c.type is numbers.Integral}
RNTK_CONSTRAINTS = {p.name: p.constraint for p in RNTK_PARAMS}
RNTK_VARIANCES = tuple(p.name for p in RNTK_PARAMS if p.variance)
#: The numpydoc "Parameters" entries of the kernel hyperparameters.
RNTK_PARAMS_DOC = "\n".join(p.doc for p in RNTK_PARAMS)
#: The names, for a docstring entry ``name, name, ...`` ("as in rntk_kernel").
RNTK_PARAM_LIST = ", ".join(RNTK_PARAM_NAMES)


def table_options(namespace):
    """Return the table's options from a function's arguments, by name.

    Parameters
    ----------
    namespace : dict
        ``locals()`` at the start of a function whose signature holds every option.

    Returns
    -------
    options : dict
        ``{name: namespace[name]}`` for every name of the table.
    """
    return {name: namespace[name] for name in RNTK_PARAM_NAMES}


@dataclass(frozen=True, eq=False)
class RNTKOptions:
    """The checked options of one RNTK kernel, in the form the engines read.

    Made by :func:`resolve_params` only. The variances are tuples (one value per
    layer for ``sw2``, ``su2``, ``sb2``); :meth:`layer_variances` gives them as arrays.
    """

    #: Number of recurrent layers.
    n_layers: int
    #: The activation's name, and its engine code (:data:`ACTIVATIONS`).
    activation: str
    act: int
    #: The scales: ``sigma_w``, ``sigma_u``, ``sigma_b`` of each layer, ``sigma_h``,
    #: ``sigma_v``.
    sigma_w: tuple
    sigma_u: tuple
    sigma_b: tuple
    sigma_h: float
    sigma_v: float
    #: ``sigma_w ** 2``, ``sigma_u ** 2``, ``sigma_b ** 2`` of each layer.
    sw2: tuple
    su2: tuple
    sb2: tuple
    #: ``sigma_h ** 2`` and ``sigma_v ** 2``.
    sh2: float
    sv2: float
    #: ``"ntk"`` or ``"nngp"``.
    kind: str
    #: The direction, and the time-reversal flag of each RNN that reads the series.
    direction: str
    readers: tuple
    #: Whether every step also carries the first difference of each channel.
    diff: bool
    #: ``"last"`` or ``"mean"``; the engine's stride (0: the last step, else
    #: ``readout_stride``) and band (-1: every pair of readouts, else ``readout_band``).
    readout: str
    stride: int
    band: int
    #: The options as given (every name of the table), for messages and for engines
    #: that take them by name.
    given: Mapping

    @property
    def want_ntk(self):
        """Whether the kernel is the NTK (else the NNGP kernel)."""
        return self.kind == "ntk"

    def layer_variances(self):
        """Return ``(sw2, su2, sb2)`` as new float64 arrays of shape (n_layers,)."""
        return (np.array(self.sw2, dtype=np.float64), np.array(self.su2, dtype=np.float64),
                np.array(self.sb2, dtype=np.float64))

    def settings(self, **extra):
        """Return the options that differ from the defaults, and ``extra``, for messages."""
        out = {k: v for k, v in self.given.items() if not _same(v, RNTK_DEFAULTS[k])}
        out.update(extra)
        return out


def _same(a, b):
    try:
        return bool(np.all(np.asarray(a) == np.asarray(b)))
    except (TypeError, ValueError):
        return False


def resolve_params(**params):
    """Validate RNTK options once; return the frozen specification the engines read.

    Parameters
    ----------
    **params
        Options of :data:`RNTK_PARAMS` by name (``n_layers``, ``sigma_w``, ...,
        ``readout_band``); a missing one takes its default.

    Returns
    -------
    options : RNTKOptions
        The checked options.

    Raises
    ------
    TypeError
        For an unknown name, or a value of the wrong type.
    ValueError
        For a value out of its range (the message names the option).
    """
    unknown = set(params) - set(RNTK_PARAM_NAMES)
    if unknown:
        raise TypeError(f"unknown kernel parameter(s) {sorted(unknown)}; valid ones: "
                        f"{list(RNTK_PARAM_NAMES)}")
    p = {**RNTK_DEFAULTS, **params}
    n_layers = p["n_layers"]
    if isinstance(n_layers, bool) or not isinstance(n_layers, (int, np.integer)):
        raise TypeError(f"n_layers must be an integer, got {n_layers!r}")
    if n_layers < _LEAST["n_layers"]:
        raise ValueError(f"n_layers must be >= {_LEAST['n_layers']}, got {n_layers}")
    n_layers = int(n_layers)
    activation, kind = p["activation"], p["kind"]
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(
            f"unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose 'ntk' or 'nngp'")
    scales, squares = {}, {}
    for name in ("sigma_w", "sigma_u", "sigma_b", "sigma_h", "sigma_v"):
        per_layer = n_layers if name in ("sigma_w", "sigma_u", "sigma_b") else None
        value = check_nonnegative(p[name], name, per_layer)
        sq = finite_square(value, name)
        scales[name] = tuple(value.tolist()) if per_layer else float(value)
        squares[name] = tuple(sq.tolist()) if per_layer else float(sq)
    direction, diff = p["direction"], p["diff"]
    if not isinstance(direction, str) or direction not in DIRECTIONS:
        raise ValueError(
            f"unknown direction {direction!r}; choose one of {sorted(DIRECTIONS)}")
    if not isinstance(diff, (bool, np.bool_)):
        raise TypeError(f"diff must be True or False, got {diff!r}")
    readout, band = p["readout"], p["readout_band"]
    if not isinstance(readout, str) or readout not in READOUTS:
        raise ValueError(f"unknown readout {readout!r}; choose one of {list(READOUTS)}")
    stride = check_int(p["readout_stride"], "readout_stride", _LEAST["readout_stride"])
    band = -1 if band is None else check_int(band, "readout_band", _LEAST["readout_band"])
    if readout == "last" and (stride != 1 or band != -1):
        said = f"readout_stride={stride}" if stride != 1 else f"readout_band={band}"
        warnings.warn(f"{said} is not used: readout='last' reads the last step alone (the "
                      "stride and the band are those of the mean readout); set "
                      "readout='mean', or leave it at its default", UserWarning, stacklevel=3)
    return RNTKOptions(
        n_layers=n_layers, activation=activation, act=ACTIVATIONS[activation], **scales,
        sw2=squares["sigma_w"], su2=squares["sigma_u"], sb2=squares["sigma_b"],
        sh2=squares["sigma_h"], sv2=squares["sigma_v"], kind=kind, direction=direction,
        readers=DIRECTIONS[direction], diff=bool(diff), readout=readout,
        stride=0 if readout == "last" else stride, band=band,
        given=MappingProxyType({k: p[k] for k in RNTK_PARAM_NAMES}))
