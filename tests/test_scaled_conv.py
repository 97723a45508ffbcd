"""Scaled convolution NTK of linear RNNs (Emami et al.) and its kernel ridge regressor."""

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rntk import ScaledConvNTKRegressor, scaled_conv_kernel, scaled_conv_rho

# ---------------------------------------------------------------------------
# slow references, written from the formulas (Emami et al., Thm. 3.3, eq. 21)


def naive_rho(T, nu_w, nu_f, nu_c):
    out = []
    for j in range(T):
        dterm = 0.0 if j == 0 else j * nu_f * nu_w ** (j - 1)
        out.append(nu_c * (dterm + nu_w**j) + nu_f * nu_w**j)
    return np.array(out)


def naive_last(xs, ys, rho):
    K = np.zeros((len(xs), len(ys)))
    for i, x in enumerate(xs):
        for k, y in enumerate(ys):
            for j in range(min(len(x), len(y))):
                K[i, k] += rho[j] * np.dot(x[len(x) - 1 - j], y[len(y) - 1 - j])
    return K


def naive_sequence(xs, ys, rho):
    """Block K_{t,s} = T(x)^T D(rho) T(x') (eq. 17), built from the Toeplitz matrices."""
    tx, ty = max(map(len, xs)), max(map(len, ys))
    m = xs[0].shape[1]
    K = np.zeros((len(xs), tx, len(ys), ty))

    def toeplitz(x, T):  # (T m, T): column t holds x_t, x_{t-1}, ..., x_0, 0, ...
        out = np.zeros((T * m, T))
        for t in range(len(x)):
            for j in range(t + 1):
                out[j * m:(j + 1) * m, t] = x[t - j]
        return out

    for i, x in enumerate(xs):
        for k, y in enumerate(ys):
            T = max(len(x), len(y))
            w = np.repeat(np.concatenate([rho, np.zeros(T)])[:T], m)  # diag of D(rho)
            block = toeplitz(x, T).T @ (w[:, None] * toeplitz(y, T))
            K[i, :len(x), k, :len(y)] = block[:len(x), :len(y)]
    return K


def series(rng, lengths, m):
    return [rng.normal(size=(T, m)) for T in lengths]


# ---------------------------------------------------------------------------
# rho


@pytest.mark.parametrize("nu_w, nu_f, nu_c", [(0.3, 1.0, 1.0), (0.8, 0.5, 2.0), (0.0, 1.0, 1.5),
                                              (1.2, 0.7, 0.0)])
def test_rho_matches_formula(nu_w, nu_f, nu_c):
    rho = scaled_conv_rho(12, nu_w=nu_w, nu_f=nu_f, nu_c=nu_c)
    np.testing.assert_allclose(rho, naive_rho(12, nu_w, nu_f, nu_c), rtol=1e-14)


def test_rho_small_values_by_hand():
    # nu_w = 0: only lags 0 (nu_c + nu_f) and 1 (nu_c nu_f, from the gradient in W) remain
    np.testing.assert_allclose(scaled_conv_rho(4, nu_w=0.0, nu_f=2.0, nu_c=3.0),
                               [5.0, 6.0, 0.0, 0.0])
    # geometric decay bound of eq. (22): rho_j <= (nu_c (T nu_f + 1) + nu_f) nu_w^(j-1)
    T, nu_w = 20, 0.3
    rho = scaled_conv_rho(T, nu_w=nu_w)
    j = np.arange(1, T)
    assert np.all(rho[1:] <= (1.0 * (T * 1.0 + 1) + 1.0) * nu_w ** (j - 1))
    assert np.all(np.diff(rho) < 0)


@pytest.mark.parametrize("T, err", [(0, ValueError), (2.5, TypeError), (True, TypeError)])
def test_rho_bad_T(T, err):
    with pytest.raises(err, match="T must be a positive integer"):
        scaled_conv_rho(T)


def test_rho_bad_nu_and_overflow():
    with pytest.raises(ValueError, match="nu_w must be non-negative"):
        scaled_conv_rho(3, nu_w=-0.1)
    with pytest.raises(ValueError, match="overflows"):
        scaled_conv_rho(2000, nu_w=10.0)


# ---------------------------------------------------------------------------
# kernel vs reference


@pytest.mark.parametrize("output", ["last", "sequence"])
@pytest.mark.parametrize("use_rho", [False, True])
def test_kernel_matches_reference_mixed_lengths(rng, output, use_rho):
    nu = dict(nu_w=0.7, nu_f=0.5, nu_c=1.3)
    xs = series(rng, [3, 7, 1, 5], 2)
    ys = series(rng, [6, 2, 9], 2)
    if use_rho:  # arbitrary taps (the direct O(T T' min) path)
        rho = rng.uniform(0.1, 2.0, size=12)
        kw = dict(rho=rho)
    else:
        rho = naive_rho(12, **nu)
        kw = nu
    ref = naive_sequence if output == "sequence" else naive_last
    K = scaled_conv_kernel(xs, ys, output=output, **kw)
    np.testing.assert_allclose(K, ref(xs, ys, rho), rtol=1e-10, atol=1e-10)
    Kxx = scaled_conv_kernel(xs, output=output, **kw)
    np.testing.assert_allclose(Kxx, ref(xs, xs, rho), rtol=1e-10, atol=1e-10)


