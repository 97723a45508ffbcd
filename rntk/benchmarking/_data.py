"""The UCR benchmark's data: where datasets live, their fingerprints, the folds."""

import hashlib
import os
import warnings
from pathlib import Path

import numpy as np

from .._utils import as_sequences, flatten_padded, unit_norm
from ..datasets import load_ucr

_BUNDLED_DIR = Path(__file__).resolve().parent.parent / "datasets" / "data"
_EXTS = (".tsv", ".ts")
_PARTS = ("train", "test")


def _data_home(data_home):
    """Return the UCR folder in use (``data_home``, else ``$RNTK_DATA``) or None."""
    if data_home is not None:
        home, what = Path(os.fspath(data_home)).expanduser(), "--data-home"
    elif os.environ.get("RNTK_DATA"):
        home, what = Path(os.environ["RNTK_DATA"]).expanduser(), "RNTK_DATA"
    else:
        return None
    if not home.is_dir():
        raise ValueError(f"data folder {home} ({what}) does not exist or is not a folder")
    return home


def _split_paths(folder, name):
    """``{"train": path, "test": path}`` of a dataset folder, a missing part as None.

    None when the folder holds neither part (in ``.tsv`` or ``.ts``). Nothing is read.
    """
    candidates = [{s: folder / f"{name}_{s.upper()}{ext}" for s in _PARTS} for ext in _EXTS]
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
    missing = [s for s in _PARTS if files[s] is None]
    present = next(p for p in files.values() if p is not None)
    want = [f"{name}_{s.upper()}{present.suffix}" for s in missing]
    return (f"dataset {name}: its {' and '.join(s.upper() for s in missing)} file "
            f"{', '.join(want)} is missing from {folder}")


def _catalog(data_home):
    """List the datasets available without reading any of them.

    Returns ``(available, incomplete)``: ``available`` maps each name to its files (the
    folders of ``data_home`` / ``$RNTK_DATA`` holding both a TRAIN and a TEST file; the
    bundled ``.npz`` files when there is no such folder, as :func:`rntk.datasets.list_ucr`)
    and ``incomplete`` maps the folders that lack one of the two files to why.
    """
    home = _data_home(data_home)
    available, incomplete = {}, {}
    if home is not None:
        for folder in sorted(home.iterdir()):
            if not folder.is_dir():
                continue
            files = _split_paths(folder, folder.name)
            if files is None:
                continue
            if all(files.values()):
                available[folder.name] = files
            else:
                incomplete[folder.name] = _missing_part(folder.name, folder, files)
    if not available:
        available = {p.stem: {"bundled": p} for p in sorted(_BUNDLED_DIR.glob("*.npz"))}
    return available, incomplete


def _dataset_files(name, data_home):
    """Return the files :func:`rntk.datasets.load_ucr` reads for ``name`` (same lookup)."""
    home = _data_home(data_home)
    if home is not None and (home / name).is_dir():
        files = _split_paths(home / name, name)
        if files is not None and all(files.values()):
            return files
        raise ValueError(_missing_part(name, home / name, files))
    bundled = _BUNDLED_DIR / f"{name}.npz"
    if bundled.is_file():
        return {"bundled": bundled}
    raise ValueError(f"unknown dataset {name!r}" + (f" (no folder {home / name})"
                                                    if home is not None else ""))


def _fingerprint(files):
    """SHA-256 of a dataset's files (TRAIN and TEST, or the bundled ``.npz``)."""
    total = hashlib.sha256()
    for part, path in sorted(files.items()):
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        total.update(f"{part}={h.hexdigest()}\n".encode())
    return total.hexdigest()


class _Data:
    """One dataset: raw and unit-norm series, flattened zero-padded versions."""

    def __init__(self, name, data_home):
        # missing values filled as the archive's adjusted versions: every method sees them
        X_train, y_train, X_test, y_test = load_ucr(name, data_home=data_home,
                                                    missing="interpolate")
        self.name = name
        self.X_train_raw, self.X_test_raw = X_train, X_test
        self.y_train, self.y_test = np.asarray(y_train), np.asarray(y_test)
        self.train = as_sequences(X_train, "X_train")
        self.test = as_sequences(X_test, "X_test")
        lengths = [len(s) for s in self.train + self.test]
        self.t_max = max(lengths)
        self.variable = min(lengths) != self.t_max
        self.n_channels = self.train[0].shape[1]
        self.train_n = unit_norm(self.train)
        self.test_n = unit_norm(self.test)
        # padding then unit norm = unit norm then padding (zeros do not change the norm)
        self.flat_train = flatten_padded(self.train_n, self.t_max)
        self.flat_test = flatten_padded(self.test_n, self.t_max)

    def info(self):
        lens = [len(s) for s in self.train + self.test]
        return {"n_train": len(self.train), "n_test": len(self.test),
                "min_length": int(min(lens)), "max_length": int(max(lens)),
                "n_channels": int(self.n_channels),
                "n_classes": int(len(np.unique(self.y_train))),
                "variable_length": bool(self.variable)}


def _folds(y, n_splits, seed):
    from sklearn.model_selection import KFold, StratifiedKFold

    n_splits = max(2, min(n_splits, len(y)))
    _, counts = np.unique(y, return_counts=True)
    if counts.max() >= n_splits:
        cv = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    else:
        cv = KFold(n_splits=n_splits, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(cv.split(np.zeros((len(y), 1)), y))
