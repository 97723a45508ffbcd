"""The documentation covers the public API, its links lead somewhere, its numbers are the CSVs'.

These tests read files (no Sphinx, no torch): ``__all__`` is read from the source of each
public module, so ``rntk.nn`` is checked without importing it. The README's and the
docs' headline table is ``benchmarks/headline.py``'s, computed from the committed CSVs;
the README's and the regression guide's examples are run as written.
"""

import ast
import csv
import importlib.util
import math
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


# -- figures stated in several places, versions, metadata --------------------------------
PAGES = sorted((ROOT / "docs").glob("**/*.md"))
PAGES = [p for p in PAGES if "_build" not in p.parts and "auto_examples" not in p.parts]


def test_pages_have_no_myst_roles():
    """The pages read as Markdown on a code host too: links, not ``{doc}`` roles."""
    found = [(p.name, m) for p in PAGES
             for m in re.findall(r"\{\w+\}`[^`]+`", p.read_text(encoding="utf-8"))]
    assert not found, found


def test_page_links_lead_to_files():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(((?!https?:|#|mailto:)[^)#\s]+)", text):
            assert (page.parent / target).exists(), (page.name, target)


def test_kernel_setting_counts_match_the_default_grid():
    from rntk._model_selection import DEFAULT_GRID
    from rntk.model_selection import DEFAULT_ALPHA

    texts = {p: (ROOT / p).read_text(encoding="utf-8")
             for p in ("docs/getting_started.md", "docs/user_guide/estimators.md")}
    for path, text in texts.items():
        # the current default, not the earlier ones the pages compare it with
        text = "\n".join(line for line in text.splitlines() if "previous" not in line)
        counts = re.findall(r"\((?:default: )?(\d+) kernel\s+settings x (\d+)", text)
        counts += re.findall(r"\b(\d+) kernel\s+settings x (\d+) (?:relative )?ridges", text)
        assert counts, path
        for settings, ridges in counts:
            assert (int(settings), int(ridges)) == (len(DEFAULT_GRID), len(DEFAULT_ALPHA)), path


def test_engine_speed_figures_agree_with_the_benchmark_table():
    table = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    equal = re.search(r"\| equal lengths \| [\d.]+ s \(([\d.]+)e9 pair-steps/s\) \| "
                      r"[\d.]+ s \| ([\d.]+)x \|", table)
    mixed = re.search(r"\| mixed lengths[^|]*\| [\d.]+ s \| [\d.]+ s \| ([\d.]+)x \|", table)
    rate, ratio, ratio_mixed = (round(float(equal.group(1))), round(float(equal.group(2))),
                                round(float(mixed.group(1))))
    speed = (ROOT / "docs" / "user_guide" / "speed.md").read_text(encoding="utf-8")
    assert f"{rate}e9 pair-steps/s, **{ratio}x** the numpy baseline" in speed.replace("\n", " ")
    assert f"{ratio_mixed}x for mixed lengths" in speed


def _bench_csv(name):
    with open(ROOT / "benchmarks" / name, newline="") as f:
        return list(csv.DictReader(f))


def _flat(path):
    return " ".join(path.read_text(encoding="utf-8").split())


def test_probability_figures_agree_with_the_benchmark_results():
    rows = _bench_csv("bench_probabilities.csv")
    both = [r for r in rows if r["calibrated_nll"] not in ("", "nan")]

    def mean(key):
        return sum(float(r[key]) for r in both) / len(both)

    nll, cal_nll = mean("rntk_nll"), mean("calibrated_nll")
    ece, cal_ece = mean("rntk_ece"), mean("calibrated_ece")
    page = _flat(ROOT / "docs" / "user_guide" / "probabilities.md")
    assert f"| **{nll:.3f}** | **{ece:.3f}** |" in page
    assert f"| {cal_nll:.3f} | {cal_ece:.3f} |" in page


def test_regression_figures_agree_with_the_benchmark_results():
    rows = _bench_csv("bench_tser.csv")
    ratio = math.exp(sum(math.log(float(r["rntk_rmse"]) / float(r["minirocket_rmse"]))
                         for r in rows) / len(rows))
    wins = sum(float(r["rntk_rmse"]) < float(r["minirocket_rmse"]) for r in rows)
    below_mean = sum(float(r["rntk_rmse"]) < float(r["mean_rmse"]) for r in rows)
    ours, theirs = (sum(float(r[k]) for r in rows) for k in ("rntk_seconds",
                                                              "minirocket_seconds"))
    times = f"in {ours / theirs:.2f}x its time ({ours:.1f} s against {theirs:.1f} s)"
    page = _flat(ROOT / "docs" / "user_guide" / "regression.md")
    assert (f"on {wins} of the {len(rows)} sets, a geometric mean RMSE ratio to it of "
            f"{ratio:.3f}, {times}; below the mean predictor on {below_mean} of the "
            f"{len(rows)}") in page


def test_docs_name_versions_not_releases():
    """"This release" means nothing once another one is out: the pages name versions."""
    texts = [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *PAGES]
    vague = re.compile(r"\b(this|the previous|the last|the next) release\b|releases ago")
    found = [(p.name, m.group(0)) for p in texts
             for m in vague.finditer(p.read_text(encoding="utf-8"))]
    assert not found, found


def test_the_version_and_the_changelog_agree():
    version = re.search(r'__version__ = "([^"]+)"',
                        (PACKAGE / "_version.py").read_text(encoding="utf-8")).group(1)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", changelog, re.M)
    if version.endswith(".dev0"):  # a development version: its changes are unreleased
        assert headings[0] == f"Unreleased ({version})"
        major, minor = map(int, version.split(".")[:2])
        assert headings[1] == f"{major}.{minor - 1}.0"  # the release it follows
    else:
        assert headings[0] == version
    released = [tuple(map(int, h.split("."))) for h in headings if h[0].isdigit()]
    assert released == sorted(released, reverse=True) and len(set(released)) == len(released)


def test_package_metadata():
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    classifiers = cfg["metadata"]["classifiers"].split("\n")
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert any(c.startswith("License ::") for c in classifiers)
    lowest = cfg["options"]["python_requires"].removeprefix(">=")
    assert f"Programming Language :: Python :: {lowest}" in classifiers
    # no CUDA package on a CPU machine through the extras a user installs for tests
    for extra in ("dev", "torch", "plot", "docs", "examples"):
        requirements = cfg["options.extras_require"][extra]
        assert "cuda" not in requirements.lower(), extra


def test_n_jobs_none_has_one_meaning():
    """Every ``n_jobs : int, default=None`` entry says ``None`` is the current setting."""
    entries = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"n_jobs : int, default=None\\?n?\"?\n(.*?)(?=\n\s*\w+ : |\n\s*\n)",
                             text, re.S):
            entries.append((path.name, m.group(1)))
    assert len(entries) >= 8
    for name, entry in entries:
        flat = re.sub(r'[\s"]+|\\n', " ", entry)
        if "unused" in flat:  # a signature-compatibility parameter
            continue
        assert "``None``: the current setting" in flat or "``None``: joblib's current" in flat, (
            name, flat)


def test_cluster_figures_agree_with_the_benchmark_results():
    rows = _bench_csv("bench_dask_search.csv")
    check = next(r for r in rows if r["part"] == "check" and r["where"] == "cluster")
    assert check["same_selection"] == "True"
    diff = f"{float(check['max_decision_diff']):.1e}"
    bench = _flat(ROOT / "benchmarks" / "README.md")
    assert f"test series is **{diff}**" in bench
    # the table: the latest run of the three sizes
    scaling = [r for r in rows if r["part"].startswith("scaling") and r["where"] == "cluster"]
    last = scaling[-3:]
    assert [int(r["n_train"]) for r in last] == [100_000, 300_000, 1_000_000]
    for r in last:
        assert (f"| {int(r['n_train']):,} | {float(r['fit_s']):,.1f} s | "
                f"{float(r['fit_s_per_1k_relative']):.2f} |") in bench
        assert f"| {int(r['peak_worker_mb']):,} MB |" in bench


def test_the_regression_guide_runs_on_bundled_data(capsys):
    """The guide's first example, as written, on the bundled Covid3Month."""
    text = (ROOT / "docs" / "user_guide" / "regression.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert "load_tser(" in code
    exec(compile(code, "regression.md", "exec"), {})
    assert re.search(r"test RMSE 0\.\d+", capsys.readouterr().out)


# -- the headline numbers: one script, the committed CSVs ----------------------------------
def _headline():
    spec = importlib.util.spec_from_file_location("headline", ROOT / "benchmarks" / "headline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_headline_numbers_are_the_committed_results(page):
    headline = _headline()
    text = (ROOT / page).read_text(encoding="utf-8")
    assert headline.table() in text, f"{page}: run python benchmarks/headline.py, paste its table"
    assert headline.published_sentence() in " ".join(text.split())


def test_headline_figures_are_computed_not_copied():
    """The table's cells come from the CSVs: a changed row changes them."""
    headline = _headline()
    panel = headline.accuracy_panel("bench_panel.csv")
    with open(ROOT / "benchmarks" / "bench_panel.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert panel["n"] == len(rows) == 48
    mean = sum(float(r["rntk_acc"]) for r in rows) / len(rows)
    assert f"| {mean:.2f}% |" in headline.table()
    w, t, loss = panel["wtl"]
    assert w + t + loss == len(rows)
    assert headline.regression_panel()["n"] == len(_bench_csv("bench_tser.csv"))


def test_headline_picture_is_in_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", readme)
    assert pictures and all((ROOT / p).is_file() for p in pictures)


def test_headline_plot_is_drawn_from_the_csvs(tmp_path):
    pytest.importorskip("matplotlib")
    path = _headline().plot(tmp_path / "headline.png")
    assert path.stat().st_size > 10_000


def test_readme_is_short_and_for_users():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 120
    assert "<!--" not in text


def test_the_readme_example_prints_its_result(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Example\n\n```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    accuracy = float(re.search(r"test accuracy: ([\d.]+)%", out).group(1))
    assert accuracy > 90  # GunPoint: the first command's figure


def test_benchmarks_readme_and_changelog_are_short():
    bench = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert len(bench.splitlines()) <= 400
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = [m.start() for m in re.finditer(r"^## ", changelog, re.M)]
    first = changelog[headings[0]:headings[1]]
    if first.startswith("## Unreleased"):
        assert len(first.splitlines()) <= 80


def test_resampled_figures_agree_with_the_benchmark_results():
    headline = _headline()
    bench = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    for label, name, part in (("UCR development", "bench_resamples.csv", None),
                              ("UCR, half 0", "bench_resamples.csv", 0),
                              ("UCR, half 1", "bench_resamples.csv", 1),
                              ("UEA development", "bench_resamples_uea.csv", None)):
        r = headline.resampled(name, part=part)
        row = (f"| {label} | {r['n']} | {r['a']:.2f}% | {r['b']:.2f}% | {r['diff']:+.2f} +- "
               f"{r['se']:.2f} | {'/'.join(map(str, r['wtl']))} |")
        assert row in bench, row
    for label, part in (("UCR development, nested", None), ("UCR, half 0, nested", 0),
                        ("UCR, half 1, nested", 1)):
        r = headline.resampled("bench_nested.csv", part=part, protocol="nested")
        row = (f"| {label} | {r['n']} | {r['a']:.2f}% | {r['b']:.2f}% | {r['diff']:+.2f} +- "
               f"{r['se']:.2f} | {'/'.join(map(str, r['wtl']))} |")
        assert row in bench, row
    for label, part in (("UCR development, drawn to 30", None),
                        ("UCR, half 0, drawn to 30", 0), ("UCR, half 1, drawn to 30", 1)):
        r = headline.resampled("bench_drawn.csv", part=part, protocol="drawn")
        row = (f"| {label} | {r['n']} | {r['a']:.2f}% | {r['b']:.2f}% | {r['diff']:+.2f} +- "
               f"{r['se']:.2f} | {'/'.join(map(str, r['wtl']))} |")
        assert row in bench, row
    for dropped in ("octave_shapes", "level_pool"):
        r = headline.resampled(a=f"rntk_without_{dropped}", b="rntk")
        assert f"{r['diff']:+.2f} +- {r['se']:.2f}" in bench


def test_the_docs_forget_a_mocked_torch_before_each_example(monkeypatch):
    """Without torch, modules autodoc imported under its mock must not reach an example."""
    mock = pytest.importorskip("sphinx.ext.autodoc.mock")
    import sys
    import types

    monkeypatch.syspath_prepend(str(ROOT / "docs"))
    hooks = importlib.import_module("gallery_hooks")
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else object())
    fake_torch = mock._MockModule("torch")
    parent = types.ModuleType("rntk_docs_probe")
    child = types.ModuleType("rntk_docs_probe.engine")
    child.torch = fake_torch
    parent.engine = child
    plain = types.ModuleType("rntk_docs_probe.plain")
    for name, module in (("torch", fake_torch), ("rntk_docs_probe", parent),
                         ("rntk_docs_probe.engine", child), ("rntk_docs_probe.plain", plain)):
        monkeypatch.setitem(sys.modules, name, module)
    hooks.forget_mocked_torch({}, None)
    assert "torch" not in sys.modules and "rntk_docs_probe.engine" not in sys.modules
    assert not hasattr(parent, "engine")
    assert sys.modules["rntk_docs_probe.plain"] is plain
