"""Reader of the UCR 2018 ``.tsv`` files: one series per line, the label first."""

from pathlib import Path

import numpy as np

from ._base import _parse_labels, _text_lines

__all__ = ["read_tsv"]


def read_tsv(path):
    r"""Read one UCR 2018 ``.tsv`` file.

    Parameters
    ----------
    path : str or path-like
        The file: one series per line, label first, values separated by tabs (commas
        are accepted too), trailing ``NaN`` as padding.

    Returns
    -------
    X : ndarray of shape (n_samples, max_length)
        The values, NaN-padded at the end, exactly as written in the file.
    y : ndarray of shape (n_samples,)
        The labels: int64 when all are integers that int64 holds, else float64 when all
        are numbers that float64 keeps apart, else str (the text as written).

    Examples
    --------
    >>> import os, tempfile
    >>> from rntk.datasets import read_tsv
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "Toy_TRAIN.tsv")
    ...     with open(p, "w") as f:
    ...         _ = f.write("1\t0.5\t-1.25\t2.0\n2\t1.0\t3.5\tNaN\n")
    ...     X, y = read_tsv(p)
    >>> X.tolist(), y.tolist()
    ([[0.5, -1.25, 2.0], [1.0, 3.5, nan]], [1, 2])
    """
    path = Path(path)
    rows, labels, counts = [], [], []
    for lineno, line in _text_lines(path):
        raw = line.rstrip("\r\n")
        if not raw.strip() and "\t" not in raw:
            continue  # a blank line
        sep = "\t" if "\t" in raw else ","
        # trailing blanks (and tabs) are not values, as before; leading tabs are kept
        # so that an empty label is seen as one
        fields = raw.rstrip().split(sep)
        if len(fields) < 2:
            raise ValueError(
                f"{path}, line {lineno}: expected a label followed by at least one "
                f"value separated by tabs; got {raw[:60]!r}"
            )
        if not fields[0].strip():
            raise ValueError(
                f"{path}, line {lineno}: the class label (the first field) is empty; "
                f"got {raw[:60]!r}"
            )
        try:
            vals = np.array([float(v) if v.strip() else np.nan for v in fields[1:]])
        except ValueError as exc:
            raise ValueError(f"{path}, line {lineno}: not a number ({exc})") from None
        labels.append(fields[0])
        rows.append(vals)
        # the fields up to the last value, and all of them: trailing empty fields are
        # padding or nothing (a tab at the end of the row)
        counts.append((lineno, len(fields), len(raw.split(sep))))
    if not rows:
        raise ValueError(f"{path}: the file holds no series")
    _check_field_counts(counts, path)
    width = max(len(r) for r in rows)
    X = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        X[i, : len(r)] = r
    return X, _parse_labels(labels, path)


def _check_field_counts(counts, path):
    """Every row of a UCR tsv file has the same number of fields (NaN padding).

    ``counts`` holds ``(lineno, lo, hi)`` per row: ``lo`` fields up to its last value,
    ``hi`` fields in all. Trailing empty fields may be padding or nothing (a tab ending
    the row), so a row fits any count in ``[lo, hi]``, counted as its values are parsed.
    """
    lo = np.array([c[1] for c in counts])
    hi = np.array([c[2] for c in counts])
    # how many rows fit each count (rows are intervals [lo, hi])
    fits = np.cumsum(np.bincount(lo, minlength=hi.max() + 2)
                     - np.bincount(hi + 1, minlength=hi.max() + 2))
    if fits.max() == len(counts):
        return
    # the count most rows fit (the larger one on a tie: corruption shortens rows)
    expected = int(np.flatnonzero(fits == fits.max())[-1])
    n_ok = int(fits[expected])
    lineno, got = next((ln, h if h < expected else lw) for ln, lw, h in counts
                       if not lw <= expected <= h)
    what = "the row is truncated or corrupted" if got < expected else "the row has extra fields"
    raise ValueError(
        f"{path}, line {lineno}: {got} fields, expected {expected} (the label and "
        f"{expected - 1} values, as on {n_ok} other line(s)); {what}. Every row of a UCR tsv "
        "file has the same number of fields: variable-length series are NaN-padded"
    )
