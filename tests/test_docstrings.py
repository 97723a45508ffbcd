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


def test_fill_doc_indents_a_piece_like_its_field():
    from rntk._utils import fill_doc

    @fill_doc(piece="a : int\n    First.\n\nReturns\n-------")
    def f():
        """Summary.

        {piece}
        """

    assert f.__doc__ == ("Summary.\n\n        a : int\n            First.\n\n"
                         "        Returns\n        -------\n        ")


def test_shared_docstring_pieces_read_as_before():
    # the parallel docstrings assembled from DOC pieces keep their exact text
    from rntk import RNTKClassifierCV, RNTKNystroem
    from rntk.model_selection import AveragedClassifier

    for method in (RNTKClassifierCV.decision_function, AveragedClassifier.decision_function):
        assert ("    Parameters\n        ----------\n        X : array-like or list of "
                "arrays\n            Series.\n\n        Returns\n        -------\n"
                "        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)\n"
                "            ") in method.__doc__
    for method in (RNTKNystroem.fit, RNTKNystroem.fit_transform):
        assert "        y : None\n            Ignored.\n\n        Returns\n" in method.__doc__
    assert not any("{" + name + "}" in (m.__doc__ or "") for m in (
        RNTKClassifierCV.decision_function, RNTKNystroem.fit)
        for name in ("decision", "X_fit_y", "X_plain"))
