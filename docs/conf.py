"""Sphinx configuration of the rntk documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` from the repository root
(``pip install -e ".[docs]"`` first). The gallery runs every script of ``examples/`` in
its ``--quick`` mode; ``RNTK_DOCS_GALLERY`` chooses which (below). Without torch the
build still passes: the API pages of ``rntk.nn`` are read with torch mocked, and the
examples that need torch are shown as code, not run, with a note saying so.
"""

import importlib.util
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))  # gallery_hooks

import rntk  # noqa: E402

project = "rntk"
author = "the rntk developers"
copyright = "the rntk developers"  # noqa: A001
version = release = rntk.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_benchmark_plots.md", "generated/*.examples",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.json", "auto_examples/*.md5"]
templates_path = ["_templates"]

# -- API reference ---------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "groupwise"}
autodoc_typehints = "none"  # numpydoc's "Parameters" sections give the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
add_module_names = False

intersphinx_mapping = {}  # offline builds: no inventories fetched

# -- MyST (the user guide and the benchmark results are Markdown) ------------------------
myst_heading_anchors = 3
suppress_warnings = ["myst.xref_missing"]

# -- Gallery: examples/ in their --quick mode ---------------------------------------------
# RNTK_DOCS_GALLERY: "all" (default) runs every example in its --quick mode (seconds to a
# minute or two each; most need torch); "none" renders them all as code without running
# any; anything else is a regular expression of the example names to run (CI runs the
# torch-free ones). The API pages, the user guide and the benchmarks do not depend on it.
_GALLERY = os.environ.get("RNTK_DOCS_GALLERY", "all").strip() or "all"
_RUN_PATTERN = {"all": r"[a-z0-9_]+", "none": r"(?!)"}.get(_GALLERY, f"(?:{_GALLERY})")

# -- Without torch ---------------------------------------------------------------------
HAVE_TORCH = importlib.util.find_spec("torch") is not None
#: The examples that import torch or rntk.nn (shown, not run, without torch).
TORCH_EXAMPLES = sorted(
    p.stem for p in (ROOT / "examples").glob("*.py")
    if re.search(r"^\s*(?:import torch|from torch|from rntk\.nn|import rntk\.nn)",
                 p.read_text(encoding="utf-8"), re.M))
if not HAVE_TORCH:
    autodoc_mock_imports = ["torch"]
    if TORCH_EXAMPLES:
        _RUN_PATTERN = rf"(?!(?:{'|'.join(TORCH_EXAMPLES)})\.py$){_RUN_PATTERN}"

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": rf"/{_RUN_PATTERN}\.py$",
    "plot_gallery": "False" if _GALLERY == "none" else "True",
    "reset_argv": "gallery_hooks.example_argv",
    "reset_modules": ("matplotlib", "gallery_hooks.forget_mocked_torch"),
    "image_scrapers": ("gallery_hooks.png_scraper",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
}

# -- HTML ------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"rntk {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []


def _example_title(app, docname, source):
    """Make the first paragraph of an example's docstring the title of its page.

    The examples' docstrings open with a one-sentence summary (a plain script
    docstring), where sphinx-gallery expects an underlined title.
    """
    if not docname.startswith("auto_examples/") or docname.endswith(("index", "times")):
        return
    if not HAVE_TORCH and docname.rsplit("/", 1)[-1] in TORCH_EXAMPLES:
        source[0] += ("\n\n.. note::\n\n   This page was built without torch: the example "
                      "needs the ``torch`` extra, so its code is shown but was not run.\n")
    lines = source[0].split("\n")
    label = next((i for i, line in enumerate(lines) if line.startswith(".. _sphx_glr_")), None)
    if label is None:
        return
    start = label + 2
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    if end < len(lines) and set(lines[end - 1].strip()) <= set("=-~^#*"):
        return  # already a title
    title = " ".join(line.strip() for line in lines[start:end]).rstrip(".")
    lines[start:end] = [title, "=" * len(title)]
    source[0] = "\n".join(lines)


def _benchmark_plots():
    """Write ``_benchmark_plots.md``: every plot of ``benchmarks/`` its README does not show.

    The benchmark page includes ``benchmarks/README.md`` and then this file, so that a
    plot added to the folder is shown without editing the documentation.
    """
    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    missing = [p for p in sorted((ROOT / "benchmarks").glob("*.png"))
               if f"]({p.name})" not in readme]
    text = ""
    if missing:
        text = "## The other plots of `benchmarks/`\n\n" + "".join(
            f"### `{p.name}`\n\n![{p.stem}](../benchmarks/{p.name})\n\n" for p in missing)
    target = HERE / "_benchmark_plots.md"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def setup(app):
    """Write the generated benchmark page part; register the page-title fix of the gallery."""
    _benchmark_plots()
    app.connect("source-read", _example_title)
