"""The torch RNTK: equal to the Numba engine, to a plain reference, and differentiable."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rntk import rntk_kernel  # noqa: E402
from rntk.nn import rntk_gram_log_gradient, rntk_kernel_torch  # noqa: E402

# small tensors: intra-op threads only add contention (fixture in conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _mixed(rng, lengths, m=2):
    return [rng.normal(size=(t, m)) for t in lengths]


def _hyper(act, n_layers, kind):
    return dict(n_layers=n_layers, sigma_w=[1.3, 1.1, 0.9][:n_layers],
                sigma_u=[0.8, 1.2, 1.0][:n_layers], sigma_b=0.3, sigma_h=0.7, sigma_v=1.2,
                activation=act, kind=kind)


# ---------------------------------------------------------------------------------------
# an independent, plain reference: the spec's backward sums for one end-aligned pair
# ---------------------------------------------------------------------------------------
def _v(act, k1, k2, k3, same):
    if act == "relu":
        s = math.sqrt(k1 * k2)
        c = 1.0 if same else (min(max(k3 / s, -1.0), 1.0) if s > 0 else 0.0)
        v = s * (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / (2 * math.pi)
        return v, (math.pi - math.acos(c)) / (2 * math.pi)
    if act == "erf":
        d = math.sqrt((1 + 2 * k1) * (1 + 2 * k2))
        a = 2 * k1 / (1 + 2 * k1) if same else 2 * k3 / d
        return 2 / math.pi * math.asin(a), 4 / (math.pi * d * math.sqrt(1 - a * a))
    return k3, 1.0


def _run_pair(a, b, pair_same, act, L, sw, su, sb, sh, self_a=None, self_b=None):
    """Sigma^(l,t), V_phi and V_phi' of the end-aligned pair (a, b) over its overlap."""
    T = min(len(a), len(b))
    a, b = a[len(a) - T:], b[len(b) - T:]
    m = a.shape[1]
    sig, v_out, d_out = np.zeros((L, T)), np.zeros((L, T)), np.zeros((L, T))
    for l in range(L):
        prev = sh**2 if pair_same else 0.0
        for t in range(T):
            inp = su[0] ** 2 / m * float(a[t] @ b[t]) if l == 0 else su[l] ** 2 * v_out[l - 1, t]
            sig[l, t] = sw[l] ** 2 * prev + inp + sb[l] ** 2
            if self_a is None:  # the pair of a sample with itself: k1 = k2 = k3
                k1 = k2 = sig[l, t]
            else:
                k1, k2 = self_a[l, self_a.shape[1] - T + t], self_b[l, self_b.shape[1] - T + t]
            v_out[l, t], d_out[l, t] = _v(act, k1, k2, sig[l, t], pair_same)
            prev = v_out[l, t]
    return sig, v_out, d_out


def _reference_pair(x, y, same, act, L, sw, su, sb, sh, sv, kind):
    """Theta(x, y) by the spec: Sigma forward (self terms first), then the Pi sums."""
    sx = _run_pair(x, x, True, act, L, sw, su, sb, sh)[0]
    sy = _run_pair(y, y, True, act, L, sw, su, sb, sh)[0]
    sig, v_out, d_out = _run_pair(x, y, same, act, L, sw, su, sb, sh, sx, sy)
    T = sig.shape[1]
    K = sv**2 * v_out[L - 1, T - 1]
    if kind == "nngp":
        return K
    theta = K
    pi = np.zeros((L, T))
    for t in range(T - 1, -1, -1):
        for l in range(L - 1, -1, -1):
            rec = sw[l] ** 2 * pi[l, t + 1] if t < T - 1 else 0.0
            if l == L - 1:
                up = sv**2 if t == T - 1 else 0.0
            else:
                up = su[l + 1] ** 2 * pi[l + 1, t]  # same time step (the spec's correction)
            pi[l, t] = d_out[l, t] * (rec + up)
            theta += pi[l, t] * sig[l, t]
    return theta


