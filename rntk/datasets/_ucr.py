"""The UCR / UEA time series classification archives by name: lookup, loading, listing.

One lookup (:func:`find_ucr`) serves :func:`load_ucr`, :func:`list_ucr` and the
benchmark: ``data_home`` (else ``$RNTK_DATA``), the bundled datasets, the download cache,
the archive's site. Two on-disk layouts are read (by ``_tsv`` and ``_ts``):

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

import warnings
import zipfile
from pathlib import Path

import numpy as np

from ._base import (
    _DATA_DIR,
    _SPLITS,
    _check_padded,
    _check_split_missing,
    _default_home,
    _missing_part,
    _split_paths,
    _to_layout,
)
from ._download import _find_or_fetch
from ._ts import _read_ts_padded
from ._tsv import read_tsv

__all__ = ["load_ucr", "list_ucr", "find_ucr", "BUNDLED_DATASETS"]

BUNDLED_DATASETS = ("Coffee", "ECG200", "GunPoint", "PickupGestureWiimoteZ", "Trace")


# ----------------------------------------------------------------------------- lookup
def _catalog(home):
    """List the datasets of a folder without reading any: ``(complete, incomplete)``.

    ``complete`` maps each name to its split files (folders holding both a TRAIN and a
    TEST file), ``incomplete`` maps the folders holding only one of them to why they
    cannot be used. Both empty when ``home`` is None or not a folder.
    """
    complete, incomplete = {}, {}
    if home is None or not home.is_dir():
        return complete, incomplete
    for folder in sorted(home.iterdir(), key=lambda p: p.name):
        if not folder.is_dir():
            continue
        files = _split_paths(folder, folder.name)
        if files is None:
            continue
        if all(files.values()):
            complete[folder.name] = files
        else:
            incomplete[folder.name] = _missing_part(folder.name, folder, files)
    return complete, incomplete


def _folder_datasets(home):
    """Names of the datasets found in a folder (UCR layout)."""
    return list(_catalog(home)[0])


def _bundled_names():
    return sorted(p.stem for p in _DATA_DIR.glob("*.npz"))


def _read_split(source, split):
    """Read one split -> (NaN-padded array, labels)."""
    if isinstance(source, Path):  # a bundled .npz
        with np.load(source, allow_pickle=False) as z:
            return z[f"X_{split}"], z[f"y_{split}"]
    path = source[split]
    if path.suffix == ".ts":
        return _read_ts_padded(path)
    return read_tsv(path)


def _resolve(name, data_home, download=False):
    """Find the files (or bundled .npz) of ``name``: data_home, bundled, cache, web."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a dataset name (str); got {name!r}")
    if not name:
        raise ValueError("name must be a dataset name, e.g. 'GunPoint'; got ''")
    home = _default_home(data_home)
    if home is not None and not home.is_dir():  # a typo must not read another copy
        raise ValueError(f"data_home {home} does not exist or is not a folder")
    if home is not None:
        folder = home / name
        files = _split_paths(folder, name) if folder.is_dir() else None
        if files is not None and all(files.values()):
            return files
        if folder.is_dir():
            raise ValueError(
                f"dataset folder {folder} exists but lacks {name}_TRAIN.tsv and "
                f"{name}_TEST.tsv (or {name}_TRAIN.ts and {name}_TEST.ts): "
                + _missing_part(name, folder, files)
            )
    if (_DATA_DIR / f"{name}.npz").is_file():
        return _DATA_DIR / f"{name}.npz"
    where = []
    if home is not None:
        avail = _folder_datasets(home)
        shown = ", ".join(avail[:40]) + (" ..." if len(avail) > 40 else "")
        where.append(f"in {home}: {shown or 'none'}")
    else:
        where.append("(no data_home given and RNTK_DATA is not set)")
    where.append(f"bundled: {', '.join(_bundled_names())}")
    unknown = f"unknown UCR dataset {name!r}. Available " + "; ".join(where)
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
        it (:class:`rntk.SeriesImputer`), as the archive's adjusted versions.

    Returns
    -------
    X, y : tuple
        When ``split`` is ``"train"`` or ``"test"``. ``X`` is a float64 array of shape
        ``(n_samples, n_timesteps)`` for equal-length univariate data, of shape
        ``(n_samples, n_timesteps, n_channels)`` for equal-length multivariate data,
        and a list of arrays of shape ``(T_i,)`` or ``(T_i, n_channels)`` (padding
        removed) when the lengths differ anywhere in the dataset. ``y`` holds the
        archive's labels: int64 when all are integers that int64 holds, else float64
        when all are numbers that float64 keeps apart, else str (the text as written).
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
    _check_split_missing(split, missing)
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


