"""empirical_ntk against per-sample autograd gradients, blocking, seeding, errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rntk.nn import empirical_ntk  # noqa: E402


def _mlp(d_out, squeeze=False):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(3, 6), torch.nn.Tanh(), torch.nn.Linear(6, d_out)]
    if squeeze:
        layers.append(torch.nn.Flatten(0))
    return torch.nn.Sequential(*layers).double()


def _reference_jacobian(model, X):
    """Gradients one sample and one output at a time with plain autograd: (n, d, P)."""
    params = [p for p in model.parameters() if p.requires_grad]
    rows = []
    for x in X:
        out = model(x[None]).reshape(-1)
        rows.append(torch.stack([
            torch.cat([g.reshape(-1) for g in torch.autograd.grad(o, params,
                                                                  retain_graph=True)])
            for o in out]))
    return torch.stack(rows).numpy()


@pytest.mark.parametrize("batch_size", [1, 2, 5, 100])
def test_matches_autograd_reference(rng, batch_size):
    model = _mlp(2)
    X = torch.from_numpy(rng.standard_normal((7, 3)))
    Y = torch.from_numpy(rng.standard_normal((4, 3)))
    JX, JY = _reference_jacobian(model, X), _reference_jacobian(model, Y)
    full = np.einsum("idp,jep->ijde", JX, JY)
    np.testing.assert_allclose(empirical_ntk(model, X, Y, batch_size=batch_size,
                                             output="full"), full, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(empirical_ntk(model, X, Y, batch_size=batch_size),
                               np.einsum("ijdd->ij", full) / 2, rtol=1e-12, atol=1e-13)
    sym = empirical_ntk(model, X, batch_size=batch_size, output="full")
    np.testing.assert_allclose(sym, np.einsum("idp,jep->ijde", JX, JX), rtol=1e-12,
                               atol=1e-13)
    np.testing.assert_array_equal(sym, np.transpose(sym, (1, 0, 3, 2)))


def test_scalar_output_numpy_and_list_inputs(rng):
    model = _mlp(1, squeeze=True)
    X = rng.standard_normal((5, 3))
    J = _reference_jacobian(model, torch.from_numpy(X))[:, 0]
    K = empirical_ntk(model, X, batch_size=2)
    assert K.dtype == np.float64 and K.shape == (5, 5)
    np.testing.assert_allclose(K, J @ J.T, rtol=1e-12)
    # a list is handed to the model as a list: here a model that stacks it
    stacker = _Stack(model)
    np.testing.assert_allclose(empirical_ntk(stacker, list(X), batch_size=3), K, rtol=1e-12)


class _Stack(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, xs):
        assert isinstance(xs, list)
        return self.inner(torch.stack(xs))


class _Noisy(torch.nn.Module):
    """A model whose forward pass draws a random input offset per sample."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.lin = torch.nn.Linear(3, 1).double()

    def forward(self, x):
        return torch.tanh(self.lin(x + torch.randn_like(x)))[:, 0]


def test_seeded_draws_are_consistent_across_blocks(rng):
    model = _Noisy()
    X = torch.from_numpy(rng.standard_normal((6, 3)))
    K1 = empirical_ntk(model, X, batch_size=2, seed=5)
    # the Gram of one draw: symmetric, positive semi-definite, reproducible
    np.testing.assert_array_equal(K1, K1.T)
    assert np.linalg.eigvalsh(K1).min() > -1e-12
    np.testing.assert_array_equal(K1, empirical_ntk(model, X, batch_size=2, seed=5))
    assert not np.array_equal(K1, empirical_ntk(model, X, batch_size=2, seed=6))
    # the global generator is left alone
    state = torch.get_rng_state()
    empirical_ntk(model, X, seed=0)
    assert torch.equal(state, torch.get_rng_state())


def test_frozen_parameters_are_left_out(rng):
    model = _mlp(1, squeeze=True)
    X = torch.from_numpy(rng.standard_normal((4, 3)))
    model[0].weight.requires_grad_(False)
    J = _reference_jacobian(model, X)[:, 0]
    np.testing.assert_allclose(empirical_ntk(model, X), J @ J.T, rtol=1e-12)


def test_errors(rng):
    model = _mlp(1, squeeze=True)
    X = rng.standard_normal((3, 3))
    with pytest.raises(ValueError, match="output"):
        empirical_ntk(model, X, output="diag")
    with pytest.raises(ValueError, match="batch_size"):
        empirical_ntk(model, X, batch_size=0)
    with pytest.raises(ValueError, match="seed"):
        empirical_ntk(model, X, seed=-1)
    with pytest.raises(TypeError, match="Module"):
        empirical_ntk(lambda x: x, X)
    with pytest.raises(ValueError, match="empty"):
        empirical_ntk(model, [])
    with pytest.raises(TypeError, match="real"):
        empirical_ntk(model, np.array([["a", "b", "c"]]))
    flat = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0),
                               torch.nn.Unflatten(0, (1, -1))).double()
    with pytest.raises(ValueError, match=r"\(batch,\) or \(batch, d\)"):
        empirical_ntk(flat, X)
    frozen = _mlp(1).requires_grad_(False)
    with pytest.raises(ValueError, match="trainable"):
        empirical_ntk(frozen, X)
