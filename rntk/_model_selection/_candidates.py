"""The candidates of a search: grouped by Gram, checked against the default grid, reported.

What :class:`~rntk.model_selection.BaseKernelSearchCV` does with its candidates around
the scoring loop of :func:`~rntk.model_selection.search_grams`: which candidates share a
Gram, which values of the search its default grid would not use, the default grid's
priors and settings that are one another, and ``cv_results_`` in scikit-learn's layout.
"""

import inspect
import numbers
from collections import OrderedDict

import numpy as np
from scipy.stats import rankdata
from sklearn.model_selection import ParameterGrid

from . import _grids

__all__ = ["check_default_grid_values", "check_some_score", "gated_indices",
           "group_by_kernel", "init_defaults", "prior_indices", "results_dict",
           "same_settings", "same_value"]


def _freeze(value):
    """Hashable stand-in of a parameter value (grouping candidates by kernel)."""
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        return ("array", tuple(np.asarray(value, dtype=float).ravel().tolist()))
    return value


def group_by_kernel(candidates, kernel_keys, defaults=None):
    """Group candidate indices by the values of the parameters that change the Gram.

    Parameters
    ----------
    candidates : list of dict
        The candidates, in grid order.
    kernel_keys : sequence of str
        Parameters that change the Gram.
    defaults : dict, optional
        Values of parameters a candidate does not set.

    Returns
    -------
    groups : list of list of int
        Candidate indices sharing one Gram, in order of first appearance.
    """
    groups = OrderedDict()
    defaults = defaults or {}
    for i, c in enumerate(candidates):
        params = {**defaults, **c}
        key = tuple(_freeze(params.get(k)) for k in kernel_keys)
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def same_value(a, b):
    """Whether two parameter values are the same (floats to rounding, arrays by value)."""
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and not (
            isinstance(a, bool) or isinstance(b, bool)):
        return bool(np.isclose(a, b, rtol=1e-12, atol=0) or (np.isnan(a) and np.isnan(b)))
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        return _freeze(a) == _freeze(b)
    return type(a) is type(b) and a == b


def check_some_score(means, outcome):
    """Refuse to refit when no candidate has a score: say why (overflow, failed fits)."""
    if not np.isnan(means).all():
        return
    if outcome.failures:
        raise ValueError(
            f"No candidate could be refitted: every candidate's score is NaN, "
            f"{len(outcome.failures)} fits failed. First error: {outcome.failures[0]}")
    if outcome.non_finite:
        raise ValueError(
            "No candidate could be refitted: every kernel setting gave a Gram with "
            "non-finite entries (an overflow). Use smaller scales (sigma_w, sigma_u, "
            "sigma_b) or unit-norm series.")
    raise ValueError("No candidate could be refitted: every candidate's score is NaN "
                     "(non-finite scores, e.g. from non-finite targets)")


def init_defaults(est):
    """Return the defaults of the parameters of ``type(est).__init__``, by name."""
    return {k: p.default for k, p in inspect.signature(type(est)).parameters.items()}


def check_default_grid_values(search, base, grid):
    """Refuse a value of the estimator ``base`` that the default grid would not use.

    The default grid ``grid`` of ``search`` sets some parameters in its settings (the
    network's scales, the readout, the series' scaling, the ridges): a value of the
    estimator for one of them, other than its class's default, would reach no setting
    (or only the settings that do not set it) without a word. Only a value that every
    setting uses as it is passes.
    """
    defaults = init_defaults(base)
    settings = grid if isinstance(grid, list) else [grid]
    keys = dict.fromkeys(k for g in settings for k in g)
    refused = []
    for k in keys:
        value = getattr(base, k)
        if same_value(value, defaults.get(k, value)):
            continue
        if not all(k in g and len(g[k]) == 1 and same_value(g[k][0], value)
                   for g in settings):
            refused.append(k)
    if refused:
        said = ", ".join(f"{k}={getattr(base, k)!r}" for k in refused)
        raise ValueError(
            f"{type(search).__name__}(estimator={type(base).__name__}({said})): the "
            f"default grid (param_grid=None) sets {', '.join(refused)} in its "
            f"candidates, so this value would not be used. To search with it, give a "
            f"param_grid that holds it (e.g. param_grid="
            f"{{{', '.join(f'{k!r}: [{getattr(base, k)!r}]' for k in refused)}, ...}}); "
            f"to search the default grid, leave the estimator's {', '.join(refused)} at "
            f"{'its default' if len(refused) == 1 else 'their defaults'}")


