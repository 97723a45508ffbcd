"""Published results: the RNTK paper's Table 2, shipped with the package.

Source: S. Alemohammad, Z. Wang, R. Balestriero and R. Baraniuk, "The Recurrent
Neural Tangent Kernel", ICLR 2021 (arXiv:2006.10246), Appendix A, Table 2: test
accuracy (%) of seven methods on 56 UCR datasets (names in the 2018 archive's
spelling). The values are compared against, never tuned to.
"""

import csv
from functools import lru_cache
from importlib import resources

__all__ = ["CITATION", "PAPER_METHODS", "load_paper_table", "paper_accuracy"]

CITATION = (
    "S. Alemohammad, Z. Wang, R. Balestriero, R. Baraniuk. The Recurrent Neural "
    "Tangent Kernel. ICLR 2021 (arXiv:2006.10246), Appendix A, Table 2."
)

#: The columns of Table 2.
PAPER_METHODS = ("RNTK", "NTK", "RBF", "POLY", "GaussianRNN", "IdentityRNN", "GRU")


def _read(f):
    table = {}
    for row in csv.DictReader(f):
        name = row.pop("dataset")
        table[name] = {k: float(v) for k, v in row.items() if v not in ("", None)}
    return table


@lru_cache(maxsize=1)
def _shipped():
    with resources.files(__package__).joinpath("data", "rntk_paper_table2.csv").open(
            "r", encoding="utf-8", newline="") as f:
        return _read(f)


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
