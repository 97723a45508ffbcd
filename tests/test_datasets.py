"""Tests of rntk.datasets: UCR tsv and .ts readers, bundled data, listing, errors."""

import numpy as np
import pytest

from rntk._utils import as_sequences
from rntk.datasets import BUNDLED_DATASETS, list_ucr, load_ts, load_ucr, read_tsv


def _write_tsv(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write("\t".join([str(label)] + [repr(float(v)) for v in row]) + "\n")


def _make_ucr(home, name, Xtr, ytr, Xte, yte):
    folder = home / name
    folder.mkdir(parents=True)
    _write_tsv(folder / f"{name}_TRAIN.tsv", Xtr, ytr)
    _write_tsv(folder / f"{name}_TEST.tsv", Xte, yte)
    return folder


@pytest.fixture
def ucr_home(tmp_path, rng):
    Xtr, Xte = rng.standard_normal((6, 8)), rng.standard_normal((4, 8))
    _make_ucr(tmp_path, "Toy", Xtr, [1, 2, 1, 2, 1, 2], Xte, [2, 1, 2, 1])
    var_tr = np.full((3, 5), np.nan)
    var_tr[0, :5], var_tr[1, :3], var_tr[2, :4] = 1.5, -0.25, 2.0
    var_te = np.full((2, 6), np.nan)
    var_te[0, :2], var_te[1, :6] = 0.5, 3.0
    _make_ucr(tmp_path, "Ragged", var_tr, ["a", "b", "a"], var_te, ["b", "a"])
    return tmp_path, Xtr, Xte


def test_tsv_equal_length(ucr_home):
    home, Xtr, Xte = ucr_home
    X, y = load_ucr("Toy", split="train", data_home=home)
    assert isinstance(X, np.ndarray) and X.shape == (6, 8) and X.dtype == np.float64
    np.testing.assert_array_equal(X, Xtr)  # exact float round trip through the text
    assert y.dtype == np.int64 and list(y) == [1, 2, 1, 2, 1, 2]
    X_train, y_train, X_test, y_test = load_ucr("Toy", data_home=home)
    np.testing.assert_array_equal(X_test, Xte)
    np.testing.assert_array_equal(load_ucr("Toy", "test", data_home=home)[0], Xte)


def test_tsv_variable_length_is_a_list(ucr_home):
    home, _, _ = ucr_home
    X_train, y_train, X_test, y_test = load_ucr("Ragged", data_home=home)
    assert isinstance(X_train, list) and isinstance(X_test, list)
    assert [len(x) for x in X_train] == [5, 3, 4] and [len(x) for x in X_test] == [2, 6]
    assert np.all(X_train[1] == -0.25) and y_train.tolist() == ["a", "b", "a"]
    # the list is a valid kernel input
    assert [s.shape for s in as_sequences(X_train)] == [(5, 1), (3, 1), (4, 1)]


def test_rntk_data_environment_variable(ucr_home, monkeypatch):
    home, Xtr, _ = ucr_home
    monkeypatch.setenv("RNTK_DATA", str(home))
    np.testing.assert_array_equal(load_ucr("Toy", "train")[0], Xtr)
    names = [r["name"] for r in list_ucr()]
    assert names == ["Ragged", "Toy"]


def test_list_ucr(ucr_home):
    home, _, _ = ucr_home
    rows = {r["name"]: r for r in list_ucr(home)}
    assert rows["Toy"] == {"name": "Toy", "n_train": 6, "n_test": 4, "min_length": 8,
                           "max_length": 8, "n_channels": 1, "n_classes": 2,
                           "variable_length": False, "source": str(home)}
    assert rows["Ragged"]["variable_length"] and rows["Ragged"]["min_length"] == 2
    assert rows["Ragged"]["max_length"] == 6


def test_bundled(monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)
    rows = {r["name"]: r for r in list_ucr()}
    assert sorted(rows) == sorted(BUNDLED_DATASETS)
    X_train, y_train, X_test, y_test = load_ucr("GunPoint")
    assert X_train.shape == (50, 150) and X_test.shape == (150, 150)
    assert set(y_train.tolist()) == {1, 2}
    X, y = load_ucr("PickupGestureWiimoteZ", "train")
    assert isinstance(X, list) and len(X) == 50
    assert rows["PickupGestureWiimoteZ"]["n_classes"] == 10
    assert all(np.isfinite(x).all() for x in X)
    # ECG200 keeps the archive's -1 / 1 labels
    assert set(load_ucr("ECG200", "test")[1].tolist()) == {-1, 1}


def test_data_home_falls_back_to_bundled(tmp_path):
    X, _ = load_ucr("Coffee", "train", data_home=tmp_path)
    assert X.shape == (28, 286)


def test_unknown_dataset_lists_available(ucr_home):
    home, _, _ = ucr_home
    with pytest.raises(ValueError, match="Ragged, Toy.*bundled: Coffee"):
        load_ucr("Nope", data_home=home)
    with pytest.raises(ValueError, match="does not exist"):
        load_ucr("Nope", data_home=home / "missing")
    with pytest.raises(ValueError, match="split"):
        load_ucr("Toy", split="valid", data_home=home)
    with pytest.raises(TypeError, match="name"):
        load_ucr(3)


@pytest.mark.parametrize("content,match", [
    ("1\t0.5\tabc\n", "line 1: not a number"),
    ("1\t0.5\t0.2\n2\n", "line 2: expected a label"),
    ("", "holds no series"),
    ("1\t0.5\tNaN\t0.3\n", "missing values inside"),
    ("1\tNaN\tNaN\n", "empty"),
    ("1\t0.5\tinf\n", "infinite"),
])
def test_bad_tsv_files(tmp_path, content, match):
    folder = tmp_path / "Bad"
    folder.mkdir()
    (folder / "Bad_TRAIN.tsv").write_text(content)
    (folder / "Bad_TEST.tsv").write_text("1\t0.5\t0.2\n")
    with pytest.raises(ValueError, match=match):
        load_ucr("Bad", data_home=tmp_path)


def test_folder_without_both_files(tmp_path):
    (tmp_path / "Half").mkdir()
    (tmp_path / "Half" / "Half_TRAIN.tsv").write_text("1\t0.5\n")
    with pytest.raises(ValueError, match="lacks Half_TRAIN.tsv and Half_TEST.tsv"):
        load_ucr("Half", data_home=tmp_path)


def test_read_tsv_commas(tmp_path):
    p = tmp_path / "x.tsv"
    p.write_text("3,1.0,2.0\n4,0.5,NaN\n")
    X, y = read_tsv(p)
    assert y.tolist() == [3, 4] and np.isnan(X[1, 1]) and X[0, 1] == 2.0


# ------------------------------------------------------------------------- .ts files
UNI_EQUAL = """# a comment
@problemName Uni
@timeStamps false
@missing false
@univariate true
@equalLength true
@seriesLength 4
@classLabel true 0 1
@data
1.0,2.0,3.0,4.0:0
-1.5,0.0,2.5,1e-3:1
"""

MULTI_UNEQUAL = """@problemName Multi
@timeStamps false
@univariate false
@dimensions 2
@equalLength false
@classLabel true up down
@data
1,2,3:4,5,6:up
7,8:9,10:down
0.5,?,?:1.5,?,?:up
"""

NO_LABELS = """@problemName Unlabelled
@univariate true
@classLabel false
@data
1,2,3
4,5,6
"""

REGRESSION = """@problemName Reg
@univariate true
@targetLabel true
@data
1,2,3:0.25
4,5,6:-1.5
"""


def test_ts_univariate_equal(tmp_path):
    p = tmp_path / "uni.ts"
    p.write_text(UNI_EQUAL)
    X, y = load_ts(p)
    np.testing.assert_array_equal(X, [[1, 2, 3, 4], [-1.5, 0, 2.5, 1e-3]])
    assert y.tolist() == [0, 1]


def test_ts_multivariate_unequal(tmp_path):
    p = tmp_path / "multi.ts"
    p.write_text(MULTI_UNEQUAL)
    X, y = load_ts(p)
    assert isinstance(X, list) and [x.shape for x in X] == [(3, 2), (2, 2), (1, 2)]
    np.testing.assert_array_equal(X[0], [[1, 4], [2, 5], [3, 6]])  # time-major
    np.testing.assert_array_equal(X[2], [[0.5, 1.5]])
    assert y.tolist() == ["up", "down", "up"]
    assert [s.shape for s in as_sequences(X)] == [(3, 2), (2, 2), (1, 2)]


def test_ts_multivariate_equal_is_3d(tmp_path):
    p = tmp_path / "m.ts"
    p.write_text("@dimensions 2\n@classLabel true a\n@data\n1,2:3,4:a\n5,6:7,8:a\n")
    X, y = load_ts(p)
    assert X.shape == (2, 2, 2)
    np.testing.assert_array_equal(X[1], [[5, 7], [6, 8]])


def test_ts_without_labels_and_regression(tmp_path):
    p = tmp_path / "u.ts"
    p.write_text(NO_LABELS)
    X, y = load_ts(p)
    assert y is None and X.shape == (2, 3)
    p = tmp_path / "r.ts"
    p.write_text(REGRESSION)
    X, y = load_ts(p)
    assert y.dtype == np.float64 and y.tolist() == [0.25, -1.5]


def test_ts_dataset_in_ucr_layout(tmp_path):
    folder = tmp_path / "Multi"
    folder.mkdir()
    (folder / "Multi_TRAIN.ts").write_text(MULTI_UNEQUAL)
    (folder / "Multi_TEST.ts").write_text(MULTI_UNEQUAL)
    X_train, y_train, X_test, y_test = load_ucr("Multi", data_home=tmp_path)
    assert len(X_train) == 3 and X_test[1].shape == (2, 2)
    row = list_ucr(tmp_path)[0]
    assert row["n_channels"] == 2 and row["variable_length"] and row["n_classes"] == 2
    (folder / "Multi_TEST.ts").write_text(NO_LABELS)
    with pytest.raises(ValueError, match="no class labels"):
        load_ucr("Multi", data_home=tmp_path)


@pytest.mark.parametrize("content,match", [
    ("@problemName x\n1,2,3:0\n", "header line"),
    ("@problemName x\n@classLabel true 0\n", "no @data"),
    ("@classLabel true 0\n@data\n1,2,3\n", "no ':label' field"),
    ("@classLabel true 0\n@data\n1,2,3:4,5:0\n", "different lengths"),
    ("@classLabel true 0\n@data\n1,2:3,4:0\n1,2:0\n", "1 channel.*earlier cases have 2"),
    ("@classLabel true 0\n@data\n1,x,3:0\n", "line 3: not a number"),
    ("@timeStamps true\n@data\n(0,1),(1,2):0\n", "time-stamped"),
    ("@classLabel maybe\n@data\n1:0\n", "true or false"),
    ("@dimensions 3\n@classLabel true 0\n@data\n1,2:3,4:0\n", "@dimensions says 3"),
    ("@classLabel true 0\n@data\n1,?,3:0\n", "missing values inside"),
])
def test_bad_ts_files(tmp_path, content, match):
    p = tmp_path / "bad.ts"
    p.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_ts(p)


# -- the extrinsic regression archive --------------------------------------------------------
def test_load_tser_bundled_covid3month():
    from rntk.datasets import load_tser

    X_train, y_train, X_test, y_test = load_tser("Covid3Month")
    assert X_train.shape == (140, 84) and X_test.shape == (61, 84)
    assert y_train.dtype == np.float64 and np.isfinite(X_train).all()
    # the targets are death rates: in [0, 1], not all equal
    assert 0 <= y_train.min() < y_train.max() <= 1
    X, y = load_tser("Covid3Month", split="test")
    np.testing.assert_array_equal(X, X_test)


def _write_ts(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("@problemName Toy\n@timeStamps false\n@missing false\n@univariate true\n"
                    "@equalLength true\n@targetlabel true\n@data\n"
                    + "".join(",".join(map(str, x)) + f":{t}\n" for x, t in rows))


def test_load_tser_reads_a_folder_before_the_bundled_copy(tmp_path):
    from rntk.datasets import load_tser

    for split, rows in (("TRAIN", [([1, 2, 3], 0.5), ([3, 2, 1], 1.5)]),
                        ("TEST", [([0, 1, 0], 2.5)])):
        _write_ts(tmp_path / "Covid3Month" / f"Covid3Month_{split}.ts", rows)
    X, y = load_tser("Covid3Month", split="train", data_home=tmp_path)
    np.testing.assert_array_equal(X, [[1, 2, 3], [3, 2, 1]])
    np.testing.assert_array_equal(y, [0.5, 1.5])


def test_load_tser_errors(tmp_path):
    from rntk.datasets import load_tser

    with pytest.raises(ValueError, match="unknown TSER dataset 'FloodModeling1'.*Covid3Month"):
        load_tser("FloodModeling1")
    with pytest.raises(ValueError, match="split must be"):
        load_tser("Covid3Month", split="validation")
    with pytest.raises(ValueError, match="does not exist"):
        load_tser("Covid3Month", data_home=tmp_path / "nowhere")
    with pytest.raises(ValueError, match="missing"):
        load_tser("Covid3Month", missing="drop")
    # a classification file is not a regression set
    for split in ("TRAIN", "TEST"):
        p = tmp_path / "Cls" / f"Cls_{split}.ts"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("@problemName Cls\n@timeStamps false\n@missing false\n@univariate true\n"
                     "@equalLength true\n@classLabel true a b\n@data\n1,2,3:a\n3,2,1:b\n")
    with pytest.raises(ValueError, match="no numeric regression targets"):
        load_tser("Cls", data_home=tmp_path)
