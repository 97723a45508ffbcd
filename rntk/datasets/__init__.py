"""Time series classification datasets: the UCR / UEA archives and small bundled ones.

:func:`load_ucr` reads any folder in the UCR 2018 ``tsv`` layout or the sktime / aeon
``.ts`` layout, and falls back to five small datasets shipped with the package
(Coffee, ECG200, GunPoint, PickupGestureWiimoteZ, Trace; Dau et al., "The UCR time
series archive", 2019); any other dataset of the archives is downloaded by name into
a user cache folder (:func:`fetch_ucr`, called by :func:`load_ucr`). :func:`list_ucr`
lists what is available, with sizes; :func:`load_ts` and :func:`read_tsv` read single
files.
"""

from ._download import UCR_URL, DownloadError, fetch_ucr
from ._ts import load_ts
from ._ucr import BUNDLED_DATASETS, list_ucr, load_ucr, read_tsv

__all__ = [
    "load_ucr", "list_ucr", "load_ts", "read_tsv", "fetch_ucr", "DownloadError",
    "BUNDLED_DATASETS", "UCR_URL",
]
