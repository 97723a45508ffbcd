"""Corrupted dataset files: clear errors naming the file and line; odd but valid files load."""

import gzip
import re

import numpy as np
import pytest

from rntk.datasets import list_ucr, load_ts, load_ucr, read_tsv

GOOD = "1\t0.5\t0.25\t-1.0\n2\t1.5\t2.0\t3.0\n1\t0.0\t0.1\t0.2\n"


def _ucr(tmp_path, train, test=GOOD, name="Bad"):
    """Write NAME/NAME_TRAIN.tsv and NAME/NAME_TEST.tsv (str is written as UTF-8 bytes)."""
    folder = tmp_path / name
    folder.mkdir()
    for split, content in (("TRAIN", train), ("TEST", test)):
        data = content.encode("utf-8") if isinstance(content, str) else content
        (folder / f"{name}_{split}.tsv").write_bytes(data)
    return folder / f"{name}_TRAIN.tsv"


def _raises(tmp_path, train, match, name="Bad"):
    path = _ucr(tmp_path, train, name=name)
    with pytest.raises(ValueError, match=re.escape(f"{name}_TRAIN.tsv, line ") + match) as info:
        load_ucr(name, data_home=tmp_path)
    assert str(info.value).startswith(str(path))  # the message starts with the file path
    return str(info.value)


# ----------------------------------------------------------------- short or long rows
def test_truncated_last_line(tmp_path):
    msg = _raises(tmp_path, GOOD + "2\t0.5\t0.2", r"4: 3 fields, expected 4")
    assert "truncated" in msg and "NaN-padded" in msg


def test_short_row_in_the_middle(tmp_path):
    content = "1\t0.5\t0.25\t-1.0\n2\t1.5\t2.0\n1\t0.0\t0.1\t0.2\n"
    _raises(tmp_path, content, r"2: 3 fields, expected 4 \(the label and 3 values")


def test_short_first_row_is_the_one_reported(tmp_path):
    # the count shared by most rows is the expected one
    _raises(tmp_path, "1\t0.5\n" + GOOD, r"1: 2 fields, expected 4")


def test_row_with_extra_fields(tmp_path):
    msg = _raises(tmp_path, GOOD + "2\t0.5\t0.2\t0.1\t0.7\n", r"4: 5 fields, expected 4")
    assert "extra fields" in msg


def test_truncated_test_file_is_named(tmp_path):
    folder = _ucr(tmp_path, GOOD, GOOD + "1\t0.5").parent
    with pytest.raises(ValueError, match=r"Bad_TEST\.tsv, line 4: 2 fields, expected 4"):
        load_ucr("Bad", data_home=tmp_path)
    with pytest.raises(ValueError, match=r"Bad_TEST\.tsv, line 4"):
        read_tsv(folder / "Bad_TEST.tsv")
    # list_ucr skips the unreadable dataset, naming the file and line
    with pytest.warns(UserWarning, match=r"skipping dataset Bad: .*Bad_TEST\.tsv, line 4"):
        assert list_ucr(tmp_path) == []


# --------------------------------------------------------------------- empty labels
@pytest.mark.parametrize("bad_line", ["\t0.5\t0.2\t0.3", " \t0.5\t0.2\t0.3", ",0.5,0.2,0.3"])
def test_empty_label(tmp_path, bad_line):
    msg = _raises(tmp_path, GOOD + bad_line + "\n", r"4: the class label \(the first field\) "
                  "is empty")
    assert "0.5" in msg  # the line is shown


def test_tab_only_line_is_an_error(tmp_path):
    _raises(tmp_path, "1\t0.5\t0.25\t-1.0\n\t\t\t\n" + GOOD, r"2: expected a label")


# ---------------------------------------------------------------- encodings, binary
def test_bom_is_ignored(tmp_path):
    _ucr(tmp_path, "\ufeff" + GOOD)
    X_train, y_train, X_test, y_test = load_ucr("Bad", data_home=tmp_path)
    assert y_train.dtype == np.int64 and y_train.tolist() == [1, 2, 1]
    np.testing.assert_array_equal(X_train, X_test)
    assert list_ucr(tmp_path)[0]["n_classes"] == 2


def test_bom_with_string_labels(tmp_path):
    _ucr(tmp_path, "\ufeffa\t1.0\t2.0\nb\t3.0\t4.0\n", "a\t1.0\t2.0\nb\t3.0\t4.0\n")
    _, y_train, _, y_test = load_ucr("Bad", data_home=tmp_path)
    assert y_train.tolist() == y_test.tolist() == ["a", "b"]


def test_compressed_file(tmp_path):
    msg = _raises(tmp_path, gzip.compress(GOOD.encode()), r"1: not UTF-8 text")
    assert "binary or compressed" in msg


