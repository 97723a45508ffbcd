import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rntk.nn.extrapolation import (  # noqa: E402
    RecurrentRegressor,
    StateSpaceRNN,
    asymmetry,
    balanced_teacher,
    balancedness,
    delay_teacher,
    empirical_loss,
    extrapolation_error,
    fit_empirical,
    fit_population,
    gru_teacher,
    memoryless_teacher,
    population_loss,
    random_unbalanced_teacher,
)


def impulse_response(model, T):
    return model.impulse_response(T).detach().numpy()


# ----------------------------------------------------------------- slow references
def np_weights(model):
    return (model.A.detach().numpy(), model.B.detach().numpy(), model.C.detach().numpy())


def np_impulse(A, B, C, T):
    return np.stack([C @ np.linalg.matrix_power(A, j) @ B for j in range(T)])


def np_run(A, B, C, x):
    """Plain recurrence s_{t+1} = A s_t + B x_t, y = C s_{t+1}; x (N, T, n_in)."""
    N, T, _ = x.shape
    s = np.zeros((N, A.shape[0]))
    ys = []
    for t in range(T):
        s = s @ A.T + x[:, t] @ B.T
        ys.append(s @ C.T)
    return np.stack(ys, axis=1)


# ----------------------------------------------------------------- models
@pytest.mark.parametrize("transition", ["full", "symmetric", "diagonal"])
def test_impulse_response_and_forward_match_recurrence(transition, rng):
    model = StateSpaceRNN(6, 2, 3, transition=transition, init="gaussian", init_scale=0.4,
                          seed=1)
    A, B, C = np_weights(model)
    if transition == "symmetric":
        assert np.array_equal(A, A.T)
    if transition == "diagonal":
        assert np.array_equal(A, np.diag(np.diag(A)))
    h = model.impulse_response(9).detach().numpy()
    np.testing.assert_allclose(h, np_impulse(A, B, C, 9), rtol=1e-12, atol=1e-14)
    x = rng.standard_normal((4, 9, 2))
    y = model(torch.as_tensor(x)).detach().numpy()
    np.testing.assert_allclose(y, np_run(A, B, C, x), rtol=1e-12, atol=1e-14)
    # the last output is the convolution with the impulse response
    conv = np.einsum("joi,nji->no", h, x[:, ::-1])
    np.testing.assert_allclose(y[:, -1], conv, rtol=1e-12, atol=1e-14)


