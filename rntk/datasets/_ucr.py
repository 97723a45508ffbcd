"""Readers for the UCR / UEA time series classification archives.

Two on-disk layouts are read:

* the UCR 2018 ``tsv`` layout: ``NAME/NAME_TRAIN.tsv`` and ``NAME/NAME_TEST.tsv``, one
  series per line, the class label first, then the values separated by tabs;
  variable-length series are padded with trailing ``NaN``;
* the sktime / aeon ``.ts`` layout (``NAME/NAME_TRAIN.ts``, ``NAME/NAME_TEST.ts``),
  univariate or multivariate, see :func:`rntk.datasets.load_ts`.

The returned series use the package's input layouts (those of :func:`rntk.rntk_kernel`):

* equal-length univariate data: a 2-D float64 array ``(n_samples, n_timesteps)``;
* equal-length multivariate data: a 3-D float64 array ``(n_samples, n_timesteps,
  n_channels)`` (time-major);
* variable-length data: a list of float64 arrays of shape ``(T_i,)`` (univariate) or
  ``(T_i, n_channels)`` (multivariate), padding removed.

"Variable length" is decided per dataset (over its train and test parts together), so
both parts of a dataset always come in the same layout.
"""

import os
from pathlib import Path

import numpy as np

from .._utils._sequences import interpolate_steps

__all__ = ["load_ucr", "list_ucr", "read_tsv", "BUNDLED_DATASETS"]

BUNDLED_DATASETS = ("Coffee", "ECG200", "GunPoint", "PickupGestureWiimoteZ", "Trace")
_DATA_DIR = Path(__file__).parent / "data"
_SPLITS = ("train", "test")


# ----------------------------------------------------------------------------- tsv files
def _parse_labels(raw, source):
    """Turn the label strings into an int array when they are all integral, else str."""
    raw = [s.strip() for s in raw]
    try:
        vals = np.array([float(s) for s in raw], dtype=np.float64)
    except ValueError:
        return np.array(raw, dtype=str)
    if np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)):
        return vals.astype(np.int64)
    if not np.all(np.isfinite(vals)):
        raise ValueError(f"{source}: a class label is NaN or infinite")
    return vals


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
        The labels: int64 when all are integral numbers, else float or str.

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
        counts.append((lineno, len(raw.split(sep))))
    if not rows:
        raise ValueError(f"{path}: the file holds no series")
    _check_field_counts(counts, path)
    width = max(len(r) for r in rows)
    X = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        X[i, : len(r)] = r
    return X, _parse_labels(labels, path)


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


def _check_field_counts(counts, path):
    """Every row of a UCR tsv file has the same number of fields (NaN padding)."""
    values, n = np.unique([c for _, c in counts], return_counts=True)
    if len(values) == 1:
        return
    # the most common count (the larger one on a tie: corruption shortens rows)
    expected = int(values[np.flatnonzero(n == n.max())[-1]])
    n_ok = int(n[values == expected][0])
    lineno, got = next((ln, c) for ln, c in counts if c != expected)
    what = "the row is truncated or corrupted" if got < expected else "the row has extra fields"
    raise ValueError(
        f"{path}, line {lineno}: {got} fields, expected {expected} (the label and "
        f"{expected - 1} values, as on {n_ok} other line(s)); {what}. Every row of a UCR tsv "
        "file has the same number of fields: variable-length series are NaN-padded"
    )


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
        raise ValueError(f"{source}: series {i} has a step where only some channels are missing")
    lengths = X.shape[1] - np.argmax(~step_nan[:, ::-1], axis=1)
    lengths[step_nan.all(axis=1)] = 0
    for i, t in enumerate(lengths):
        if t == 0:
            raise ValueError(f"{source}: series {i} is empty (all values are missing)")
        if missing == "raise" and step_nan[i, :t].any():
            raise ValueError(
                f"{source}: series {i} has missing values inside the series (NaN before "
                "its last value; trailing NaN is padding): load it with "
                "missing='interpolate' (linear interpolation, as the archive's adjusted "
                "datasets) or missing='keep' (NaN kept)"
            )
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


# ----------------------------------------------------------------------------- lookup
def _default_home(data_home):
    if data_home is not None:
        return Path(os.fspath(data_home)).expanduser()
    env = os.environ.get("RNTK_DATA")
    if env:
        return Path(env).expanduser()
    return None


def _split_files(folder, name):
    """Return {'train': path, 'test': path} for a dataset folder, or None."""
    for ext in (".tsv", ".ts"):
        files = {s: folder / f"{name}_{s.upper()}{ext}" for s in _SPLITS}
        if all(p.is_file() for p in files.values()):
            return files
    return None


