"""The table of series preparations, its public transforms and their transformers."""

from functools import partial

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import rntk
from rntk import (
    AmplitudeSpectrum,
    BlockMeans,
    IntervalStatistics,
    RNTKClassifier,
    RNTKRegressor,
    SeriesImputer,
    ShapeQuantiles,
    ValueQuantiles,
)
from rntk._preprocessing import interpolate_missing
from rntk._representations._table import (
    PREPARATION_DEFAULTS,
    PREPARATION_NAMES,
    PREPARATIONS,
    REPRESENTATIONS,
    prepare_series,
)
from rntk._utils import as_sequences, normalize_series, pool_series
from tests.transforms import (
    amplitude_spectrum,
    octave_shape_quantiles,
    shape_quantiles,
    value_quantiles,
)

#: The transformer of ``octave_shapes``.
OctaveShapeQuantiles = partial(ShapeQuantiles, dilations=(1, 2, 4, 8, 16))
#: Each integer preparation: its transformer's size argument, the transformer.
TRANSFORMS = {"spectrum": ("n_bins", AmplitudeSpectrum),
              "quantiles": ("n_levels", ValueQuantiles),
              "shapes": ("n_levels", ShapeQuantiles),
              "octave_shapes": ("n_levels", OctaveShapeQuantiles),
              "intervals": ("n_intervals", IntervalStatistics),
              "pool": ("pool", BlockMeans)}


def test_every_estimator_takes_every_preparation_with_the_tables_constraint():
    for cls in (RNTKClassifier, RNTKRegressor):  # the searches take them whole
        params = cls().get_params()
        for p in PREPARATIONS:
            assert p.name in params, (cls, p.name)
            assert cls._parameter_constraints[p.name] is p.constraint
            assert f"{p.name} : " in cls.__doc__
    assert RNTKClassifier().normalize is True and RNTKRegressor().normalize is False
    assert PREPARATION_DEFAULTS["spectrum"] is None
    assert set(REPRESENTATIONS) == {"spectrum", "quantiles", "shapes", "octave_shapes",
                                    "intervals"}


@pytest.mark.parametrize("name", ["spectrum", "quantiles", "shapes", "octave_shapes",
                                  "intervals", "pool"])
@pytest.mark.parametrize("bad, error, match", [
    (0, ValueError, "at least"), (2.5, TypeError, "an int"), (True, TypeError, "an int")])
def test_bad_sizes_are_refused_everywhere(rng, name, bad, error, match):
    """The public transform, its transformer and the estimators refuse a bad size."""
    arg, transformer = TRANSFORMS[name]
    X = rng.normal(size=(4, 8))
    with pytest.raises((ValueError, TypeError), match=arg):
        transformer(**{arg: bad}).fit_transform(X)
    with pytest.raises((ValueError, TypeError), match=name):
        RNTKClassifier(**{name: bad}).fit(X, [0, 1, 0, 1])


@pytest.mark.parametrize("transformer", [AmplitudeSpectrum(4), ValueQuantiles(4),
                                         ShapeQuantiles(4), OctaveShapeQuantiles(n_levels=4),
                                         IntervalStatistics(4)])
def test_bad_series_are_refused_before_the_transform(rng, transformer):
    function = transformer.fit_transform
    X = rng.normal(size=(3, 8))
    X[1, 3] = np.nan
    with pytest.raises(ValueError, match="NaN|missing"):
        function(X)
    X[1, 3] = np.inf
    with pytest.raises(ValueError, match="infinite|infinity"):
        function(X)


def test_two_representations_are_refused(rng):
    with pytest.raises(ValueError, match="spectrum and quantiles .* give one of them"):
        RNTKClassifier(quantiles=4, spectrum=4).fit(rng.normal(size=(4, 8)), [0, 1, 0, 1])


def test_the_preparations_run_in_the_tables_order(rng):
    """Representation, then the per-series scale, then the block means."""
    xs = as_sequences(rng.normal(size=(3, 12, 2)))
    got = prepare_series(xs, {"spectrum": 5, "normalize": "rms", "pool": 2}, {})
    want = pool_series(normalize_series(as_sequences(amplitude_spectrum(xs, 5)), "rms"), 2)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    # an estimator without a preparation's parameter does not get its default
    assert prepare_series(xs, {}, {}) is xs
    assert set(PREPARATION_NAMES) == {"normalize", "spectrum", "quantiles", "shapes",
                                      "octave_shapes", "intervals", "pool"}


@pytest.mark.parametrize("transformer, function", [
    (AmplitudeSpectrum(n_bins=9), lambda X: amplitude_spectrum(X, n_bins=9)),
    (ValueQuantiles(n_levels=6), lambda X: value_quantiles(X, n_levels=6)),
    (ShapeQuantiles(n_levels=6), lambda X: shape_quantiles(X, n_levels=6)),
    (OctaveShapeQuantiles(n_levels=6), lambda X: octave_shape_quantiles(X, n_levels=6)),
])
def test_transformers_equal_their_functions(rng, transformer, function):
    for X in (rng.normal(size=(5, 20)), rng.normal(size=(5, 20, 3)),
              [rng.normal(size=t) for t in (7, 20, 11)]):
        np.testing.assert_array_equal(transformer.fit_transform(X), function(X))


def test_block_means_and_the_imputer(rng):
    X = [rng.normal(size=(t, 2)) for t in (9, 12)]
    got = BlockMeans(pool=3).fit_transform(X)
    for g, w in zip(got, pool_series(X, 3)):
        np.testing.assert_array_equal(g, w)
    assert [len(g) for g in got] == [3, 4]
    M = rng.normal(size=(4, 10))
    M[1, 3:5] = np.nan
    np.testing.assert_array_equal(SeriesImputer().fit_transform(M), interpolate_missing(M))


def test_a_pipeline_of_transformers_and_an_estimator(rng):
    """The aeon-style pipeline: impute, take spectra, classify, as the option would."""
    t = np.linspace(0, 1, 32)
    X = np.r_[np.sin(2 * np.pi * 4 * t) + 0.3 * rng.normal(size=(10, 32)),
              np.sin(2 * np.pi * 9 * t) + 0.3 * rng.normal(size=(10, 32))]
    y = np.repeat([0, 1], 10)
    X[2, 5] = np.nan
    pipe = make_pipeline(SeriesImputer(), AmplitudeSpectrum(n_bins=17),
                         RNTKClassifier(model="ridge", normalize=False))
    option = RNTKClassifier(model="ridge", spectrum=17, normalize=False,
                            missing="interpolate")
    np.testing.assert_allclose(pipe.fit(X, y).decision_function(X),
                               option.fit(X, y).decision_function(X), rtol=1e-10)
    assert rntk.from_aeon is not None


_LENGTHS = ("series of another length than in fit are valid input: only the channel count "
            "is enforced")


_PADDING = ("a NaN that ends a row is padding (the end of a shorter series, the UCR "
            "layout): rows with NaN at their end give shorter series, returned as a list")


def _expected_failures(est):
    failures = {"check_n_features_in_after_fitting": _LENGTHS,
                "check_transformer_general": _LENGTHS}
    if isinstance(est, SeriesImputer):
        failures["check_estimators_pickle"] = _PADDING
    return failures


@parametrize_with_checks(
    [AmplitudeSpectrum(n_bins=8), ValueQuantiles(n_levels=8), ShapeQuantiles(n_levels=8),
     ShapeQuantiles(n_levels=8, dilations=(1, 2, 4, 8, 16)), IntervalStatistics(4),
     BlockMeans(pool=2), SeriesImputer()], expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)
