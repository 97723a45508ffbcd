"""The layout of rntk.datasets and rntk.benchmarking: dependencies point down, one lookup."""

import ast
from pathlib import Path

import pytest

import rntk

PACKAGE = Path(rntk.__file__).resolve().parent


def _imports(path, package):
    """``(module, names, lineno)`` of every import of ``path``, function-level ones too.

    Relative imports are resolved against ``package`` (``rntk.datasets`` ...).
    """
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            out.append((module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
    return out


def _graph(subpackage):
    """Module -> the modules of the same subpackage it imports (anywhere in the file)."""
    package = f"rntk.{subpackage}"
    folder = PACKAGE / subpackage
    modules = {f"{package}.{p.stem}": p for p in folder.glob("*.py") if p.stem != "__init__"}
    graph = {}
    for name, path in modules.items():
        deps = set()
        for module, names, _ in _imports(path, package):
            if module in modules:
                deps.add(module)
            elif module == package:  # ``from . import x``
                deps.update(f"{package}.{n}" for n in names if f"{package}.{n}" in modules)
        graph[name] = deps - {name}
    return graph


def _cycle(graph):
    """One import circle of ``graph`` as a list of modules, or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, stack + [dep])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def test_the_circle_finder_finds_circles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize("subpackage", ["datasets", "benchmarking"])
def test_no_import_circle(subpackage):
    graph = _graph(subpackage)
    assert len(graph) >= 5
    assert _cycle(graph) is None


def test_datasets_bottom_up():
    graph = _graph("datasets")
    base = "rntk.datasets._base"
    assert graph[base] == set()  # the bottom: imports none of the others
    for module in ("_tsv", "_ts", "_download"):
        assert base in graph[f"rntk.datasets.{module}"], module
        assert "rntk.datasets._ucr" not in graph[f"rntk.datasets.{module}"], module


def test_benchmarking_uses_public_names_of_the_rest_of_rntk():
    """rntk.datasets and rntk.nn through their public names; the one lookup is theirs."""
    offenders = []
    for path in (PACKAGE / "benchmarking").glob("*.py"):
        for module, names, line in _imports(path, "rntk.benchmarking"):
            if module is None or not module.startswith(("rntk.datasets", "rntk.nn")):
                continue
            if any(part.startswith("_") for part in module.split(".")) or \
                    any(n.startswith("_") for n in names):
                offenders.append(f"{path.name}:{line}: {module} {names}")
    assert offenders == []
    # no second copy of the dataset lookup
    text = (PACKAGE / "benchmarking" / "_data.py").read_text(encoding="utf-8")
    assert "_TRAIN" not in text and "datasets\" / \"data\"" not in text


def test_benchmarking_modules_share_only_public_names():
    """Inside rntk.benchmarking a module imports a sibling's public names only."""
    offenders = []
    for path in (PACKAGE / "benchmarking").glob("*.py"):
        for module, names, line in _imports(path, "rntk.benchmarking"):
            if module and module.startswith("rntk.benchmarking") and \
                    any(n.startswith("_") for n in names):
                offenders.append(f"{path.name}:{line}: {module} {names}")
    assert offenders == []
