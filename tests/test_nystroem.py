"""RNTKNystroem: low-rank features of the RNTK (issue "Beyond one Gram in memory", part 2)."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import RidgeClassifierCV
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import rntk
from rntk import RNTKNystroem, rntk_kernel
from rntk._utils import unit_norm

OPTIONS = [
    {},
    {"sigma_h": 0.7, "direction": "bidirectional"},
    {"n_layers": 2, "activation": "erf", "diff": True, "sigma_b": 0.2},
    {"kind": "nngp", "direction": "backward", "sigma_w": 1.2},
]


def _series(rng, n, m=2):
    return [rng.normal(size=(t, m)) for t in rng.integers(4, 16, size=n)]


def _rel(A, B):
    return np.abs(A - B).max() / np.abs(B).max()


@pytest.mark.parametrize("kw", OPTIONS, ids=["default", "sigma_h-bidir", "erf-diff", "nngp"])
@pytest.mark.parametrize("landmarks", ["uniform", "kmeans++"])
def test_all_landmarks_reproduce_the_exact_gram(rng, kw, landmarks):
    X, Z = _series(rng, 25), _series(rng, 7)
    nys = RNTKNystroem(n_components=25, landmarks=landmarks, random_state=0, **kw)
    F = nys.fit_transform(X)
    assert F.shape == (25, 25) and nys.n_components_ == 25
    assert sorted(nys.component_indices_) == list(range(25))
    xs, zs = unit_norm([x for x in X]), unit_norm(Z)
    assert _rel(F @ F.T, rntk_kernel(xs, **kw)) < 1e-8
    # new series: the kernel against the training set, exactly
    assert _rel(nys.transform(Z) @ F.T, rntk_kernel(zs, xs, **kw)) < 1e-8


def test_transform_of_the_training_series(rng):
    X = _series(rng, 20)
    nys = RNTKNystroem(n_components=20, random_state=0).fit(X)
    F = nys.transform(X)  # every series is a new one: equal up to rounding of self-pairs
    assert _rel(F @ F.T, rntk_kernel(unit_norm(X))) < 1e-6
    np.testing.assert_allclose(F, nys.fit_transform(X), rtol=0, atol=1e-6)


def test_fewer_components_approximate(rng):
    t = np.linspace(0, 1, 30)
    X = [np.sin(f * t[:n]) for f, n in zip(rng.uniform(2, 8, 80), rng.integers(15, 31, 80))]
    K = rntk_kernel(unit_norm([x[:, None] for x in X]))
    errors = []
    for m in (5, 20, 60):
        F = RNTKNystroem(n_components=m, random_state=0).fit_transform(X)
        errors.append(np.linalg.norm(F @ F.T - K) / np.linalg.norm(K))
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.1


def test_batches_and_normalize(rng):
    X = _series(rng, 17)
    ref = RNTKNystroem(n_components=6, random_state=1, normalize=False).fit(X)
    for batch_size in (1, 4, 100):
        nys = RNTKNystroem(n_components=6, random_state=1, normalize=False,
                           batch_size=batch_size)
        F = nys.fit_transform(X)
        np.testing.assert_array_equal(nys.component_indices_, ref.component_indices_)
        np.testing.assert_allclose(F, ref.fit_transform(X), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(nys.transform(X[:5]), ref.transform(X[:5]), rtol=1e-13,
                                   atol=1e-13)
    # normalize: scaling a series does not change its features
    nys = RNTKNystroem(n_components=6, random_state=1).fit(X)
    np.testing.assert_allclose(nys.transform([3 * X[0]]), nys.transform([X[0]]), rtol=1e-12)


def test_pipeline_with_ridge(rng):
    t = np.linspace(0, 1, 40)
    lengths = rng.integers(25, 41, size=80)
    X = [np.sin(6 * t[:n]) + 0.2 * rng.normal(size=n) for n in lengths[:40]] + \
        [np.cos(6 * t[:n]) + 0.2 * rng.normal(size=n) for n in lengths[40:]]
    y = np.repeat([0, 1], 40)
    order = rng.permutation(80)
    X, y = [X[i] for i in order], y[order]
    clf = make_pipeline(RNTKNystroem(n_components=30, random_state=0), RidgeClassifierCV())
    clf.fit(X[:60], y[:60])
    assert clf.score(X[60:], y[60:]) >= 0.9
    # 3-D arrays with channels
    X3 = rng.normal(size=(30, 12, 3))
    y3 = (X3[:, -3:, 0].sum(axis=1) > 0).astype(int)
    clf = make_pipeline(RNTKNystroem(n_components=30), RidgeClassifierCV(alphas=[1e-6]))
    assert clf.fit(X3, y3).score(X3, y3) == 1.0


def test_kmeans_plus_plus(rng):
    X = _series(rng, 30)
    a = RNTKNystroem(n_components=10, landmarks="kmeans++", random_state=3).fit(X)
    b = RNTKNystroem(n_components=10, landmarks="kmeans++", random_state=3).fit(X)
    np.testing.assert_array_equal(a.component_indices_, b.component_indices_)
    assert len(set(a.component_indices_)) == 10
    # duplicates: once every series coincides with a landmark, any other one is taken
    dup = [X[0]] * 3 + [X[1]] * 3
    nys = RNTKNystroem(n_components=4, landmarks="kmeans++", random_state=0).fit(dup)
    assert len(set(nys.component_indices_)) == 4
    F = nys.fit_transform(dup)
    K = rntk_kernel(unit_norm(dup))
    assert _rel(F @ F.T, K) < 1e-8  # the rank-deficient W: a pseudo-inverse


def test_kmeans_plus_plus_never_draws_a_copy_of_a_landmark(rng):
    """A series equal to a chosen landmark is at kernel distance 0: never drawn again.

    Every series appears twice; with as many landmarks as distinct series, each draw
    must take a series whose copy is not yet a landmark, for every seed.
    """
    X = _series(rng, 6)
    twins = X + [x.copy() for x in X]
    for seed in range(40):
        nys = RNTKNystroem(n_components=6, landmarks="kmeans++", random_state=seed).fit(twins)
        assert len({i % 6 for i in nys.component_indices_}) == 6, seed


class _RecordingRandomState(np.random.RandomState):
    """A RandomState that records the probabilities of its ``choice`` draws."""

    def __init__(self, seed):
        super().__init__(seed)
        self.drawn = []

    def choice(self, a, size=None, replace=True, p=None):
        self.drawn.append(p)
        return super().choice(a, size=size, replace=replace, p=p)


def test_kmeans_plus_plus_draws_by_the_squared_kernel_distance(rng):
    """Each draw's probabilities: ``min_c K(x,x) + K(c,c) - 2 K(x,c)``, normalised."""
    X = _series(rng, 12)
    state = _RecordingRandomState(5)
    nys = RNTKNystroem(n_components=4, landmarks="kmeans++", random_state=state).fit(X)
    K = rntk_kernel(unit_norm(X))
    d = np.diag(K)
    picked = list(nys.component_indices_)
    assert len(state.drawn) == 3
    for k, p in enumerate(state.drawn, 1):
        dist = np.min([d + d[c] - 2 * K[:, c] for c in picked[:k]], axis=0)
        dist = np.maximum(dist, 0.0)
        dist[picked[:k]] = 0.0
        np.testing.assert_allclose(p, dist / dist.sum(), rtol=1e-7, atol=1e-12)


def test_too_many_components_warns(rng):
    X = _series(rng, 5)
    with pytest.warns(UserWarning, match="n_components=100 > n_samples=5"):
        nys = RNTKNystroem().fit(X)
    assert nys.n_components_ == 5 and nys.transform(X).shape == (5, 5)
    names = nys.get_feature_names_out()
    assert list(names) == [f"rntknystroem{i}" for i in range(5)]


def test_exported_and_signature():
    assert "RNTKNystroem" in rntk.__all__
    with pytest.raises(ValueError, match="landmarks"):
        RNTKNystroem(landmarks="leverage").fit(np.zeros((3, 4)) + 1)


_LENGTH_REASON = ("series of another length than in fit are valid input (variable-length "
                  "sequences), so transforming X with fewer columns does not raise")


@parametrize_with_checks(
    [RNTKNystroem(n_components=10, random_state=0),
     RNTKNystroem(n_components=10, landmarks="kmeans++", random_state=0)],
    expected_failed_checks=lambda est: {
        "check_n_features_in_after_fitting": _LENGTH_REASON,
        # this check ends with transform(X[:, :-1]); its consistency assertions (fit_transform
        # against transform) are repeated in test_transform_of_the_training_series
        "check_transformer_general": _LENGTH_REASON},
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
