"""Docstring examples hold code only in their ``>>>`` lines."""

import ast
import doctest
import re
from pathlib import Path

import rntk

_CODE = re.compile(r"^\s*(import [\w.]+( as \w+)?|from [\w.]+ import [\w., ()*]+)\s*$")


def _docstrings(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and ">>>" in doc:
                yield getattr(node, "name", "<module>"), doc


def test_no_stray_code_lines_around_doctest_examples():
    # an import line pasted after a ">>>" line is neither run nor compared: the
    # example silently relies on the module's globals and shows the reader dead code
    root = Path(rntk.__file__).parent
    stray = []
    for path in sorted(root.rglob("*.py")):
        for name, doc in _docstrings(path):
            for part in doctest.DocTestParser().parse(doc):
                lines = part.splitlines() if isinstance(part, str) else []
                if isinstance(part, doctest.Example):
                    lines = part.want.splitlines()
                stray += [f"{path.relative_to(root)}:{name}: {ln.strip()}"
                          for ln in lines if _CODE.match(ln)]
    assert not stray, "\n".join(stray)
