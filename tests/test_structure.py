"""The package's structure: one hyperparameter table, one search engine, one direction of
dependency between the core and rntk.nn, no import circle."""

import ast
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import rntk
from rntk._kernels import KERNELS, RNTK_DEFAULTS, RNTK_PARAM_NAMES, rntk_diag
from rntk._model_selection import SVCFoldScorer, search_grams

PACKAGE = Path(rntk.__file__).resolve().parent


def _signature_defaults(func):
    return {name: p.default for name, p in inspect.signature(func).parameters.items()}


@pytest.mark.parametrize("func", [
    rntk.rntk_kernel, rntk_diag, rntk.RNTK.__init__, rntk.RNTKClassifier.__init__,
    rntk.RNTKRegressor.__init__, rntk.sensitivity, rntk.mean_sensitivity,
    rntk.RNTKNystroem.__init__,
], ids=lambda f: f.__qualname__)
def test_every_rntk_signature_reads_the_hyperparameter_table(func):
    defaults = _signature_defaults(func)
    for name in RNTK_PARAM_NAMES:
        assert name in defaults, f"{func.__qualname__} lacks {name}"
        assert defaults[name] == RNTK_DEFAULTS[name], name


def test_every_rntk_docstring_documents_the_table():
    for obj in (rntk.rntk_kernel, rntk.RNTK, rntk.RNTKClassifier, rntk.RNTKRegressor,
                rntk.RNTKNystroem):
        doc = obj.__doc__
        assert "{" + "kernel" not in doc  # every field was filled
        for name in RNTK_PARAM_NAMES:
            assert re.search(rf"^\s*{name} : ", doc, re.M), (obj, name)


def test_torch_signatures_read_the_table():
    # rntk.nn raises ImportError (not ModuleNotFoundError) without torch, which
    # pytest.importorskip("rntk.nn") does not skip on
    pytest.importorskip("torch")
    import rntk.nn as nn
    for func in (nn.rntk_kernel_torch, nn.rntk_gram_log_gradient, nn.ElmanRNN.__init__):
        defaults = _signature_defaults(func)
        for name in set(RNTK_PARAM_NAMES) & set(defaults):
            assert defaults[name] == RNTK_DEFAULTS[name], (func, name)


def test_core_never_imports_private_names_of_nn():
    pattern = re.compile(r"(from\s+(\.+|rntk\.)nn\._|from\s+(\.+|rntk\.)nn\s+import\s+_|"
                         r"rntk\.nn\._)")
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if PACKAGE / "nn" in path.parents:
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{i}: {line.strip()}")
    assert not offenders, offenders


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _packages_run_first(target, importer, files):
    """The packages whose ``__init__`` importing ``target`` runs first, if not running.

    Importing ``rntk.a.b.c`` runs ``rntk/a/__init__.py`` and ``rntk/a/b/__init__.py``
    first, unless one of them is a package of the importer itself (already running);
    ``rntk`` itself is always running already.
    """
    running = {importer.rsplit(".", k)[0] for k in range(importer.count(".") + 1)}
    parts = target.split(".")
    out = set()
    for k in range(2, len(parts)):
        package = ".".join(parts[:k])
        if package in files and package not in running:
            out.add(package)
    return out


def _import_graph():
    """Return ``{module: set of rntk modules it imports}``, from the source files.

    Every import counts, also one inside a function (it runs when the function does).
    ``from package import name`` is an edge to the submodule ``package.name`` when there
    is one, else to the package's ``__init__``; an import of a name that is not a file
    goes to the nearest enclosing module. Importing a submodule is also an edge to the
    ``__init__`` of each package above it that runs first (:func:`_packages_run_first`).
    """
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {m: set() for m in files}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                else:
                    base = node.module
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != mod:
                    edges[mod].add(target)
                    edges[mod] |= _packages_run_first(target, mod, files)
    return edges