def find_ucr(name, data_home=None, *, download=False):
    """Return the files :func:`load_ucr` reads for a dataset, without reading them.

    The lookup of :func:`load_ucr`: ``data_home`` (else ``$RNTK_DATA``), the bundled
    datasets, the download cache, and the web only with ``download=True``.

    Parameters
    ----------
    name : str
        Dataset name, spelled as in the archive (e.g. ``"GunPoint"``).
    data_home : str or path-like, optional
        Folder holding one sub-folder per dataset. Defaults to ``$RNTK_DATA``.
    download : bool, default=False
        Download a dataset of the archive found nowhere else (as :func:`load_ucr`).

    Returns
    -------
    files : dict
        ``{"train": path, "test": path}`` (:class:`pathlib.Path`): the dataset's TRAIN
        and TEST files (``.tsv`` or ``.ts``). For a bundled dataset both are the
        package's ``NAME.npz``, which holds the two parts.

    Raises
    ------
    ValueError
        For an unknown dataset (the message lists the available ones), or a dataset
        folder that lacks its TRAIN or TEST file (the message names it).

    Examples
    --------
    >>> from rntk.datasets import find_ucr
    >>> sorted(find_ucr("GunPoint")), find_ucr("GunPoint")["train"].name
    (['test', 'train'], 'GunPoint.npz')
    """
    source = _resolve(name, data_home, download=download)
    if isinstance(source, Path):
        return {s: source for s in _SPLITS}
    return dict(source)


def list_ucr(data_home=None, *, sizes=True):
    """List the datasets available, with their sizes.

    A dataset that cannot be read (a corrupt file, a folder lacking its TRAIN or TEST
    file) is skipped with a :class:`UserWarning` naming the file and the problem; the
    others are listed.

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder in the UCR layout. Defaults to ``$RNTK_DATA``; when neither is given
        (or the folder holds no dataset) the bundled datasets are listed.
    sizes : bool, default=True
        Read every dataset for its sizes. With ``False`` nothing is read: each row
        holds the dataset's files and no warning is given.

    Returns
    -------
    rows : list of dict
        One dict per dataset, sorted by name, with keys ``name``, ``n_train``,
        ``n_test``, ``min_length``, ``max_length``, ``n_channels``, ``n_classes``,
        ``variable_length`` (bool) and ``source`` (the folder, or ``"bundled"``).
        With ``sizes=False``: ``name``, ``source``, ``files`` (as :func:`find_ucr`
        gives them, a missing part as None) and ``problem`` (None, or why the dataset
        cannot be used), the folders lacking one of their files included.

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
    complete, incomplete = _catalog(home)
    if complete:
        sources = [(n, complete[n], str(home)) for n in complete]
    else:
        sources = [(n, _DATA_DIR / f"{n}.npz", "bundled") for n in _bundled_names()]
    if not sizes:
        rows = [{"name": n, "source": where, "problem": None,
                 "files": {s: source for s in _SPLITS} if isinstance(source, Path)
                 else dict(source)} for n, source, where in sources]
        rows += [{"name": n, "source": str(home), "problem": why,
                  "files": _split_paths(home / n, n)} for n, why in incomplete.items()]
        return sorted(rows, key=lambda r: r["name"])
    for why in incomplete.values():
        warnings.warn(f"skipping {why}", UserWarning, stacklevel=2)
    rows = []
    for name, source, where in sources:
        try:
            parts = _load_source(source, name, missing="keep")
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            warnings.warn(f"skipping dataset {name}: {exc}", UserWarning, stacklevel=2)
            continue
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
