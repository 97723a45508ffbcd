"""rntk_kernel(..., out=, block_rows=): the Gram written in blocks of rows (issue "Beyond one
Gram in memory", part 1)."""

import numpy as np
import pytest

import rntk._kernels._rntk as engine
import rntk._kernels._shared as shared
import rntk._utils._validation as validation
from rntk import KernelOverflowError, rntk_kernel


def _series(rng, n, m=2, low=3, high=15):
    return [rng.normal(size=(t, m)) for t in rng.integers(low, high, size=n)]


def _memmap(tmp_path, shape, name="gram.npy"):
    return np.lib.format.open_memmap(tmp_path / name, mode="w+", shape=shape)


@pytest.mark.parametrize("kw", [
    {},
    {"direction": "bidirectional", "sigma_h": 0.5},
    {"n_layers": 2, "activation": "erf", "diff": True, "sigma_b": 0.3},
    {"kind": "nngp", "direction": "backward"},
], ids=["default", "bidirectional", "erf-diff", "nngp-backward"])
def test_memmap_equals_the_in_memory_gram(rng, tmp_path, kw):
    X, Y = _series(rng, 29), _series(rng, 17)
    for other, rows_list in ((None, (1, 4, 28, 29, 50)), (Y, (1, 6, 100))):
        K = rntk_kernel(X, other, **kw)
        for rows in rows_list:
            out = _memmap(tmp_path, K.shape, f"g{rows}.npy")
            res = rntk_kernel(X, other, out=out, block_rows=rows, **kw)
            assert res is out
            np.testing.assert_allclose(np.asarray(out), K, rtol=1e-12, atol=0)
            del out, res
        # on disk, read back
        np.testing.assert_allclose(np.load(tmp_path / "g1.npy"), K, rtol=1e-12, atol=0)


def test_blocks_without_out_and_with_an_ndarray(rng):
    X = _series(rng, 23)
    K = rntk_kernel(X)
    np.testing.assert_allclose(rntk_kernel(X, block_rows=5), K, rtol=1e-12, atol=0)
    out = np.full(K.shape, np.nan)  # every entry is overwritten
    np.testing.assert_allclose(rntk_kernel(X, out=out, block_rows=7), K, rtol=1e-12, atol=0)
    # a strided view is written in place too
    big = np.zeros((23, 46))
    rntk_kernel(X, out=big[:, ::2], block_rows=4)
    np.testing.assert_allclose(big[:, ::2], K, rtol=1e-12, atol=0)
    assert not big[:, 1::2].any()


def test_default_blocks_are_about_256_mb(rng, monkeypatch):
    X = _series(rng, 20)
    K = rntk_kernel(X)
    monkeypatch.setattr(shared, "BLOCK_BYTES", 8 * 20 * 3)  # 3 rows per block
    calls = []
    real = engine._pair_kernel

    def spy(*args):
        calls.append(args[-1].shape)
        return real(*args)

    monkeypatch.setattr(engine, "_pair_kernel", spy)
    out = np.empty_like(K)
    rntk_kernel(X, out=out)
    assert calls[0] == (3, 20) and len(calls) == 7
    np.testing.assert_allclose(out, K, rtol=1e-12, atol=0)


def test_memory_check_applies_to_one_block(rng, monkeypatch, tmp_path):
    X = [np.zeros(2)] * 3000
    # 3000 x 3000 doubles = 72 MB: refused in memory, accepted in blocks of 100 rows
    monkeypatch.setattr(validation, "_available_memory", lambda: 20 * 2**20)
    with pytest.raises(MemoryError, match=r"3000 x 3000 series needs .*out=numpy.memmap"):
        rntk_kernel(X)
    out = _memmap(tmp_path, (3000, 3000))
    rntk_kernel(X, out=out, block_rows=100)
    with pytest.raises(MemoryError, match="blocks of 3000 rows"):
        rntk_kernel(X, out=out, block_rows=5000)


def test_overflow_is_checked_in_every_block(rng, tmp_path):
    X = rng.normal(size=(6, 20))
    X[4] *= 1e160  # only the second block overflows
    out = _memmap(tmp_path, (6, 6))
    with pytest.raises(KernelOverflowError, match="overflows float64"):
        rntk_kernel(X, out=out, block_rows=3)
    with pytest.raises(KernelOverflowError):
        rntk_kernel(X, X[:2], out=np.empty((6, 2)), block_rows=3)


def test_out_and_block_rows_are_validated(rng, tmp_path):
    X = _series(rng, 5)
    with pytest.raises(ValueError, match=r"shape \(5, 5\); got a float64 array of shape"):
        rntk_kernel(X, out=np.empty((5, 4)))
    with pytest.raises(ValueError, match="float32"):
        rntk_kernel(X, out=np.empty((5, 5), dtype=np.float32))
    with pytest.raises(ValueError, match="float64 array"):
        rntk_kernel(X, out=[[0.0] * 5] * 5)
    ro = np.empty((5, 5))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        rntk_kernel(X, out=ro)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="block_rows must be a positive integer"):
            rntk_kernel(X, block_rows=bad)
