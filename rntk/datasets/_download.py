"""Download UCR / UEA datasets by name into a user cache folder.

``<base>/<NAME>.zip`` is fetched from the archive's public site (:data:`UCR_URL`, or the
URL in ``$RNTK_UCR_URL``, e.g. a local mirror), checked and unpacked into
``<cache>/NAME/NAME_TRAIN.{tsv,ts}`` and ``<cache>/NAME/NAME_TEST.{tsv,ts}`` -- the UCR
layout that :func:`rntk.datasets.load_ucr` reads. The cache folder is ``$RNTK_CACHE``
when set, else ``$XDG_CACHE_HOME/rntk/ucr`` (``~/.cache/rntk/ucr``).

Integrity: the zip is written to a temporary file in the cache folder, its SHA-256 is
checked when known (``_SHA256``), it must open as a zip and hold the TRAIN and TEST
files of that name (their CRCs are checked on extraction), the files are extracted into
a temporary folder, and only that complete folder is renamed to ``<cache>/NAME``. A
failed or interrupted download leaves nothing that looks like a dataset. Installed
folders and files get the usual mode (the umask's), so a shared cache stays readable;
into an existing ``<cache>/NAME`` that lacks a part only the dataset's two files are
moved, and nothing else there is removed.
"""

import difflib
import hashlib
import http.client
import os
import re
import secrets
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from pathlib import Path

from ._base import _split_files

__all__ = ["fetch_ucr", "DownloadError", "UCR_URL"]

#: Where ``NAME.zip`` is downloaded from (the aeon toolkit's copy of the archive).
UCR_URL = "https://www.timeseriesclassification.com/aeon-toolkit"
#: The archive's list of datasets, named in error messages.
LIST_URL = "https://www.timeseriesclassification.com/dataset.php"
_TIMEOUT = 60.0  # seconds without an answer before a download is given up
_CHUNK = 1 << 16
_EXTS = (".tsv", ".ts")  # the order of preference when a zip holds both
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")

# Known SHA-256 digests of NAME.zip as served at UCR_URL; a download whose digest is
# known must match it. (Empty for now: the zip's structure and CRCs are always checked.)
_SHA256 = {}

# The datasets of the UCR (128 univariate, 2018) and UEA (30 multivariate) archives.
# load_ucr only tries to download these names from the default site (a typo gives the
# "unknown dataset" error without a network access); fetch_ucr takes any name.
_ARCHIVE = frozenset("""
ACSF1 Adiac AllGestureWiimoteX AllGestureWiimoteY AllGestureWiimoteZ ArrowHead BME Beef
BeetleFly BirdChicken CBF Car Chinatown ChlorineConcentration CinCECGTorso Coffee Computers
CricketX CricketY CricketZ Crop DiatomSizeReduction DistalPhalanxOutlineAgeGroup
DistalPhalanxOutlineCorrect DistalPhalanxTW DodgerLoopDay DodgerLoopGame DodgerLoopWeekend
ECG200 ECG5000 ECGFiveDays EOGHorizontalSignal EOGVerticalSignal Earthquakes
ElectricDevices EthanolLevel FaceAll FaceFour FacesUCR FiftyWords Fish FordA FordB
FreezerRegularTrain FreezerSmallTrain Fungi GestureMidAirD1 GestureMidAirD2 GestureMidAirD3
GesturePebbleZ1 GesturePebbleZ2 GunPoint GunPointAgeSpan GunPointMaleVersusFemale
GunPointOldVersusYoung Ham HandOutlines Haptics Herring HouseTwenty InlineSkate
InsectEPGRegularTrain InsectEPGSmallTrain InsectWingbeatSound ItalyPowerDemand
LargeKitchenAppliances Lightning2 Lightning7 Mallat Meat MedicalImages MelbournePedestrian
MiddlePhalanxOutlineAgeGroup MiddlePhalanxOutlineCorrect MiddlePhalanxTW
MixedShapesRegularTrain MixedShapesSmallTrain MoteStrain NonInvasiveFetalECGThorax1
NonInvasiveFetalECGThorax2 OSULeaf OliveOil PLAID PhalangesOutlinesCorrect Phoneme
PickupGestureWiimoteZ PigAirwayPressure PigArtPressure PigCVP Plane PowerCons
ProximalPhalanxOutlineAgeGroup ProximalPhalanxOutlineCorrect ProximalPhalanxTW
RefrigerationDevices Rock ScreenType SemgHandGenderCh2 SemgHandMovementCh2
SemgHandSubjectCh2 ShakeGestureWiimoteZ ShapeletSim ShapesAll SmallKitchenAppliances
SmoothSubspace SonyAIBORobotSurface1 SonyAIBORobotSurface2 StarLightCurves Strawberry
SwedishLeaf Symbols SyntheticControl ToeSegmentation1 ToeSegmentation2 Trace TwoLeadECG
TwoPatterns UMD UWaveGestureLibraryAll UWaveGestureLibraryX UWaveGestureLibraryY
UWaveGestureLibraryZ Wafer Wine WordSynonyms Worms WormsTwoClass Yoga
ArticularyWordRecognition AtrialFibrillation BasicMotions CharacterTrajectories Cricket
DuckDuckGeese ERing EigenWorms Epilepsy EthanolConcentration FaceDetection FingerMovements
HandMovementDirection Handwriting Heartbeat InsectWingbeat JapaneseVowels LSST Libras
MotorImagery NATOPS PEMS-SF PenDigits PhonemeSpectra RacketSports SelfRegulationSCP1
SelfRegulationSCP2 SpokenArabicDigits StandWalkJump UWaveGestureLibrary
""".split())