@pytest.mark.parametrize("act", ["relu", "erf", "linear"])
@pytest.mark.parametrize("n_layers", [1, 2])
def test_matches_plain_reference(rng, act, n_layers):
    X = _mixed(rng, (3, 6, 4))
    Y = _mixed(rng, (5, 2))
    hp = _hyper(act, n_layers, "ntk")
    sw, su = hp["sigma_w"], hp["sigma_u"]
    sb = [hp["sigma_b"]] * n_layers
    args = (act, n_layers, sw, su, sb, hp["sigma_h"], hp["sigma_v"], "ntk")
    K = rntk_kernel_torch(X, **hp).numpy()
    KY = rntk_kernel_torch(X, Y, **hp).numpy()
    for i in range(3):
        for j in range(3):
            ref = _reference_pair(X[i], X[j], i == j, *args)
            assert K[i, j] == pytest.approx(ref, rel=1e-12)
        for j in range(2):
            assert KY[i, j] == pytest.approx(_reference_pair(X[i], Y[j], False, *args),
                                             rel=1e-12)


@pytest.mark.parametrize("act", ["relu", "erf", "linear"])
@pytest.mark.parametrize("n_layers", [1, 2, 3])
@pytest.mark.parametrize("kind", ["ntk", "nngp"])
def test_equals_numba_engine(rng, act, n_layers, kind):
    X = _mixed(rng, (3, 7, 5, 7, 1))
    Y = _mixed(rng, (4, 9, 2))
    hp = _hyper(act, n_layers, kind)
    for a, b in ((X, None), (X, Y), (Y, X)):
        expected = rntk_kernel(a, b, **hp)
        got = rntk_kernel_torch(a, b, **hp)
        assert got.dtype == torch.float64
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10,
                                   atol=1e-10 * np.abs(expected).max())


def test_sigma_h_only_on_self_pairs(rng):
    X = _mixed(rng, (4, 6))
    K_xx = rntk_kernel_torch(X, sigma_h=0.9).numpy()
    K_xy = rntk_kernel_torch(X, [x.copy() for x in X], sigma_h=0.9).numpy()
    np.testing.assert_allclose(K_xx - np.diag(np.diag(K_xx)), K_xy - np.diag(np.diag(K_xy)),
                               rtol=1e-12)
    assert np.all(np.diag(K_xx) != np.diag(K_xy))


def test_float32_and_layouts(rng):
    X = rng.normal(size=(4, 6, 3))
    expected = rntk_kernel(X, activation="erf")
    got = rntk_kernel_torch(torch.tensor(X, dtype=torch.float32), activation="erf")
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4)
    # NaN tail padding of a tensor and a list of tensors of different lengths
    Xn = X.copy()
    Xn[1, 4:] = np.nan
    lst = [torch.tensor(X[0]), torch.tensor(X[1, :4]), torch.tensor(X[2]), torch.tensor(X[3])]
    a = rntk_kernel_torch(torch.tensor(Xn))
    b = rntk_kernel_torch(lst)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13)
    np.testing.assert_allclose(a.numpy(), rntk_kernel(Xn), rtol=1e-10)
    assert rntk_kernel_torch(X, device="cpu").device.type == "cpu"


def test_paired_kernel_is_the_diagonal_of_the_cross_gram(rng):
    X = _mixed(rng, (5, 3, 8))
    Y = _mixed(rng, (4, 6, 2))
    hp = _hyper("relu", 2, "ntk")
    full = rntk_kernel(X, Y, **hp)
    np.testing.assert_allclose(rntk_kernel_torch(X, Y, paired=True, **hp).numpy(), np.diag(full),
                               rtol=1e-10)


