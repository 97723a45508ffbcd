"""Extrinsic regression datasets (the TSER archive): one bundled, any other from a folder."""

from pathlib import Path

import numpy as np

from ._base import _SPLITS, _check_split_missing
from ._ts import load_ts

__all__ = ["load_tser"]

_DATA_DIR = Path(__file__).resolve().parent / "data" / "tser"


def _bundled():
    return sorted(p.stem for p in _DATA_DIR.glob("*.npz"))


def load_tser(name, split=None, data_home=None, missing="raise"):
    """Load a dataset of the extrinsic regression (TSER) archive.

    Reads ``NAME/NAME_TRAIN.ts`` and ``NAME/NAME_TEST.ts`` under ``data_home`` (the
    archive's layout, as distributed by Tan et al., "Time series extrinsic regression",
    2021), else the small dataset bundled with the package: ``Covid3Month`` (the death
    rate of COVID-19 in a country on 1 April 2020 from its daily confirmed cases over
    the three months before; 140 training and 61 test series of 84 steps). Nothing is
    downloaded.

    Parameters
    ----------
    name : str
        Dataset name, spelled as in the archive (e.g. ``"Covid3Month"``).
    split : {"train", "test"} or None, default=None
        Which part to return; ``None`` returns both.
    data_home : str or path-like, optional
        Folder holding one sub-folder per dataset. Without it, only the bundled dataset
        is found.
    missing : {"raise", "keep", "interpolate"}, default="raise"
        Missing values inside series, as in :func:`load_ts` (the bundled dataset has
        none).

    Returns
    -------
    X, y : tuple
        When ``split`` is ``"train"`` or ``"test"``: the series in the package's input
        layout (as :func:`load_ts` gives them) and the float64 targets.
    X_train, y_train, X_test, y_test : tuple
        When ``split`` is None, the two parts in this order.

    Raises
    ------
    ValueError
        For an unknown dataset (the message names the bundled one and the folder
        searched), a bad split, a file without targets or a malformed file.

    Examples
    --------
    >>> from rntk.datasets import load_tser
    >>> X_train, y_train, X_test, y_test = load_tser("Covid3Month")
    >>> X_train.shape, X_test.shape, y_train.dtype
    ((140, 84), (61, 84), dtype('float64'))
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a dataset name, e.g. 'Covid3Month'; got {name!r}")
    _check_split_missing(split, missing)
    parts = _read(name, data_home, missing)
    for s, (_, y) in parts.items():
        if y is None or not np.issubdtype(np.asarray(y).dtype, np.floating):
            raise ValueError(f"{name} ({s}): the file has no numeric regression targets")
    if split is not None:
        return parts[split]
    return parts["train"] + parts["test"]


def _read(name, data_home, missing):
    """Both parts of ``name``: from ``data_home`` when it has them, else bundled."""
    if data_home is not None:
        home = Path(data_home)
        if not home.is_dir():
            raise ValueError(f"data_home {home} does not exist or is not a folder")
        files = {s: home / name / f"{name}_{s.upper()}.ts" for s in _SPLITS}
        if all(f.is_file() for f in files.values()):
            return {s: load_ts(f, missing=missing) for s, f in files.items()}
    bundled = _DATA_DIR / f"{name}.npz"
    if not bundled.is_file():
        where = f"no {name}/{name}_TRAIN.ts in {data_home}; " if data_home else ""
        raise ValueError(f"unknown TSER dataset {name!r}: {where}bundled: "
                         f"{', '.join(_bundled())} (give data_home, a folder of the "
                         "archive's datasets, for the others)")
    with np.load(bundled, allow_pickle=False) as z:
        return {s: (z[f"X_{s}"], z[f"y_{s}"]) for s in _SPLITS}
