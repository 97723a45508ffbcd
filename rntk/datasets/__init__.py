"""Time series classification datasets: the UCR / UEA archives and small bundled ones.

:func:`load_ucr` reads any folder in the UCR 2018 ``tsv`` layout or the sktime / aeon
``.ts`` layout, and falls back to five small datasets shipped with the package
(Coffee, ECG200, GunPoint, PickupGestureWiimoteZ, Trace; Dau et al., "The UCR time
series archive", 2019); any other dataset of the archives is downloaded by name into
a user cache folder (:func:`fetch_ucr`, called by :func:`load_ucr`). :func:`list_ucr`
lists what is available, with sizes; :func:`find_ucr` names the files a dataset is
read from; :func:`load_ts` and :func:`read_tsv` read single files. :func:`load_tser`
reads the extrinsic regression archive's datasets, one of which (Covid3Month) is bundled.

The modules, bottom-up: ``_base`` (the folder layout, text lines, labels, padded arrays
to the package's layouts), ``_tsv`` and ``_ts`` (the two file formats), ``_download``
(the cache and the archive's site), ``_ucr`` (the lookup, :func:`load_ucr`,
:func:`list_ucr`).
"""

from ._download import UCR_URL, DownloadError, fetch_ucr
from ._ts import load_ts
from ._tser import load_tser
from ._tsv import read_tsv
from ._ucr import BUNDLED_DATASETS, find_ucr, list_ucr, load_ucr

__all__ = [
    "load_ucr", "load_tser", "list_ucr", "find_ucr", "load_ts", "read_tsv", "fetch_ucr",
    "DownloadError", "BUNDLED_DATASETS", "UCR_URL",
]
