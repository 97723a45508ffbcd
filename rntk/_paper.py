"""Numbers taken from the RNTK paper: Table 2 accuracies and the Appendix A grids.

Source: S. Alemohammad, Z. Wang, R. Balestriero and R. Baraniuk, "The Recurrent
Neural Tangent Kernel", ICLR 2021 (arXiv:2006.10246), Appendix A.1 (protocol and
hyperparameter grids, Table 2: test accuracy of a C-SVM on the RNTK over UCR
datasets) and Appendix A.2 (ridge grid of the regression experiments).

Only the datasets of Table 2 that are small enough to ship or to fetch quickly are
listed; the values are the paper's, in percent, and are compared against, never
tuned to.
"""

import math

__all__ = ["CITATION", "PAPER_ACCURACY", "PAPER_GRID", "PAPER_C", "PAPER_ALPHA",
           "paper_accuracy"]

CITATION = (
    "S. Alemohammad, Z. Wang, R. Balestriero, R. Baraniuk. The Recurrent Neural "
    "Tangent Kernel. ICLR 2021 (arXiv:2006.10246), Appendix A, Table 2."
)

#: RNTK test accuracy (%) of Table 2, for UCR datasets of the 2018 archive.
PAPER_ACCURACY = {
    "Adiac": 76.63,
    "ArrowHead": 80.57,
    "Beef": 90.0,
    "Car": 83.33,
    "Coffee": 100.0,
    "DistalPhalanxTW": 66.19,
    "ECG200": 93.0,
    "Earthquakes": 74.82,
    "Fish": 90.29,
    "GunPoint": 98.0,
    "GunPointAgeSpan": 96.52,
    "Ham": 70.48,
    "Lightning7": 61.64,
    "Meat": 93.33,
    "MedicalImages": 74.47,
    "MiddlePhalanxTW": 57.79,
    "OliveOil": 90.0,
    "Plane": 98.1,
    "PowerCons": 97.22,
    "SmoothSubspace": 96.0,
    "SwedishLeaf": 90.56,
    "SyntheticControl": 98.67,
    "Trace": 96.0,
    "UMD": 91.67,
}

#: Kernel hyperparameter grid of Appendix A.1 (single-layer ReLU RNTK): 900 settings.
PAPER_GRID = {
    "sigma_w": [1.34, 1.35, 1.36, 1.37, 1.38, 1.39, 1.40, 1.41, 1.42, math.sqrt(2),
                1.43, 1.44, 1.45, 1.46, 1.47],
    "sigma_u": [1.0],
    "sigma_b": [0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0, 2.0],
    "sigma_h": [0.0, 0.01, 0.1, 0.5, 1.0],
}

#: C-SVM costs of Appendix A.1.
PAPER_C = [0.01, 0.1, 1.0, 10.0, 100.0]

#: Ridge values of Appendix A.2 (the paper lists 0.8 twice; it is kept once here).
PAPER_ALPHA = [0.0, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 2.0, 3.0, 4.0,
               5.0, 6.0, 7.0, 8.0, 10.0, 100.0]


def paper_accuracy(name):
    """RNTK test accuracy (%) reported in the paper's Table 2 for a UCR dataset.

    Parameters
    ----------
    name : str
        Dataset name, in the UCR 2018 archive's spelling (e.g. ``"GunPoint"``).

    Returns
    -------
    accuracy : float or None
        The paper's value in percent, or ``None`` if the dataset is not listed here.

    Examples
    --------
    >>> from rntk._paper import paper_accuracy
    >>> paper_accuracy("GunPoint")
    98.0
    """
    return PAPER_ACCURACY.get(name)
