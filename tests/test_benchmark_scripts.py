"""The scripts of ``benchmarks/``: public names only, and a ``--quick`` mode that runs."""

import ast
import csv
import importlib.util
import json
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py"))
#: scripts that still import private names (their own issues); not to grow
PRIVATE_YET = {"bench_gpu.py", "tune_default_grid.py", "tune_readout_grid.py"}


def _private_imports(path):
    """``rntk`` imports of ``path`` that name a private module or name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] == "rntk":
            mods = node.module.split(".")
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            mods = [m for a in node.names for m in a.name.split(".")
                    if a.name.split(".")[0] == "rntk"]
            names = []
        else:
            continue
        if any(m.startswith("_") for m in mods) or any(n.startswith("_") for n in names):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("script", [
    pytest.param(s, marks=pytest.mark.xfail(reason="imports private names; owned by "
                                            "another issue", strict=False))
    if s in PRIVATE_YET else s for s in SCRIPTS])
def test_scripts_use_public_names(script):
    assert _private_imports(BENCHMARKS / script) == []


def test_the_private_import_check_can_fail(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("from rntk._utils import as_sequences\nimport rntk.benchmarking._cli\n"
                 "from rntk.datasets import _download\nfrom rntk import rntk_kernel\n")
    assert len(_private_imports(p)) == 3


def _script(name):
    spec = importlib.util.spec_from_file_location(name[:-3], BENCHMARKS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(autouse=True)
def _bundled_data(monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")


# Each script's --quick mode runs in this process (numba compiles once) on the bundled
# Coffee data or a few synthetic series.
def test_ucr_quick(tmp_path):
    assert _script("ucr.py").main(["--quick", "--out", str(tmp_path), "--quiet"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["protocol"] == "fast" and summary["datasets"] == ["Coffee"]
    assert set(summary["accuracy"]) == {"rntk", "rbf"}
    assert all(50 <= a["Coffee"] <= 100 for a in summary["accuracy"].values())


def test_bench_model_selection_quick(tmp_path):
    result = _script("bench_model_selection.py").main(["--quick", "--out", str(tmp_path)])
    assert result["dataset"] == "Coffee" and result["n_candidates"] == 12
    # the script's claim: both searches score every candidate alike (on Coffee several
    # candidates tie for the best, so the two may name different ones)
    assert result["max_mean_score_difference"] < 1e-9
    assert 0.5 <= result["best_score"] <= 1
    assert (tmp_path / "Coffee_quick.json").exists()


def test_bench_nystroem_ucr_quick(tmp_path):
    _script("bench_nystroem_ucr.py").main(["--quick", "--out", str(tmp_path)])
    rows = _csv(tmp_path / "bench_nystroem_ucr.csv")
    assert [r["method"] for r in rows] == ["exact", "nystroem8", "nystroem16"]
    assert all(0.5 <= float(r["accuracy"]) <= 1 for r in rows)
    assert (tmp_path / "bench_nystroem_ucr.md").exists()


def test_bench_scale_quick(tmp_path):
    _script("bench_scale.py").main(["--quick", "--out", str(tmp_path)])
    rows = _csv(tmp_path / "results.csv")
    assert [r["method"] for r in rows] == ["exact", "memmap", "nystroem"]
    assert all(int(r["n"]) == 40 and float(r["seconds"]) >= 0 for r in rows)


def test_bench_ucr_protocols_quick(tmp_path):
    _script("bench_ucr_protocols.py").main(["--quick", "--out", str(tmp_path)])
    rows = _csv(tmp_path / "results.csv")
    assert [(r["dataset"], r["method"]) for r in rows] == [("Coffee", "rntk"),
                                                           ("Coffee", "rntk-paper")]
    assert all(0.5 <= float(r["accuracy"]) <= 1 for r in rows)
    assert (tmp_path / "summary.md").exists()
