"""The local-shape representations (``shapes=``, ``octave_shapes=``): the transforms, their
kernel, wide networks."""

from functools import partial

import numpy as np
import pytest

from rntk import RNTKClassifier, RNTKClassifierCV, ShapeQuantiles, rntk_kernel
from rntk._model_selection import DEFAULT_SETTINGS, MEAN_NETWORK, OCTAVE_LEVELS, SHAPE_LEVELS
from rntk.model_selection import default_grid
from tests.reference import family_gram
from tests.test_quantiles import SPEC, _quantile_by_hand, _rms_scaled
from tests.transforms import octave_shape_quantiles, shape_quantiles
from tests.wide_networks import assert_wide_networks_converge

#: The transformer of ``octave_shapes``.
OctaveShapeQuantiles = partial(ShapeQuantiles, dilations=(1, 2, 4, 8, 16))
#: Each representation: its transform, its transformer, its dilations, its signals.
SHAPES = {"shapes": (shape_quantiles, ShapeQuantiles, (1, 4, 16), 7),
          "octave_shapes": (octave_shape_quantiles, OctaveShapeQuantiles, (1, 2, 4, 8, 16), 11)}


def _signals_by_hand(x, dilations=(1, 4, 16)):
    """The signals of one channel, by explicit loops: values, slopes, curvatures."""
    x = [float(v) for v in x]
    T = len(x)
    out = [x]
    for d in dilations:
        out.append([x[t] - x[t - d] for t in range(d, T)] or [0.0])
    for d in dilations:
        out.append([x[t + d] - 2 * x[t] + x[t - d] for t in range(d, T - d)] or [0.0])
    return out


@pytest.mark.parametrize("name", SHAPES)
def test_the_quantile_functions_by_hand(rng, name):
    transform, _, dilations, n_signals = SHAPES[name]
    X = [rng.normal(size=(T, 2)) + 3.0 for T in (40, 9, 3, 1)]
    Q = transform(X, n_levels=7)
    assert Q.shape == (4, 7, 2 * n_signals)  # signals x 2 channels, signal-major
    for x, q in zip(X, Q):
        for c in range(2):
            for k, signal in enumerate(_signals_by_hand(x[:, c], dilations)):
                np.testing.assert_allclose(q[:, 2 * k + c], _quantile_by_hand(signal, 7),
                                           rtol=1e-12, atol=1e-12)
    # the values and first differences are those of value_quantiles
    from tests.transforms import value_quantiles

    V = value_quantiles(X, n_levels=7)
    np.testing.assert_allclose(Q[:, :, :4], V, rtol=1e-12, atol=1e-12)


def test_a_local_shape_anywhere_gives_the_same_representation(rng):
    # the same kink and bump, placed early or late in a flat series: every distribution
    # of values, slopes and curvatures is the same, whatever the place
    # (each at least 16 steps from the ends: the curvatures at 16 steps see all of it)
    shape = np.r_[np.linspace(0, 3, 10), np.linspace(3, -1, 5), np.zeros(3) - 1]
    a, b = np.zeros(140), np.zeros(140)
    a[40:40 + len(shape)] = shape
    b[80:80 + len(shape)] = shape
    for transform in (shape_quantiles, octave_shape_quantiles):
        Q = transform([a, b], n_levels=16)
        np.testing.assert_allclose(Q[0], Q[1], rtol=1e-12, atol=1e-12)
    # the shape reversed in time: the same values and curvatures, the slopes negated
    c = np.zeros(140)
    c[60:60 + len(shape)] = shape[::-1]
    R = shape_quantiles([a, c], n_levels=16)
    np.testing.assert_allclose(R[0, :, [0, 4, 5, 6]], R[1, :, [0, 4, 5, 6]], atol=1e-12)
    np.testing.assert_allclose(R[0, :, 1], -R[1, ::-1, 1], atol=1e-12)
    assert np.abs(R[0, :, 1] - R[1, :, 1]).max() > 0.1
    # another shape (the rise twice as steep): other slopes and curvatures
    d = np.zeros(140)
    other = np.r_[np.linspace(0, 3, 5), np.linspace(3, -1, 10), np.zeros(3) - 1]
    d[60:60 + len(other)] = other
    S = shape_quantiles([a, d], n_levels=16)
    assert all(np.abs(S[0, :, k] - S[1, :, k]).max() > 0.1 for k in (1, 2, 3, 4, 6))


