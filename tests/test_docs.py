"""The documentation covers the public API, and the README's links lead somewhere.

These tests read files only (no Sphinx, no torch): ``__all__`` is read from the source of
each public module, so ``rntk.nn`` is checked without importing it.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rntk"
API = ROOT / "docs" / "api"

pytestmark = pytest.mark.skipif(not API.is_dir(), reason="no docs/ folder (installed package)")


def _public_modules():
    """Map each public module (no path component starting with ``_``) to its source file."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts):
            continue
        modules[".".join(parts)] = path
    return modules


def _all_names(path):
    """The names of a module's ``__all__``, read from its source."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def documented_names(text):
    """Fully qualified names an API page documents.

    Autosummary entries and ``py:data`` / ``py:function`` / ``py:class`` directives count
    under the ``currentmodule`` in force; ``automodule`` and ``py:module`` document modules.
    """
    names, module, in_summary = set(), None, False
    for line in text.splitlines():
        directive = re.match(r"\.\. (?:py:)?(\w+)::\s*(\S*)", line)
        if directive:
            kind, arg = directive.groups()
            in_summary = kind == "autosummary"
            if kind in ("currentmodule", "module"):
                module = arg
            if kind in ("automodule", "module"):
                names.add(arg)
            elif kind in ("data", "function", "class", "exception", "autofunction",
                          "autoclass", "autodata") and module:
                names.add(f"{module}.{arg}")
            continue
        if in_summary:
            entry = re.match(r"\s+([A-Za-z_][\w.]*)\s*$", line)
            if entry and module:
                names.add(f"{module}.{entry.group(1)}")
            elif line.strip() and not line.startswith((" ", "\t")):
                in_summary = False
    return names


def test_documented_names_reads_directives():
    text = """
.. currentmodule:: pkg

.. autosummary::
   :toctree: generated/

   func
   Klass

Some text naming other.

.. py:data:: CONST
   :type: int

.. automodule:: pkg.sub
"""
    assert documented_names(text) == {"pkg.func", "pkg.Klass", "pkg.CONST", "pkg.sub"}


def test_public_modules_are_found():
    modules = _public_modules()
    for name in ("rntk", "rntk.datasets", "rntk.benchmarking", "rntk.nn", "rntk.distributed"):
        assert name in modules


@pytest.mark.parametrize("module", sorted(_public_modules()))
def test_every_public_name_is_in_the_api_reference(module):
    names = _all_names(_public_modules()[module])
    assert names, f"{module} has no __all__"
    documented = set()
    for page in API.glob("*.rst"):
        documented |= documented_names(page.read_text(encoding="utf-8"))
    # a name re-exported by a package counts where the package's page documents it
    # (rntk.benchmarking.stats.summary_metrics is rntk.benchmarking.summary_metrics)
    parent = module.rsplit(".", 1)[0]
    missing = [n for n in names
               if f"{module}.{n}" not in documented and f"{parent}.{n}" not in documented]
    assert not missing, f"{module}: not in docs/api/*.rst: {missing}"


def test_every_api_page_is_in_the_api_toctree():
    index = (API / "index.rst").read_text(encoding="utf-8")
    for page in API.glob("*.rst"):
        if page.stem != "index":
            assert re.search(rf"^\s+{re.escape(page.stem)}\s*$", index, re.M), page.name


def test_readme_links_lead_to_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?!https?:|#)[^)#\s]+)", readme)
    assert targets, "the README links into the documentation"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, missing