@pytest.mark.parametrize("act", ["relu", "erf"])
def test_input_gradient_matches_finite_differences_of_numba(rng, act):
    X = _mixed(rng, (4, 6, 3), m=2)
    Y = _mixed(rng, (5,), m=2)
    hp = _hyper(act, 2, "ntk")
    xt = [torch.tensor(x, requires_grad=True) for x in X]
    (rntk_kernel_torch(xt, **hp).sum() + rntk_kernel_torch(xt, Y, **hp).sum()).backward()

    def f(xs):
        return rntk_kernel(xs, **hp).sum() + rntk_kernel(xs, Y, **hp).sum()

    h = 1e-6
    # every series: its first, second and last steps, both channels
    entries = [(i, t, c) for i in range(3) for t in {0, 1, len(X[i]) - 1} for c in (0, 1)]
    for i, t, c in entries:
        up = [x.copy() for x in X]
        dn = [x.copy() for x in X]
        up[i][t, c] += h
        dn[i][t, c] -= h
        fd = (f(up) - f(dn)) / (2 * h)
        assert xt[i].grad[t, c].item() == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_hyperparameter_gradient_matches_finite_differences(rng):
    X = _mixed(rng, (4, 6, 3))
    Y = _mixed(rng, (5, 2))
    names = ["sigma_w", "sigma_u", "sigma_b", "sigma_h", "sigma_v"]
    base = dict(sigma_w=[1.3, 1.2], sigma_u=[0.9, 1.1], sigma_b=0.4, sigma_h=0.6, sigma_v=1.1)
    tens = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in base.items()}
    (rntk_kernel_torch(X, n_layers=2, **tens).sum()
     + rntk_kernel_torch(X, Y, n_layers=2, **tens).sum()).backward()
    h = 1e-6
    for k in names:
        v0 = np.atleast_1d(np.array(base[k], dtype=float))
        for e in range(v0.size):
            vals = []
            for s in (1, -1):
                v = v0.copy()
                v[e] += s * h
                q = dict(base, **{k: v if v.size > 1 else float(v[0])})
                vals.append(rntk_kernel(X, n_layers=2, **q).sum()
                            + rntk_kernel(X, Y, n_layers=2, **q).sum())
            fd = (vals[0] - vals[1]) / (2 * h)
            assert tens[k].grad.reshape(-1)[e].item() == pytest.approx(fd, rel=1e-6)


def test_gradients_stay_finite_at_correlation_one():
    x = torch.tensor([[0.3, -1.2, 0.8, 0.1]], dtype=torch.float64, requires_grad=True)
    # the sample with itself (closed form) and an identical copy in Y (c = 1 exactly)
    K = rntk_kernel_torch(x, sigma_h=0.5).sum() + rntk_kernel_torch(x, x.detach() * 1.0).sum()
    K.backward()
    assert torch.isfinite(x.grad).all()
    # zero input: zero variances everywhere (sqrt at 0)
    z = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    rntk_kernel_torch(z).sum().backward()
    assert torch.isfinite(z.grad).all()
    # theta(x, x) is the diagonal sum of a function of x alone: compare to autograd of
    # the same value computed through a paired copy (c clipped to 1), away from c = 1
    y = torch.tensor([[1.0, 0.5, -0.4, 0.9]], dtype=torch.float64, requires_grad=True)
    Kd = rntk_kernel_torch(y, activation="erf")
    Kd.sum().backward()
    g = y.grad.clone()
    h = 1e-6
    for t in range(4):
        e = torch.zeros_like(y)
        e[0, t] = h
        fd = (rntk_kernel_torch(y.detach() + e, activation="erf")
              - rntk_kernel_torch(y.detach() - e, activation="erf")).item() / (2 * h)
        assert g[0, t].item() == pytest.approx(fd, rel=1e-6)


def test_gradcheck_small():
    torch.manual_seed(0)
    X = [torch.randn(t, 2, dtype=torch.float64, requires_grad=True) for t in (3, 5)]
    sw = torch.tensor([1.3, 1.1], dtype=torch.float64, requires_grad=True)
    sh = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)

    def f(a, b, w, h):
        return rntk_kernel_torch([a, b], n_layers=2, sigma_w=w, sigma_h=h, sigma_b=0.2)

    assert torch.autograd.gradcheck(f, (*X, sw, sh))