def _cycles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_sees_the_init_files_that_run_first():
    edges = _import_graph()
    # _estimators/_rntk.py imports _kernels/_params.py: _kernels/__init__.py runs first
    assert {"rntk._kernels._params", "rntk._kernels"} <= edges["rntk._estimators._rntk"]
    # within its own package no __init__ runs again
    assert "rntk._model_selection" not in edges["rntk._model_selection._features"]
    files = {"rntk.a", "rntk.a.b", "rntk.a.b.c", "rntk.d", "rntk.d.e"}
    assert _packages_run_first("rntk.a.b.c", "rntk.d.e", files) == {"rntk.a", "rntk.a.b"}
    assert _packages_run_first("rntk.a.b.c", "rntk.a.x", files) == {"rntk.a.b"}


def test_the_import_graph_sees_function_level_imports():
    edges = _import_graph()
    # a function-level import (device="cuda") and a module-level one
    assert "rntk._kernels._cuda" in edges["rntk._kernels._rntk"]
    assert "rntk._kernels._params" in edges["rntk._kernels._rntk"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_between_files():
    cycles = _cycles(_import_graph())
    assert not cycles, f"import circles between the files of rntk/: {cycles}"


def test_only_nn_and_benchmarking_import_nn():
    """The core never reaches up into the torch layer (the torch engine lives in _kernels)."""
    offenders = sorted(
        (mod, sorted(t for t in targets if t == "rntk.nn" or t.startswith("rntk.nn.")))
        for mod, targets in _import_graph().items()
        if not (mod == "rntk.nn" or mod.startswith(("rntk.nn.", "rntk.benchmarking")))
        and any(t == "rntk.nn" or t.startswith("rntk.nn.") for t in targets))
    assert not offenders, offenders


#: Modules that exist to share private helpers across subpackages.
SHARING_MODULES = ("rntk._utils", "rntk._kernels._params", "rntk._kernels._shared")


def _subpackage(mod):
    """``rntk.x`` for a module of subpackage x (a top-level module is its own)."""
    return ".".join(mod.split(".")[:2])


def test_no_private_name_is_imported_across_subpackages():
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    offenders = []
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.level or (
                    node.module or "").startswith("rntk")):
                continue
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module
            if _subpackage(base) == _subpackage(mod) or base.startswith(SHARING_MODULES):
                continue
            offenders += [f"{mod}: {a.name} from {base}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")
                          and f"{base}.{a.name}" not in files]  # a private module is fine
    assert not offenders, offenders


#: The entry points of the kernel options: each checks them with ``resolve_params``.
OPTION_ENTRY_POINTS = ("_kernels/_rntk.py", "_kernels/_cuda.py", "_kernels/_torch.py",
                       "_kernels/_gp.py", "_kernels/_sensitivity.py", "distributed.py",
                       "nn/_elman.py", "nn/_family.py")


