"""The variable-length regression example (the RNTK paper's Fig. 4): helpers and quick run."""

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "variable_length_regression.py"


@pytest.fixture(scope="module")
def example():
    if not EXAMPLE.exists():
        pytest.skip("examples/ is not shipped with this installation")
    spec = importlib.util.spec_from_file_location("variable_length_regression", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_windows_predict_the_next_value(example, rng):
    series = np.arange(100.0)
    X, y = example.windows(series, 200, 7, rng, lo=30, hi=80)
    lengths = np.array([len(x) for x in X])
    assert lengths.min() >= 10 and lengths.max() <= 17
    for x, target in zip(X, y):
        assert np.all(np.diff(x) == 1) and target == x[-1] + 1  # contiguous, then next
        assert x[0] >= 30 and target <= 79  # inside [lo, hi)
    with pytest.raises(ValueError, match="do not fit"):
        example.windows(series, 5, 40, rng, lo=60, hi=100)


def test_padding(example):
    X = [np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])]
    np.testing.assert_array_equal(example.pad(X, 4), [[1, 2, 0, 0], [3, 4, 5, 0]])
    np.testing.assert_array_equal(example.pad(X, 4, "pre"), [[0, 0, 1, 2], [0, 3, 4, 5]])


def test_cv_errors_equal_kernel_ridge_fold_by_fold(example, rng):
    A = rng.normal(size=(12, 4))
    K = A @ A.T + 0.1  # rank 5: singular, as the alpha = 0 case needs
    y = rng.normal(size=12)
    folds = [(np.r_[0:8], np.r_[8:12]), (np.r_[4:12], np.r_[0:4])]
    alphas = [0.01, 0.5, 3.0]
    got = example.cv_errors(K, y, folds, alphas)
    for a, err in zip(alphas, got):
        sq = 0.0
        for tr, va in folds:
            model = KernelRidge(alpha=a, kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr])
            sq += np.sum((model.predict(K[np.ix_(va, tr)]) - y[va]) ** 2)
        assert err == pytest.approx(sq / len(y), rel=1e-8)
    # alpha = 0: the minimum-norm least-squares solution
    err0 = example.cv_errors(K, y, folds, [0.0])[0]
    sq = sum(np.sum((K[np.ix_(va, tr)] @ np.linalg.pinv(K[np.ix_(tr, tr)]) @ y[tr] - y[va]) ** 2)
             for tr, va in folds)
    assert err0 == pytest.approx(sq / len(y), rel=1e-6)


def test_quick_run_rntk_beats_zero_padded_rbf(example, tmp_path):
    summary = example.main(["--quick", "--out", str(tmp_path), "--panels", "a,d"])
    with open(tmp_path / "fig4a.csv") as f:
        rows = list(csv.DictReader(f))
    snr = {(float(r["x"]), r["method"]): float(r["snr_db_mean"]) for r in rows}
    assert {m for _, m in snr} == set(example.METHODS)
    # variable lengths: the RNTK, at native lengths, beats the zero-padded RBF clearly
    assert snr[(20.0, "RNTK")] > snr[(20.0, "RBF")] + 2.0
    assert summary["panels"]["fig4a"]["snr_db"]["RNTK"]["20"] == pytest.approx(
        snr[(20.0, "RNTK")], abs=1e-3)
    assert (tmp_path / "fig4a.png").stat().st_size > 0
    assert (tmp_path / "fig4d.csv").exists() and (tmp_path / "summary.json").exists()
