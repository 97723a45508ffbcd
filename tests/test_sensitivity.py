"""Sensitivity s(t) of the RNTK (eq. 20): exact values and the shapes of the paper's Fig. 3."""

import sys

import numpy as np
import pytest

from rntk import mean_sensitivity, rntk_kernel, sensitivity

torch = pytest.importorskip("torch")

# small tensors: intra-op threads only add contention (fixture in conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _fd_sensitivity(x, y, h=1e-6, **hyper):
    """Central differences of the Numba kernel, one input entry at a time."""
    x = np.asarray(x, dtype=float).reshape(len(x), -1)
    grad = np.zeros_like(x)
    for t in range(x.shape[0]):
        for c in range(x.shape[1]):
            up, dn = x.copy(), x.copy()
            up[t, c] += h
            dn[t, c] -= h
            grad[t, c] = (rntk_kernel([up], [y], **hyper)[0, 0]
                          - rntk_kernel([dn], [y], **hyper)[0, 0]) / (2 * h)
    return np.linalg.norm(grad, axis=1)


@pytest.mark.parametrize("hyper", [
    dict(sigma_w=1.3, sigma_b=0.2, sigma_h=0.5),
    dict(activation="erf", sigma_w=1.0, sigma_u=0.5, sigma_b=0.05, sigma_h=0.3),
    dict(n_layers=2, sigma_w=[1.4, 1.2], sigma_u=[1.0, 0.8]),
])
def test_matches_finite_differences(rng, hyper):
    x = rng.normal(size=(7, 2))
    y = rng.normal(size=(9, 2))  # longer: end-aligned, its first steps unpaired
    s = sensitivity(x, y, **hyper)
    assert s.shape == (7,)
    np.testing.assert_allclose(s, _fd_sensitivity(x, y, **hyper), rtol=1e-5)
    s_norm = sensitivity(x, y, normalize=True, **hyper)
    np.testing.assert_allclose(s_norm, s / s.max(), rtol=1e-12)


def test_mean_is_the_average_over_the_same_pairs():
    T, n = 6, 5
    rng = np.random.default_rng(3)
    X = rng.standard_normal((n, T, 1))
    Y = rng.standard_normal((n, T, 1))
    expected = np.mean([sensitivity(x, y, sigma_w=1.35) for x, y in zip(X, Y)], axis=0)
    got = mean_sensitivity(T, n_pairs=n, random_state=3, sigma_w=1.35)
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    # several batches: other draws, same statistic
    assert mean_sensitivity(T, n_pairs=n, random_state=3, batch_size=2).shape == (T,)


def _shares(s, k):
    s = s / s.sum()
    return s[:k].sum(), s[-k:].sum()


def test_relu_sigma_w_moves_the_weight_between_first_and_last_steps():
    # Fig. 3, ReLU around {sqrt 2, 1, 0, 0}: a little below sqrt 2 the last steps
    # dominate, a little above the first ones, at sqrt 2 it is roughly flat
    T, k = 40, 8
    first_lo, last_lo = _shares(mean_sensitivity(T, n_pairs=60, random_state=0,
                                                 sigma_w=1.33), k)
    first_hi, last_hi = _shares(mean_sensitivity(T, n_pairs=60, random_state=0,
                                                 sigma_w=1.50), k)
    flat = mean_sensitivity(T, n_pairs=60, random_state=0)
    assert last_lo > 3 * first_lo
    assert first_hi > 3 * last_hi
    assert flat.min() > 0.25 * flat.max()


@pytest.mark.parametrize("activation, base", [
    ("relu", dict()),
    ("erf", dict(sigma_w=1.0, sigma_u=0.01, sigma_b=0.05)),
])
def test_larger_sigma_h_lowers_the_first_steps_share(activation, base):
    T, k = 40, 8
    shares = [_shares(mean_sensitivity(T, n_pairs=40, random_state=1, activation=activation,
                                       sigma_h=sh, **base), k)[0]
              for sh in (0.0, 0.5, 2.0)]
    assert shares[0] > shares[1] > shares[2]


def test_errors_and_missing_torch(monkeypatch, rng):
    with pytest.raises(ValueError, match="one series"):
        sensitivity(rng.normal(size=(2, 3, 1)), rng.normal(size=3))
    with pytest.raises(ValueError, match="channels"):
        sensitivity(rng.normal(size=(3, 2)), rng.normal(size=(3, 1)))
    with pytest.raises(ValueError, match="n_pairs"):
        mean_sensitivity(5, n_pairs=0)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    with pytest.raises(ImportError, match="pip install torch"):
        sensitivity(rng.normal(size=3), rng.normal(size=3))


def test_example_quick_run(tmp_path):
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "sensitivity.py"
    if not path.exists():
        pytest.skip("examples/ is not shipped with this installation")
    spec = importlib.util.spec_from_file_location("sensitivity_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--quick", "--out", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    curves = {(c["activation"], c["varied"], c["value"]): c for c in summary["curves"]}
    # the ReLU sigma_w panel: below sqrt 2 the last steps, above it the first ones
    low, high = curves[("relu", "sigma_w", 1.35)], curves[("relu", "sigma_w", 1.48)]
    assert low["last_10pct_share"] > 3 * low["first_10pct_share"]
    assert high["first_10pct_share"] > 3 * high["last_10pct_share"]
    assert (tmp_path / "sensitivity.png").stat().st_size > 0
    assert (tmp_path / "sensitivity.csv").exists()