def _setting_starts(grid):
    """Index in ``ParameterGrid(grid)`` of each grid entry's first candidate, and the end."""
    return np.cumsum([0] + [len(ParameterGrid(g)) for g in grid]).tolist()


def prior_indices(grid, candidates, names):
    """Return the indices in ``candidates`` (``ParameterGrid(grid)``) of ``DEFAULT_PRIOR``.

    ``names``: the name of each of the grid's settings, in order.
    """
    starts = _setting_starts(grid)
    out = []
    for name, alpha in _grids.DEFAULT_PRIOR:
        if name not in names:  # a setting the grid leaves out: the others stand
            continue
        setting = names.index(name)
        out += [j for j in range(starts[setting], starts[setting + 1])
                if np.isclose(candidates[j].get("alpha", np.nan), alpha, rtol=1e-12)][:1]
    return out or None


def gated_indices(grid, names, gated):
    """Return the indices in ``ParameterGrid(grid)`` of the candidates of ``gated``.

    ``names``: the name of each of the grid's settings, in order; ``gated``: the names
    whose candidates enter the refit only on clear evidence (``DEFAULT_REGRESSION_GATED``).
    """
    starts = _setting_starts(grid)
    return frozenset(j for k, name in enumerate(names) if name in gated
                     for j in range(starts[k], starts[k + 1]))


def same_settings(grid, candidates, groups, names):
    """``same_as`` of ``search_grams`` and the candidate map of ``DEFAULT_SAME``.

    Returns ``({group: group}, {candidate: candidate})`` for the settings of the default
    grid (named ``names``, in order) that are another of its settings on unit-RMS series
    (series of unit RMS, ``_grids.unit_rms``); empty where the grid's groups do not
    line up with its settings, or the other setting is not in the grid.
    """
    starts = _setting_starts(grid)
    group_of = {i: g for g, idxs in enumerate(groups) for i in idxs}
    same_as, redirect = {}, {}
    for name, other in _grids.DEFAULT_SAME.items():
        if other not in names or name not in names:
            continue
        g = group_of[starts[names.index(name)]]
        h = group_of[starts[names.index(other)]]
        a, b = groups[g], groups[h]
        if h >= g or len(a) != len(b) or any(
                candidates[i].get("alpha") != candidates[j].get("alpha")
                for i, j in zip(a, b)):
            continue
        same_as[g] = h
        redirect.update(zip(a, b))
    return same_as, redirect


def results_dict(candidates, scores, kernel_time, fit_time):
    """``cv_results_`` in :class:`~sklearn.model_selection.GridSearchCV`'s layout.

    Parameters
    ----------
    candidates : list of dict
        Parameters of each candidate.
    scores : ndarray of shape (n_candidates, n_splits)
        Test score of each fold.
    kernel_time, fit_time : ndarray of shape (n_candidates,)
        Seconds of the candidate's Gram and of one of its fold fits.

    Returns
    -------
    results : dict
        ``params``, ``param_<name>``, ``split<k>_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score`` (NaN ranked last), ``mean_fit_time``
        and ``kernel_time``.
    """
    n_cand, n_splits = scores.shape
    results = {}
    for name in sorted({k for c in candidates for k in c}):
        col = np.ma.MaskedArray(np.empty(n_cand, dtype=object), mask=True)
        for i, c in enumerate(candidates):
            if name in c:
                col[i] = c[name]
        results[f"param_{name}"] = col
    results["params"] = candidates
    for f in range(n_splits):
        results[f"split{f}_test_score"] = scores[:, f]
    means = np.average(scores, axis=1)
    stds = np.sqrt(np.average((scores - means[:, None]) ** 2, axis=1))
    if np.isnan(means).all():
        ranks = np.ones(n_cand, dtype=np.int32)
    else:
        filled = np.where(np.isnan(means), np.nanmin(means) - 1, means)
        ranks = rankdata(-filled, method="min").astype(np.int32)
    results["mean_test_score"] = means
    results["std_test_score"] = stds
    results["rank_test_score"] = ranks
    results["mean_fit_time"] = fit_time
    results["kernel_time"] = kernel_time
    return results
