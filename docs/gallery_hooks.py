"""sphinx-gallery hooks: run each example in its quick mode and show the PNGs it writes.

Named in ``conf.py`` by their import path, so that Sphinx can cache the configuration.
"""

import ast
import shutil
import tempfile
from pathlib import Path

OUT = Path(tempfile.mkdtemp(prefix="rntk-docs-gallery-"))
_SEEN = set()


def example_argv(gallery_conf, script_vars):
    """Return the command line of an example: ``--quick`` and a scratch output folder.

    The examples build their command-line help from their module docstring, which
    sphinx-gallery takes out of the executed code: it is given back here.
    """
    src = Path(script_vars["src_file"])
    script_vars["example_globals"]["__doc__"] = ast.get_docstring(
        ast.parse(src.read_text(encoding="utf-8")))
    return ["--quick", "--out", str(OUT / src.stem)]


def png_scraper(block, block_vars, gallery_conf):
    """Copy the PNG files the example wrote since the last block into the gallery."""
    from sphinx_gallery.scrapers import figure_rst

    folder = OUT / Path(block_vars["src_file"]).stem
    pngs = sorted(p for p in folder.glob("**/*.png") if p not in _SEEN)
    paths = []
    for png, target in zip(pngs, block_vars["image_path_iterator"]):
        _SEEN.add(png)
        shutil.copyfile(png, target)
        paths.append(target)
    return figure_rst(paths, gallery_conf["src_dir"])


def forget_mocked_torch(gallery_conf, fname):
    """Drop the modules autodoc imported with torch mocked, before each example runs.

    Without torch the API pages of ``rntk.nn`` are read with a mock of torch; the rntk
    modules imported then keep it, and an example would find that mock where it should
    find no torch at all (``rntk.RNTK``'s gradient imports the torch engine when it can).
    """
    import importlib.util
    import sys

    if importlib.util.find_spec("torch") is not None:
        return
    from sphinx.ext.autodoc.mock import ismock

    for name in [n for n, m in list(sys.modules.items()) if ismock(m)
                 or (n.startswith("rntk") and ismock(getattr(m, "torch", None)))]:
        del sys.modules[name]
        parent = sys.modules.get(name.rpartition(".")[0])
        child = name.rpartition(".")[2]
        if parent is not None and not ismock(parent) and child in vars(parent):
            delattr(parent, child)
