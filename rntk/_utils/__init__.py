"""Private helpers shared by the kernels, the estimators and :mod:`rntk.nn`."""

from ._docs import DOC, fill_doc
from ._sequences import (
    LOAD_MISSING,
    MISSING,
    as_sequences,
    check_missing,
    check_same_channels,
    flatten_padded,
    interpolate_steps,
    normalize_series,
    pack_end_aligned,
    pool_series,
    unit_norm,
)
from ._threads import (
    INTERLEAVE,
    JIT_OPTIONS,
    blas_threads,
    compile_notice,
    interleaved_loops,
    numba_threads,
    one_blas_thread,
)
from ._validation import (
    KernelOverflowError,
    check_finite_kernel,
    check_int,
    check_memory,
    check_n_jobs,
    check_nonnegative,
    finite_square,
    store_init_params,
    validate_fit_data,
    validate_fit_series,
    validate_predict_data,
)

__all__ = ["DOC", "INTERLEAVE", "JIT_OPTIONS", "LOAD_MISSING", "MISSING", "check_missing",
           "KernelOverflowError", "as_sequences",
           "blas_threads",
           "check_finite_kernel", "check_int", "check_memory", "check_n_jobs", "check_nonnegative",
           "check_same_channels", "compile_notice", "fill_doc", "finite_square", "flatten_padded",
           "interleaved_loops", "interpolate_steps", "normalize_series", "numba_threads",
           "one_blas_thread", "pack_end_aligned", "pool_series",
           "store_init_params", "unit_norm", "validate_fit_data", "validate_fit_series",
           "validate_predict_data"]
