"""The UCR benchmark's data: which datasets, their fingerprints, the loaded series, the folds.

Every lookup is :mod:`rntk.datasets`' (:func:`~rntk.datasets.list_ucr`,
:func:`~rntk.datasets.find_ucr`, :func:`~rntk.datasets.load_ucr`): the benchmark reads
the files the loader reads.
"""

import hashlib
import os
import warnings
from pathlib import Path

import numpy as np

from .._utils import as_sequences, flatten_padded, unit_norm
from ..datasets import find_ucr, list_ucr, load_ucr

__all__ = ["Dataset", "catalog", "dataset_files", "data_fingerprint", "folds"]


def _check_home(data_home):
    """Refuse a ``data_home`` / ``$RNTK_DATA`` that is not a folder, naming where it came from."""
    if data_home is not None:
        home, what = Path(os.fspath(data_home)).expanduser(), "--data-home"
    elif os.environ.get("RNTK_DATA"):
        home, what = Path(os.environ["RNTK_DATA"]).expanduser(), "RNTK_DATA"
    else:
        return
    if not home.is_dir():
        raise ValueError(f"data folder {home} ({what}) does not exist or is not a folder")


def catalog(data_home):
    """List the datasets available without reading any of them.

    Returns ``(available, incomplete)``: ``available`` maps each name to its files (the
    datasets :func:`rntk.datasets.list_ucr` lists: the folders of ``data_home`` /
    ``$RNTK_DATA`` holding both a TRAIN and a TEST file, else the bundled ones) and
    ``incomplete`` maps the folders that lack one of the two files to why.
    """
    _check_home(data_home)
    available, incomplete = {}, {}
    for row in list_ucr(data_home, sizes=False):
        if row["problem"] is None:
            available[row["name"]] = row["files"]
        else:
            incomplete[row["name"]] = row["problem"]
    return available, incomplete


def dataset_files(name, data_home):
    """Return the files :func:`rntk.datasets.load_ucr` reads for ``name`` (nothing downloaded)."""
    _check_home(data_home)
    return find_ucr(name, data_home, download=False)


def data_fingerprint(files):
    """SHA-256 of a dataset's files (TRAIN and TEST, or the bundled ``.npz``)."""
    if files["train"] == files["test"]:  # a bundled dataset: one file holds both parts
        files = {"bundled": files["train"]}
    total = hashlib.sha256()
    for part, path in sorted(files.items()):
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        total.update(f"{part}={h.hexdigest()}\n".encode())
    return total.hexdigest()


class Dataset:
    """One dataset: raw and unit-norm series, flattened zero-padded versions."""

    def __init__(self, name, data_home):
        # missing values filled as the archive's adjusted versions: every method sees them
        X_train, y_train, X_test, y_test = load_ucr(name, data_home=data_home,
                                                    download=False, missing="interpolate")
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


def folds(y, n_splits, seed):
    """Shuffled folds of the training set: stratified when every class fills them."""
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
