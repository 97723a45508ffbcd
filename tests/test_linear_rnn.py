"""Finite-width linear RNNs and scaled convolutions vs the scaled convolution NTK."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rntk import scaled_conv_kernel, scaled_conv_rho  # noqa: E402
from rntk.nn import LinearRNN, ScaledConv1d, empirical_ntk, impulse_response  # noqa: E402

# small tensors: intra-op threads only add contention (fixture in conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def numpy_rnn(model, x):
    """Plain recurrence h_t = W h_{t-1}/sqrt(n) + F x_t, y_t = C h_t/sqrt(n) (eq. 1)."""
    W, F, C = (p.detach().double().numpy() for p in (model.W, model.F, model.C))
    n = W.shape[0]
    out = np.zeros(x.shape[:2] + (C.shape[0],))
    for b in range(x.shape[0]):
        h = np.zeros(n)
        for t in range(x.shape[1]):
            h = W @ h / np.sqrt(n) + F @ x[b, t]
            out[b, t] = C @ h / np.sqrt(n)
    return out


def numpy_conv(taps, x):
    """y_t = sum_{j <= t} L_j x_{t-j}."""
    out = np.zeros(x.shape[:2] + (taps.shape[1],))
    for t in range(x.shape[1]):
        for j in range(min(t + 1, taps.shape[0])):
            out[:, t] += x[:, t - j] @ taps[j].T
    return out


class LastOutput(torch.nn.Module):
    """The scalar model f(x) = y_{T-1}(x): its NTK is the last-output kernel."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[:, -1, 0]


