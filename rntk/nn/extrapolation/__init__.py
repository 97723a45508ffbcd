"""Extrapolation of overparameterised recurrent networks (teacher-student experiments).

A student recurrent network is trained on sequences of length ``k`` labelled by a teacher,
then compared with the teacher on longer sequences. This package provides the models, teachers,
losses, training loops and error measure of Cohen-Karlik et al. (2022, 2023):

* :class:`StateSpaceRNN` -- the linear RNN (linear dynamical system)
  ``s_{t+1} = A s_t + B x_t``, ``y_t = C s_t``, ``s_0 = 0``, with a full, symmetric or diagonal
  transition matrix, balanced (``B = C^T``), Gaussian or Xavier initialisation, single- or
  multi-input/output, and optionally a whole *ensemble* of independent models trained in one
  vectorised loop (``n_models``).
* :class:`RecurrentRegressor` -- a GRU / LSTM / Elman network with a linear read-out.
* Teachers: :func:`balanced_teacher`, :func:`delay_teacher`, :func:`random_unbalanced_teacher`,
  :func:`memoryless_teacher`, :func:`gru_teacher`.
* Losses: :func:`population_loss` (eq. 3.4 of Cohen-Karlik et al. 2023: for whitened inputs the
  expected squared error of the last output is ``sum_{j<k} ||C A^j B - W_j||^2``) and
  :func:`empirical_loss` on sampled sequences.
* Training: :func:`fit_population`, :func:`fit_empirical` (Adam or plain gradient descent).
* :func:`extrapolation_error` -- the ``l_inf`` distance of impulse responses, with the rule of
  App. B.3 (a model worse than the all-zero response counts as non-extrapolating); it also
  accepts the kernel side's :class:`rntk.nn.LinearRNN` and :class:`rntk.nn.ScaledConv1d`.
* :func:`balancedness` (``||B - C^T|| / ||B + C^T||``) and :func:`asymmetry`
  (``||A - A^T||``), the quantities conserved or approached by gradient descent.

The experiments of both papers are scripts in the repository's ``examples/`` folder
(``extrapolation_*.py``).

Conventions: the *impulse response* of a model is the output sequence for the input
``(1, 0, 0, ...)``; for the linear RNN it is ``h_j = C A^j B``. Outputs are indexed so that
``forward(x)[..., t, :]`` is the output after reading ``x_0, ..., x_t``; the output after a
length-``k`` sequence is ``sum_j h_j x_{k-1-j}``, the convention of both papers. Everything
runs in float64 by default.

Examples
--------
A balanced student trained on length-12 sequences from a 3-dimensional balanced teacher
recovers the teacher's impulse response far beyond the training length:

>>> from rntk.nn.extrapolation import (StateSpaceRNN, balanced_teacher,
...                                    fit_population, extrapolation_error)
>>> teacher = balanced_teacher(3, seed=0)
>>> student = StateSpaceRNN(20, transition="diagonal", init="balanced", seed=0)
>>> _ = fit_population(student, teacher, k=12, lr=2e-2, n_steps=600)
>>> bool(extrapolation_error(student, teacher, horizon=40) < 0.05)
True
"""

from ._losses import empirical_loss, population_loss
from ._metrics import asymmetry, balancedness, extrapolation_error
from ._models import RecurrentRegressor, StateSpaceRNN
from ._teachers import (
    balanced_teacher,
    delay_teacher,
    gru_teacher,
    memoryless_teacher,
    random_unbalanced_teacher,
)
from ._training import fit_empirical, fit_population

__all__ = [
    "StateSpaceRNN",
    "RecurrentRegressor",
    "balanced_teacher",
    "delay_teacher",
    "random_unbalanced_teacher",
    "memoryless_teacher",
    "gru_teacher",
    "population_loss",
    "empirical_loss",
    "fit_population",
    "fit_empirical",
    "extrapolation_error",
    "balancedness",
    "asymmetry",
]
