"""Docstrings assembled from shared pieces (one text for one parameter)."""

import re

__all__ = ["DOC", "fill_doc"]

#: Numpydoc entries shared by many functions and methods.
DOC = {
    "X_sequences": (
        "X : array-like of shape (n_X, T) or (n_X, T, n_channels), or list of arrays\n"
        "    Sequences: 2-D univariate, 3-D time-major multivariate, or a list of\n"
        "    ``(T_i,)`` / ``(T_i, n_channels)`` arrays. Trailing NaN steps are padding."),
    "X_fit": (
        "X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list\n"
        "    Training series (2-D univariate, 3-D time-major, or a list of ``(T_i,)``\n"
        "    / ``(T_i, n_channels)`` arrays; trailing NaN steps are padding)."),
    "fitted_series": (
        "X_fit_ : list of ndarray of shape (T_i, n_channels)\n"
        "    Training series (after scaling), needed to compute the test kernel.\n"
        "n_channels_in_ : int\n"
        "    Channels per time step seen in fit.\n"
        "n_features_in_ : int\n"
        "    Number of time steps, only when fit on a 2-D array.\n"
        "feature_names_in_ : ndarray of shape (`n_features_in_`,)\n"
        "    Column names, only when fit on a DataFrame with string column names."),
    "X_series": (
        "Parameters\n"
        "----------\n"
        "X : array-like or list of arrays\n"
        "    Series, in any layout of :func:`rntk.rntk_kernel`."),
    "K_new": (
        "Parameters\n"
        "----------\n"
        "K : ndarray of shape (n_samples, n_train)\n"
        "    Gram between new and training samples."),
    "XY_sets": (
        "X : array-like or list of arrays\n"
        "    Sequences, in any layout accepted by :func:`rntk.rntk_kernel`.\n"
        "Y : same layout as X, default=None\n"
        "    Second set; ``None`` computes the symmetric ``K(X, X)``."),
    "missing": (
        'missing : {"raise", "interpolate"}, default="raise"\n'
        "    Missing values: NaN inside a series (before its last value; trailing NaN\n"
        "    steps are padding, the end of a shorter series) or in only some channels\n"
        '    of a step, in fit and predict. ``"raise"``: an error naming the series and\n'
        '    the steps; ``"interpolate"``: each channel filled by linear interpolation in\n'
        "    time, with its first (last) value before (after) it, as the UCR archive's\n"
        "    adjusted datasets and :class:`rntk.SeriesImputer` do."),
    "n_jobs_device": (
        "n_jobs : int, default=None\n"
        "    Numba threads for the kernel; ``None``: the current setting (Numba's thread\n"
        "    count, all cores unless changed by ``numba.set_num_threads``), ``-1``: all\n"
        "    cores.\n"
        'device : {"cpu", "cuda"}, default="cpu"\n'
        "    Where the Grams are computed: the Numba engine, or the fused GPU engine\n"
        "    (extra ``cuda``, an NVIDIA GPU); see :func:`rntk.rntk_kernel`."),
    "precision": (
        'precision : {"float64", "float32"}, default="float64"\n'
        "    Arithmetic of the Numba engine. ``\"float32\"`` runs twice the SIMD lanes\n"
        "    (about 2x faster on the recursion), with a relative error of the kernel\n"
        "    values of about 1e-6 (1e-4 at worst on long series) against float64's\n"
        "    1e-14; the Gram is float64 either way. Its rounding depends on the order\n"
        "    of the series: permuting them moves float32 entries by a few 1e-6 of the\n"
        "    largest entry (float64: 1e-14), and a search's predictions by as little\n"
        "    (the test suite allows 3e-5 and 1e-12). Inputs whose magnitude or variances\n"
        "    reach float32's limits (beyond ``1e15``, or variances below ``1e-30``)\n"
        "    are computed in float64. The CUDA engine computes in float64 always."),
    "precision_estimator": (
        'precision : {"float64", "float32", "auto"}, default="float64"\n'
        "    Arithmetic of the Numba engine, as in :func:`rntk.rntk_kernel`. ``\"auto\"``:\n"
        '    float32 for the mean readouts (``readout="mean"``), float64 for the last\n'
        "    step, whose two series' states are often so alike (large ``sigma_b``, long\n"
        "    series) that float32 cannot resolve their angle."),
    "raises_cuda": (
        "Raises\n"
        "------\n"
        "ImportError\n"
        "    If numba-cuda is not installed.\n"
        "RuntimeError\n"
        "    If no CUDA GPU is usable (and numba's CUDA simulator is not enabled).\n"
        "rntk.KernelOverflowError\n"
        "    If a Gram holds inf or NaN."),
    "proba_returns": (
        "Returns\n"
        "-------\n"
        "proba : ndarray of shape (n_samples, n_classes)\n"
        "    ``softmax(a D)`` of the decision values ``D`` (two classes: ``1 / (1 +\n"
        "    exp(-a d))`` for ``classes_[1]``), one scale ``a = proba_scale_`` fitted on\n"
        "    out-of-sample decision values of the training series (``oos_decision_``);\n"
        "    columns in the order of ``classes_``, the largest that of ``predict``."),
    "log_proba_returns": (
        "Returns\n"
        "-------\n"
        "log_proba : ndarray of shape (n_samples, n_classes)\n"
        "    Log-probabilities, in the order of ``classes_``."),
    "X_plain": (
        "Parameters\n"
        "----------\n"
        "X : array-like or list of arrays\n"
        "    Series."),
    "X_predict": (
        "Parameters\n"
        "----------\n"
        "X : array-like or list of arrays\n"
        "    Series, in any layout accepted by :meth:`fit`."),
}

DOC["decision_function"] = (DOC["X_plain"] + "\n\nReturns\n-------\n"
                             "scores : ndarray of shape (n_samples,) or (n_samples, n_classes)")
DOC["X_fit_y"] = ("Parameters\n----------\n" + DOC["X_fit"]
                  + "\ny : None\n    Ignored.")

_FIELD = re.compile(r"\{(\w+)\}")


def fill_doc(**pieces):
    """Return a decorator replacing ``{name}`` fields of a docstring by given pieces.

    Only the named fields are replaced, so other braces (dicts in examples) need no
    escaping. A piece of several lines is indented like the line of its field. On a
    class, the docstrings of its methods are filled too.

    Parameters
    ----------
    **pieces : str
        The texts, by field name.

    Returns
    -------
    decorator : callable
        Sets the filled docstring on the decorated object and returns it.
    """
    def fill(match, indent):
        name = match.group(1)
        if name not in pieces:
            return match.group(0)
        return "\n".join(indent + line if line else line
                         for line in pieces[name].strip("\n").split("\n"))[len(indent):]

    def filled(doc):
        lines = []
        for line in doc.split("\n"):
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(_FIELD.sub(lambda m, indent=indent: fill(m, indent), line))
        return "\n".join(lines)

    def decorate(obj):
        if obj.__doc__:
            obj.__doc__ = filled(obj.__doc__)
        if isinstance(obj, type):  # the methods of a class too
            for member in vars(obj).values():
                if callable(member) and getattr(member, "__doc__", None):
                    member.__doc__ = filled(member.__doc__)
        return obj

    return decorate