def _folder_datasets(home):
    """Names of the datasets found in a folder (UCR layout)."""
    if home is None or not home.is_dir():
        return []
    return sorted(
        p.name for p in home.iterdir() if p.is_dir() and _split_files(p, p.name) is not None
    )


def _bundled_names():
    return sorted(p.stem for p in _DATA_DIR.glob("*.npz"))


def _read_split(source, split):
    """Read one split -> (NaN-padded array, labels)."""
    if isinstance(source, Path):  # a bundled .npz
        with np.load(source, allow_pickle=False) as z:
            return z[f"X_{split}"], z[f"y_{split}"]
    path = source[split]
    if path.suffix == ".ts":
        from ._ts import _read_ts_padded

        return _read_ts_padded(path)
    return read_tsv(path)


def _resolve(name, data_home, download=False):
    """Find the files (or bundled .npz) of ``name``: data_home, bundled, cache, web."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty dataset name (str); got {name!r}")
    home = _default_home(data_home)
    if home is not None:
        folder = home / name
        files = _split_files(folder, name) if folder.is_dir() else None
        if files is not None:
            return files
        if folder.is_dir():
            raise ValueError(
                f"dataset folder {folder} exists but lacks {name}_TRAIN.tsv and "
                f"{name}_TEST.tsv (or {name}_TRAIN.ts and {name}_TEST.ts)"
            )
    if (_DATA_DIR / f"{name}.npz").is_file():
        return _DATA_DIR / f"{name}.npz"
    where = []
    if home is not None:
        if not home.is_dir():
            where.append(f"data_home {home} does not exist or is not a folder")
        else:
            avail = _folder_datasets(home)
            shown = ", ".join(avail[:40]) + (" ..." if len(avail) > 40 else "")
            where.append(f"in {home}: {shown or 'none'}")
    else:
        where.append("(no data_home given and RNTK_DATA is not set)")
    where.append(f"bundled: {', '.join(_bundled_names())}")
    unknown = f"unknown UCR dataset {name!r}. Available " + "; ".join(where)
    from ._download import _find_or_fetch

    return _find_or_fetch(name, download, unknown)


def load_ucr(name, split=None, data_home=None, download=True, missing="raise"):
    """Load a dataset of the UCR (or UEA) archive, downloading it if needed.

    Looks for ``NAME/NAME_TRAIN.tsv`` and ``NAME/NAME_TEST.tsv`` (the UCR 2018 layout,
    label first, tab-separated, trailing ``NaN`` padding) or the ``.ts`` files of the
    same names under ``data_home``, else under the folder named by the environment
    variable ``RNTK_DATA``, else among the small datasets bundled with the package
    (``Coffee``, ``ECG200``, ``GunPoint``, ``PickupGestureWiimoteZ``, ``Trace``), else
    in the download cache (``$RNTK_CACHE``, else ``~/.cache/rntk/ucr``). A dataset of
    the archive found nowhere is downloaded into the cache once (see
    :func:`fetch_ucr`) from ``https://www.timeseriesclassification.com/aeon-toolkit``
    (or ``$RNTK_UCR_URL``).

    Parameters
    ----------
    name : str
        Dataset name, spelled as in the archive (e.g. ``"GunPoint"``).
    split : {"train", "test"} or None, default=None
        Which part to return; ``None`` returns both.
    data_home : str or path-like, optional
        Folder holding one sub-folder per dataset. Defaults to ``$RNTK_DATA``.
    download : bool, default=True
        Download a dataset of the archive that is found neither in ``data_home``, among
        the bundled ones nor in the cache. With ``False`` nothing is downloaded (an
        already downloaded dataset is still read from the cache).
    missing : {"raise", "keep", "interpolate"}, default="raise"
        Missing values, NaN inside a series (before its last value; trailing NaN is
        padding, the end of a shorter series), as in ``DodgerLoopWeekend``:
        ``"raise"``, an error naming the file and series; ``"keep"``, returned as NaN
        (the estimators' ``missing="interpolate"`` fills them); ``"interpolate"``,
        filled by linear interpolation in time, the first (last) value before (after)
        it (:func:`rntk.interpolate_missing`), as the archive's adjusted versions.

    Returns
    -------
    X, y : tuple
        When ``split`` is ``"train"`` or ``"test"``. ``X`` is a float64 array of shape
        ``(n_samples, n_timesteps)`` for equal-length univariate data, of shape
        ``(n_samples, n_timesteps, n_channels)`` for equal-length multivariate data,
        and a list of arrays of shape ``(T_i,)`` or ``(T_i, n_channels)`` (padding
        removed) when the lengths differ anywhere in the dataset. ``y`` holds the
        archive's labels, as int64 when they are integral numbers, else float or str.
    X_train, y_train, X_test, y_test : tuple
        When ``split`` is None, the two parts in this order.

    Raises
    ------
    ValueError
        For an unknown dataset (the message lists the available ones; no network access
        for a name not in the archive's list), a bad split, or a file that cannot be
        read (the message names the file and line).
    DownloadError
        An :class:`OSError` and a :class:`ValueError`: the download failed (offline,
        HTTP error, timeout) or gave no valid dataset; the message names the URL.

    Examples
    --------
    >>> from rntk.datasets import load_ucr
    >>> X_train, y_train, X_test, y_test = load_ucr("GunPoint")
    >>> X_train.shape, X_test.shape
    ((50, 150), (150, 150))
    >>> X, y = load_ucr("PickupGestureWiimoteZ", split="train")
    >>> type(X).__name__, len(X), sorted({len(x) for x in X})[:3]
    ('list', 50, [29, 36, 50])
    """
    if split is not None and split not in _SPLITS:
        raise ValueError(f"split must be 'train', 'test' or None; got {split!r}")
    if missing not in ("raise", "keep", "interpolate"):
        raise ValueError(f"missing must be 'raise', 'keep' or 'interpolate'; got {missing!r}")
    out = _load_source(_resolve(name, data_home, download=download), name, missing)
    if split is not None:
        return out[split]
    return out["train"] + out["test"]


def _load_source(source, name, missing="raise"):
    """Read both parts of a resolved dataset -> {'train': (X, y), 'test': (X, y)}."""
    parts = {}
    for s in _SPLITS:
        X, y = _read_split(source, s)
        src = source[s] if isinstance(source, dict) else f"{name} ({s})"
        X = np.array(X, dtype=np.float64) if missing == "interpolate" else X
        lengths = _check_padded(X, src, missing)
        if y is None:
            raise ValueError(f"{src}: the file has no class labels")
        if len(y) != X.shape[0]:
            raise ValueError(f"{src}: {X.shape[0]} series but {len(y)} labels")
        parts[s] = (X, y, lengths)
    variable = len(np.unique(np.concatenate([p[2] for p in parts.values()]))) > 1
    return {s: (_to_layout(X, lengths, variable), y) for s, (X, y, lengths) in parts.items()}


def list_ucr(data_home=None):
    """List the datasets available, with their sizes.

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder in the UCR layout. Defaults to ``$RNTK_DATA``; when neither is given
        (or the folder holds no dataset) the bundled datasets are listed.

    Returns
    -------
    rows : list of dict
        One dict per dataset, sorted by name, with keys ``name``, ``n_train``,
        ``n_test``, ``min_length``, ``max_length``, ``n_channels``, ``n_classes``,
        ``variable_length`` (bool) and ``source`` (the folder, or ``"bundled"``).

    Examples
    --------
    >>> from rntk.datasets import list_ucr
    >>> rows = list_ucr()
    >>> [(r["name"], r["n_train"], r["n_test"], r["max_length"]) for r in rows][:2]
    [('Coffee', 28, 28, 286), ('ECG200', 100, 100, 96)]
    """
    home = _default_home(data_home)
    if home is not None and not home.is_dir():
        raise ValueError(f"data_home {home} does not exist or is not a folder")
    names = _folder_datasets(home)
    if names:
        sources = [(n, _split_files(home / n, n), str(home)) for n in names]
    else:
        sources = [(n, _DATA_DIR / f"{n}.npz", "bundled") for n in _bundled_names()]
    rows = []
    for name, source, where in sources:
        parts = _load_source(source, name, missing="keep")
        seqs = [x for s in _SPLITS for x in parts[s][0]]
        lens = np.array([len(x) for x in seqs])
        labels = np.concatenate([parts[s][1].astype(str) for s in _SPLITS])
        rows.append({
            "name": name,
            "n_train": len(parts["train"][1]),
            "n_test": len(parts["test"][1]),
            "min_length": int(lens.min()),
            "max_length": int(lens.max()),
            "n_channels": 1 if np.ndim(seqs[0]) == 1 else int(np.shape(seqs[0])[1]),
            "n_classes": len(np.unique(labels)),
            "variable_length": bool(lens.min() != lens.max()),
            "source": where,
        })
    return rows