def _called_names(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.func.id for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


#: Lines that check or spell out an option outside its table: the kernel options' values
#: (``resolve_params`` in ``_kernels/_params.py`` checks them), the preparations' names,
#: constraints and values (``_representations/_table.py``), and ``missing``'s choices.
SCATTERED = re.compile(
    r"not in (ACTIVATIONS|KINDS|DIRECTIONS|READOUTS)\b|"
    r"StrOptions\(set\((MISSING|NORMALIZATIONS)\)\)|missing not in|"
    r"getattr\([^)]*[\"'](normalize|pool|spectrum|quantiles)[\"']|"
    r"[\"'](spectrum|quantiles|pool)[\"']\s*:\s*\[Interval|"
    r"\([\"']normalize[\"'], [\"']pool[\"']|[\"']spectrum[\"'], [\"']quantiles[\"']\)")
TABLES = ("_kernels/_params.py", "_representations/_table.py", "_utils/_sequences.py")


def test_the_options_are_checked_at_one_place():
    for name in OPTION_ENTRY_POINTS:
        assert "resolve_params" in _called_names(PACKAGE / name), name
    offenders = [f"{path.relative_to(PACKAGE)}:{i}: {line.strip()}"
                 for path in PACKAGE.rglob("*.py")
                 if str(path.relative_to(PACKAGE)) not in TABLES
                 for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if SCATTERED.search(line)]
    assert not offenders, offenders


@pytest.mark.parametrize("line", [
    'if activation not in ACTIVATIONS:',
    '"missing": [StrOptions(set(MISSING))],',
    'bins = getattr(self, "spectrum", None)',
    '"quantiles": [Interval(numbers.Integral, 2, None, closed="left"), None],',
    '_kernel_keys = RNTK_PARAM_NAMES + ("normalize", "pool", "spectrum", "quantiles")',
    'for k in ("spectrum", "quantiles"):',
    'if missing not in ("raise", "keep", "interpolate"):',
])
def test_the_scattered_check_finds_what_it_looks_for(line):
    assert SCATTERED.search(line)


def test_engine_never_selects_a_non_finite_gram(rng):
    X = rng.normal(size=(24, 6))
    y = np.repeat([0, 1], 12)
    splits = [(np.r_[0:4, 12:16], np.r_[4:12, 16:24]), (np.r_[4:12, 16:24], np.r_[0:4, 12:16])]
    good = rntk.rntk_kernel(X)
    bad = good.copy()
    bad[0, 1] = bad[1, 0] = np.nan
    candidates = [{"C": 1.0}, {"C": 1.0}]
    with pytest.warns(RuntimeWarning, match="non-finite"):
        out = search_grams(iter([bad, good]), [[0], [1]], candidates, y, splits,
                           SVCFoldScorer())
    assert np.isnan(out.scores[0]).all() and np.isfinite(out.scores[1]).all()
    assert out.best_index == 1 and out.best_gram is not None
    assert out.non_finite == [0]
    with pytest.warns(RuntimeWarning, match="non-finite"):
        out = search_grams(iter([bad]), [[0]], candidates[:1], y, splits, SVCFoldScorer())
    assert out.best_index == -1 and out.best_gram is None


def test_registry_batched_grams_equal_one_call_per_setting(rng):
    A = rng.normal(size=(9, 12))
    settings = [{"sigma_w": w, "sigma_b": b, "n_layers": L}
                for w in (1.0, 1.5) for b in (0.0, 0.3) for L in (1, 2, 3)]
    spec = KERNELS["ntk"]
    for p, K in zip(settings, spec.iter_grams(A, settings)):
        np.testing.assert_allclose(K, spec.gram(A, **p), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(K, rntk.mlp_ntk_kernel(A, **p), rtol=1e-12, atol=1e-14)
    seqs = [rng.normal(size=(t, 1)) for t in (5, 8, 6)]
    for p, K in zip([{"sigma_b": 0.1}, {"sigma_w": 1.2}],
                    KERNELS["rntk"].iter_grams(seqs, [{"sigma_b": 0.1}, {"sigma_w": 1.2}])):
        np.testing.assert_array_equal(K, rntk.rntk_kernel(seqs, **p))


def test_benchmark_and_estimator_select_the_same_setting(monkeypatch):
    """The CLI's kernel path and RNTKClassifierCV: same Grams, same folds, same choice."""
    from rntk.benchmarking import run_precomputed_kernel
    from rntk.benchmarking._data import Dataset as _Data
    from rntk.benchmarking._data import folds as _folds

    monkeypatch.delenv("RNTK_DATA", raising=False)
    data = _Data("Coffee", None)
    splits = _folds(data.y_train, 4, 0)
    settings = [{"sigma_w": w, "sigma_b": b} for w in (1.3, 2**0.5) for b in (0.0, 0.5, 1.0)]
    Cs = [0.1, 10.0]
    res = run_precomputed_kernel(KERNELS["rntk"], data, settings, Cs, splits)
    grid = {"sigma_w": [1.3, 2**0.5], "sigma_b": [0.0, 0.5, 1.0], "C": Cs}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no failed fit
        est = rntk.RNTKClassifierCV(param_grid=grid, protocol="paper", cv=splits).fit(
            data.train, data.y_train)
    assert est.best_params_ == res["params"]
    assert est.best_score_ == pytest.approx(res["cv_score"], abs=1e-12)
    assert est.score(data.test, data.y_test) == pytest.approx(res["accuracy"], abs=1e-12)
