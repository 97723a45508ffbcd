"""The signature-kernel peer of ``rntk-ucr`` (optional: needs pysiglib)."""

import importlib.util
import math

import numpy as np
import pytest

import rntk.benchmarking._signature as sig
import rntk.benchmarking._ucr as ucr
from rntk.benchmarking import run_benchmark

HAVE_SIGLIB = importlib.util.find_spec("pysiglib") is not None
needs_siglib = pytest.mark.skipif(not HAVE_SIGLIB, reason="needs pysiglib")


@pytest.fixture(autouse=True)
def _no_rntk_data(monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)


def _path_by_hand(x):
    """Z-normalised univariate series with time in [0, 1] as a second channel."""
    x = np.asarray(x, dtype=float)
    return np.column_stack([(x - x.mean()) / x.std(), np.linspace(0, 1, len(x))])


def _signature_by_hand(path, depth):
    """Truncated signature of a piecewise-linear path, by Chen's identity.

    A linear piece of increment h has the signature exp(h) = sum_k h^{(x)k} / k!; the
    signature of a concatenation is the truncated tensor product of the pieces'.
    Levels 0..depth, level k as an array of shape (d,) * k.
    """
    d = path.shape[1]
    S = [np.ones(())] + [np.zeros((d,) * k) for k in range(1, depth + 1)]
    for h in np.diff(path, axis=0):
        E = [np.ones(())]
        for k in range(1, depth + 1):
            E.append(np.multiply.outer(E[-1], h) / k)
        S = [sum(np.multiply.outer(S[i], E[k - i]) for i in range(k + 1))
             for k in range(depth + 1)]
    return S


def test_the_grid_is_seven_static_kernels_raw_and_normalised():
    kernels = {(p["static"], p.get("scale"), p.get("sigma")) for p in sig.SIGNATURE_GRID}
    assert len(kernels) == 7 and len(sig.SIGNATURE_GRID) == 14
    # raw then normalised for each kernel: one computation serves both
    assert [p["normalize"] for p in sig.SIGNATURE_GRID] == [False, True] * 7
    assert ucr.PROTOCOLS["loo"]["sigkernel"] == sig.SIGNATURE_GRID


def test_paths_are_z_normalised_with_time_and_padded_by_their_last_point():
    a, b = np.array([1.0, 3.0, 2.0, 6.0]), np.array([5.0, 5.0, 7.0])
    P = sig._paths([a, b])
    assert P.shape == (2, 4, 2)
    np.testing.assert_allclose(P[0], _path_by_hand(a))
    np.testing.assert_allclose(P[1, :3], _path_by_hand(b))
    np.testing.assert_array_equal(P[1, 3], P[1, 2])
    # a constant channel is centred, not divided by zero
    np.testing.assert_array_equal(sig._paths([np.full(3, 2.0)])[0, :, 0], 0.0)
    with pytest.raises(ValueError, match="NaN"):
        sig._paths([np.array([1.0, np.nan])])
    with pytest.raises(ValueError, match="channels"):
        sig._paths([np.zeros((3, 1)), np.zeros((3, 2))])


@needs_siglib
def test_linear_signature_kernel_is_the_inner_product_of_signatures():
    """pysiglib's PDE solution against truncated signatures computed by hand."""
    rng = np.random.default_rng(0)
    X = [rng.normal(size=5), rng.normal(size=4), rng.normal(size=5)]
    for scale in (0.5, 1.0):
        # a fine PDE grid: close to exact
        K = sig.signature_gram(X, static="linear", scale=scale, dyadic_order=7)
        sigs = [_signature_by_hand(scale * _path_by_hand(x), 12) for x in X]
        H = np.array([[sum(float(np.sum(u * v)) for u, v in zip(s, t)) for t in sigs]
                      for s in sigs])
        np.testing.assert_allclose(K, H, rtol=2e-3)


