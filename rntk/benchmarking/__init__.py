"""Benchmarking: the RNTK paper's UCR protocol beside the usual peers, and its statistics.

:func:`run_benchmark` (and the ``rntk-ucr`` command) runs the protocol of the RNTK
paper (Alemohammad et al., ICLR 2021, Section 4 and Appendix A.1) on datasets in the
UCR 2018 layout and writes, per dataset and method, the test accuracy, the selected
hyperparameters and the Gram / fit / predict times; then a summary with the paper's
metrics (:mod:`rntk.benchmarking.stats`: mean accuracy, P90, P95, PMA, Friedman
rank) and the paper's Table 2 (:mod:`rntk.benchmarking.published_results`, shipped
with the package) beside ours, as Markdown, CSV, JSON and PNG. Beside the state of the
art too: the published accuracies of the "bake off redux" (Middlehurst, Schäfer and
Bagnall, DMKD 2024: HIVE-COTE 2, MultiRocket-Hydra, InceptionTime, ... on 112 UCR
datasets, :func:`load_published_results`, shipped) with, on the datasets we share, the
mean accuracies, our wins / ties / losses against each, the average ranks with the
Nemenyi critical difference (:func:`critical_difference`) and a critical-difference
diagram (``critical_difference.png``, :func:`plot_critical_difference`).

Protocols
---------
``loo``
    The estimators' default: unit-norm series, kernel ridge classification (one-vs-all
    least squares with an unpenalised intercept) on a precomputed kernel, selected by
    its exact leave-one-out accuracy (every ridge of a kernel setting from one
    eigendecomposition of its Gram); the RNTK with ``RNTKClassifierCV()``'s default
    grid, the other kernels with the paper's grids below. Seconds per dataset.
``paper``
    Unit-norm series, C-SVM on a precomputed kernel, the Appendix A.1 grids
    (RNTK: 900 settings; NTK: 540; RBF: 18; polynomial: 30; each x 5 values of C),
    10-fold stratified cross-validation on the training set, refit on all of it,
    test accuracy. Finite RNNs: 5-fold CV over the Appendix A.1 grid (32 settings).
``fast``
    The same pipeline with small grids (RNTK 12 settings, NTK 9, RBF 6, polynomial
    6; C in {0.1, 1, 10, 100}) and 5-fold CV; RNNs with one setting and 30 epochs.
    Seconds per small dataset: a smoke test, not a reproduction.

Every kernel method (the RNTK through :class:`rntk.RNTKClassifierCV`, the others
through :func:`run_precomputed_kernel`) is selected by the same engine: one Gram per
kernel setting on the training set, every fold and every C (or every ridge, by
leave-one-out) scored on it.
The RNTK runs natively on variable-length data; the other kernels (and MiniRocket)
get each series zero-padded at its end to the longest one, which the tables mark
with ``*``.

Peers (when installed, ``pip install rntk[bench]``): aeon's MiniRocket and 1-NN DTW,
tslearn's GAK (SVC on the precomputed GAK Gram, same CV as the kernels), pysiglib's
PDE signature kernel (``sigkernel``: z-normalised series with time as a channel, 7
static kernels with raw and normalised Grams, selected like the other kernels; the grid
is :data:`rntk.benchmarking._signature.SIGNATURE_GRID`). Finite RNNs
(``rnn``: NTK-initialised ReLU RNN, ``irnn``: identity-initialised, ``gru``) come from
:class:`rntk.nn.RNNClassifier` (needs torch). Methods whose package is missing are
skipped with a notice. Kernel methods see unit-norm series (the paper's
pre-processing); RNNs and peers see the series as stored.

Results are cached per (dataset, method, protocol) under ``OUT/cache/`` so an
interrupted run resumes where it stopped; a result is reused only for the same seed,
grids and dataset files, and one of another seed (grids, files) is kept beside it.

Modules: ``_protocols`` (the methods and their grids), ``_data`` (which datasets,
through :mod:`rntk.datasets`; fingerprints, folds), ``_runners`` (one method on one
dataset), ``_cache`` (the cached results), ``_progress`` (the status line), ``_files``
(atomic writes), ``_reports`` (tables and plots), ``_ucr`` (the main loop), ``_cli``
(``rntk-ucr``).
"""

from . import published_results, stats
from ._cdplot import plot_critical_difference
from ._protocols import METHODS, PROTOCOLS
from ._reports import write_reports
from ._runners import run_precomputed_kernel
from ._sota import PLOT_CD, compare_with_published, sota_markdown, write_cd_plot
from ._ucr import run_benchmark
from .published_results import load_paper_table, load_published_results, paper_accuracy
from .stats import critical_difference, friedman_ranks, summary_metrics

__all__ = ["METHODS", "PLOT_CD", "PROTOCOLS", "compare_with_published", "critical_difference",
           "friedman_ranks", "sota_markdown", "write_cd_plot",
           "load_paper_table", "load_published_results", "paper_accuracy",
           "plot_critical_difference", "published_results", "run_benchmark",
           "run_precomputed_kernel", "stats", "summary_metrics", "write_reports"]