def test_ensemble_members_are_independent_models():
    ens = StateSpaceRNN(5, transition="full", init="balanced", init_scale=0.3, n_models=3,
                        seed=0)
    h = ens.impulse_response(7).detach().numpy()
    assert h.shape == (3, 7)
    for r in range(3):
        A, B, C = (M[r] for M in np_weights(ens))
        np.testing.assert_allclose(h[r], np_impulse(A, B, C, 7)[:, 0, 0], atol=1e-14)
    x = torch.randn(4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    y = ens(x).detach().numpy()
    assert y.shape == (3, 4, 6)
    A, B, C = (M[1] for M in np_weights(ens))
    np.testing.assert_allclose(y[1], np_run(A, B, C, x.numpy()[..., None])[..., 0], atol=1e-14)


def test_ensemble_training_equals_separate_training():
    kw = dict(transition="full", init="balanced", init_scale=0.1)
    teacher = random_unbalanced_teacher(3, seed=0)
    ens = StateSpaceRNN(6, n_models=2, seed=3, **kw)
    singles = []
    for r in range(2):
        m = StateSpaceRNN(6, seed=0, **kw)
        with torch.no_grad():
            for p, q in zip(m.parameters(), ens.parameters()):
                p.copy_(q[r:r + 1])
        singles.append(m)
    fit_population(ens, teacher, [4, 7], lr=1e-2, n_steps=150)
    for r, k in enumerate([4, 7]):
        fit_population(singles[r], teacher, k, lr=1e-2, n_steps=150)
        np.testing.assert_allclose(ens.impulse_response(10)[r].detach().numpy(),
                                   singles[r].impulse_response(10).detach().numpy(),
                                   rtol=1e-9, atol=1e-12)


def test_from_weights_validates():
    with pytest.raises(ValueError, match="diagonal"):
        StateSpaceRNN.from_weights([[0.0, 1.0], [0.0, 0.0]], [1, 0], [0, 1],
                                   transition="diagonal")
    with pytest.raises(ValueError, match="symmetric"):
        StateSpaceRNN.from_weights([[0.0, 1.0], [0.0, 0.0]], [1, 0], [0, 1],
                                   transition="symmetric")
    with pytest.raises(ValueError, match="shapes"):
        StateSpaceRNN.from_weights(np.eye(3), [1, 0], [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        StateSpaceRNN.from_weights([[np.nan]], [1.0], [1.0])
    with pytest.raises(ValueError, match="balanced"):
        StateSpaceRNN(4, 1, 2, init="balanced")
    with pytest.raises(ValueError, match="transition"):
        StateSpaceRNN(4, transition="toeplitz")
    with pytest.raises(ValueError, match="state_size"):
        StateSpaceRNN(0)


# ----------------------------------------------------------------- teachers
def test_delay_teacher_is_exactly_a_delay_line():
    for d in (1, 4, 10):
        h = impulse_response(delay_teacher(d), 3 * d + 2)
        expected = np.zeros(3 * d + 2)
        expected[d - 1] = 1.0
        assert np.array_equal(h, expected)
    # and it delays any input by d - 1 steps
    x = np.random.default_rng(0).standard_normal((3, 12))
    y = delay_teacher(4)(torch.as_tensor(x)).numpy()
    assert np.array_equal(y[:, 3:], x[:, :-3]) and not y[:, :3].any()


def test_balanced_teacher_response_is_a_moment_sequence():
    t = balanced_teacher(5, seed=3)
    A, B, C = np_weights(t)
    lam = np.diag(A)
    assert np.array_equal(B[:, 0], C[0])  # balanced
    assert np.all((lam >= 0.6) & (lam <= 1.05))
    p = B[:, 0] * C[0]
    assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-12  # C B = 1
    j = np.arange(30)
    moments = (p[None, :] * lam[None, :] ** j[:, None]).sum(1)
    np.testing.assert_allclose(impulse_response(t, 30), moments, rtol=1e-12)
    assert balancedness(t) == 0.0 and asymmetry(t) == 0.0


def test_random_unbalanced_teacher_is_revealed_at_lag_d_minus_1():
    d = 5
    t = random_unbalanced_teacher(d, seed=2)
    A, _, _ = np_weights(t)
    h = impulse_response(t, 20)
    assert not h[: d - 1].any()
    np.testing.assert_allclose(h[d - 1], np.prod(np.diag(A, 1)), rtol=1e-12)
    assert asymmetry(t) > 0 and balancedness(t) > 0
    assert np.allclose(np.tril(A, -1), 0) and np.allclose(np.triu(A, 2), 0)


def test_memoryless_teacher():
    h = impulse_response(memoryless_teacher(-1.5), 6)
    assert np.array_equal(h, [-1.5, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError):
        memoryless_teacher(0.0)


def test_gru_teacher_learns_its_target_response():
    target = 0.5 * 0.9 ** np.arange(15)
    before = RecurrentRegressor(6, init="normal", init_scale=1e-6, seed=0).impulse_response(15)
    t = gru_teacher(6, target, n_steps=150, lr=3e-2, seed=0)
    after = impulse_response(t, 15)
    err0 = np.abs(before.detach().numpy() - target).max()
    assert np.abs(after - target).max() < 0.25 * err0
    assert not any(p.requires_grad for p in t.parameters())


# ----------------------------------------------------------------- losses
def test_population_loss_is_the_expected_empirical_loss():
    teacher = balanced_teacher(3, seed=0)
    student = StateSpaceRNN(4, transition="full", init="gaussian", init_scale=0.5, seed=1)
    k = 6
    A, B, C = np_weights(student)
    At, Bt, Ct = np_weights(teacher)
    x = np.random.default_rng(0).standard_normal((40000, k, 1))
    y = np_run(At, Bt, Ct, x)[:, -1]
    mc = ((np_run(A, B, C, x)[:, -1] - y) ** 2).mean()
    pop = population_loss(student, teacher, k).item()
    closed = ((np_impulse(A, B, C, k) - np_impulse(At, Bt, Ct, k)) ** 2).sum()
    assert abs(pop - closed) < 1e-12 * closed
    assert abs(mc - pop) < 0.03 * pop  # Monte-Carlo with 40000 sequences
    # the empirical loss on the same sample, evaluated by convolution, is exact
    emp = empirical_loss(student, x[..., 0], y[:, 0]).item()
    assert abs(emp - mc) < 1e-10 * mc


def test_population_loss_mimo_and_per_model_lengths():
    ens = StateSpaceRNN(3, 2, 2, init="gaussian", init_scale=0.5, n_models=2, seed=0)
    w = np.random.default_rng(1).standard_normal((8, 2, 2))
    loss = population_loss(ens, w, [3, 8]).detach().numpy()
    for r, k in enumerate([3, 8]):
        A, B, C = (M[r] for M in np_weights(ens))
        assert abs(loss[r] - ((np_impulse(A, B, C, k) - w[:k]) ** 2).sum()) < 1e-12
    with pytest.raises(ValueError, match="one length per model"):
        population_loss(ens, w, [1, 2, 3])
    with pytest.raises(ValueError, match="at least"):
        population_loss(ens, w, 9)


# ----------------------------------------------------------------- implicit bias
def test_gd_from_balanced_start_preserves_balancedness():
    teacher = balanced_teacher(3, seed=1)
    for transition in ("symmetric", "diagonal"):
        s = StateSpaceRNN(8, transition=transition, init="balanced", init_scale=0.1, seed=0)
        hist = fit_population(s, teacher, 8, optimizer="gd", lr=1e-2, n_steps=300,
                              record_weights=True)
        assert hist["loss"][-1] < 0.5 * hist["loss"][0]  # it did train
        assert np.max(hist["imbalance"]) < 1e-12
        assert np.max(hist["asymmetry"]) < 1e-12
    # without a symmetric transition matrix balancedness is not conserved
    s = StateSpaceRNN(8, transition="full", init="balanced", init_scale=0.1, seed=0)
    hist = fit_population(s, teacher, 8, optimizer="gd", lr=1e-2, n_steps=300,
                          record_weights=True)
    assert hist["imbalance"][0] == 0 and hist["imbalance"][-1] > 1e-4


def test_balanced_student_extrapolates_only_when_k_is_long_enough():
    """Cohen-Karlik et al. (2023), Thm. 5 and Fig. 1(a): k > 2 d_teacher extrapolates."""
    # a balanced teacher (d_teacher = 3) whose three modes carry equal weight, so that
    # missing any of them is visible
    b = np.full(3, np.sqrt(1 / 3))
    teacher = StateSpaceRNN.from_weights(np.diag([0.9, 0.6, -0.7]), b, b, transition="diagonal")
    ks = [2, 2, 14, 14]  # k < d_teacher and k > 2 d_teacher (twice, different seeds)
    student = StateSpaceRNN(20, transition="diagonal", init="balanced", init_scale=1e-3,
                            n_models=len(ks), seed=0)
    fit_population(student, teacher, ks, lr=2e-2, n_steps=1000)
    assert np.all(balancedness(student) < 1e-12)
    err, zero = extrapolation_error(student, teacher, horizon=40, return_zero=True)
    assert err.shape == (4,) and zero == pytest.approx(1.0)
    assert np.all(err[2:] < 0.02)  # extrapolates
    assert np.all(err[:2] > 0.3)  # does not
    # the short-k students still fit their training window
    h, w = impulse_response(student, 2), impulse_response(teacher, 2)
    assert np.abs(h[:2] - w).max() < 1e-2


def test_fit_empirical_delay_teacher_ensemble():
    teacher = delay_teacher(3)
    s = StateSpaceRNN(12, transition="full", init="gaussian", init_scale=1e-3, n_models=2,
                      seed=0)
    hist = fit_empirical(s, teacher, [2, 9], n_train=500, n_steps=400, lr=3e-2,
                         eval_every=20, seed=0)
    assert hist["val_loss"].shape[1] == 2
    # best validation loss kept: equals the final population loss
    final = population_loss(s, teacher, [2, 9]).detach().numpy()
    np.testing.assert_allclose(final, hist["val_loss"].min(0), rtol=1e-12)
    err = extrapolation_error(s, teacher, horizon=30)
    assert err[1] < 0.1  # k = 9 > 2 d_teacher: learns the delay and nothing else
    assert err[0] > 0.9  # k = 2 < d_teacher: the delay is never seen


def test_fit_empirical_nonlinear_student_runs_and_improves():
    teacher = memoryless_teacher(1.0)
    net = RecurrentRegressor(6, cell="gru", seed=0)
    hist = fit_empirical(net, teacher, 3, n_train=200, batch_size=50, n_steps=60, lr=3e-2,
                         eval_every=20, n_val=100, seed=0, all_steps=True)
    assert hist["val_loss"].min() < 0.5 * hist["val_loss"][0]


# ----------------------------------------------------------------- error measure
def test_extrapolation_error_rule_of_appendix_b3():
    w = np.array([0.0, 1.0, 0.5, 0.0])
    assert extrapolation_error(w, w, 4) == 0.0
    assert extrapolation_error(np.zeros(4), w, 4) == 1.0
    assert extrapolation_error([0.0, 1.0, 0.5, 7.0], w, 4) == 1.0  # capped at E_0
    assert extrapolation_error([0.0, 1.0, 0.5, 7.0], w, 4, cap=False) == 7.0
    assert extrapolation_error([5.0, 1.0, 0.5, 0.1], w, 4, start=1) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="start"):
        extrapolation_error(w, w, 4, start=4)
    net = RecurrentRegressor(4, seed=0)
    with pytest.raises(ValueError, match="n_sequences"):
        extrapolation_error(net, w, 4)
    # on random sequences a linear model's error is zero against itself
    t = balanced_teacher(2, seed=0)
    assert extrapolation_error(t, impulse_response(t, 10), 10, n_sequences=5) < 1e-12
    e = extrapolation_error(net, t, 10, n_sequences=20)
    assert 0 < e <= extrapolation_error(np.zeros(10), t, 10, n_sequences=20) + 1e-12


def test_per_member_targets_match_separate_targets():
    ens = StateSpaceRNN(3, init="gaussian", init_scale=0.5, n_models=2, seed=0)
    W = np.random.default_rng(0).standard_normal((2, 9))
    both = population_loss(ens, W, [4, 6]).detach().numpy()
    h = impulse_response(ens, 9)
    for r, k in enumerate([4, 6]):
        assert abs(both[r] - ((h[r, :k] - W[r, :k]) ** 2).sum()) < 1e-12
    hist = fit_empirical(ens, W, [4, 6], n_train=50, n_steps=5, eval_every=5, seed=0)
    assert hist["val_loss"].shape == (2, 2)
    with pytest.raises(ValueError, match="per-member"):
        population_loss(ens, W[:, :3], 4)


def test_extrapolation_error_accepts_the_kernel_side_linear_rnn():
    from rntk.nn import LinearRNN
    from rntk.nn import impulse_response as linear_response

    torch.manual_seed(0)
    wide = LinearRNN(1, 1, 32, dtype=torch.float64)
    h = linear_response(wide, 12)[:, 0, 0]
    assert extrapolation_error(wide, h, 12) == 0.0
    # the same network, fed as a StateSpaceRNN (A = W / sqrt(n), B = F / sqrt(n), C = C)
    n = 32
    ssm = StateSpaceRNN.from_weights(wide.W.detach().numpy() / n**0.5,
                                     wide.F.detach().numpy() / n**0.5, wide.C.detach().numpy())
    assert extrapolation_error(ssm, wide, 12, cap=False) < 1e-12