@needs_siglib
def test_grams_are_symmetric_psd_and_padding_changes_nothing():
    import pysiglib

    rng = np.random.default_rng(1)
    X = [np.sin(np.linspace(0, 3, n)) + 0.3 * rng.normal(size=n) for n in (12, 9, 15, 12, 7)]
    for p in sig.SIGNATURE_GRID:
        K = sig.signature_gram(X, **p)
        assert np.isfinite(K).all()
        np.testing.assert_allclose(K, K.T, rtol=1e-10, atol=1e-12)
        if p["normalize"]:
            np.testing.assert_allclose(np.diag(K), 1.0)
        # the exact kernel is an inner product: PSD once the PDE's grid is fine enough
        # (the coarse ones of the grid need not be: see the module's docstring)
        K = sig.signature_gram(X, **{**p, "dyadic_order": 6})
        assert np.linalg.eigvalsh(K).min() > -1e-8 * np.abs(K).max()
    # each pair on its own, unpadded, gives the same value as inside the padded batch
    for kernel, p in [(pysiglib.RBFKernel(1.0), {"static": "rbf", "sigma": 1.0}),
                      (pysiglib.ScaledLinearKernel(0.5), {"static": "linear", "scale": 0.5,
                                                          "dyadic_order": 2})]:
        K = sig.signature_gram(X, **p)
        for i, j in [(0, 1), (2, 4), (1, 3)]:
            pi, pj = (_path_by_hand(X[k])[None].copy() for k in (i, j))
            kij = float(np.ravel(pysiglib.sig_kernel(
                pi, pj, dyadic_order=p.get("dyadic_order", 0), static_kernel=kernel))[0])
            assert K[i, j] == pytest.approx(kij, rel=1e-10)
    # the test Gram against the training one: the same values, normalised the same way
    for normalize in (False, True):
        full = sig.signature_gram(X, static="linear", scale=0.5, normalize=normalize)
        cross = sig.signature_gram(X[3:], X[:3], static="linear", scale=0.5,
                                   normalize=normalize)
        np.testing.assert_allclose(cross, full[3:, :3], rtol=1e-10)
    # the registry's batched Grams equal one call per setting
    spec = sig.signature_spec()
    for p, G in zip(sig.SIGNATURE_GRID, spec.iter_grams(X, sig.SIGNATURE_GRID)):
        np.testing.assert_allclose(G, sig.signature_gram(X, **p), rtol=1e-12)


@needs_siglib
def test_torch_threads_are_restored():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        sig.signature_gram([np.arange(4.0), np.arange(5.0) ** 2], static="rbf", n_jobs=1)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@needs_siglib
def test_overflowing_settings_are_skipped_not_selected():
    X = [np.linspace(0, 1, 400) ** 2 * (-1) ** np.arange(400) * (i + 1) for i in range(3)]
    grams = list(sig.signature_spec().iter_grams(X, [{"static": "linear", "scale": 30.0,
                                                      "normalize": False}]))
    assert grams == [None]


@needs_siglib
def test_sigkernel_runs_as_a_peer_of_the_benchmark(tmp_path, monkeypatch):
    # the linear static kernels on a coarse PDE grid only (seconds, not a minute)
    grid = [{**p, "dyadic_order": 0} for p in sig.SIGNATURE_GRID if p["static"] == "linear"]
    monkeypatch.setitem(ucr.PROTOCOLS["loo"], "sigkernel", grid)
    rows = run_benchmark(["Coffee"], ["sigkernel"], protocol="loo", out=tmp_path, quiet=True)
    (row,) = rows
    assert row["method"] == "sigkernel" and row["engine"] == "kernel ridge, exact LOO"
    assert {"static", "scale", "dyadic_order", "normalize", "alpha"} <= set(row["params"])
    assert row["n_settings"] == len(grid) * len(ucr.PROTOCOLS["loo"]["alpha"])
    assert row["accuracy"] >= 0.75
    assert "| sigkernel |" in (tmp_path / "summary.md").read_text()


def test_a_missing_pysiglib_is_named(tmp_path, monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(sig.importlib.util, "find_spec",
                        lambda name, *a: None if name == "pysiglib" else real(name, *a))
    why = sig.signature_missing()
    assert "pysiglib is not installed" in why and "rntk[bench]" in why
    with pytest.raises(ImportError, match="pysiglib"):
        sig.signature_gram([np.arange(3.0)])
    with pytest.raises(ImportError, match="pysiglib"):
        list(sig.signature_spec().iter_grams([np.arange(3.0)], sig.SIGNATURE_GRID[:1]))
    rows = run_benchmark(["Coffee"], ["sigkernel"], protocol="loo", out=tmp_path)
    assert rows == []
    assert "skipping method 'sigkernel': pysiglib is not installed" in capsys.readouterr().err


def test_factorial_helper_sanity():
    # the hand signature of a single straight piece is exp(h): level k = h^{(x)k} / k!
    S = _signature_by_hand(np.array([[0.0, 0.0], [2.0, 1.0]]), 3)
    np.testing.assert_allclose(S[3][0, 0, 0], 2.0**3 / math.factorial(3))
    np.testing.assert_allclose(S[2][0, 1], 2.0 * 1.0 / 2)
