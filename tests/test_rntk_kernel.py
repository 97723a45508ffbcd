"""Properties, input layouts, bad inputs and threading of rntk_kernel."""

import subprocess
import sys

import numba
import numpy as np
import pytest

from rntk import rntk_kernel
from rntk._kernels import rntk_diag


@pytest.fixture
def mixed(rng):
    return [rng.normal(size=(int(rng.integers(4, 12)), 3)) for _ in range(12)]


@pytest.mark.parametrize("activation", ["relu", "erf", "linear"])
@pytest.mark.parametrize("n_layers", [1, 2])
def test_symmetric_positive_semidefinite(mixed, activation, n_layers):
    for kind in ("ntk", "nngp"):
        K = rntk_kernel(mixed, n_layers=n_layers, activation=activation, sigma_h=0.3,
                        sigma_b=0.2, kind=kind)
        assert np.array_equal(K, K.T)
        eig = np.linalg.eigvalsh(K)
        assert eig.min() > -1e-10 * eig.max()


def test_k_xx_equals_blocks_of_joint_gram(mixed):
    # K(X, Y) is the off-diagonal block of the Gram of the concatenation
    X, Y = mixed[:5], mixed[5:]
    K = rntk_kernel(mixed, sigma_h=0.4, sigma_b=0.1)
    np.testing.assert_allclose(rntk_kernel(X, Y, sigma_h=0.4, sigma_b=0.1), K[:5, 5:],
                               rtol=1e-13)


def test_representations_agree(rng):
    lengths = [5, 8, 3, 8]
    seqs = [rng.normal(size=(T, 2)) for T in lengths]
    padded = np.full((4, 8, 2), np.nan)
    for i, s in enumerate(seqs):
        padded[i, : len(s)] = s
    K_list = rntk_kernel(seqs)
    np.testing.assert_array_equal(rntk_kernel(padded), K_list)
    np.testing.assert_array_equal(rntk_kernel(tuple(seqs)), K_list)
    # univariate: 2-D array, 3-D with one channel, list of 1-D and of (T, 1) arrays
    U = rng.normal(size=(3, 6))
    K_u = rntk_kernel(U)
    for form in (U[:, :, None], list(U), [u[:, None] for u in U]):
        np.testing.assert_array_equal(rntk_kernel(form), K_u)
    np.testing.assert_allclose(rntk_kernel(U.astype(np.float32)), K_u, rtol=1e-6)
    Ui = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(rntk_kernel(Ui), rntk_kernel(Ui.astype(float)))
    U_nan = np.full((3, 9), np.nan)
    U_nan[:, :6] = U
    np.testing.assert_array_equal(rntk_kernel(U_nan), K_u)


def test_end_alignment(rng):
    # a prefix in front of the shorter series is ignored by the longer one's pairing
    x = rng.normal(size=(4, 1))
    y = rng.normal(size=(7, 1))
    z = np.vstack([rng.normal(size=(2, 1)), x])
    assert rntk_kernel([y], [x])[0, 0] != rntk_kernel([y], [z])[0, 0]
    k_xy = rntk_kernel([x], [y], sigma_h=0.0)[0, 0]
    k_yx = rntk_kernel([y], [x], sigma_h=0.0)[0, 0]
    assert k_xy == pytest.approx(k_yx, rel=1e-14)


def test_diag_matches_gram(mixed):
    for params in (dict(), dict(n_layers=2, activation="erf", sigma_h=1.0, kind="nngp")):
        np.testing.assert_allclose(rntk_diag(mixed, **params),
                                   np.diag(rntk_kernel(mixed, **params)), rtol=1e-13)


def test_per_layer_sigmas_equal_scalar(mixed):
    np.testing.assert_array_equal(
        rntk_kernel(mixed, n_layers=2, sigma_w=1.3, sigma_b=0.1),
        rntk_kernel(mixed, n_layers=2, sigma_w=[1.3, 1.3], sigma_b=np.array([0.1, 0.1])))