def test_exact_log_gradient_matches_central_differences(rng):
    X = [rng.normal(size=t) for t in (5, 7, 3)]
    hp = dict(n_layers=2, sigma_w=[1.3, 1.2], sigma_u=1.0, sigma_b=0.3, sigma_h=0.5,
              sigma_v=1.1, activation="relu", kind="ntk")
    # sigma_b: one log-entry shared by both layers; sigma_w: one entry per layer
    free = ["sigma_b", "sigma_h", "sigma_v", "sigma_w", "sigma_w"]
    K, dK = rntk_gram_log_gradient(X, free, **hp)
    np.testing.assert_allclose(K, rntk_kernel(X, **hp), rtol=1e-10)
    h = 1e-5
    for j, (name, e) in enumerate([("sigma_b", 0), ("sigma_h", 0), ("sigma_v", 0),
                                   ("sigma_w", 0), ("sigma_w", 1)]):
        vals = []
        for s in (1, -1):
            v = np.array(hp[name], dtype=float)
            if v.ndim:
                v[e] *= np.exp(s * h)
            else:
                v = float(v) * np.exp(s * h)
            vals.append(rntk_kernel(X, **dict(hp, **{name: v})))
        np.testing.assert_allclose(dK[..., j], (vals[0] - vals[1]) / (2 * h), rtol=1e-6,
                                   atol=1e-8 * np.abs(dK[..., j]).max())


def test_errors(rng):
    X = _mixed(rng, (3, 4))
    with pytest.raises(ValueError, match="sigma_w"):
        rntk_kernel_torch(X, sigma_w=-1.0)
    with pytest.raises(ValueError, match="sigma_w"):
        rntk_kernel_torch(X, sigma_w=torch.tensor(-1.0))
    with pytest.raises(ValueError, match="activation"):
        rntk_kernel_torch(X, activation="tanh")
    with pytest.raises(ValueError, match="channels"):
        rntk_kernel_torch(X, _mixed(rng, (3,), m=3))
    with pytest.raises(ValueError, match="NaN"):
        rntk_kernel_torch(torch.tensor([[1.0, float("nan"), 2.0]]))
    with pytest.raises(TypeError, match="dtype"):
        rntk_kernel_torch(X, dtype=torch.int64)
    with pytest.raises(ValueError, match="dimension"):
        rntk_kernel_torch(torch.zeros(3))


def test_rntk_kernel_object_uses_exact_gradients(rng):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import WhiteKernel

    from rntk import RNTK

    X = [rng.normal(size=t) for t in (5, 7, 4, 6, 3)]
    kernel = RNTK(n_layers=2, sigma_w=[1.3, 1.2], sigma_b=0.3, sigma_h=0.5, sigma_v=1.1,
                  **{f"sigma_{p}_bounds": (1e-3, 1e3) for p in "wubhv"})
    K, dK = kernel(X, eval_gradient=True)
    assert dK.shape == (5, 5, len(kernel.theta)) == (5, 5, 6)
    np.testing.assert_allclose(K, rntk_kernel(X, **kernel._kernel_params()), rtol=1e-12)
    fd = kernel._gradient_central_differences(X, kernel.theta, K)
    # central differences with a 1e-4 log step: error O(1e-8) relative
    np.testing.assert_allclose(dK, fd, rtol=1e-6, atol=1e-7 * np.abs(dK).max())
    # the log marginal likelihood gradient a GP optimizer follows (equal lengths: 2-D input)
    X2 = rng.normal(size=(8, 5))
    y = np.sin(X2.sum(axis=1))
    gp = GaussianProcessRegressor(kernel + WhiteKernel(1e-2), optimizer=None).fit(X2, y)
    theta = gp.kernel_.theta
    lml, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
    h = 1e-5
    for d in range(theta.size):
        e = np.zeros_like(theta)
        e[d] = h
        fd = (gp.log_marginal_likelihood(theta + e) - gp.log_marginal_likelihood(theta - e))
        assert grad[d] == pytest.approx(fd / (2 * h), rel=1e-5, abs=1e-7)