def test_undecodable_byte_names_the_line(tmp_path):
    content = b"1\t0.5\t0.25\t-1.0\r\n2\t1.5\t2.0\t3.0\r\n1\t0.0\t0.1\t0.\xff2\r\n"
    _raises(tmp_path, content, r"3: not UTF-8 text \(byte 0xff at offset ")
    _raises(tmp_path, b"\xef\xbb\xbf" + content, r"3: not UTF-8 text", name="Bom")


# -------------------------------------------------------------- valid files still load
def test_crlf_line_endings(tmp_path):
    _ucr(tmp_path, GOOD.replace("\n", "\r\n"))
    X_train, y_train, X_test, y_test = load_ucr("Bad", data_home=tmp_path)
    np.testing.assert_array_equal(X_train, X_test)
    assert y_train.tolist() == y_test.tolist() == [1, 2, 1]


def test_blank_trailing_lines(tmp_path):
    _ucr(tmp_path, GOOD + "\n\n  \n", GOOD.replace("\n", "\r\n") + "\r\n\r\n")
    X_train, y_train, X_test, y_test = load_ucr("Bad", data_home=tmp_path)
    assert X_train.shape == X_test.shape == (3, 3)


VAR_TRAIN = "1\t1.0\t2.0\t3.0\n2\t4.0\tNaN\tNaN\n1\t5.0\t6.0\tNaN\n"
VAR_TEST = "2\t7.0\t8.0\n1\t9.0\tNaN\n"


@pytest.mark.parametrize("crlf", [False, True])
def test_nan_padded_variable_length(tmp_path, crlf):
    def eol(s):
        return s.replace("\n", "\r\n") if crlf else s

    _ucr(tmp_path, eol(VAR_TRAIN), eol(VAR_TEST))
    X_train, y_train, X_test, y_test = load_ucr("Bad", data_home=tmp_path)
    assert isinstance(X_train, list) and isinstance(X_test, list)
    assert [x.tolist() for x in X_train] == [[1, 2, 3], [4], [5, 6]]
    assert [x.tolist() for x in X_test] == [[7, 8], [9]]
    assert y_train.tolist() == [1, 2, 1] and y_test.tolist() == [2, 1]
    assert list_ucr(tmp_path)[0]["variable_length"]


def test_padding_written_as_empty_fields_or_trailing_tabs(tmp_path):
    p = tmp_path / "x.tsv"
    p.write_text("1\t1.0\t2.0\t3.0\n2\t4.0\t\t\n")  # padding as empty fields
    X, y = read_tsv(p)
    np.testing.assert_array_equal(X, [[1, 2, 3], [4, np.nan, np.nan]])
    p.write_text("1\t1.0\t2.0\t\n2\t4.0\t5.0\t\n")  # a tab after every row
    X, y = read_tsv(p)
    np.testing.assert_array_equal(X, [[1, 2], [4, 5]])


# ------------------------------------------------------------------------- .ts files
TS = "@problemName toy\n@univariate true\n@classLabel true a b\n@data\n1,2,3:a\n4,5,6:{}\n"


def test_ts_undeclared_label(tmp_path):
    p = tmp_path / "toy.ts"
    p.write_text(TS.format("c"))
    with pytest.raises(ValueError, match=r"toy\.ts, line 6: class label 'c' is not declared "
                       r"in the @classLabel header \(a b\)") as info:
        load_ts(p)
    assert str(info.value).startswith(str(p))


def test_ts_undeclared_label_in_ucr_layout(tmp_path):
    folder = tmp_path / "Toy"
    folder.mkdir()
    (folder / "Toy_TRAIN.ts").write_text(TS.format("b"))
    (folder / "Toy_TEST.ts").write_text(TS.format("1"))
    with pytest.raises(ValueError, match=r"Toy_TEST\.ts, line 6: class label '1'"):
        load_ucr("Toy", data_home=tmp_path)


def test_ts_labels_without_a_declared_list_and_empty_label(tmp_path):
    p = tmp_path / "toy.ts"
    p.write_text(TS.replace("true a b", "true").format("c"))
    assert load_ts(p)[1].tolist() == ["a", "c"]  # nothing declared: nothing to check
    p.write_text(TS.format(" "))
    with pytest.raises(ValueError, match=r"toy\.ts, line 6: the label field is empty"):
        load_ts(p)


def test_ts_bom_crlf_and_binary(tmp_path):
    p = tmp_path / "toy.ts"
    p.write_bytes(b"\xef\xbb\xbf" + TS.format("b").replace("\n", "\r\n").encode())
    X, y = load_ts(p)
    assert X.shape == (2, 3) and y.tolist() == ["a", "b"]
    p.write_bytes(gzip.compress(TS.format("b").encode()))
    with pytest.raises(ValueError, match=r"toy\.ts, line 1: not UTF-8 text"):
        load_ts(p)