def test_the_octave_shapes_hold_the_three_scales():
    # the signals at 1, 4 and 16 steps are those of shape_quantiles, in its order
    X = [np.cumsum(np.sin(np.arange(T) / 3.0)) for T in (50, 33)]
    Q, O = shape_quantiles(X, n_levels=9), octave_shape_quantiles(X, n_levels=9)
    np.testing.assert_allclose(O[:, :, [0, 1, 3, 5, 6, 8, 10]], Q, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", SHAPES)
def test_a_series_representation_does_not_depend_on_the_others(rng, name):
    # series of several lengths are transformed in one NaN-padded stack: none of the
    # padding, nor a neighbour's magnitude, may reach a series' quantiles
    transform = SHAPES[name][0]
    X = [rng.normal(size=(T, 2)) for T in (60, 17, 33, 2, 1, 33, 5)]
    for extreme in (None, 1e200, 1e-200):  # a series far out of the others' range
        Y = list(X) + ([] if extreme is None else [extreme * rng.normal(size=(9, 2))])
        together = transform(Y, n_levels=11)
        for y, q in zip(Y, together):
            np.testing.assert_allclose(q, transform([y], n_levels=11)[0], rtol=1e-13,
                                       atol=1e-13)


@pytest.mark.parametrize("name", SHAPES)
def test_degenerate_series_and_extreme_magnitudes(rng, name):
    transform, transformer, _, k = SHAPES[name]
    Q = transform([np.full(30, 2.0), np.zeros(5), np.array([7.0])], n_levels=3)
    np.testing.assert_allclose(Q[0], [[1.0] + [0.0] * (k - 1)] * 3)  # a level, no shape
    np.testing.assert_array_equal(Q[1], 0.0)
    np.testing.assert_allclose(Q[2], [[1.0] + [0.0] * (k - 1)] * 3)
    x = rng.normal(size=50)
    for scale in (1e-200, 1e300):
        np.testing.assert_allclose(transform([scale * x], 8), transform([x], 8),
                                   rtol=1e-9, atol=1e-12)
    assert transformer(n_levels=5).fit_transform([x, x[:20]]).shape == (2, 5, k)


@pytest.mark.parametrize("name", SHAPES)
def test_the_estimator_reads_the_rms_scaled_shapes(rng, name):
    transform = SHAPES[name][0]
    X = [rng.normal(size=T) for T in (30, 44, 21, 60)]
    y = [0, 1, 0, 1]
    clf = RNTKClassifier(**{name: 6}, normalize="rms", model="ridge", **SPEC).fit(X, y)
    Q = _rms_scaled(transform(X, n_levels=6))
    np.testing.assert_allclose(clf._gram(clf.X_fit_), family_gram(Q, **SPEC), rtol=1e-10)
    Xn = [rng.normal(size=T) for T in (17, 50)]
    Qn = _rms_scaled(transform(Xn, n_levels=6))
    np.testing.assert_allclose(clf.decision_function(Xn),
                               clf.estimator_.decision_function(family_gram(Qn, Q, **SPEC)),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="give one of them"):
        RNTKClassifier(**{name: 4}, quantiles=4).fit(X, y)


def test_the_default_grid_reads_local_shapes_at_two_sets_of_scales():
    assert "quantiles" not in DEFAULT_SETTINGS and len(DEFAULT_SETTINGS) == 7
    # the shapes at every octave took the last-step setting's place
    assert not any(g.get("readout") != ["mean"] for g in DEFAULT_SETTINGS.values())
    assert (SHAPE_LEVELS, OCTAVE_LEVELS) == (64, 32)  # as accurate, in half the time
    for T, levels in [(1, 2), (5, 5), (32, 32), (40, 40), (1344, 64)]:
        grid = default_grid([T, max(1, T // 2)])
        for name in SHAPES:
            (setting,) = [g for g in grid if name in g]
            top = OCTAVE_LEVELS if name == "octave_shapes" else SHAPE_LEVELS
            assert setting[name] == [min(levels, top)]
            assert "pool" not in setting and setting["readout_band"] == [8]
            assert all(setting[k] == v for k, v in MEAN_NETWORK.items())
        assert not any("quantiles" in g for g in grid)


def test_the_default_search_refuses_a_representation_of_its_own(rng):
    X, y = rng.normal(size=(8, 20)), np.arange(8) % 2
    with pytest.raises(ValueError, match="shapes=8 is set on the estimator of "
                                         "RNTKClassifierCV"):
        RNTKClassifierCV(estimator=RNTKClassifier(shapes=8)).fit(X, y)


@pytest.mark.parametrize("name", SHAPES)
def test_wide_networks_reading_the_shapes_tend_to_their_kernel(rng, name):
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork

    k = SHAPES[name][3]
    X = [rng.normal(size=T) for T in (20, 26, 23)]
    clf = RNTKClassifier(**{name: 4}, normalize="rms", model="ridge", **SPEC).fit(X, [0, 1, 0])
    K = clf._gram(clf.X_fit_)
    Q = clf.X_fit_  # the network's inputs: k channels, levels as steps
    assert Q[0].shape == (4, k)
    np.testing.assert_allclose(K, rntk_kernel(Q, **SPEC), rtol=1e-12)
    assert_wide_networks_converge(
        torch, K, Q, lambda width: RNTKNetwork(k, width, max_length=4, **SPEC),
        widths=(100, 4000), seeds=4)
