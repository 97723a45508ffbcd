"""Published results shipped with the package: the RNTK paper's Table 2 and the bake off redux.

``"rntk_paper"``
    S. Alemohammad, Z. Wang, R. Balestriero and R. Baraniuk, "The Recurrent Neural
    Tangent Kernel", ICLR 2021 (arXiv:2006.10246), Appendix A, Table 2: test accuracy
    (%) of seven methods on 56 UCR datasets (names in the 2018 archive's spelling).
``"bakeoff_redux"``
    M. Middlehurst, P. Schäfer and A. Bagnall, "Bake off redux: a review and
    experimental evaluation of recent time series classification algorithms", Data
    Mining and Knowledge Discovery, 2024 (arXiv:2304.13029): test accuracy (%) on the
    default train/test split of 112 UCR datasets (the 128 of the 2018 archive minus
    the variable-length and missing-value ones and Fungi) of the state of the art:
    HIVE-COTE 2, MultiRocket-Hydra, MultiRocket, Hydra, InceptionTime, MiniRocket,
    ROCKET and 1-NN DTW (full window), as published with the tsml-eval repository
    (``tsml_eval/publications/y2023/tsc_bakeoff/results``, resample 0, which is the
    default split). Single runs: expect a few points of noise on small datasets.

The values are compared against, never tuned to.
"""

import csv
from functools import lru_cache
from importlib import resources

__all__ = ["BAKEOFF_CITATION", "BAKEOFF_METHODS", "CITATION", "PAPER_METHODS",
           "PUBLISHED_SOURCES", "load_paper_table", "load_published_results",
           "paper_accuracy"]

CITATION = (
    "S. Alemohammad, Z. Wang, R. Balestriero, R. Baraniuk. The Recurrent Neural "
    "Tangent Kernel. ICLR 2021 (arXiv:2006.10246), Appendix A, Table 2."
)

#: The columns of Table 2.
PAPER_METHODS = ("RNTK", "NTK", "RBF", "POLY", "GaussianRNN", "IdentityRNN", "GRU")

BAKEOFF_CITATION = (
    "M. Middlehurst, P. Schäfer, A. Bagnall. Bake off redux: a review and experimental "
    "evaluation of recent time series classification algorithms. Data Mining and "
    "Knowledge Discovery, 2024 (arXiv:2304.13029); tsml-eval results, resample 0 "
    "(the default train/test split)."
)

#: The columns of the bake off redux table: column name -> the method's usual name.
BAKEOFF_METHODS = {
    "hc2": "HC2", "mr_hydra": "MR-Hydra", "multirocket": "MultiRocket", "hydra": "Hydra",
    "inceptiontime": "InceptionTime", "minirocket": "MiniRocket", "rocket": "ROCKET",
    "dtw_1nn": "1NN-DTW",
}

#: The published tables shipped with the package: name -> (file, citation).
PUBLISHED_SOURCES = {
    "rntk_paper": ("rntk_paper_table2.csv", CITATION),
    "bakeoff_redux": ("bakeoff_redux.csv", BAKEOFF_CITATION),
}


def _read(f):
    table = {}
    for row in csv.DictReader(f):
        name = row.pop("dataset")
        table[name] = {k: float(v) for k, v in row.items() if v not in ("", None)}
    return table


@lru_cache(maxsize=None)
def _shipped(source="rntk_paper"):
    with resources.files(__package__).joinpath("data", PUBLISHED_SOURCES[source][0]).open(
            "r", encoding="utf-8", newline="") as f:
        return _read(f)


def load_published_results(source="bakeoff_redux"):
    """Read a published table of UCR test accuracies shipped with the package.

    Parameters
    ----------
    source : {"bakeoff_redux", "rntk_paper"}, default="bakeoff_redux"
        ``"bakeoff_redux"``: the state of the art on the default splits of 112 UCR
        datasets, from Middlehurst, Schäfer and Bagnall, DMKD 2024
        (:data:`BAKEOFF_CITATION`; columns :data:`BAKEOFF_METHODS`).
        ``"rntk_paper"``: the RNTK paper's Table 2 (:data:`CITATION`; columns
        :data:`PAPER_METHODS`), as :func:`load_paper_table` gives it.

    Returns
    -------
    table : dict
        ``{dataset: {method: test accuracy in %}}``, datasets in the UCR 2018
        archive's spelling.

    Examples
    --------
    >>> from rntk.benchmarking import load_published_results
    >>> table = load_published_results("bakeoff_redux")
    >>> len(table), sorted(table["GunPoint"])[:3]
    (112, ['dtw_1nn', 'hc2', 'hydra'])
    >>> table["Coffee"]["hc2"]
    100.0
    """
    if source not in PUBLISHED_SOURCES:
        raise ValueError(f"source must be one of {', '.join(map(repr, PUBLISHED_SOURCES))}; "
                         f"got {source!r}")
    return {k: dict(v) for k, v in _shipped(source).items()}


def load_paper_table(path=None):
    """Read the paper's Table 2 (or a CSV of the same layout).

    Parameters
    ----------
    path : str or path-like, optional
        A CSV with a ``dataset`` column and one column per method. ``None`` reads
        the copy shipped with the package.

    Returns
    -------
    table : dict
        ``{dataset: {method: test accuracy in %}}``.

    Examples
    --------
    >>> from rntk.benchmarking import load_paper_table
    >>> table = load_paper_table()
    >>> len(table), table["GunPoint"]["RNTK"]
    (56, 98.0)
    """
    if path is None:
        return {k: dict(v) for k, v in _shipped().items()}
    with open(path, newline="", encoding="utf-8") as f:
        return _read(f)


def paper_accuracy(name, method="RNTK"):
    """Test accuracy (%) the paper's Table 2 reports for a UCR dataset.

    Parameters
    ----------
    name : str
        Dataset name, in the UCR 2018 archive's spelling (e.g. ``"GunPoint"``).
    method : str, default="RNTK"
        A column of Table 2 (see :data:`PAPER_METHODS`).

    Returns
    -------
    accuracy : float or None
        The paper's value in percent, or ``None`` if the dataset is not listed.

    Examples
    --------
    >>> from rntk.benchmarking import paper_accuracy
    >>> paper_accuracy("GunPoint")
    98.0
    """
    return _shipped().get(name, {}).get(method)