def test_sigma_v_scales_kernel(mixed):
    K1 = rntk_kernel(mixed, sigma_v=1.0, kind="nngp")
    K2 = rntk_kernel(mixed, sigma_v=2.0, kind="nngp")
    np.testing.assert_allclose(K2, 4 * K1, rtol=1e-13)


def test_zero_series_gives_finite_kernel():
    K = rntk_kernel(np.zeros((3, 5)), np.ones((2, 4)))
    assert np.isfinite(K).all()


@pytest.mark.parametrize("X, err, match", [
    (np.array([[1.0, np.nan, 2.0]]), ValueError, "NaN inside"),
    (np.array([[1.0, np.inf, 2.0]]), ValueError, "infinite"),
    (np.array([[np.nan, np.nan]]), ValueError, "empty"),
    ([np.zeros(0)], ValueError, "empty"),
    ([], ValueError, "empty"),
    (np.zeros((0, 5)), ValueError, "empty"),
    ([np.zeros((3, 2)), np.zeros((3, 1))], ValueError, "channels"),
    (np.array([["a", "b"]]), TypeError, "real numbers"),
    (np.ones((2, 3)) * 1j, TypeError, "real numbers"),
    (np.ones(4), ValueError, "2-D"),
    (np.ones((2, 3, 4, 5)), ValueError, "4 dimension"),
    (np.array([[[1.0, np.nan], [2.0, 3.0]]]), ValueError, "only some channels"),
    ("abc", TypeError, "array"),
    ([np.ones((2, 2, 2))], ValueError, "dimensions"),
])
def test_bad_inputs(X, err, match):
    with pytest.raises(err, match=match):
        rntk_kernel(X)


def test_channel_mismatch_between_x_and_y():
    with pytest.raises(ValueError, match="channels"):
        rntk_kernel(np.ones((2, 3, 2)), np.ones((2, 3, 3)))


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(sigma_w=-1.0), ValueError, "sigma_w must be non-negative"),
    (dict(sigma_b=np.nan), ValueError, "sigma_b must be finite"),
    (dict(sigma_h=np.inf), ValueError, "sigma_h must be finite"),
    (dict(sigma_u="1"), TypeError, "sigma_u"),
    (dict(sigma_v=[1.0, 2.0]), ValueError, "sigma_v must be a scalar"),
    (dict(n_layers=2, sigma_w=[1.0, 1.0, 1.0]), ValueError, "one value per layer"),
    (dict(activation="tanh"), ValueError, "unknown activation"),
    (dict(kind="gp"), ValueError, "unknown kind"),
    (dict(n_layers=0), ValueError, "n_layers must be >= 1"),
    (dict(n_layers=1.5), TypeError, "n_layers must be an integer"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
])
def test_bad_hyperparameters(kwargs, err, match):
    with pytest.raises(err, match=match):
        rntk_kernel(np.ones((2, 3)), **kwargs)


def test_n_jobs_restores_thread_count(mixed):
    before = numba.get_num_threads()
    K1 = rntk_kernel(mixed, n_jobs=1)
    assert numba.get_num_threads() == before
    K_all = rntk_kernel(mixed, n_jobs=-1)
    assert numba.get_num_threads() == before
    np.testing.assert_allclose(K1, K_all, rtol=1e-14)


def test_cached_compilation_survives_thread_count_changes(tmp_path):
    # the engine is compiled with cache=True and parallel=True: a fresh process that
    # loads the cache must run under any thread count, changed between calls
    code = (
        "import numba, numpy as np\n"
        "from rntk import rntk_kernel\n"
        "X = np.random.default_rng(0).normal(size=(40, 9))\n"
        "K = [rntk_kernel(X, n_jobs=n) for n in (1, numba.config.NUMBA_NUM_THREADS, 1)]\n"
        "numba.set_num_threads(1)\n"
        "K.append(rntk_kernel(X))\n"
        "assert all(np.allclose(k, K[0], rtol=1e-13) for k in K)\n"
        "print('ok')\n"
    )
    for _ in range(2):  # the second process certainly loads from the cache
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "ok"