def test_sequence_kernel_last_step_is_last_kernel(rng):
    X = rng.normal(size=(5, 9, 3))
    Ks = scaled_conv_kernel(X, nu_w=0.5, output="sequence")
    Kl = scaled_conv_kernel(X, nu_w=0.5, output="last")
    np.testing.assert_allclose(Ks[:, -1, :, -1], Kl, rtol=1e-12)
    assert np.array_equal(Kl, Kl.T)
    # a symmetric positive semi-definite Gram over all (series, step) pairs
    G = Ks.reshape(45, 45)
    np.testing.assert_allclose(G, G.T, rtol=1e-12, atol=1e-12)
    assert np.linalg.eigvalsh(G).min() > -1e-9 * np.abs(G).max()


def test_unit_taps_are_plain_convolution_kernel(rng):
    # rho = 1: K(x, x')_{t,s} = <T(x)_{:,t}, T(x')_{:,s}> computed with numpy lags
    X = rng.normal(size=(3, 6))
    K = scaled_conv_kernel(X, rho=np.ones(6), output="sequence")
    lagged = np.zeros((3, 6, 6))  # [i, t, j] = x_{t-j}
    for t in range(6):
        for j in range(t + 1):
            lagged[:, t, j] = X[:, t - j]
    np.testing.assert_allclose(K, np.einsum("atj,bsj->atbs", lagged, lagged), atol=1e-12)


def test_input_layouts_agree(rng):
    X = rng.normal(size=(4, 6))
    padded = X.copy()
    padded[1, 4:] = np.nan
    as_list = [X[0], X[1, :4], X[2], X[3]]
    for output in ("last", "sequence"):
        a = scaled_conv_kernel(padded, output=output)
        b = scaled_conv_kernel(as_list, output=output)
        c = scaled_conv_kernel([s[:, None] for s in as_list], output=output)
        np.testing.assert_allclose(a, b, rtol=1e-14)
        np.testing.assert_allclose(a, c, rtol=1e-14)
    np.testing.assert_allclose(scaled_conv_kernel(X[:, :, None]), scaled_conv_kernel(X))


def test_sequence_kernel_zero_past_the_end(rng):
    xs = [rng.normal(size=4), rng.normal(size=7)]
    K = scaled_conv_kernel(xs, output="sequence")
    assert K.shape == (2, 7, 2, 7)
    assert np.all(K[0, 4:] == 0) and np.all(K[:, :, 0, 4:] == 0)
    assert np.all(K[0, :4, 0, :4] != 0)


@pytest.mark.parametrize("output", ["last", "sequence"])
def test_thread_counts_agree(rng, output):
    # compiled with cache=True and parallel=True: changing the thread count must not crash
    X = series(rng, [5, 8, 3, 8, 6], 2)
    results = [scaled_conv_kernel(X, output=output, n_jobs=n) for n in (1, 2, 1, None)]
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-12)
    results = [scaled_conv_kernel(X, rho=np.ones(8), output=output, n_jobs=n) for n in (2, 1)]
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(output="full"), ValueError, "unknown output"),
    (dict(rho=[1.0, 1.0]), ValueError, "at least 5"),
    (dict(rho=-np.ones(5)), ValueError, "non-negative"),
    (dict(rho=np.ones((5, 2))), ValueError, "1-D"),
    (dict(rho=[1, np.nan, 1, 1, 1]), ValueError, "finite"),
    (dict(rho="ones"), TypeError, "rho"),
    (dict(nu_w=-1.0), ValueError, "nu_w"),
    (dict(nu_f=None), TypeError, "nu_f"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
])
def test_bad_parameters(rng, kwargs, err, match):
    with pytest.raises(err, match=match):
        scaled_conv_kernel(rng.normal(size=(3, 5)), **kwargs)


