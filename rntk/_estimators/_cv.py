"""The RNTK estimators with fast cross-validated model selection."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import ClassifierMixin, MultiOutputMixin, RegressorMixin, _fit_context, clone
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import Interval

from .._kernels._params import RNTK_PARAM_NAMES
from .._model_selection import BaseKernelSearchCV, SVCFoldScorer, _grids, kernel_ridge_score
from .._model_selection._candidates import init_defaults, same_value
from .._model_selection._features import LARGE_N_CONSTRAINTS
from .._model_selection._screen import SCREEN_CONSTRAINTS
from .._representations import PREPARATION_NAMES, REPRESENTATIONS
from .._utils import DOC, check_int, fill_doc
from .._utils._validation import store_init_params
from ._ridge import KernelRidgeClassifier, KernelRidgeRegressor
from ._rntk import RNTKClassifier, RNTKRegressor

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from typing import Self

    from .._utils._typing import ArrayLike, Sequences

__all__ = ["RNTKClassifierCV", "RNTKRegressorCV"]


def _series_lengths(xs):
    """Lengths of the training series (of a cluster's series in blocks: from their pass)."""
    lengths = getattr(xs, "lengths", None)
    return [len(x) for x in xs] if lengths is None else [int(t) for t in lengths]


def _series_channels(xs):
    """Channels of the training series (of a cluster's series in blocks: from their pass)."""
    channels = getattr(xs, "n_channels", None)
    return xs[0].shape[1] if channels is None else int(channels)


def _ridge_fold_accuracy(K_train, y_train, K_test, y_test, params):
    """Accuracy of the kernel ridge classifier on one fold."""
    clf = KernelRidgeClassifier(alpha=params["alpha"]).fit(K_train, y_train)
    return float(np.mean(clf.predict(K_test) == y_test))


#: What a search sets on its estimator itself: these are the search's parameters.
_SEARCH_OWNED = ("missing", "n_jobs", "precision")


class _RefuseRemoved:
    """Refuse the parameters a search took before 0.4 (its estimator's), with the new way.

    Until 0.4 the searches repeated every parameter of their estimator; they now take
    it whole (``estimator=``), or its values through ``param_grid``. The check runs in
    ``__new__``, so that ``__init__`` keeps its written signature (what scikit-learn,
    ``help`` and static tools read).
    """

    def __new__(cls, *args, **kwargs):
        removed = set(kwargs) - set(cls._get_param_names())
        old = set(cls._estimator_class._get_param_names())
        for name in sorted(removed & old):
            _refuse_removed(cls, name, kwargs[name])
        return super().__new__(cls)


class _KernelSearchCV(_RefuseRemoved, BaseKernelSearchCV):
    """The parameters of both searches: written out once, sklearn style."""

    def __init__(self, param_grid=None, *, estimator=None, protocol="loo", cv=None,
                 scoring=None, n_average=None, large_n="auto", n_components=500,
                 screen="auto", precision="auto", missing="raise", refit=True, n_jobs=None,
                 verbose=0, error_score=np.nan):
        store_init_params(self, locals())


def _refuse_removed(search_class, name, value):
    estimator = search_class._estimator_class.__name__
    raise TypeError(
        f"{search_class.__name__} no longer takes {name!r} (removed in 0.4): the "
        f"parameters of the estimator come with it, estimator={estimator}({name}="
        f"{value!r}), or from the grid, param_grid={{{name!r}: [{value!r}], ...}}")


def search_base(search, estimator_class, models):
    """Return the estimator a search scores: its own, with the protocol's model.

    ``models`` maps each protocol to the model it scores. The estimator's ``model``
    may be its class's default or the protocol's; ``missing``, ``n_jobs`` and
    ``precision`` (the search's) must be its class's defaults. Anything else is
    refused by name.
    """
    base = estimator_class() if search.estimator is None else clone(search.estimator)
    defaults = init_defaults(base)
    model = models[search.protocol]
    if base.model not in (model, defaults["model"]):
        raise ValueError(
            f"estimator has model={base.model!r}, but protocol={search.protocol!r} scores "
            f"and refits model={model!r}; leave the estimator's model at its default, or "
            f"choose the protocol of the model")
    for name in _SEARCH_OWNED:
        if not same_value(getattr(base, name), defaults[name]):
            raise ValueError(
                f"estimator has {name}={getattr(base, name)!r}, which the search sets for "
                f"every candidate: pass {type(search).__name__}({name}="
                f"{getattr(base, name)!r}) instead")
    return base.set_params(model=model, **{k: getattr(search, k) for k in _SEARCH_OWNED})


def _ridge_fold_r2(K_train, y_train, K_test, y_test, params):
    """``R^2`` of the ridge regressor (intercept, relative ridge, clipped) on one fold."""
    reg = KernelRidgeRegressor(alpha=params["alpha"]).fit(K_train, y_train)
    return float(r2_score(y_test, reg.predict(K_test)))


def _n_average(search, default):
    """Members the refit of ``search`` averages: ``n_average``, or its default."""
    if search.n_average is None:
        return default if search.protocol == "loo" and search.param_grid is None else 1
    if search.n_average > 1 and search.protocol != "loo":
        raise ValueError("n_average > 1 needs protocol='loo' (the kernel ridge "
                         f"model); got protocol={search.protocol!r}")
    return search.n_average


def _check_no_representation(search, base):
    """Refuse a representation of the estimator of a default grid that has its own."""
    given = {k: getattr(base, k) for k in REPRESENTATIONS if getattr(base, k) is not None}
    if given:
        said = ", ".join(f"{k}={v!r}" for k, v in given.items())
        raise ValueError(
            f"{said} is set on the estimator of {type(search).__name__} with the default grid "
            "(param_grid=None), which chooses each setting's representation itself: its "
            "spectral and quantile settings read spectra and quantile functions, the "
            f"others the series. To search on {said} alone, give a param_grid (e.g. "
            "param_grid={'alpha': rntk.model_selection.DEFAULT_ALPHA}); to search the "
            "default grid, leave the estimator's " + ", ".join(REPRESENTATIONS) + " at None")


_SEARCH_DOC = """param_grid : dict or list of dict, default=None
    Grid of parameters of ``estimator``, as in
    :class:`~sklearn.model_selection.GridSearchCV`; parameters not in it take the
    estimator's values. ``None`` is the protocol's grid,
    {default}.
    The default grid sets some parameters in its settings; an ``estimator`` whose
    value of one of them is not its default is refused, with the ``param_grid`` that
    asks for it. The others (``n_layers``, ``activation``, ``kind``, ...) are the
    estimator's in every setting.
estimator : {estimator}, default=None
    The estimator whose parameters are searched; ``None``: ``{estimator}()``. Its
    kernel, series and device parameters apply to every candidate that does not
    set them. Its ``model`` is the protocol's (another is refused):
    {models}. Its ``missing``, ``n_jobs`` and ``precision`` are this search's (set
    them here).
protocol : {{"loo", "paper"}}, default="loo"
    ``"loo"``: {loo}, selected by the exact leave-one-out score of every candidate
    (all ridges of a kernel setting from one eigendecomposition of its Gram), or on
    ``cv`` folds when given. ``"paper"``: the RNTK paper's protocol ({paper}).
cv : int, cross-validation generator or iterable, default=None
    Folds, as in GridSearchCV ({folds} for an integer, no shuffling). ``None``:
    exact leave-one-out with ``protocol="loo"``, {paper_cv} folds with
    ``protocol="paper"``.
scoring : str or callable, default=None
    ``None`` uses the estimator's ``score`` ({score}) on a fast path;
    otherwise any scikit-learn scorer, applied to the inner precomputed-kernel
    model on each fold (slower; needs ``cv`` folds)."""

_SEARCH_DOC_TAIL = """precision : {{"float64", "float32", "auto"}}, default="auto"
    Arithmetic of the Numba engine, as in :func:`rntk.rntk_kernel`. ``"auto"``:
    float32 for the mean-readout settings (``readout="mean"``: every setting of the
    default grid), float64 for the last-step ones: as accurate, in about 0.8x the
    Gram time. The ``large_n`` path computes in float64.
{missing}
refit : bool, default=True
    Refit the best candidate on the whole training set (reusing its Gram).
n_jobs : int, default=None
    Numba threads for each kernel evaluation, and threads for the fold fits
    (libsvm and the ridge solves release the GIL); ``None``: the current setting
    (Numba's thread count for the kernels, all cores unless changed by
    ``numba.set_num_threads``; joblib's for the fold fits, one unless set by
    ``joblib.parallel_config``, as in scikit-learn), ``-1``: all cores.
verbose : int, default=0
    ``1``: progress about every 10% of the kernel settings (settings done /
    total, elapsed time, ETA, best score so far); ``2``: after every setting.
error_score : "raise" or float, default=np.nan
    Score of a failed fold fit (a warning is raised), or ``"raise"``.

Attributes
----------
cv_results_ : dict of ndarray
    As GridSearchCV's: ``params``, ``param_<name>``, ``split<k>_test_score``,
    ``mean_test_score``, ``std_test_score``, ``rank_test_score``, plus
    ``mean_fit_time`` (inner fits, per fold) and ``kernel_time`` (the Gram of
    the candidate's kernel setting, shared with the other candidates of it).
best_params_ : dict
    Parameters of the best candidate (the best mean score; between equal scores the
    lower leave-one-out squared error for the ridge classifier, then grid order): its
    values in the grid, as GridSearchCV's. The model scored is the estimator with
    the protocol's ``model`` and these values, ``clone(estimator).set_params(model=
    ..., **best_params_)``; the refitted models themselves are ``best_estimator_``
    (and, with ``n_average > 1``, its ``estimators``).
best_score_ : float
    Its mean cross-validated score (the leave-one-out score, with the exact
    leave-one-out).
best_index_ : int
    Its index in ``cv_results_``.
best_estimator_ : {refitted}
refit_time_ : float
    Seconds spent refitting.
n_splits_ : int
    Number of folds (the number of samples with the exact leave-one-out, whose
    score is stored as ``split0_test_score``).
n_channels_in_ : int
    Channels per time step seen in fit.
n_features_in_ : int
    Number of time steps, only when fit on a 2-D array.

See Also
--------
{estimator} : The {role} with fixed hyperparameters."""

#: What the classifier search refits: one candidate, or the average of several.
_CLASSIFIER_REFITTED = """RNTKClassifier or AveragedClassifier
    What ``predict`` uses (if ``refit``): with ``n_average`` 1, the best candidate
    (``best_params_``) refitted on all data, a :class:`RNTKClassifier`; with more (the
    default grid's 3), an :class:`rntk.model_selection.AveragedClassifier` of the members listed in
    ``averaged_params_``, each a :class:`RNTKClassifier` refitted on all data, so that
    its predictions differ from those of ``best_params_`` alone. Above ``large_n``,
    each refitted classifier has the landmarks as its training series.
averaged_params_ : list of dict
    With ``n_average > 1``: the parameters of the averaged members, best first (a
    setting of ``DEFAULT_SAME`` listed as the setting it is computed as)."""

#: What the regressor search refits.
_REGRESSOR_REFITTED = """RNTKRegressor or AveragedRegressor
    What ``predict`` uses (if ``refit``): with ``n_average`` 1, the best candidate
    refitted on all data, a :class:`RNTKRegressor`; with more (the default grid's 2),
    an :class:`rntk.model_selection.AveragedRegressor` of the members listed in
    ``averaged_params_``.
    With the exact leave-one-out, the mean of the targets (an ``alpha=inf`` candidate
    of the grid) where what would be refitted does not beat it.
averaged_params_ : list of dict
    With ``n_average > 1``: the parameters of the averaged members, best first.
loo_score_ : float
    With the exact leave-one-out: the leave-one-out ``R^2`` of what was refitted (the
    average's is that of the average of the members' leave-one-out predictions)."""

#: The parameters and return value of the searches' ``fit``.
_FIT_PARAMS = """Parameters
----------
X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
    Training series (any layout of :class:`{estimator}`).
y : array-like of shape {y}
groups : array-like of shape (n_samples,), default=None
    Group labels, for group-aware ``cv`` splitters.

Returns
-------
self : {estimator}CV
    The fitted search."""


@fill_doc(search_doc=_SEARCH_DOC.format(
    default=("with ``protocol='loo'`` the default grid: 7 kernel settings of the\n"
             "    one-layer mean-readout RNTK on several views of each series (scaled,\n"
             "    as given, its amplitude spectrum, its local shapes; 6 on series of\n"
             "    several channels) x 9 relative ridges ``alpha``, the best candidates\n"
             "    of the 3 best settings averaged (``rntk.model_selection.default_grid``\n"
             "    lists them; the user guide says how they were chosen); with\n"
             "    ``protocol='paper'``, the paper's 900 kernel settings x 5 values of\n"
             "    ``C``"),
    loo="one-vs-all kernel ridge classification with an unpenalised intercept "
        "(``RNTKClassifier(model='ridge')``)",
    paper="C-SVM, 10-fold stratified cross-validation, Appendix A.1",
    paper_cv=10, folds="StratifiedKFold", score="accuracy", estimator="RNTKClassifier",
    models="``'ridge'`` with ``protocol='loo'``, ``'svc'`` with ``'paper'``"),
    fit_params=_FIT_PARAMS.format(estimator="RNTKClassifier", y="(n_samples,)\n    Class labels."),
    tail=_SEARCH_DOC_TAIL.format(estimator="RNTKClassifier", role="classifier",
                                  missing=DOC["missing"], refitted=_CLASSIFIER_REFITTED))
class RNTKClassifierCV(ClassifierMixin, _KernelSearchCV):
    """RNTK classifier with fast model selection: exact leave-one-out, or the paper's.

    By default (``protocol="loo"``) the classifier is kernel ridge on the RNTK
    (one-vs-all least squares, as :class:`~sklearn.linear_model.RidgeClassifierCV`
    but on the precomputed sequence kernel): one RNTK Gram per kernel setting, one
    eigendecomposition of it, and the exact leave-one-out accuracy of every ridge
    ``alpha`` in closed form. Seconds on the UCR datasets where the paper's protocol
    takes minutes to hours, at the same mean accuracy.

    ``protocol="paper"`` is the RNTK paper's protocol (Appendix A.1), as
    ``GridSearchCV(RNTKClassifier(), param_grid, cv=10)`` (same folds, scores and
    selection, ties broken by grid order): C-SVM, single-layer ReLU RNTK,
    ``sigma_w`` in 15 values around ``sqrt(2)``, ``sigma_u = 1``, 12 ``sigma_b``,
    5 ``sigma_h``, ``C`` in ``{0.01, 0.1, 1, 10, 100}``, unit-norm series, 10-fold
    stratified cross-validation; the Gram of each kernel setting is computed once
    and every fold and every ``C`` is scored on slices of it.

    Parameters
    ----------
    {search_doc}
    n_average : int, default=None
        With ``protocol="loo"``: the refitted model averages the decision functions of
        the best candidates of this many kernel settings (each setting's best ridge,
        ranked as ``best_params_``; an :class:`rntk.model_selection.AveragedClassifier`,
        parameters in ``averaged_params_``). ``None``: ``DEFAULT_N_AVERAGE`` (3) with the default
        grid, 1 (the best candidate alone) with a given ``param_grid``. With the
        default grid on training series that all have unit RMS already
        (a root-mean-square of 1 per step), the banded level-and-scale setting is
        the banded setting (``DEFAULT_SAME``): scored, refitted and listed as it, so
        the banded member may count twice.
    large_n : "auto", int or None, default="auto"
        Above this many training series the exact leave-one-out search (``protocol=
        "loo"``, ``cv=None``) runs on ``n_components`` Nystroem features per kernel
        setting (:class:`RNTKNystroem`, landmarks drawn uniformly with seed 0) instead
        of the ``n x n`` Gram: the same grid, model (kernel ridge with an unpenalised
        intercept, on the Nystroem Gram) and selection, the exact leave-one-out from
        the R factor of the features (a QR decomposition, block by block), in time and
        memory linear in the number of series. The refitted classifiers then have the
        landmarks as their training series. ``"auto"``: 3000; ``None``: never.
        Training series given as :class:`rntk.distributed.SeriesBlocks` (or a dask
        array) run this search on their Dask cluster, block by block, with the same
        result.
    n_components : int, default=500
        Landmarks (features) of the ``large_n`` path.
    screen : "auto", int or None, default="auto"
        With the exact leave-one-out search at or below ``large_n``, on more than twice
        this many training series: the kernel settings are first scored on a
        stratified subsample of this many series (seed 0), with the same leave-one-out,
        and only the ``n_average`` best of them (with the settings that share their
        Gram) are scored on every series, as successive halving does
        (:class:`~sklearn.model_selection.HalvingGridSearchCV`). The others are never
        selected: their candidates' ``mean_test_score`` is NaN, and
        ``cv_results_["screen_test_score"]`` has every candidate's subsample score.
        ``"auto"``: 1000 (so from 2,001 series); ``None``: never.
    {tail}

    Examples
    --------
    >>> import numpy as np
    >>> from rntk import RNTKClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> t = np.linspace(0, 1, 15)
    >>> X = np.r_[np.sin(6 * t) + 0.3 * rng.normal(size=(12, 15)),
    ...           np.cos(6 * t) + 0.3 * rng.normal(size=(12, 15))]
    >>> y = np.repeat([0, 1], 12)
    >>> clf = RNTKClassifierCV().fit(X, y)  # exact leave-one-out, default grid
    >>> len(clf.cv_results_["params"])  # 7 kernel settings x 9 ridges
    63
    >>> clf.score(X, y)
    1.0
    >>> grid = {"sigma_b": [0.0, 0.5], "C": [0.1, 10.0]}
    >>> svm = RNTKClassifierCV(param_grid=grid, protocol="paper", cv=3).fit(X, y)
    >>> sorted(svm.best_params_), len(svm.cv_results_["mean_test_score"])
    (['C', 'sigma_b'], 4)
    """

    _estimator_class = RNTKClassifier
    _kernel_keys = RNTK_PARAM_NAMES + PREPARATION_NAMES + ("precision",)
    _parameter_constraints = {
        **BaseKernelSearchCV._search_constraints, "estimator": [RNTKClassifier, None],
        "n_average": [Interval(numbers.Integral, 1, None, closed="left"), None],
        **LARGE_N_CONSTRAINTS, **SCREEN_CONSTRAINTS,
    }


    def _n_average(self):
        return _n_average(self, _grids.DEFAULT_N_AVERAGE)

    def _base_estimator(self):
        base = search_base(self, RNTKClassifier, {"loo": "ridge", "paper": "svc"})
        if self.protocol == "loo" and base.class_weight is not None:
            raise ValueError("class_weight is supported by protocol='paper' (the SVC) only; "
                             "the kernel ridge classifier weighs every sample alike")
        unused, model, used = (("C", "kernel ridge", "alpha") if self.protocol == "loo"
                               else ("alpha", "SVC", "C"))
        default = init_defaults(base)[unused]
        if not same_value(getattr(base, unused), default):
            raise ValueError(
                f"the estimator's {unused}={getattr(base, unused)!r} is set, but "
                f"protocol={self.protocol!r} fits the {model} classifier, which has no "
                f"{unused} (its regularisation is {used!r}); leave {unused} at "
                f"{default!r}, or choose the protocol whose model uses it")
        return base

    def _candidates(self, base, grid):
        candidates = super()._candidates(base, grid)
        keys = {k for c in candidates for k in c}
        if "model" in keys:
            raise ValueError(
                "param_grid must not set 'model': the protocol chooses the model it scores "
                "and refits (protocol='loo': kernel ridge, protocol='paper': the SVC); a "
                "model from the grid would be refitted without ever being scored. Choose "
                "the protocol instead")
        ignored, used = ("C", "alpha") if self.protocol == "loo" else ("alpha", "C")
        if ignored in keys:
            model = "kernel ridge" if self.protocol == "loo" else "SVC"
            raise ValueError(
                f"param_grid sets {ignored!r}, which protocol={self.protocol!r} does not "
                f"use (its {model} classifier's regularisation is {used!r}): candidates "
                f"that differ only in {ignored!r} would get the same score. Search "
                f"{used!r}, or choose the protocol whose model uses {ignored!r}")
        return candidates

    def _default_grid(self, xs, base=None):
        if self.protocol == "loo":
            base = self._base_estimator() if base is None else base
            _check_no_representation(self, base)
            return _grids.default_grid(_series_lengths(xs), _grids.DEFAULT_ALPHA,
                                       _series_channels(xs))
        return {**_grids.PAPER_GRID, "C": list(_grids.PAPER_C)}

    def _fold_scorer(self, base):
        if self.protocol == "loo":
            return _ridge_fold_accuracy
        return SVCFoldScorer(class_weight=base.class_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Sequences, y: ArrayLike, groups: ArrayLike | None = None) -> Self:
        """Select the kernel hyperparameters and ``C`` by cross-validation, then refit.

        {fit_params}
        """
        check_int(self.n_components, "n_components")  # a bool is no count of landmarks
        self._search(X, y, groups)
        if self.refit:
            self.classes_ = self.best_estimator_.classes_
        return self

    @fill_doc(decision=DOC["decision_function"])
    def decision_function(self, X: Sequences) -> np.ndarray:
        """Decision function of the refitted best classifier.

        {decision}
            ``best_estimator_.decision_function(X)``.
        """
        return self._delegate("decision_function", X)

    @fill_doc(X_predict=DOC["X_predict"])
    def predict_proba(self, X: Sequences) -> np.ndarray:
        """Class probabilities of the refitted model.

        {X_predict}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            ``best_estimator_.predict_proba(X)``: the decision values scaled by one
            temperature fitted on their exact leave-one-out values (with
            ``protocol="loo"``; the SVC's on folds of its Gram with ``"paper"``),
            then normalised; the columns in the order of ``classes_``.
        """
        return self._delegate("predict_proba", X)

    @fill_doc(X_predict=DOC["X_predict"])
    def predict_log_proba(self, X: Sequences) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`.

        {X_predict}

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            ``best_estimator_.predict_log_proba(X)``.
        """
        return self._delegate("predict_log_proba", X)




@fill_doc(search_doc=_SEARCH_DOC.format(
    default=("with ``protocol='loo'`` the default grid: 3 kernel settings of the\n"
             "    one-layer mean-readout RNTK (on standardised series, their amplitude\n"
             "    spectra and their value quantiles) x 10 relative ridges ``alpha``\n"
             "    (with ``inf``, the mean of the targets), the best candidates of the 2\n"
             "    best settings averaged; with ``protocol='paper'``, the paper's 900\n"
             "    kernel settings x 20 values of ``alpha``"),
    loo="kernel ridge regression with an unpenalised intercept, relative ridges and "
        "predictions clipped to the training targets' range (``RNTKRegressor(model="
        "'ridge')``)",
    paper="5-fold cross-validation, kernel grid of Appendix A.1, ridges of A.2",
    paper_cv=5, folds="KFold", score="R^2", estimator="RNTKRegressor",
    models="``'ridge'`` with ``protocol='loo'``, ``'kernel_ridge'`` with ``'paper'``"),
    fit_params=_FIT_PARAMS.format(estimator="RNTKRegressor",
                                  y="(n_samples,) or (n_samples, n_targets)\n    Targets."),
    tail=_SEARCH_DOC_TAIL.format(
        estimator="RNTKRegressor", role="regressor", missing=DOC["missing"],
        refitted=_REGRESSOR_REFITTED))
class RNTKRegressorCV(MultiOutputMixin, RegressorMixin, _KernelSearchCV):
    """RNTK kernel ridge regression with fast model selection.

    By default (``protocol="loo"``) every candidate is scored by its exact
    leave-one-out ``R^2`` (``1 - PRESS / SS_tot``, averaged over targets): one RNTK
    Gram per kernel setting, one eigendecomposition of it, every ridge in closed form,
    as :class:`~sklearn.linear_model.RidgeCV` does for linear ridge. The ridge must be
    ``> 0`` there. With ``cv`` folds, or ``protocol="paper"`` (the paper's kernel grid
    of Appendix A.1, the ridges of Appendix A.2, 5 folds), it is equivalent to
    ``GridSearchCV(RNTKRegressor(), param_grid, cv=cv)`` (same folds, same selected
    parameters; R^2 scores equal up to the last bits, since a test-vs-train block is
    read from the symmetric Gram), with one Gram per kernel setting sliced for every
    fold and every ``alpha``.

    Parameters
    ----------
    {search_doc}
    n_average : int, default=None
        With ``protocol="loo"``: the refitted model averages the predictions of the
        best candidates of this many kernel settings (each setting's best ridge, ranked
        by leave-one-out ``R^2``; an :class:`rntk.model_selection.AveragedRegressor`, parameters in
        ``averaged_params_``). ``None``: ``DEFAULT_REGRESSION_N_AVERAGE`` (2) with the
        default grid, 1 with a given ``param_grid``. In the default grid the interval
        statistics are gated: their setting is among the members only where the
        leave-one-out squared errors of the members with it are below those of the
        best members without it by more than two standard errors (a given
        ``param_grid`` has no gate).
    large_n : "auto", int or None, default="auto"
        Above this many training series the exact leave-one-out search runs on
        ``n_components`` Nystroem features per kernel setting instead of the ``n x n``
        Gram, as in :class:`RNTKClassifierCV` (the same model and selection, time and
        memory linear in the number of series). ``"auto"``: 3000; ``None``: never.
    n_components : int, default=500
        Landmarks (features) of the ``large_n`` path.
    screen : "auto", int or None, default="auto"
        As in :class:`RNTKClassifierCV`: above twice this many training series, the
        kernel settings are first scored on a random subsample of this many, and only
        the ``n_average`` best of them on every series. ``"auto"``: 1000; ``None``:
        never.
    {tail}

    Examples
    --------
    >>> from rntk import RNTKRegressorCV
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = [rng.normal(size=t) for t in rng.integers(5, 10, size=20)]
    >>> y = np.array([x[-1] + 0.5 * x[-2] for x in X])
    >>> grid = {"sigma_b": [0.0, 0.5], "alpha": [0.01, 1.0]}
    >>> reg = RNTKRegressorCV(param_grid=grid).fit(X, y)  # exact leave-one-out
    >>> reg.predict(X[:3]).shape
    (3,)
    >>> RNTKRegressorCV(param_grid=grid, cv=4).fit(X, y).n_splits_
    4
    """

    _estimator_class = RNTKRegressor
    _kernel_keys = RNTK_PARAM_NAMES + PREPARATION_NAMES + ("precision",)
    _parameter_constraints = {
        **BaseKernelSearchCV._search_constraints, "estimator": [RNTKRegressor, None],
        "n_average": [Interval(numbers.Integral, 1, None, closed="left"), None],
        **LARGE_N_CONSTRAINTS, **SCREEN_CONSTRAINTS,
    }


    _paper_cv = 5

    def _n_average(self):
        return _n_average(self, _grids.DEFAULT_REGRESSION_N_AVERAGE)

    def _base_estimator(self):
        return search_base(self, RNTKRegressor, {"loo": "ridge", "paper": "kernel_ridge"})

    def _default_grid(self, xs, base=None):
        if self.protocol == "loo":
            base = self._base_estimator() if base is None else base
            _check_no_representation(self, base)
            return _grids.default_regression_grid(_series_lengths(xs),
                                                  _grids.DEFAULT_REGRESSION_ALPHA)
        return {**_grids.PAPER_GRID, "alpha": list(_grids.PAPER_ALPHA)}

    def _fold_scorer(self, base):
        if self.protocol == "loo":
            return _ridge_fold_r2

        def score(K_train, y_train, K_test, y_test, params):
            return kernel_ridge_score(K_train, y_train, K_test, y_test, params["alpha"])

        return score

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Sequences, y: ArrayLike, groups: ArrayLike | None = None) -> Self:
        """Select the kernel hyperparameters and ``alpha`` by cross-validation, then refit.

        {fit_params}
        """
        check_int(self.n_components, "n_components")  # a bool is no count of landmarks
        return self._search(X, y, groups)
