"""Private helpers shared by the kernels, the estimators and :mod:`rntk.nn`."""

from ._docs import fill_doc
from ._sequences import (
    as_sequences,
    check_same_channels,
    flatten_padded,
    pack_end_aligned,
    unit_norm,
)
from ._threads import JIT_OPTIONS, blas_threads, numba_threads
from ._validation import (
    check_int,
    check_n_jobs,
    check_nonnegative,
    validate_fit_data,
    validate_predict_data,
)

__all__ = ["JIT_OPTIONS", "as_sequences", "blas_threads", "check_int", "check_n_jobs",
           "check_nonnegative", "check_same_channels", "fill_doc", "flatten_padded",
           "numba_threads", "pack_end_aligned", "unit_norm", "validate_fit_data",
           "validate_predict_data"]
