"""Reader for the sktime / aeon ``.ts`` time series file format.

A ``.ts`` file is a header of ``@key value`` lines (``#`` starts a comment) followed by
``@data`` and one case per line: the channels separated by ``:``, the values of a
channel separated by ``,``, and the class label (or regression target) as the last
field when the header says ``@classLabel true`` (``@targetLabel true``). Missing
values are written ``?`` (or ``NaN``): trailing ones are padding, those inside a series
are refused unless :func:`load_ts` is asked to keep or interpolate them (``missing=``).
Time-stamped data (``@timeStamps true``) is not supported.
"""

from pathlib import Path

import numpy as np

from .._utils import LOAD_MISSING, check_missing
from ._base import _check_padded, _parse_labels, _text_lines, _to_layout

__all__ = ["load_ts"]

_BOOL = {"true": True, "false": False}


def _header_bool(value, key, path, lineno):
    v = value.split()[0].lower() if value.split() else ""
    if v not in _BOOL:
        raise ValueError(f"{path}, line {lineno}: @{key} must be true or false; got {value!r}")
    return _BOOL[v]


def _parse_channel(text, path, lineno):
    vals = []
    for v in text.split(","):
        v = v.strip()
        if v in ("?", "", "NaN", "nan"):
            vals.append(np.nan)
            continue
        try:
            vals.append(float(v))
        except ValueError:
            raise ValueError(f"{path}, line {lineno}: not a number: {v[:30]!r}") from None
    return vals


def _read_ts_padded(path):
    """Read a ``.ts`` file -> (NaN-padded 2-D or 3-D array, labels or None)."""
    path = Path(path)
    header = {}
    labelled = False
    declared = None  # the class labels listed by @classLabel true, if any
    cases, labels = [], []
    in_data = False
    for lineno, line in _text_lines(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not in_data:
            if not line.startswith("@"):
                raise ValueError(
                    f"{path}, line {lineno}: expected a header line starting with '@' "
                    f"before @data; got {line[:60]!r}"
                )
            key, _, value = line[1:].partition(" ")
            key = key.lower()
            if key == "data":
                in_data = True
            elif key == "timestamps":
                if _header_bool(value, key, path, lineno):
                    raise ValueError(
                        f"{path}: time-stamped .ts data (@timeStamps true) is not supported"
                    )
            elif key in ("classlabel", "targetlabel"):
                flag = _header_bool(value, key, path, lineno)
                labelled = labelled or flag
                if key == "targetlabel":
                    header["regression"] = True
                elif flag and len(value.split()) > 1:
                    declared = value.split()[1:]
            else:
                header[key] = value.strip()
            continue
        fields = line.split(":")
        if labelled:
            if len(fields) < 2:
                raise ValueError(
                    f"{path}, line {lineno}: the header declares class labels but the "
                    "line has no ':label' field"
                )
            label = fields[-1].strip()
            if not label:
                raise ValueError(f"{path}, line {lineno}: the label field is empty")
            if declared is not None and label not in declared:
                raise ValueError(
                    f"{path}, line {lineno}: class label {label!r} is not declared in the "
                    f"@classLabel header ({' '.join(declared)[:200]})"
                )
            labels.append(label)
            fields = fields[:-1]
        chans = [_parse_channel(c, path, lineno) for c in fields]
        if len({len(c) for c in chans}) > 1:
            raise ValueError(
                f"{path}, line {lineno}: the channels of one case have different lengths "
                f"({sorted({len(c) for c in chans})}); every channel of a case must have "
                "the same length"
            )
        if cases and len(chans) != len(cases[0]):
            raise ValueError(
                f"{path}, line {lineno}: {len(chans)} channel(s), but earlier cases have "
                f"{len(cases[0])}"
            )
        cases.append(chans)
    if not in_data:
        raise ValueError(f"{path}: no @data line; not a .ts file")
    if not cases:
        raise ValueError(f"{path}: the file holds no series")
    m = len(cases[0])
    dims = header.get("dimensions", header.get("dimension"))
    if dims is not None and dims.split() and dims.split()[0].isdigit() \
            and int(dims.split()[0]) != m:
        raise ValueError(f"{path}: @dimensions says {dims.split()[0]} but the data has {m}")
    if header.get("univariate", "").lower().startswith("true") and m != 1:
        raise ValueError(f"{path}: @univariate true but the data has {m} channels")
    width = max(len(c[0]) for c in cases)
    X = np.full((len(cases), width, m), np.nan)
    for i, chans in enumerate(cases):
        X[i, : len(chans[0])] = np.array(chans).T
    if m == 1:
        X = X[:, :, 0]
    if not labelled:
        y = None
    elif header.get("regression"):
        try:
            y = np.array([float(v) for v in labels])
        except ValueError:
            raise ValueError(f"{path}: a regression target is not a number") from None
    else:
        y = _parse_labels(labels, path)
    return X, y


def load_ts(path, missing="raise"):
    r"""Read one ``.ts`` file (the sktime / aeon format of the UEA & UCR archives).

    Parameters
    ----------
    path : str or path-like
        The file. Univariate and multivariate, equal- and unequal-length data, with or
        without class labels (or regression targets) are read.
    missing : {"raise", "keep", "interpolate"}, default="raise"
        Missing values (``?`` or NaN inside a series, or at a step of some channels
        only), as in :func:`rntk.datasets.load_ucr`: an error naming the file and
        series, returned as NaN, or filled by linear interpolation in time.

    Returns
    -------
    X : ndarray or list of ndarray
        The series in the package's input layout: ``(n_samples, n_timesteps)`` for
        equal-length univariate data, ``(n_samples, n_timesteps, n_channels)``
        (time-major) for equal-length multivariate data, else a list of arrays of
        shape ``(T_i,)`` or ``(T_i, n_channels)`` with the padding removed.
    y : ndarray of shape (n_samples,) or None
        The class labels (int64, float64 or str, as :func:`read_tsv` gives them), the
        regression targets (float64), or None when the file has none.

    Raises
    ------
    ValueError
        For a malformed file; the message names the file and line.

    Examples
    --------
    >>> import tempfile, os
    >>> from rntk.datasets import load_ts
    >>> text = "@problemName toy\n@classLabel true a b\n@data\n1,2,3:4,5,6:a\n7,8:9,1:b\n"
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "toy.ts")
    ...     with open(p, "w") as f:
    ...         _ = f.write(text)
    ...     X, y = load_ts(p)
    >>> [x.shape for x in X], y.tolist()
    ([(3, 2), (2, 2)], ['a', 'b'])
    """
    check_missing(missing, LOAD_MISSING)
    X, y = _read_ts_padded(path)
    lengths = _check_padded(X, Path(path), missing)
    variable = len(np.unique(lengths)) > 1
    return _to_layout(X, lengths, variable), y
