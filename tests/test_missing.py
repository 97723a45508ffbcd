"""Missing values inside series: one imputation, offered by the loader, the estimators and
SeriesScaler; a clear error naming the series and steps where none is chosen."""

import numpy as np
import pytest

from rntk import (
    RNTKClassifier,
    RNTKClassifierCV,
    RNTKRegressor,
    ScaledConvNTKRegressor,
    SeriesScaler,
    rntk_kernel,
)
from rntk._preprocessing import interpolate_missing
from rntk.datasets import list_ucr, load_ucr

nan = np.nan


# -- the imputation, against values computed by hand -----------------------------------
def test_interpolation_by_hand_univariate():
    X = np.array([[nan, 2.0, nan, nan, 5.0, 6.0],
                  [0.0, nan, nan, nan, 8.0, 1.0],
                  [1.0, nan, 3.0, 4.0, nan, nan]])  # the last: padding after step 3
    expected = np.array([[2.0, 2.0, 3.0, 4.0, 5.0, 6.0],  # edge value, then the line
                         [0.0, 2.0, 4.0, 6.0, 8.0, 1.0],
                         [1.0, 2.0, 3.0, 4.0, nan, nan]])
    np.testing.assert_allclose(interpolate_missing(X), expected, rtol=0, atol=1e-15)
    got = interpolate_missing(list(X))  # a list keeps its layout and shapes
    assert isinstance(got, list) and [g.shape for g in got] == [(6,)] * 3
    np.testing.assert_allclose(np.stack(got), expected, rtol=0, atol=1e-15)
    assert np.isnan(X[0, 0])  # the input is not modified


def test_interpolation_by_hand_channels_each_on_their_own():
    X = np.array([[[nan, 1.0], [2.0, nan], [4.0, 5.0], [nan, 7.0], [nan, nan]]])
    expected = np.array([[[2.0, 1.0], [2.0, 3.0], [4.0, 5.0], [4.0, 7.0], [nan, nan]]])
    np.testing.assert_allclose(interpolate_missing(X), expected, rtol=0, atol=1e-15)


def test_interpolation_refuses_a_channel_without_values():
    X = np.array([[[nan, 1.0], [nan, 2.0]]])
    with pytest.raises(ValueError, match="series 0: channel 0 has no value"):
        interpolate_missing(X)
    with pytest.raises(ValueError, match="empty"):
        interpolate_missing(np.array([[1.0, 2.0], [nan, nan]]))
    with pytest.raises(ValueError, match="infinite"):
        interpolate_missing(np.array([[1.0, nan, np.inf]]))


# -- the estimators and SeriesScaler --------------------------------------------------
def _waves_with_gaps(rng, n=16, T=24):
    t = np.linspace(0, 1, T)
    y = np.repeat([0, 1], n // 2)
    X = np.where(y[:, None] == 0, np.sin(6 * t), np.cos(6 * t)) + 0.2 * rng.normal(size=(n, T))
    X[3, 4:6] = nan  # a gap of two steps
    X[5, 0] = nan  # the first step
    X[10, [7, 15]] = nan
    return X, y


def test_default_is_a_clear_error_naming_series_and_steps(rng):
    X, y = _waves_with_gaps(rng)
    match = r"series 3 has NaN inside the series, at step\(s\) 4, 5 of 24.*missing='interpolate'"
    for est in (RNTKClassifier(), RNTKClassifierCV(), RNTKRegressor(),
                ScaledConvNTKRegressor()):
        with pytest.raises(ValueError, match=match):
            est.fit(X, y)
    with pytest.raises(ValueError, match=match):
        SeriesScaler().fit_transform(X)
    with pytest.raises(ValueError, match=match):
        rntk_kernel(X)
    clean = RNTKClassifier().fit(interpolate_missing(X), y)
    with pytest.raises(ValueError, match=r"series 1 has NaN inside the series, at step\(s\) 0"):
        clean.predict(X[4:6])  # at predict time too


def test_estimators_interpolate_like_the_function(rng):
    X, y = _waves_with_gaps(rng)
    filled = interpolate_missing(X)
    assert not np.isnan(filled).any()
    for est in (RNTKClassifier(), RNTKClassifier(model="ridge"), RNTKRegressor(alpha=0.1),
                ScaledConvNTKRegressor(alpha=0.1)):
        target = y.astype(float) if "Regressor" in type(est).__name__ else y
        a = est.set_params(missing="interpolate").fit(X, target)
        b = type(est)(**{**est.get_params(), "missing": "raise"}).fit(filled, target)
        np.testing.assert_allclose(a.predict(X), b.predict(filled), rtol=1e-12, atol=1e-12)
        for xa, xb in zip(a.X_fit_, b.X_fit_):
            np.testing.assert_array_equal(xa, xb)
    search = RNTKClassifierCV(missing="interpolate").fit(X, y)
    ref = RNTKClassifierCV().fit(filled, y)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                               ref.cv_results_["mean_test_score"], rtol=0, atol=1e-12)
    assert search.best_params_ == ref.best_params_
    np.testing.assert_array_equal(search.predict(X), ref.predict(filled))
    np.testing.assert_allclose(SeriesScaler(missing="interpolate").fit_transform(X),
                               SeriesScaler().fit_transform(filled), rtol=0, atol=1e-14)


