"""Dataset files that used to load wrongly: merged labels, the wrong line blamed, one bad
dataset hiding the others."""

import numpy as np
import pytest

from rntk.datasets import list_ucr, load_ts, load_ucr, read_tsv


def _write(path, text):
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------- labels
@pytest.mark.parametrize("labels, expected", [
    (["1e19", "2e19"], [1e19, 2e19]),  # beyond int64: used to become one int64 value
    (["9007199254740993", "9007199254740992"],  # beyond 2**53: used to merge in float64
     [9007199254740993, 9007199254740992]),
])
def test_large_labels_stay_apart(tmp_path, labels, expected):
    p = _write(tmp_path / "x.tsv", "".join(f"{lab}\t0.5\t1.0\n" for lab in labels))
    with np.errstate(all="raise"):
        _, y = read_tsv(p)
    assert len(np.unique(y)) == 2
    assert y.tolist() == expected


def test_labels_no_number_type_keeps_apart_stay_text(tmp_path):
    labels = ["100000000000000000001", "100000000000000000000"]
    p = _write(tmp_path / "x.tsv", "".join(f"{lab}\t0.5\t1.0\n" for lab in labels))
    _, y = read_tsv(p)
    assert y.tolist() == labels


def test_large_labels_in_ts_files(tmp_path):
    p = _write(tmp_path / "x.ts", "@problemName x\n@classLabel true\n@data\n"
               "1,2:9007199254740993\n3,4:9007199254740992\n")
    _, y = load_ts(p)
    assert y.tolist() == [9007199254740993, 9007199254740992]


def test_ordinary_labels_keep_their_types(tmp_path):
    p = _write(tmp_path / "x.tsv", "1\t0.5\n2.0\t1.0\n-1\t2.0\n")
    _, y = read_tsv(p)
    assert y.dtype == np.int64 and y.tolist() == [1, 2, -1]
    _write(p, "0.5\t0.5\n1.5\t1.0\n")
    assert read_tsv(p)[1].tolist() == [0.5, 1.5]


# ----------------------------------------------------------------------------- lines
def test_a_trailing_tab_is_not_a_field(tmp_path):
    p = _write(tmp_path / "x.tsv", "1\t0.5\t1.0\t\n2\t1.0\t2.0\n")
    X, y = read_tsv(p)
    np.testing.assert_array_equal(X, [[0.5, 1.0], [1.0, 2.0]])
    assert y.tolist() == [1, 2]


def test_the_short_line_is_blamed_beside_a_trailing_tab(tmp_path):
    p = _write(tmp_path / "x.tsv", "1\t0.5\t1.0\t\n2\t1.0\t2.0\n3\t1.0\n")
    with pytest.raises(ValueError, match=r"x\.tsv, line 3: 2 fields, expected 3"):
        read_tsv(p)


# ----------------------------------------------------------------------------- list_ucr
def test_list_ucr_skips_unreadable_datasets_with_a_warning(tmp_path):
    for name, train in (("Bad", "1\t0.5\tabc\n"), ("Good", "1\t0.5\t1.0\n2\t1.0\t0.5\n")):
        (tmp_path / name).mkdir()
        _write(tmp_path / name / f"{name}_TRAIN.tsv", train)
        _write(tmp_path / name / f"{name}_TEST.tsv", "1\t0.5\t1.0\n2\t1.0\t0.5\n")
    (tmp_path / "Half").mkdir()
    _write(tmp_path / "Half" / "Half_TRAIN.tsv", "1\t0.5\n")
    with pytest.warns(UserWarning) as record:
        rows = list_ucr(tmp_path)
    assert [r["name"] for r in rows] == ["Good"]
    assert rows[0]["n_train"] == 2
    messages = [str(w.message) for w in record]
    assert any("skipping dataset Bad:" in m and "Bad_TRAIN.tsv, line 1" in m
               for m in messages), messages
    assert any("skipping dataset Half: its TEST file Half_TEST.tsv is missing" in m
               for m in messages), messages
    # the catalog reads nothing and names the problem
    rows = list_ucr(tmp_path, sizes=False)
    assert [(r["name"], r["problem"] is None) for r in rows] == [
        ("Bad", True), ("Good", True), ("Half", False)]
    # the readable one still loads
    assert load_ucr("Good", data_home=tmp_path)[0].shape == (2, 2)