def test_bad_inputs(rng):
    X = rng.normal(size=(3, 5))
    bad = X.copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN inside"):
        scaled_conv_kernel(bad)
    bad[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        scaled_conv_kernel(bad, output="sequence")
    with pytest.raises(ValueError, match="channels"):
        scaled_conv_kernel(rng.normal(size=(3, 5, 2)), rng.normal(size=(2, 5, 3)))
    with pytest.raises(TypeError, match="real numbers"):
        scaled_conv_kernel(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="dimension"):
        scaled_conv_kernel(np.ones(5))
    with pytest.raises(ValueError, match="overflows"):
        scaled_conv_kernel(np.ones((2, 400)), nu_w=30.0, output="sequence")


# ---------------------------------------------------------------------------
# estimator


@parametrize_with_checks(
    [ScaledConvNTKRegressor()],
    expected_failed_checks=lambda est: {
        "check_n_features_in_after_fitting": (
            "columns of a 2-D X are time steps and series of any length are valid at "
            "predict time; only the channel count is enforced"),
    },
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def naive_krr(K_train, K_test, y, alpha):
    return K_test @ np.linalg.solve(K_train + alpha * np.eye(len(K_train)), y)


def test_regressor_last_matches_kernel_ridge(rng):
    xs = series(rng, [4, 9, 6, 7, 5, 8, 3, 9], 2)
    y = rng.normal(size=(8, 2))
    test = series(rng, [5, 11, 2], 2)
    rho = naive_rho(11, 0.6, 1.0, 0.5)
    reg = ScaledConvNTKRegressor(alpha=0.3, nu_w=0.6, nu_c=0.5).fit(xs, y)
    expected = naive_krr(naive_last(xs, xs, rho), naive_last(test, xs, rho), y, 0.3)
    np.testing.assert_allclose(reg.predict(test), expected, rtol=1e-9, atol=1e-12)
    reg1 = ScaledConvNTKRegressor(alpha=0.3, nu_w=0.6, nu_c=0.5).fit(xs, y[:, 0])
    np.testing.assert_allclose(reg1.predict(test), expected[:, 0], rtol=1e-9, atol=1e-12)


def test_regressor_sequence_matches_kernel_ridge(rng):
    lengths = [4, 6, 3, 6, 5]
    xs = series(rng, lengths, 1)
    Y = np.full((5, 6), np.nan)
    for i, T in enumerate(lengths):
        Y[i, :T] = rng.normal(size=T)
    test = series(rng, [6, 2, 7], 1)
    rho = naive_rho(7, 0.5, 1.0, 1.0)
    reg = ScaledConvNTKRegressor(alpha=0.2, nu_w=0.5, output="sequence").fit(xs, Y)
    # reference: flatten (series, step) over valid steps only
    Ktr = naive_sequence(xs, xs, rho)
    Kte = naive_sequence(test, xs, rho)
    idx = [(i, t) for i, T in enumerate(lengths) for t in range(T)]
    A = np.array([[Ktr[i, t, k, s] for (k, s) in idx] for (i, t) in idx])
    yv = np.array([Y[i, t] for (i, t) in idx])
    pred = reg.predict(test)
    assert pred.shape == (3, 7)
    for a, x in enumerate(test):
        B = np.array([[Kte[a, t, k, s] for (k, s) in idx] for t in range(len(x))])
        np.testing.assert_allclose(pred[a, :len(x)], naive_krr(A, B, yv, 0.2),
                                   rtol=1e-9, atol=1e-12)
        assert np.all(np.isnan(pred[a, len(x):]))
    # three target channels (n, T, d): each solved with the same kernel
    Y3 = np.stack([Y, 2 * Y, -Y], axis=2)
    pred3 = ScaledConvNTKRegressor(alpha=0.2, nu_w=0.5, output="sequence").fit(
        xs, Y3).predict(test)
    np.testing.assert_allclose(pred3[:, :, 1], 2 * pred, rtol=1e-9)


def test_regressor_sequence_learns_a_causal_filter(rng):
    # y_t = x_t + 0.5 x_{t-1}: a short-memory filter, within the kernel's reach
    X = rng.normal(size=(60, 10))
    Y = X.copy()
    Y[:, 1:] += 0.5 * X[:, :-1]
    reg = ScaledConvNTKRegressor(alpha=1e-4, output="sequence").fit(X[:40], Y[:40])
    assert reg.score(X[40:], Y[40:]) > 0.999
    # the last-output regressor reads the same filter at the final step
    last = ScaledConvNTKRegressor(alpha=1e-4).fit(X[:40], Y[:40, -1])
    assert last.score(X[40:], Y[40:, -1]) > 0.999


def test_regressor_errors_and_pickle(rng):
    X = rng.normal(size=(10, 5, 2))
    reg = ScaledConvNTKRegressor().fit(X, rng.normal(size=10))
    with pytest.raises(ValueError, match="3 channel.* fitted on series with 2"):
        reg.predict(rng.normal(size=(3, 5, 3)))
    assert reg.n_channels_in_ == 2 and not hasattr(reg, "n_features_in_")
    reg2 = ScaledConvNTKRegressor().fit(X[:, :, 0], rng.normal(size=10))
    assert reg2.n_features_in_ == 5 and reg2.n_channels_in_ == 1
    # an object array of series of different lengths
    ragged = np.empty(3, dtype=object)
    ragged[:] = [rng.normal(size=4), rng.normal(size=6), rng.normal(size=5)]
    assert reg2.predict(ragged).shape == (3,)
    assert reg.predict(rng.normal(size=(3, 8, 2))).shape == (3,)  # other lengths are fine
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(X), reg.predict(X))
    seq = ScaledConvNTKRegressor(output="sequence")
    with pytest.raises(ValueError, match="one column per time step"):
        seq.fit(X, rng.normal(size=(10, 4)))
    with pytest.raises(ValueError, match="inside the series"):
        seq.fit(X, np.full((10, 5), np.nan))
    with pytest.raises(ValueError, match="output"):
        ScaledConvNTKRegressor(output="all").fit(X, rng.normal(size=10))