class AllOutputs(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[:, :, 0]


# ---------------------------------------------------------------------------
# forward passes and impulse responses


# batch 2: the recurrence; batch 7: the impulse-response route, W applied to F or to C
@pytest.mark.parametrize("batch", [2, 7])
@pytest.mark.parametrize("n_in, n_out", [(3, 2), (2, 3)])
def test_linear_rnn_forward_matches_recurrence(batch, n_in, n_out):
    torch.manual_seed(0)
    model = LinearRNN(n_in, n_out, hidden_size=40, nu_w=0.6, nu_f=0.8, nu_c=1.5,
                      dtype=torch.float64)
    x = torch.randn(batch, 9, n_in, dtype=torch.float64)
    np.testing.assert_allclose(model(x).detach().numpy(), numpy_rnn(model, x.numpy()),
                               rtol=1e-10, atol=1e-12)


def test_linear_rnn_routes_have_equal_gradients():
    torch.manual_seed(1)
    model = LinearRNN(1, 1, hidden_size=30, dtype=torch.float64)
    x = torch.randn(6, 8, 1, dtype=torch.float64)
    grads = []
    for y in (model(x), model._recurrence(x)):
        model.zero_grad()
        (y ** 2).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_scaled_conv_forward_matches_reference():
    torch.manual_seed(0)
    rho = scaled_conv_rho(6, nu_w=0.5)
    conv = ScaledConv1d(2, 3, T=6, rho=rho, dtype=torch.float64)
    x = torch.randn(4, 9, 2, dtype=torch.float64)  # longer than T: older lags are zero
    taps = np.sqrt(rho)[:, None, None] * conv.theta.detach().numpy()
    np.testing.assert_allclose(conv(x).detach().numpy(), numpy_conv(taps, x.numpy()),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(impulse_response(conv), taps, rtol=1e-15)
    assert impulse_response(conv, T=8)[6:].max() == 0.0


def test_unit_taps_are_a_causal_conv1d():
    torch.manual_seed(0)
    conv = ScaledConv1d(2, 1, T=4, dtype=torch.float64)
    ref = torch.nn.Conv1d(2, 1, kernel_size=4, padding=3, bias=False, dtype=torch.float64)
    with torch.no_grad():  # Conv1d correlates: lag j sits at kernel index T-1-j
        ref.weight.copy_(conv.theta.flip(0).permute(1, 2, 0))
    x = torch.randn(3, 7, 2, dtype=torch.float64)
    expected = ref(x.transpose(1, 2))[:, :, :7].transpose(1, 2)
    torch.testing.assert_close(conv(x), expected)


def test_impulse_response_is_the_response_to_an_impulse():
    torch.manual_seed(0)
    model = LinearRNN(2, 3, hidden_size=50, nu_w=0.8, dtype=torch.float64)
    L = impulse_response(model, T=7)
    assert L.shape == (7, 3, 2)
    for channel in range(2):
        x = torch.zeros(1, 7, 2, dtype=torch.float64)
        x[0, 0, channel] = 1.0
        np.testing.assert_allclose(model._recurrence(x)[0].detach().numpy(), L[:, :, channel],
                                   rtol=1e-10, atol=1e-14)
    conv = ScaledConv1d.from_impulse_response(L, scaled_conv_rho(7, nu_w=0.8))
    x = torch.randn(5, 7, 2, dtype=torch.float64)
    torch.testing.assert_close(conv(x), model(x))


def test_initial_impulse_response_variance():
    # Emami et al., Thm 3.3(a) / eq. (24): L_j ~ N(0, nu_c nu_f nu_w^j) at initialisation,
    # while the scaled convolution starts at N(0, rho_j): same NTK, different prior
    nu_w, nu_f, nu_c, T = 0.6, 0.7, 1.5, 5
    torch.manual_seed(0)
    draws = np.stack([impulse_response(
        LinearRNN(4, 3, 300, nu_w=nu_w, nu_f=nu_f, nu_c=nu_c, dtype=torch.float64), T)
        for _ in range(150)])  # 150 nets x 12 entries per lag
    var = (draws ** 2).mean(axis=(0, 2, 3))
    expected = nu_c * nu_f * nu_w ** np.arange(T)
    np.testing.assert_allclose(var, expected, rtol=0.1)
    rho = scaled_conv_rho(T, nu_w=nu_w, nu_f=nu_f, nu_c=nu_c)
    assert np.all(np.abs(var[1:] / rho[1:] - 1) > 0.3)
    conv = np.stack([impulse_response(ScaledConv1d(4, 3, T, rho)) for _ in range(150)])
    np.testing.assert_allclose((conv ** 2).mean(axis=(0, 2, 3)), rho, rtol=0.1)


@pytest.mark.parametrize("call, err, match", [
    (lambda: LinearRNN(0, 1, 10), ValueError, "n_in"),
    (lambda: LinearRNN(1, 1, 10, nu_w=-1.0), ValueError, "nu_w"),
    (lambda: ScaledConv1d(1, 1, 4, rho=[1.0, 1.0]), ValueError, "at least 4"),
    (lambda: ScaledConv1d(1, 1, 2, rho=[1.0, 1.0, 1.0]), ValueError, "T=2"),
    (lambda: ScaledConv1d(1, 1, 2, rho=[1.0, -1.0]), ValueError, "non-negative"),
    (lambda: ScaledConv1d.from_impulse_response(np.ones((2, 1, 1)), [1.0, 0.0]), ValueError,
     "positive"),
    (lambda: impulse_response(LinearRNN(1, 1, 5)), ValueError, "needs T"),
    (lambda: impulse_response(torch.nn.Linear(2, 2), 3), TypeError, "LinearRNN"),
    (lambda: LinearRNN(2, 1, 5)(torch.zeros(3, 4)), ValueError, r"\(batch, T, 2\)"),
    (lambda: ScaledConv1d(1, 1, 3)(np.zeros((3, 4))), TypeError, "torch.Tensor"),
])
def test_bad_arguments(call, err, match):
    with pytest.raises(err, match=match):
        call()


# ---------------------------------------------------------------------------
# NTKs


def test_scaled_conv_empirical_ntk_is_exact():
    # Thm 3.2: the convolution's NTK is T(x)^T D(rho) T(x'), for any parameters
    torch.manual_seed(0)
    rho = scaled_conv_rho(6, nu_w=0.4, nu_f=0.5, nu_c=2.0)
    X = torch.randn(4, 6, 2, dtype=torch.float64)
    conv = ScaledConv1d(2, 1, 6, rho, dtype=torch.float64)
    K = empirical_ntk(LastOutput(conv), X)
    np.testing.assert_allclose(K, scaled_conv_kernel(X.numpy(), rho=rho), rtol=1e-10)
    Kseq = empirical_ntk(AllOutputs(conv), X, output="full")  # (n, n, T, T)
    np.testing.assert_allclose(Kseq.transpose(0, 2, 1, 3),
                               scaled_conv_kernel(X.numpy(), rho=rho, output="sequence"),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("width, seeds, tol", [
    (1000, 4, 0.06), pytest.param(2000, 4, 0.05, marks=pytest.mark.slow)])
def test_wide_linear_rnn_ntk_matches_kernel(width, seeds, tol):
    # Thm 3.3(b): the empirical NTK of a wide linear RNN tends to the scaled conv kernel
    # (per network the error is ~3-9% at width 1000; the mean over a few draws is closer)
    nu = dict(nu_w=0.5, nu_f=1.0, nu_c=1.0)
    X = np.random.default_rng(0).normal(size=(4, 6, 2))
    K = scaled_conv_kernel(X, **nu)
    emp = []
    for seed in range(seeds):
        torch.manual_seed(seed)
        emp.append(empirical_ntk(LastOutput(LinearRNN(2, 1, width, dtype=torch.float64, **nu)),
                                 X))
    emp = np.mean(emp, axis=0)
    err = np.linalg.norm(emp - K) / np.linalg.norm(K)
    assert err < tol
    # the rho of eq. (21) matters: unit taps, or the initial impulse-response law
    # nu_c nu_f nu_w^j (Thm 3.3a), are much further away
    for wrong in (np.ones(6), nu["nu_c"] * nu["nu_f"] * nu["nu_w"] ** np.arange(6)):
        K_wrong = scaled_conv_kernel(X, rho=wrong)
        assert np.linalg.norm(emp - K_wrong) / np.linalg.norm(K_wrong) > 3 * err


def test_wide_linear_rnn_sequence_ntk_matches_kernel():
    # every pair of output steps (t, s): the "sequence" kernel, start-aligned and causal
    nu = dict(nu_w=0.3, nu_f=1.0, nu_c=1.0)
    X = np.random.default_rng(1).normal(size=(3, 5, 1))
    Kseq = scaled_conv_kernel(X, output="sequence", **nu).transpose(0, 2, 1, 3)
    emp = []
    for seed in range(2):
        torch.manual_seed(seed)
        model = AllOutputs(LinearRNN(1, 1, 1000, dtype=torch.float64, **nu))
        emp.append(empirical_ntk(model, X, output="full"))  # (n, n, T, T)
    emp = np.mean(emp, axis=0)
    err = np.linalg.norm(emp - Kseq) / np.linalg.norm(Kseq)
    assert err < 0.08
    # aligning the sequences at their end instead (the "last" convention) is wrong here
    flipped = scaled_conv_kernel(X[:, ::-1], output="sequence", **nu)[:, ::-1, :, ::-1]
    flipped = flipped.transpose(0, 2, 1, 3)
    assert np.linalg.norm(emp - flipped) / np.linalg.norm(flipped) > 3 * err


# ---------------------------------------------------------------------------
# gradient descent


def _train(model, X, Y, lr, steps):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = 0.5 * ((model(X) - Y) ** 2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def test_gradient_descent_rnn_follows_scaled_convolution():
    # Emami et al. Sec. 3-4: a wide linear RNN trained by GD follows the scaled conv;
    # both start from the same impulse response, so the trajectories compare run by run
    torch.manual_seed(0)
    T, N = 8, 20
    teacher = LinearRNN(1, 1, 4, nu_w=0.3, dtype=torch.float64)
    X = torch.randn(N, T, 1, dtype=torch.float64)
    with torch.no_grad():
        Y = teacher(X)
        Y = Y + 0.1 * Y.std() * torch.randn_like(Y)
    rnn = LinearRNN(1, 1, 400, nu_w=0.3, dtype=torch.float64)
    L0 = impulse_response(rnn, T)
    conv = ScaledConv1d.from_impulse_response(L0, scaled_conv_rho(T, nu_w=0.3))
    plain = ScaledConv1d.from_impulse_response(L0, np.ones(T))  # unscaled: other dynamics
    lr, steps = 2e-3, 200
    l_rnn, l_conv, l_plain = (_train(m, X, Y, lr, steps) for m in (rnn, conv, plain))
    assert l_rnn[-1] < 0.02 * l_rnn[0]  # it did learn
    assert abs(l_rnn[-1] / l_conv[-1] - 1) < 0.03
    # the whole curve: area between the loss curves, relative to the area under them
    gap = np.abs(l_rnn - l_conv).sum() / l_conv.sum()
    gap_plain = np.abs(l_plain - l_conv).sum() / l_conv.sum()
    assert gap < 0.05
    assert gap_plain > max(3 * gap, 0.1)
    # what was learned: the change of the impulse response agrees within a few percent
    change = np.linalg.norm(impulse_response(conv) - L0)
    assert np.linalg.norm(impulse_response(rnn, T) - impulse_response(conv)) < 0.03 * change


# ---------------------------------------------------------------------------
# the paper's experiments, quick mode


@pytest.mark.parametrize("name", ["linear_rnn_dynamics", "linear_rnn_delay", "linear_rnn_width"])
def test_example_quick_mode(name, tmp_path):
    pytest.importorskip("matplotlib")
    path = Path(__file__).resolve().parent.parent / "examples" / f"{name}.py"
    if not path.exists():
        pytest.skip("examples are not part of the installed package")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--quick", "--out", str(tmp_path)])
    suffixes = {p.suffix for p in tmp_path.iterdir()}
    assert {".csv", ".png"} <= suffixes