def test_missing_option_is_validated(rng):
    X, y = _waves_with_gaps(rng)
    with pytest.raises(ValueError, match="missing"):
        RNTKClassifier(missing="zero").fit(X, y)
    with pytest.raises(ValueError, match="missing"):
        SeriesScaler(missing="mean").fit(X)


# -- the loader -------------------------------------------------------------------------
@pytest.fixture
def gap_home(tmp_path):
    folder = tmp_path / "Gap"
    folder.mkdir()
    (folder / "Gap_TRAIN.tsv").write_text(
        "1\t0.0\tNaN\t2.0\t3.0\n"
        "2\tNaN\t1.0\t1.0\t5.0\n"
        "1\t4.0\t3.0\tNaN\tNaN\n"  # trailing NaN: a shorter series, not missing values
        "2\t1.0\tNaN\tNaN\t7.0\n")
    (folder / "Gap_TEST.tsv").write_text("1\t1.0\t2.0\tNaN\t0.0\n2\t3.0\t3.0\t3.0\t3.0\n")
    return tmp_path


def test_load_ucr_missing_values(gap_home):
    with pytest.raises(ValueError, match=r"Gap_TRAIN.tsv: series 0 has missing values inside"
                                         r".*missing='interpolate'.*missing='keep'"):
        load_ucr("Gap", data_home=gap_home)  # the default: refused, with the way out
    X, y, X_test, _ = load_ucr("Gap", data_home=gap_home, missing="interpolate")
    assert isinstance(X, list) and [len(x) for x in X] == [4, 4, 2, 4]
    expected = [[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 5.0], [4.0, 3.0], [1.0, 3.0, 5.0, 7.0]]
    for got, want in zip(X, expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(X_test[0], [1.0, 2.0, 1.0, 0.0], rtol=0, atol=1e-15)
    assert y.tolist() == [1, 2, 1, 2]
    X_keep, _ = load_ucr("Gap", split="train", data_home=gap_home, missing="keep")
    assert [len(x) for x in X_keep] == [4, 4, 2, 4]
    assert np.isnan(X_keep[0][1]) and np.isnan(X_keep[3][1:3]).all()
    # kept NaN: the estimators fill them the same way
    filled = RNTKClassifier(missing="interpolate").fit(X_keep, y).X_fit_
    direct = RNTKClassifier().fit(X, y).X_fit_
    for a, b in zip(filled, direct):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="missing must be"):
        load_ucr("Gap", data_home=gap_home, missing="drop")
    rows = list_ucr(gap_home)  # listing does not trip over missing values
    assert rows[0]["name"] == "Gap" and rows[0]["max_length"] == 4


def test_benchmark_runner_loads_missing_values_interpolated(tmp_path):
    from rntk.benchmarking._data import Dataset

    rng = np.random.default_rng(0)
    folder = tmp_path / "Gappy"
    folder.mkdir()
    t = np.linspace(0, 1, 12)
    for part, n in (("TRAIN", 10), ("TEST", 6)):
        y = np.arange(n) % 2
        X = np.where(y[:, None] == 0, np.sin(6 * t), np.cos(6 * t)) + 0.1 * rng.normal(
            size=(n, 12))
        X[1, 3:5] = nan
        lines = ["\t".join([str(int(c))] + ["NaN" if np.isnan(v) else repr(float(v))
                                            for v in row]) for c, row in zip(y, X)]
        (folder / f"Gappy_{part}.tsv").write_text("\n".join(lines) + "\n")
    data = Dataset("Gappy", tmp_path)  # what every method of rntk-ucr reads
    assert not np.isnan(data.X_train_raw).any() and not np.isnan(data.X_test_raw).any()
    from rntk.benchmarking._cli import main

    out = tmp_path / "out"
    main(["--data-home", str(tmp_path), "--datasets", "Gappy", "--out", str(out),
          "--protocol", "fast", "--methods", "rntk", "--quiet"])
    text = (out / "results.csv").read_text()
    assert "Gappy" in text


def test_load_ucr_missing_values_in_ts_files(tmp_path):
    folder = tmp_path / "TsGap"
    folder.mkdir()
    header = "@problemName TsGap\n@classLabel true 0 1\n@data\n"
    (folder / "TsGap_TRAIN.ts").write_text(header + "1,?,3:0\n4,5,6:1\n")
    (folder / "TsGap_TEST.ts").write_text(header + "1,2,3:0\n?,5,6:1\n")
    with pytest.raises(ValueError, match="TsGap_TRAIN.ts: series 0 has missing values inside"):
        load_ucr("TsGap", data_home=tmp_path)
    X, _, X_test, _ = load_ucr("TsGap", data_home=tmp_path, missing="interpolate")
    np.testing.assert_allclose(X, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(X_test, [[1.0, 2.0, 3.0], [5.0, 5.0, 6.0]], rtol=0, atol=1e-15)
    # two channels, one without any value in a series: nothing to interpolate from
    (folder / "TsGap_TRAIN.ts").write_text(header + "?,?:1,2:0\n4,5:6,7:1\n")
    (folder / "TsGap_TEST.ts").write_text(header + "1,2:3,4:0\n4,5:6,7:1\n")
    with pytest.raises(ValueError, match="TsGap_TRAIN.ts: series 0: channel 0 has no value"):
        load_ucr("TsGap", data_home=tmp_path, missing="interpolate")
