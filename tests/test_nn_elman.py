"""ElmanRNN: forward pass against a plain reference, and its empirical NTK against the RNTK."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rntk import rntk_kernel  # noqa: E402
from rntk.nn import ElmanRNN, empirical_ntk  # noqa: E402


def _reference_forward(net, x, h0):
    """Eq. (5)-(6) written out with numpy loops, one series (T, m) at a time."""
    n = net.hidden_size
    T = x.shape[0]
    inp = x
    phi = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "linear": lambda z: z,
           "erf": lambda z: np.vectorize(math.erf)(z)}[net.activation]
    for l in range(net.n_layers):
        W = net.W[l].detach().numpy()
        U = net.U[l].detach().numpy()
        b = net.b[l].detach().numpy()
        h = h0[l]
        out = np.empty((T, n))
        for t in range(T):
            k = t if net.tied else net.max_length - T + t
            Wt, Ut, bt = (W, U, b) if net.tied else (W[k], U[k], b[k])
            g = (net.sigma_w[l] / math.sqrt(n) * Wt @ h
                 + net.sigma_u[l] / math.sqrt(inp.shape[1]) * Ut @ inp[t]
                 + net.sigma_b[l] * bt)
            h = phi(g)
            out[t] = h
        inp = out
    return net.sigma_v / math.sqrt(n) * net.V.detach().numpy() @ h


@pytest.mark.parametrize("activation", ["relu", "erf", "tanh", "linear"])
@pytest.mark.parametrize("tied", [True, False])
def test_forward_matches_reference(rng, activation, tied):
    torch.manual_seed(0)
    net = ElmanRNN(2, 7, n_out=3, n_layers=2, activation=activation, sigma_w=[1.2, 0.7],
                   sigma_u=[0.9, 1.4], sigma_b=[0.3, 0.2], sigma_h=0.5, sigma_v=1.3,
                   tied=tied, max_length=6).double()
    X = [rng.standard_normal((T, 2)) for T in (4, 6, 1)]
    h0 = torch.randn(2, 3, 7, dtype=torch.float64)
    out = net(X, h0=h0).detach().numpy()
    for i, x in enumerate(X):
        ref = _reference_forward(net, x, h0[:, i].numpy())
        np.testing.assert_allclose(out[i], ref, rtol=1e-12, atol=1e-12)


def test_variable_length_has_no_padding_artefacts(rng):
    torch.manual_seed(1)
    net = ElmanRNN(1, 16, n_layers=2, sigma_b=0.5, sigma_h=0.7).double()
    X = [rng.standard_normal(T) for T in (2, 5, 3)]
    h0 = torch.randn(2, 3, 16, dtype=torch.float64)
    together = net(X, h0=h0)
    alone = torch.cat([net([x], h0=h0[:, i:i + 1]) for i, x in enumerate(X)])
    torch.testing.assert_close(together, alone, rtol=1e-13, atol=1e-13)
    # Gradients of the short series are those of the series read alone.
    g_together = torch.autograd.grad(together[0, 0], list(net.parameters()))
    g_alone = torch.autograd.grad(net([X[0]], h0=h0[:, :1])[0, 0], list(net.parameters()))
    for a, b in zip(g_together, g_alone):
        torch.testing.assert_close(a, b, rtol=1e-13, atol=1e-13)
    # Trailing-NaN padding (UCR layout) reads the same series.
    padded = np.full((3, 5), np.nan)
    for i, x in enumerate(X):
        padded[i, :len(x)] = x
    torch.testing.assert_close(net(padded, h0=h0), together, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(net(torch.from_numpy(padded), h0=h0), together)


def test_equal_length_layouts_agree(rng):
    torch.manual_seed(2)
    net = ElmanRNN(3, 8).double()
    X = rng.standard_normal((4, 5, 3))
    a = net(X)
    torch.testing.assert_close(net(list(X)), a)
    torch.testing.assert_close(net(torch.from_numpy(X)), a)
    uni = ElmanRNN(1, 8).double()
    x2 = rng.standard_normal((4, 5))
    torch.testing.assert_close(uni(x2), uni(x2[:, :, None]))


def test_initial_state_is_drawn_per_input():
    torch.manual_seed(3)
    net = ElmanRNN(1, 50, sigma_h=1.0, sigma_u=0.0).double()
    x = [np.ones(3), np.ones(3)]
    out = net(x).detach()
    # Same series, independent initial states: different outputs; without sigma_h equal.
    assert abs(float(out[0, 0] - out[1, 0])) > 1e-3
    net0 = ElmanRNN(1, 50, sigma_h=0.0, sigma_b=1.0).double()
    out0 = net0(x).detach()
    assert float(out0[0, 0]) == float(out0[1, 0])


def test_parameters_are_standard_normal():
    torch.manual_seed(4)
    net = ElmanRNN(2, 300)
    w = net.W[0].detach().numpy().ravel()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01


def test_invalid_arguments(rng):
    with pytest.raises(ValueError, match="activation"):
        ElmanRNN(1, 4, activation="sigmoid")
    with pytest.raises(ValueError, match="max_length"):
        ElmanRNN(1, 4, tied=False)
    with pytest.raises(ValueError, match="sigma_w"):
        ElmanRNN(1, 4, n_layers=2, sigma_w=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="sigma_u"):
        ElmanRNN(1, 4, sigma_u=-1.0)
    with pytest.raises(ValueError, match="hidden_size"):
        ElmanRNN(1, 0)
    net = ElmanRNN(2, 4, tied=False, max_length=3).double()
    with pytest.raises(ValueError, match="channels"):
        net(rng.standard_normal((2, 3, 1)))
    with pytest.raises(ValueError, match="max_length"):
        net(rng.standard_normal((2, 4, 2)))
    with pytest.raises(ValueError, match="h0"):
        net(rng.standard_normal((2, 3, 2)), h0=torch.zeros(1, 5, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN inside"):
        net([np.array([[1.0, 1.0], [np.nan, np.nan], [1.0, 2.0]])])
    with pytest.raises(ValueError, match="infinite"):
        net([np.array([[1.0, np.inf]])])


# --- the physics: the empirical NTK of wide networks tends to the RNTK -----------------

def _errors(params, X, widths, seeds=3, generic=False):
    """Per width: relative Frobenius error of the seed-averaged empirical NTK, and the
    mean over seeds of the error of a single network."""
    K = rntk_kernel(X, **params)
    averaged, single = [], []
    for n in widths:
        Ks = []
        for s in range(seeds):
            torch.manual_seed(1000 * n + s)
            net = ElmanRNN(1, n, **params).double()
            Ks.append(empirical_ntk(net, X, seed=s) if generic else net.ntk(X, seed=s))
        rel = [np.linalg.norm(k - K) / np.linalg.norm(K) for k in Ks]
        single.append(np.mean(rel))
        averaged.append(np.linalg.norm(np.mean(Ks, axis=0) - K) / np.linalg.norm(K))
    return averaged, single


@pytest.mark.parametrize("activation, n_layers, sigma_h", [
    ("relu", 1, 0.0), ("erf", 1, 0.8), ("relu", 2, 0.5), ("erf", 2, 0.0), ("relu", 2, 0.0),
])
def test_empirical_ntk_converges_to_rntk(activation, n_layers, sigma_h):
    rng = np.random.default_rng(7)
    X = [rng.standard_normal(T) for T in (3, 6, 5, 2)]  # mixed lengths
    params = dict(n_layers=n_layers, activation=activation, sigma_h=sigma_h, sigma_b=0.3,
                  sigma_w=(2**0.5 if n_layers == 1 else 1.0) if activation == "relu" else 1.2,
                  sigma_u=[1.0, 1.5] if n_layers == 2 else 1.0, sigma_v=1.1)
    averaged, single = _errors(params, X, widths=(100, 2000))
    assert averaged[1] < 0.10
    assert single[1] < 0.6 * single[0]


def test_empirical_ntk_of_wide_net_matches_rntk_through_torch_func():
    """The same check through the generic Jacobian path (no structure used)."""
    rng = np.random.default_rng(6)
    X = [rng.standard_normal(T) for T in (2, 4, 3)]
    params = dict(activation="relu", sigma_h=0.5, sigma_b=0.2)
    averaged, single = _errors(params, X, widths=(100, 1000), seeds=2, generic=True)
    assert averaged[-1] < 0.10
    assert single[1] < single[0]


@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("n_layers, n_out", [(1, 1), (2, 3)])
def test_structured_ntk_equals_generic_empirical_ntk(rng, tied, n_layers, n_out):
    torch.manual_seed(5)
    net = ElmanRNN(2, 20, n_out=n_out, n_layers=n_layers, activation="erf", sigma_b=0.4,
                   sigma_h=0.7, sigma_u=1.3, tied=tied, max_length=6).double()
    X = [rng.standard_normal((T, 2)) for T in (3, 5, 1, 4)]
    Y = [rng.standard_normal((T, 2)) for T in (2, 6)]
    for seed in (0, 3):
        np.testing.assert_allclose(net.ntk(X, seed=seed), empirical_ntk(net, X, seed=seed),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(net.ntk(X, Y, seed=seed),
                                   empirical_ntk(net, X, Y, seed=seed), rtol=1e-12, atol=1e-12)


def test_sigma_h_term_sits_on_the_diagonal_of_k_x_x():
    """A series paired with itself shares its initial state; a copy of it does not."""
    rng = np.random.default_rng(8)
    X = [rng.standard_normal(T) for T in (2, 3, 3)]
    params = dict(activation="relu", sigma_h=1.5, sigma_u=0.5)
    K_same = rntk_kernel(X, **params)
    K_copy = rntk_kernel(X, [x.copy() for x in X], **params)
    assert np.min(np.diag(K_same) - np.diag(K_copy)) > 0.2 * np.max(np.diag(K_same))
    emp_same, emp_copy = [], []
    for s in range(4):
        torch.manual_seed(s)
        net = ElmanRNN(1, 2000, **params).double()
        emp_same.append(net.ntk(X, seed=s))
        emp_copy.append(net.ntk(X, X, seed=s))
    emp_same, emp_copy = np.mean(emp_same, 0), np.mean(emp_copy, 0)
    assert np.linalg.norm(emp_same - K_same) / np.linalg.norm(K_same) < 0.08
    assert np.linalg.norm(emp_copy - K_copy) / np.linalg.norm(K_copy) < 0.08
    # and each convention is far from the other one's analytic kernel
    assert np.linalg.norm(emp_same - K_copy) / np.linalg.norm(K_copy) > 0.15


def test_tied_and_untied_weights_give_the_same_kernel():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((4, 5, 2))  # equal lengths (Theorem 3)
    params = dict(sigma_b=0.4, sigma_h=0.3)
    K = rntk_kernel(X, **params)
    emp = {}
    for tied in (True, False):
        Ks = []
        for s in range(3):
            torch.manual_seed(s)
            net = ElmanRNN(2, 2000, tied=tied, max_length=5, **params).double()
            Ks.append(net.ntk(X, seed=s))
        emp[tied] = np.mean(Ks, 0)
        assert np.linalg.norm(emp[tied] - K) / np.linalg.norm(K) < 0.10
    gap = np.linalg.norm(emp[True] - emp[False]) / np.linalg.norm(K)
    assert gap < 0.15


def test_convergence_example_quick_mode(tmp_path):
    pytest.importorskip("matplotlib")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "rntk_convergence.py"
    spec = importlib.util.spec_from_file_location("rntk_convergence", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    summary = module.main(["--quick", "--out", str(tmp_path)])
    for name in ("fig2_left.csv", "fig2_right.csv", "summary.json", "rntk_convergence.png"):
        assert (tmp_path / name).stat().st_size > 0
    gaps = summary["left_max_gap_over_range"]
    assert gaps["100"] < gaps["10"]


# --- which backward recursion is right for L >= 2: a physical check ----------------

def _v_erf(k1, k2, k3):
    d = math.sqrt((1 + 2 * k1) * (1 + 2 * k2))
    return 2 / math.pi * math.asin(2 * k3 / d), 4 / (math.pi * math.sqrt(d * d - 4 * k3 * k3))


def _reference_rntk_erf(X, sw, su, sb, sh, sv, literal=False):
    """Plain-loop RNTK Gram (erf, L layers) from the recursions of the spec.

    ``literal=True`` uses the backward term Pi^(l+1, t+1) as printed in the paper
    instead of Pi^(l+1, t)."""
    L = len(sw)

    def self_cov(z):
        S = np.zeros((L, len(z)))
        for l in range(L):
            for t in range(len(z)):
                rec = sh**2 if t == 0 else _v_erf(*[S[l, t - 1]] * 3)[0]
                inp = (su[0]**2 * float(z[t] @ z[t]) / z.shape[1] if l == 0
                       else su[l]**2 * _v_erf(*[S[l - 1, t]] * 3)[0])
                S[l, t] = sw[l]**2 * rec + inp + sb[l]**2
        return S

    selfs = [self_cov(z) for z in X]
    n = len(X)
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            a, b = (i, j) if len(X[i]) <= len(X[j]) else (j, i)
            x, y, Sx, Sy = X[a], X[b], selfs[a], selfs[b]
            T, tau = len(x), len(y) - len(x)
            C = np.zeros((L, T))
            D = np.zeros((L, T))
            for l in range(L):
                for t in range(T):
                    if t == 0:
                        rec = sh**2 if (i == j) else 0.0
                    else:
                        rec = _v_erf(Sx[l, t - 1], Sy[l, t - 1 + tau], C[l, t - 1])[0]
                    if l == 0:
                        inp = su[0]**2 * float(x[t] @ y[t + tau]) / x.shape[1]
                    else:
                        inp = su[l]**2 * _v_erf(Sx[l - 1, t], Sy[l - 1, t + tau],
                                                C[l - 1, t])[0]
                    C[l, t] = sw[l]**2 * rec + inp + sb[l]**2
                    D[l, t] = _v_erf(Sx[l, t], Sy[l, t + tau], C[l, t])[1]
            Pi = np.zeros((L, T + 1))
            for l in reversed(range(L)):
                for t in reversed(range(T)):
                    if l == L - 1 and t == T - 1:
                        Pi[l, t] = sv**2 * D[l, t]
                        continue
                    acc = sw[l]**2 * Pi[l, t + 1] if t < T - 1 else 0.0
                    if l < L - 1:
                        acc += su[l + 1]**2 * Pi[l + 1, t + 1 if literal else t]
                    Pi[l, t] = D[l, t] * acc
            out = sv**2 * _v_erf(Sx[L - 1, T - 1], Sy[L - 1, T - 1 + tau], C[L - 1, T - 1])[0]
            K[i, j] = out + float((Pi[:, :T] * C).sum())
    return K


def test_two_layer_backward_term_is_same_time_step():
    """The paper prints Pi^(l+1, t+1) in the backward recursion; a wide network says
    Pi^(l+1, t), which is what rntk_kernel computes."""
    rng = np.random.default_rng(11)
    X = [rng.standard_normal((T, 1)) for T in (2, 4, 3)]
    hp = dict(sw=[1.0, 1.0], su=[1.0, 1.5], sb=[0.2, 0.2], sh=0.3, sv=1.0)
    spec = _reference_rntk_erf(X, **hp)
    literal = _reference_rntk_erf(X, literal=True, **hp)
    kw = dict(n_layers=2, activation="erf", sigma_w=hp["sw"], sigma_u=hp["su"],
              sigma_b=hp["sb"], sigma_h=hp["sh"], sigma_v=hp["sv"])
    np.testing.assert_allclose(rntk_kernel(X, **kw), spec, rtol=1e-9, atol=1e-12)
    gap = np.linalg.norm(spec - literal) / np.linalg.norm(spec)
    assert gap > 0.1
    Ks = []
    for s in range(3):
        torch.manual_seed(50 + s)
        Ks.append(ElmanRNN(1, 2000, **kw).double().ntk(X, seed=s))
    emp = np.mean(Ks, 0)
    err_spec = np.linalg.norm(emp - spec) / np.linalg.norm(spec)
    err_literal = np.linalg.norm(emp - literal) / np.linalg.norm(literal)
    assert err_spec < 0.05
    assert err_literal > 2 * err_spec
