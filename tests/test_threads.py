"""The thread policy: BLAS limits made from one scan of the loaded libraries."""

import numpy as np
import threadpoolctl

from rntk._utils import _threads


def _blas_threads():
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


def test_one_blas_thread_limits_inside_the_block_and_restores_after():
    before = _blas_threads()
    with _threads.one_blas_thread():
        assert all(n == 1 for n in _blas_threads())
    assert _blas_threads() == before
    with _threads.one_blas_thread(serial=False):
        assert _blas_threads() == before
    with _threads.blas_threads(1):
        assert all(n == 1 for n in _blas_threads())
    assert _blas_threads() == before


def test_the_libraries_are_scanned_once(monkeypatch):
    made = []

    class Counting(threadpoolctl.ThreadpoolController):
        def __init__(self):
            made.append(1)
            super().__init__()

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", Counting)
    monkeypatch.setattr(_threads, "_CONTROLLER", [])
    for _ in range(5):
        with _threads.one_blas_thread():
            np.linalg.eigh(np.eye(3))
        with _threads.blas_threads(2):
            pass
    assert made == [1]
