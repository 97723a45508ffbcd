"""The UCR benchmark's cache: one JSON file per result, checked before it is reused.

``cache/NAME__METHOD__PROTOCOL.json`` holds the latest result of a (dataset, method,
protocol). A result is reused only when it was computed with the same seed, grids and
dataset files (its key, :func:`result_key`). A result that another seed, other grids or
changed files would replace is not lost: it is kept beside, as
``NAME__METHOD__PROTOCOL__KEY.json``, and reused when its key comes back.
"""

import hashlib
import json
import os

from ._data import data_fingerprint, dataset_files
from ._files import atomic_write_text, json_default
from ._protocols import METHODS, grid_hash

__all__ = ["cache_path", "current_kept", "keep_aside", "kept_path", "read_cache",
           "reported_results", "result_key", "stale_reason", "write_cache"]

_NUMBER = (int, float)
#: the keys a cached result needs, with their types (bool is not a number here)
_CACHE_KEYS = {
    "dataset": str, "method": str, "protocol": str, "engine": str, "params": dict,
    "accuracy": _NUMBER, "cv_score": _NUMBER, "gram_time": _NUMBER, "fit_time": _NUMBER,
    "predict_time": _NUMBER, "total_time": _NUMBER, "paper": (*_NUMBER, type(None)),
    "n_settings": int, "n_train": int, "n_test": int, "min_length": int, "max_length": int,
    "n_channels": int, "n_classes": int, "padded": bool,
}


def cache_path(cache, name, method, protocol):
    """Return the file of the latest result of ``(name, method, protocol)``."""
    return cache / f"{name}__{method}__{protocol}.json"


def result_key(seed, key, fingerprint):
    """Return the short key of what determines a result: seed, grids hash, data SHA-256."""
    text = json.dumps([seed, key, fingerprint])
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def kept_path(cache, name, method, protocol, rkey):
    """Return the file of a result kept beside the latest one, by its :func:`result_key`."""
    return cache / f"{name}__{method}__{protocol}__{rkey}.json"


def keep_aside(path, record):
    """Move the cached result ``record`` at ``path`` beside it, under its key.

    Returns the new path. Called before a result with another key replaces it.
    """
    rkey = result_key(record.get("seed"), record.get("grid_hash"), record.get("data_sha256"))
    target = kept_path(path.parent, record["dataset"], record["method"], record["protocol"],
                       rkey)
    os.replace(path, target)
    return target


def read_cache(path, name, method, protocol):
    """Read a cached result: ``(record, None)``, or ``(None, why it is unusable)``."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return None, f"is not valid JSON ({exc})"
    if not isinstance(record, dict):
        return None, f"holds a JSON {type(record).__name__}, not an object"
    missing = [k for k in _CACHE_KEYS if k not in record]
    if missing:
        return None, f"lacks the key(s) {', '.join(missing)}"
    bad = [k for k, t in _CACHE_KEYS.items() if not isinstance(record[k], t)
           or (t is not bool and isinstance(record[k], bool))]
    if bad:
        return None, f"has a wrong type for {', '.join(bad)}"
    if not 0.0 <= record["accuracy"] <= 1.0:
        return None, f"has an accuracy out of [0, 1] ({record['accuracy']!r})"
    found = (record["dataset"], record["method"], record["protocol"])
    if found != (name, method, protocol):
        return None, f"holds the result of {'/'.join(map(str, found))}"
    return record, None


def stale_reason(record, key, seed, fingerprint):
    """Why a (valid) cached result does not apply to this run, or None when it does."""
    if record.get("grid_hash") != key:
        return "computed with other grids"
    if record.get("seed") != seed:
        return f"computed with seed {record.get('seed')!r}"
    if "data_sha256" not in record:
        return "it has no data fingerprint (written by an older rntk)"
    if record["data_sha256"] != fingerprint:
        return "the dataset's files changed since"
    return None


def write_cache(path, record):
    """Write the result ``record`` to ``path`` atomically, as JSON."""
    atomic_write_text(path, json.dumps(record, indent=1, default=json_default))


def reported_results(cache, protocol, seed, data_home, fingerprints, done, skip):
    """Every valid, current cached result of ``protocol``, beside this invocation's.

    Parameters
    ----------
    cache : Path
        The cache folder.
    protocol : str
        The protocol reported; files of other protocols are not read.
    seed : int
        This invocation's seed (a result computed with another one is left out).
    data_home : path-like or None
        Where the datasets are looked up, to check each result's data fingerprint.
    fingerprints : dict
        ``{dataset: SHA-256 or None}`` already computed (None: unreadable); filled in.
    done : dict
        ``{(dataset, method): row}`` of this invocation; kept as they are.
    skip : set
        ``(dataset, method)`` pairs this invocation handled without a result (failed,
        or left out with a warning): not read again.

    Returns
    -------
    rows : list of dict
        Datasets in name order, methods in :data:`METHODS` order.
    left_out : list of dict
        ``{"file", "why"}`` of the cached results of ``protocol`` not reported.
    """
    found, left_out = dict(done), []
    for path in sorted(cache.glob(f"*__*__{protocol}.json")):
        name, method, _ = path.stem.rsplit("__", 2)
        if (name, method) in found or (name, method) in skip:
            continue
        if method not in METHODS:
            left_out.append({"file": path.name, "why": f"unknown method {method!r}"})
            continue
        record, problem = read_cache(path, name, method, protocol)
        if problem is None:
            fingerprint = _fingerprint_of(name, data_home, fingerprints)
            if fingerprint is None:
                problem = "its dataset is not found or not readable in the data folder in use"
            else:
                key = grid_hash(protocol, method)
                problem = stale_reason(record, key, seed, fingerprint)
                if problem is not None:  # a result of this run's key kept beside it?
                    kept = current_kept(cache, name, method, protocol, seed, key, fingerprint)
                    if kept is not None:
                        record, problem = kept, None
        if problem is None:
            found[(name, method)] = record
        else:
            left_out.append({"file": path.name, "why": problem})
    order = {m: i for i, m in enumerate(METHODS)}
    keys = sorted(found, key=lambda k: (k[0].lower(), k[0], order.get(k[1], len(order))))
    return [found[k] for k in keys], left_out


def _fingerprint_of(name, data_home, fingerprints):
    """Return the data fingerprint of ``name`` (None: not found or unreadable), memoised."""
    if name not in fingerprints:
        try:
            fingerprints[name] = data_fingerprint(dataset_files(name, data_home))
        except (OSError, ValueError):
            fingerprints[name] = None
    return fingerprints[name]


def current_kept(cache, name, method, protocol, seed, key, fingerprint):
    """Return the valid result of this seed, grids and data kept beside, or None."""
    path = kept_path(cache, name, method, protocol, result_key(seed, key, fingerprint))
    if not path.is_file():
        return None
    record, problem = read_cache(path, name, method, protocol)
    if problem is None and stale_reason(record, key, seed, fingerprint) is None:
        return record
    return None