class DownloadError(OSError, ValueError):
    """A dataset could not be downloaded, or the download is not a valid dataset.

    Both an :class:`OSError` (the network failed: offline, HTTP error, timeout) and a
    :class:`ValueError` (what was served is not the dataset: not a zip, a wrong
    checksum, the TRAIN or TEST file missing), so that code catching either sees it.
    The message names the dataset, the URL and the reason.
    """


# ----------------------------------------------------------------------------- settings
def _cache_dir(cache_dir=None):
    """Return the cache folder: ``cache_dir``, else ``$RNTK_CACHE``, else XDG cache."""
    if cache_dir is not None:
        return Path(os.fspath(cache_dir)).expanduser()
    env = os.environ.get("RNTK_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "rntk" / "ucr"


def _base_url(url=None):
    return (url or os.environ.get("RNTK_UCR_URL") or UCR_URL).rstrip("/")


def _name_problem(name):
    """Why ``name`` cannot be a file name in the cache / on the site, or None."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a non-empty dataset name (str); got {name!r}")
    if _NAME_RE.fullmatch(name) and ".." not in name:
        return None
    return (
        f"{name!r} is not a valid dataset name (1 to 100 letters, digits, '_', '-' or '.', "
        "starting with a letter or digit; no path separators or '..')"
    )


def _suggest(name):
    """' (did you mean ...?)' for names of the archive close to ``name``, else ''."""
    lower = {n.lower(): n for n in _ARCHIVE}
    close = difflib.get_close_matches(name.lower(), sorted(lower), n=3, cutoff=0.75)
    return f" (did you mean {', '.join(lower[c] for c in close)}?)" if close else ""


def _error(name, url, reason):
    return DownloadError(
        f"could not download {name} from {url}: {reason}; check the name (list at "
        f"{LIST_URL}) or your connection, or pass data_home= a folder in the UCR layout"
    )


# ----------------------------------------------------------------------------- lookup
def _cached(name, cache):
    """Return the split files of ``name`` in the cache folder, or None."""
    folder = cache / name
    return _split_files(folder, name) if folder.is_dir() else None


def _find_or_fetch(name, download, unknown):
    """Return the split files of ``name`` from the cache, downloading it if allowed.

    ``unknown`` is the "unknown dataset" message of the local lookup; it starts every
    ValueError raised here for a name that is not downloaded.
    """
    problem = _name_problem(name)
    if problem is not None:
        raise ValueError(f"{unknown}. It cannot be downloaded: {problem}")
    cache = _cache_dir()
    files = _cached(name, cache)
    if files is not None:
        return files
    base = _base_url()
    listed = name in _ARCHIVE or base != UCR_URL
    if not download:
        hint = (
            f"download=True (the default) fetches it from {base}/{name}.zip into {cache}"
            if listed else
            f"it is not a dataset of the UCR/UEA archive{_suggest(name)}"
        )
        raise ValueError(f"{unknown}. Not downloaded: {hint}")
    if not listed:
        raise ValueError(
            f"{unknown}. {name!r} is not a dataset of the UCR/UEA archive{_suggest(name)}; "
            f"see {LIST_URL}. rntk.datasets.fetch_ucr({name!r}) tries to download it anyway"
        )
    return _split_files(_fetch(name, cache, base, _TIMEOUT), name)


def fetch_ucr(name, *, cache_dir=None, url=None, timeout=None):
    """Download a dataset of the UCR / UEA archive into the cache folder.

    Nothing is downloaded when the cache already holds the dataset. The zip is checked
    (SHA-256 when known, zip structure and CRCs, the TRAIN and TEST files present)
    before it is unpacked, and the dataset folder only appears once complete.
    :func:`load_ucr` calls this on its own for datasets found nowhere else.

    Parameters
    ----------
    name : str
        Dataset name, spelled as in the archive (e.g. ``"ECG5000"``); any name is
        tried, not only those of the archive's list.
    cache_dir : str or path-like, optional
        Folder to download into. Defaults to ``$RNTK_CACHE``, else
        ``$XDG_CACHE_HOME/rntk/ucr`` (``~/.cache/rntk/ucr``). Note that
        :func:`load_ucr` only looks in the default one.
    url : str, optional
        Base URL; ``<url>/<name>.zip`` is fetched. Defaults to ``$RNTK_UCR_URL``, else
        :data:`UCR_URL` (``https://www.timeseriesclassification.com/aeon-toolkit``).
    timeout : float, optional
        Seconds without an answer from the server before giving up (default 60).

    Returns
    -------
    folder : pathlib.Path
        ``<cache_dir>/<name>``, holding ``NAME_TRAIN`` and ``NAME_TEST`` (``.tsv`` or
        ``.ts``): a folder in the UCR layout, which ``data_home=folder.parent`` reads.

    Raises
    ------
    DownloadError
        An :class:`OSError` and a :class:`ValueError`: the server cannot be reached,
        answers with an HTTP error or times out, or what it sends is not a zip with the
        dataset's TRAIN and TEST files, or does not match the known checksum. The
        message names the dataset, the URL and the reason.
    ValueError
        For a name with path separators, ``..`` or other characters not found in
        dataset names (before any network access).

    Examples
    --------
    >>> from rntk.datasets import fetch_ucr, load_ucr
    >>> folder = fetch_ucr("ECG5000")  # doctest: +SKIP
    >>> X_train, y_train, X_test, y_test = load_ucr("ECG5000")  # doctest: +SKIP
    """
    problem = _name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    cache = _cache_dir(cache_dir)
    if _cached(name, cache) is not None:
        return cache / name
    return _fetch(name, cache, _base_url(url), _TIMEOUT if timeout is None else timeout)


# ----------------------------------------------------------------------------- download
def _fetch(name, cache, base, timeout):
    """Download, check and unpack ``<base>/<name>.zip`` -> ``<cache>/<name>``."""
    url = f"{base}/{name}.zip"
    cache.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=f".{name}-", suffix=".zip.part", dir=cache)
    tmpdir = None
    try:
        with os.fdopen(fd, "wb") as f:
            digest = _download(url, f, name, timeout)
        known = _SHA256.get(name)
        if known is not None and digest != known.lower():
            raise _error(name, url, f"SHA-256 mismatch (got {digest}, expected {known}): "
                                    "the download is corrupt or the file changed on the server")
        tmpdir = _make_folder(cache, name)
        _extract(part, tmpdir, name, url)
        return _install(tmpdir, cache / name, name)
    finally:
        try:
            os.unlink(part)
        except FileNotFoundError:
            pass
        if tmpdir is not None and tmpdir.exists():
            shutil.rmtree(tmpdir, ignore_errors=True)


def _user_agent():
    from .._version import __version__

    return f"rntk/{__version__} (Python urllib)"


def _reason(exc, timeout):
    """Describe a network error in a few words."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP error {exc.code} ({exc.reason})"
    inner = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(inner, TimeoutError):
        return f"no answer within {timeout:g} s (timed out)"
    if isinstance(inner, ConnectionRefusedError):
        return f"the server refused the connection ({inner.strerror or inner})"
    if isinstance(exc, http.client.IncompleteRead):
        return "the connection was cut during the download"
    return str(inner) or type(inner).__name__


def _download(url, f, name, timeout):
    """Stream ``url`` into the open file ``f``; return the SHA-256 hex digest."""
    sha = hashlib.sha256()
    req = urllib.request.Request(url, headers={"User-Agent": _user_agent()})
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        reason = _reason(exc, timeout)
        if isinstance(exc, urllib.error.HTTPError):
            exc.close()
        raise _error(name, url, reason) from None
    with resp:
        total = 0
        while True:
            try:
                chunk = resp.read(_CHUNK)
            except (OSError, http.client.HTTPException) as exc:
                raise _error(name, url, _reason(exc, timeout)) from None
            if not chunk:
                break
            sha.update(chunk)
            f.write(chunk)  # a local error (disk full) propagates as it is
            total += len(chunk)
        length = resp.headers.get("Content-Length") if resp.headers else None
        if length and length.strip().isdigit() and total != int(length):
            raise _error(name, url, f"incomplete download ({total} of {int(length)} bytes; "
                                    "the connection was cut)")
    return sha.hexdigest()


def _pick_members(zf, name):
    """Find the TRAIN and TEST members of the zip -> (ext, {split: ZipInfo}) or None."""
    by_base = {}
    for info in zf.infolist():
        path = info.filename.replace("\\", "/")
        if info.is_dir() or path.startswith("__MACOSX/"):
            continue
        by_base.setdefault(path.rsplit("/", 1)[-1].lower(), []).append(info)
    for ext in _EXTS:
        found = {s: by_base.get(f"{name}_{s}{ext}".lower()) for s in ("train", "test")}
        if all(found.values()):
            # flat in the zip or in a sub-folder: the shallowest copy
            return ext, {s: min(v, key=lambda i: i.filename.count("/"))
                         for s, v in found.items()}
    return None


def _extract(part, tmpdir, name, url):
    """Check the zip and write its TRAIN and TEST files into ``tmpdir``."""
    try:
        zf = zipfile.ZipFile(part)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError):
        with open(part, "rb") as f:
            head = f.read(512).lstrip().lower()
        what = ("an HTML page (the dataset may not exist under that name)"
                if head.startswith((b"<!doctype", b"<html")) else "corrupt or truncated")
        raise _error(name, url, f"the file is not a zip archive: {what}") from None
    with zf:
        picked = _pick_members(zf, name)
        if picked is None:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
            shown = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
            raise _error(name, url, f"the zip holds no {name}_TRAIN.tsv and {name}_TEST.tsv "
                                    f"(nor .ts) files; it holds: {shown or 'nothing'}")
        ext, members = picked
        for split, info in members.items():
            dest = tmpdir / f"{name}_{split.upper()}{ext}"
            try:
                with zf.open(info) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out, _CHUNK)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError,
                    RuntimeError) as exc:
                raise _error(name, url, f"{info.filename} in the zip cannot be read "
                                        f"({exc})") from None


