"""What the dataset readers share: the UCR folder layout, text lines, labels, layouts.

The bottom of :mod:`rntk.datasets`: the ``.tsv`` reader (``_tsv``), the ``.ts`` reader
(``_ts``), the downloader (``_download``) and the lookup (``_ucr``) import from here,
and this module imports none of them.
"""

import os
from fractions import Fraction
from pathlib import Path

import numpy as np

from .._utils import LOAD_MISSING, check_missing
from .._utils._sequences import interpolate_steps

#: The small datasets shipped with the package (``data/NAME.npz``).
_DATA_DIR = Path(__file__).parent / "data"
_SPLITS = ("train", "test")
#: The file types of a dataset folder, in the order of preference.
_EXTS = (".tsv", ".ts")
_INT64 = np.iinfo(np.int64)


def _check_split_missing(split, missing):
    """Refuse a ``split`` other than "train", "test" or None, and an unknown ``missing``."""
    if split is not None and split not in _SPLITS:
        raise ValueError(f"split must be 'train', 'test' or None; got {split!r}")
    check_missing(missing, LOAD_MISSING)


# ----------------------------------------------------------------------------- layout
def _default_home(data_home):
    if data_home is not None:
        return Path(os.fspath(data_home)).expanduser()
    env = os.environ.get("RNTK_DATA")
    if env:
        return Path(env).expanduser()
    return None


def _split_files(folder, name):
    """Return {'train': path, 'test': path} for a dataset folder, or None."""
    files = _split_paths(folder, name)
    return files if files is not None and all(files.values()) else None


def _split_paths(folder, name):
    """``{"train": path, "test": path}`` of a dataset folder, a missing part as None.

    The ``.tsv`` pair is preferred, then the ``.ts`` pair; a folder holding only one of
    the two parts gives that part and None. None when the folder holds neither part.
    Nothing is read.
    """
    candidates = [{s: folder / f"{name}_{s.upper()}{ext}" for s in _SPLITS} for ext in _EXTS]
    for files in candidates:
        if all(p.is_file() for p in files.values()):
            return files
    for files in candidates:
        if any(p.is_file() for p in files.values()):
            return {s: (p if p.is_file() else None) for s, p in files.items()}
    return None


def _missing_part(name, folder, files):
    """Why a dataset folder cannot be used: which of its files is missing."""
    if files is None:
        return (f"dataset folder {folder} holds no {name}_TRAIN / {name}_TEST file "
                "(.tsv or .ts)")
    missing = [s for s in _SPLITS if files[s] is None]
    present = next(p for p in files.values() if p is not None)
    want = [f"{name}_{s.upper()}{present.suffix}" for s in missing]
    return (f"dataset {name}: its {' and '.join(s.upper() for s in missing)} file "
            f"{', '.join(want)} is missing from {folder}")


# ----------------------------------------------------------------------------- text
def _text_lines(path):
    """Yield ``(lineno, line)`` of a UTF-8 text file; a BOM is ignored.

    Any line ending is accepted. Bytes that are not UTF-8 (a binary or compressed file)
    raise a ValueError naming the file and the line.
    """
    try:
        with open(path, encoding="utf-8-sig") as f:
            yield from enumerate(f, 1)
    except UnicodeDecodeError:
        data = Path(path).read_bytes()
        start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        try:
            data[start:].decode("utf-8")
        except UnicodeDecodeError as exc:
            start += exc.start
        head = data[:start].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lineno = head.count(b"\n") + 1
        raise ValueError(
            f"{path}, line {lineno}: not UTF-8 text (byte 0x{data[start:start + 1].hex()} at "
            f"offset {start}); is it a binary or compressed file?"
        ) from None


def _parse_labels(raw, source):
    """Turn the label strings into numbers where that keeps every label apart, else str.

    int64 when every label is an integer that int64 holds exactly; else float64 when
    every label is a finite number and no two different numbers become the same float64;
    else the labels' text. Labels such as ``1e19`` and ``2e19`` (beyond int64) are thus
    kept apart as floats, and ``9007199254740993`` and ``9007199254740992`` (one float64)
    as integers; labels that no number type keeps apart stay text.
    """
    raw = [s.strip() for s in raw]
    try:
        vals = np.array([float(s) for s in raw], dtype=np.float64)
    except ValueError:
        return np.array(raw, dtype=str)
    if not np.all(np.isfinite(vals)):
        raise ValueError(f"{source}: a class label is NaN or infinite")
    try:  # the exact values written, to see what a number type would merge
        exact = [Fraction(s) for s in raw]
    except ValueError:  # a spelling float() reads and Fraction does not
        return np.array(raw, dtype=str)
    if all(q.denominator == 1 and _INT64.min <= q.numerator <= _INT64.max for q in exact):
        return np.array([q.numerator for q in exact], dtype=np.int64)
    if len(set(exact)) == len(set(vals.tolist())):
        return vals
    return np.array(raw, dtype=str)


# ----------------------------------------------------------------------------- arrays
_REMEDY = ("load it with missing='interpolate' (linear interpolation in time, channel by "
           "channel, as the archive's adjusted datasets) or missing='keep' (NaN kept, for "
           "the estimators' own missing= option)")


def _check_padded(X, source, missing="raise"):
    """Check a NaN-padded 2-D or 3-D array: NaN only as trailing padding, no inf.

    With ``missing="keep"`` or ``"interpolate"``, NaN inside a series is allowed (the
    latter fills ``X`` in place); only steps where every channel is NaN end a series.
    """
    if np.isinf(X).any():
        raise ValueError(f"{source}: contains infinite values")
    nan = np.isnan(X)
    step_nan = nan if X.ndim == 2 else nan.any(axis=2)
    if missing != "raise":
        step_nan = nan if X.ndim == 2 else nan.all(axis=2)
    if missing == "raise" and X.ndim == 3 and not (nan.all(axis=2) == step_nan).all():
        i = int(np.flatnonzero((nan.all(axis=2) != step_nan).any(axis=1))[0])
        t = int(np.flatnonzero(nan.all(axis=2)[i] != step_nan[i])[0])
        raise ValueError(
            f"{source}: series {i} has a step ({t}) where only some channels are missing: "
            + _REMEDY)
    lengths = X.shape[1] - np.argmax(~step_nan[:, ::-1], axis=1)
    lengths[step_nan.all(axis=1)] = 0
    for i, t in enumerate(lengths):
        if t == 0:
            raise ValueError(f"{source}: series {i} is empty (all values are missing)")
        if missing == "raise" and step_nan[i, :t].any():
            raise ValueError(
                f"{source}: series {i} has missing values inside the series (NaN before "
                "its last value; trailing NaN is padding): " + _REMEDY)
        if missing == "interpolate" and nan[i, :t].any():
            try:
                X[i, :t] = interpolate_steps(X[i, :t])
            except ValueError as exc:  # a channel without any value
                raise ValueError(f"{source}: series {i}: {exc}") from None
    return lengths


def _to_layout(X, lengths, variable):
    """NaN-padded array -> the package layout (2-D/3-D array or list of arrays)."""
    if not variable:
        return np.ascontiguousarray(X[:, : int(lengths[0])])
    return [np.ascontiguousarray(X[i, : int(t)]) for i, t in enumerate(lengths)]
