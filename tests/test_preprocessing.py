import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from rntk import RNTKClassifierCV, SeriesScaler


def test_zscore_each_series_and_channel(rng):
    X = [rng.normal(3, 2, size=(t, 2)) for t in (5, 9)]
    Z = SeriesScaler().fit_transform(X)
    for z in Z:
        np.testing.assert_allclose(z.mean(axis=0), 0, atol=1e-12)
        np.testing.assert_allclose(z.std(axis=0), 1, rtol=1e-12)
    # equal-length arrays keep their layout; a constant series becomes zeros
    A = np.r_[rng.normal(size=(2, 6)), np.full((1, 6), 4.0)]
    out = SeriesScaler().fit_transform(A)
    assert out.shape == (3, 6) and np.all(out[2] == 0)
    np.testing.assert_allclose(out[0], (A[0] - A[0].mean()) / A[0].std())
    assert SeriesScaler().fit_transform(A[:, :, None]).shape == (3, 6, 1)
    unit = SeriesScaler(method="unit").fit_transform(A[:2])
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0)


def test_padding_and_channel_checks(rng):
    A = rng.normal(size=(3, 8))
    A[1, 5:] = np.nan  # a shorter series, NaN-padded: a list comes back
    out = SeriesScaler().fit_transform(A)
    assert isinstance(out, list) and [len(s) for s in out] == [8, 5, 8]
    scaler = SeriesScaler().fit(rng.normal(size=(3, 8, 2)))
    with pytest.raises(ValueError, match="channel"):
        scaler.transform(rng.normal(size=(3, 8, 1)))


def test_in_a_pipeline(rng):
    t = np.linspace(0, 1, 30)
    X = np.r_[5 + 3 * np.sin(6 * t) + 0.2 * rng.normal(size=(10, 30)),
              -2 + 0.5 * np.cos(6 * t) + 0.2 * rng.normal(size=(10, 30))]
    y = np.repeat([0, 1], 10)
    pipe = make_pipeline(SeriesScaler(), RNTKClassifierCV()).fit(X, y)
    assert pipe.score(X, y) == 1.0


_LENGTHS = "series of another length than in fit are valid input: only the channel count is "\
    "enforced"


@parametrize_with_checks([SeriesScaler()], expected_failed_checks=lambda est: {
    "check_n_features_in_after_fitting": _LENGTHS, "check_transformer_general": _LENGTHS})
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("value", [0.1, -3.3, 1e6 + 0.1, 1e-300])
@pytest.mark.parametrize("length", [3, 150, 1000])
def test_constant_series_become_zero(value, length):
    # the standard deviation of a constant series is a few ulp, not 0: it must not be
    # blown up to +-1 (0.1 of length 3 gave all -1, of length 150 all +1)
    Z = SeriesScaler().fit_transform(np.full((2, length), value))
    assert np.array_equal(Z, np.zeros((2, length)))
    # one constant channel beside a varying one
    t = np.arange(length, dtype=float)
    Z = SeriesScaler().fit_transform(np.stack([np.c_[np.full(length, value), t]]))
    assert np.all(Z[..., 0] == 0.0)
    assert np.std(Z[0, :, 1]) == pytest.approx(1.0)


def test_tiny_but_real_variation_is_still_scaled():
    x = np.array([[1.0, 1.0 + 1e-10, 1.0, 1.0 - 1e-10]])
    z = SeriesScaler().fit_transform(x)
    assert np.std(z) == pytest.approx(1.0) and np.mean(z) == pytest.approx(0.0, abs=1e-6)