def _make_folder(cache, name):
    """Create an empty temporary folder in ``cache`` with the umask's mode.

    Not :func:`tempfile.mkdtemp`: its mode 0700 would follow the folder when it is
    renamed into place, and a cache shared by several users would be unreadable to them.
    """
    for _ in range(100):
        path = cache / f".{name}-{secrets.token_hex(6)}.part"
        try:
            path.mkdir(mode=0o777)  # the umask applies, as to any folder a user creates
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"cannot create a temporary folder in {cache}")


def _install(tmpdir, final, name):
    """Install the downloaded files of ``tmpdir`` as ``final`` (the dataset's folder).

    A new folder is renamed into place (atomic on one file system). Into an existing
    folder that lacks a part, only the downloaded TRAIN and TEST files are moved: what
    else the folder holds is kept.
    """
    if final.is_dir() and _split_files(final, name) is not None:
        return final  # another process finished the same download first
    if not final.is_dir():
        if final.exists() or final.is_symlink():
            raise DownloadError(
                f"cannot install {name} as {final}: a file of that name is in the way "
                "(it is not removed); move it away and try again"
            )
        try:
            os.replace(tmpdir, final)
            return final
        except OSError:
            if final.is_dir() and _split_files(final, name) is not None:
                return final  # lost a race with another process: its copy is complete
            if not final.is_dir():
                raise
    # an existing, incomplete folder (not written by this code): add the dataset's files
    for path in sorted(tmpdir.iterdir()):
        os.replace(path, final / path.name)
    return final
