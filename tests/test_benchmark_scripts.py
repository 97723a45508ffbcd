"""The scripts of ``benchmarks/``: public names only, and a ``--quick`` mode that runs.

Marked ``slow`` as a whole (about two minutes on 2 cores): they test the research
scripts, not the package, so ``pytest -m "not slow"`` leaves them out; the default run
and CI run them.
"""

import ast
import csv
import functools
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from contextlib import ExitStack
from math import comb
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest

from rntk import RNTK, RNTKClassifier, RNTKClassifierCV, as_object_array, rntk_kernel
from rntk._model_selection import DEFAULT_PRIOR
from rntk._utils import as_sequences
from rntk.model_selection import DEFAULT_ALPHA

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
STUDIES = BENCHMARKS / "studies"
#: The timing scripts and the studies (not the studies' harness, a module).
SCRIPTS = sorted(p.name for p in [*BENCHMARKS.glob("*.py"), *STUDIES.glob("tune_*.py")])


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


#: The examples, which users copy: public names only (the benchmark studies may read
#: private ones, which are not API: see the developer docs).
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_examples_use_public_names(example):
    assert _private_imports(example) == []


def test_the_private_import_check_can_fail(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("from rntk._utils import as_sequences\nimport rntk.benchmarking._cli\n"
                 "from rntk.datasets import _download\nfrom rntk import rntk_kernel\n")
    assert len(_private_imports(p)) == 3


@functools.cache
def _test_sources():
    """Source of every test function of ``tests/``."""
    found = []
    for path in sorted(Path(__file__).resolve().parent.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.append(ast.get_source_segment(text, node))
    return found


#: Scripts without a long run to shorten: headline.py reads the committed CSVs (its table
#: and its plot are run by tests/test_docs.py).
NO_QUICK_MODE = {"headline.py"}


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s not in NO_QUICK_MODE])
def test_every_script_has_a_quick_mode_that_a_test_runs(script):
    # bench_gpu.py's --quick (alias --smoke) runs on numba's CUDA simulator, in
    # test_cuda_sim.py
    source = _path(script).read_text(encoding="utf-8")
    # the nested-CV studies take it from the harness's study_args
    assert '"--quick"' in source or "T.study_args(" in source, \
        f"{script} has no --quick option"
    runs = [src for src in _test_sources() if re.search(rf"\b{re.escape(script)}\b", src)
            and re.search(r"\.main\(\[", src)]
    assert any('"--quick"' in src or (script == "bench_gpu.py" and '"--smoke"' in src)
               for src in runs), f"no test runs {script} --quick"


def _path(name):
    """A timing script of ``benchmarks/``, else a study of ``benchmarks/studies/``."""
    return BENCHMARKS / name if (BENCHMARKS / name).exists() else STUDIES / name


def test_no_study_among_the_timing_scripts():
    assert not list(BENCHMARKS.glob("tune_*.py"))
    assert (STUDIES / "harness.py").exists()


def _script(name):
    spec = importlib.util.spec_from_file_location(name[:-3], _path(name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


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


def test_bench_kernel_quick(tmp_path):
    result = _script("bench_kernel.py").main(["--quick", "--repeat", "1",
                                              "--out", str(tmp_path)])
    assert (result["N"], result["T"]) == (150, 60)
    assert result["equal"]["max_rel_diff"] < 1e-10
    assert result["scaling_N"]["N"] == [50, 100, 200, 400]
    assert json.loads((tmp_path / "bench_kernel.json").read_text())["N"] == 150


def test_bench_kernel_compares_precisions():
    result = _script("bench_kernel.py").main(["--quick", "--compare-precision"])
    assert "default banded" in result and "erf" in result
    # the float32 engine is the float64 one to float32's rounding, not bitwise
    assert all(0 < r["max_rel_diff"] < 1e-3 for r in result.values())
    assert all(r["ratio"] > 0 for r in result.values())


#: The synthetic panel: (name, n_train, n_test, length); Beef is in the quick list of
#: tune_panel_grid.py and in the RNTK paper's table (tune_default_grid.py,
#: tune_readout_grid.py); the other set is larger, so --quick picks Beef.
PANEL = [("Beef", 10, 8, 16), ("Coffee", 12, 10, 20)]


@pytest.fixture
def panel(tmp_path):
    """A tiny UCR panel: ``ucr/<name>/<name>_{TRAIN,TEST}.tsv`` and ``peer_results.csv``."""
    rng = np.random.default_rng(0)
    home = tmp_path / "panel" / "ucr"
    peers = []
    for name, n_train, n_test, t in PANEL:
        (home / name).mkdir(parents=True)
        for split, n in (("TRAIN", n_train), ("TEST", n_test)):
            y = np.arange(n) % 2 + 1
            X = np.sin(np.linspace(0, 3, t)[None] * y[:, None]) + rng.normal(size=(n, t))
            np.savetxt(home / name / f"{name}_{split}.tsv", np.column_stack([y, X]),
                       delimiter="\t", fmt="%.6g")
        peers.append(dict(dataset=name, n_train=n_train, n_test=n_test, min_length=t,
                          max_length=t, n_classes=2, published_hc2=90.0,
                          published_mr_hydra=91.0))
    _write_csv(home.parent / "peer_results.csv", peers)
    return home


@pytest.mark.parametrize("hide_aeon", [False, True])
def test_bench_panel_quick(panel, tmp_path, monkeypatch, hide_aeon):
    if hide_aeon:  # the CI run has no aeon: MiniRocket's columns are nan
        monkeypatch.setitem(sys.modules, "aeon", None)
    aeon = importlib.util.find_spec("aeon") is not None
    _script("bench_panel.py").main(["--quick", "--data-home", str(panel),
                                    "--out", str(tmp_path / "out")])
    rows = _csv(tmp_path / "out" / "results.csv")
    assert [r["dataset"] for r in rows] == ["Beef"]
    assert 0 <= float(rows[0]["rntk_acc"]) <= 100 and float(rows[0]["rntk_s"]) > 0
    assert np.isnan(float(rows[0]["minirocket_acc"])) != aeon
    assert "1 sets: rntk" in (tmp_path / "out" / "summary.md").read_text()


@pytest.fixture
def ts_panel(tmp_path):
    """The UEA layout: ``NAME/NAME_{TRAIN,TEST}.ts``, multivariate, of unequal lengths, and
    a ``peer_results.csv`` of other sets beside the folder (as ``../shared/data`` holds)."""
    rng = np.random.default_rng(0)
    home = tmp_path / "data" / "uea"
    (home / "Motions").mkdir(parents=True)
    _write_csv(home.parent / "peer_results.csv", [dict(dataset="Other", n_train=1)])
    for split, n in (("TRAIN", 12), ("TEST", 8)):
        lines = ["@problemName Motions", "@timeStamps false", "@missing false",
                 "@univariate false", "@dimensions 2", "@equalLength false",
                 "@classLabel true a b", "@data"]
        for i in range(n):
            t = int(rng.integers(10, 16))
            x = rng.normal(size=(2, t)) + (i % 2)
            lines.append(":".join(",".join(f"{v:.5g}" for v in ch) for ch in x)
                         + (":a" if i % 2 == 0 else ":b"))
        (home / "Motions" / f"Motions_{split}.ts").write_text("\n".join(lines) + "\n")
    return home


def test_bench_panel_reads_a_ts_panel(ts_panel, tmp_path):
    home = ts_panel
    _script("bench_panel.py").main(["--quick", "--data-home", str(home),
                                    "--out", str(tmp_path / "out")])
    (row,) = _csv(tmp_path / "out" / "results.csv")
    assert row["dataset"] == "Motions" and 0 <= float(row["rntk_acc"]) <= 100
    assert "| Motions | 12 |" in (tmp_path / "out" / "summary.md").read_text()


def test_bench_panel_compares_without_the_unit_rms_rule(panel, tmp_path, monkeypatch):
    module = _script("bench_panel.py")
    seen = []
    real = module._run

    def run(m, make, *data):  # the baseline fits with DEFAULT_SAME emptied, and only then
        est = make()
        seen.append((m, dict(module.DEFAULT_SAME)))
        if m == "every":
            assert isinstance(est, module._EveryGram)
        return real(m, lambda: est, *data)

    monkeypatch.setattr(module, "_run", run)
    monkeypatch.setattr(module, "_warm_up", lambda methods: None)
    module.main(["--quick", "--compare-unit-rms", "--datasets", "Beef", "--data-home",
                 str(panel), "--out", str(tmp_path / "out")])
    (row,) = _csv(tmp_path / "out" / "results.csv")
    assert row["every_acc"] == row["rntk_acc"] and float(row["every_s"]) > 0
    assert "Without the unit-RMS rule" in (tmp_path / "out" / "summary.md").read_text()
    assert module.DEFAULT_SAME and all(same for _, same in seen)  # restored after each fit
    with patch.dict(module.DEFAULT_SAME, {9: 1}):  # emptied inside _EveryGram.fit
        from rntk._model_selection import DEFAULT_SAME
        inside = []
        monkeypatch.setattr(module.RNTKClassifierCV, "fit",
                            lambda self, X, y: inside.append(dict(DEFAULT_SAME)) or self)
        module._EveryGram().fit(None, None)
        assert inside == [{}] and DEFAULT_SAME[9] == 1


def test_bench_panel_repeat_keeps_each_methods_best_time(panel, tmp_path, monkeypatch):
    module = _script("bench_panel.py")
    times = {"rntk": iter([3.0, 1.0, 2.0]), "minirocket": iter([0.5, 0.7, 0.4])}
    monkeypatch.setattr(module, "_methods", lambda _: {"rntk": None, "minirocket": None})
    monkeypatch.setattr(module, "_warm_up", lambda methods: None)
    monkeypatch.setattr(module, "_run", lambda m, make, *data: (0.5, next(times[m]), {}))
    module.main(["--repeat", "3", "--datasets", "Beef", "--data-home", str(panel),
                 "--out", str(tmp_path / "out")])
    (row,) = _csv(tmp_path / "out" / "results.csv")
    assert (float(row["rntk_s"]), float(row["minirocket_s"])) == (1.0, 0.4)
    assert float(row["rntk_acc"]) == 50.0
    # a method whose repeats disagree is not deterministic: its timing rows are refused
    accs = iter([0.5, 0.5, 0.6, 0.5])
    monkeypatch.setattr(module, "_run", lambda m, make, *data: (next(accs), 1.0, {}))
    with pytest.raises(RuntimeError, match="accuracies differ"):
        module.main(["--repeat", "2", "--datasets", "Beef", "--data-home", str(panel),
                     "--out", str(tmp_path / "out2")])

def test_tune_panel_grid_quick(panel, tmp_path):
    module = _script("tune_panel_grid.py")
    out, cache = tmp_path / "out", tmp_path / "cache"
    module.main(["--quick", "--data-home", str(panel), "--out", str(out),
                 "--cache", str(cache)])
    rows = _csv(out / "nested.csv")
    assert {r["dataset"] for r in rows} == {"Beef"}  # Coffee is not in QUICK
    assert len(rows) == len(module.VARIANTS) * len(module.CRITERIA)
    assert all(0 <= float(r["nested"]) <= 1 and 0 <= float(r["test"]) <= 1 for r in rows)
    assert len(list(cache.glob("Beef__*.npz"))) == len(module.SETTINGS)
    assert (out / "nested.md").exists() and (out / "fixed.md").exists()


def test_tune_panel_ensembles_quick(panel, tmp_path):
    module = _script("tune_panel_ensembles.py")
    out = tmp_path / "out"
    rows = module.main(["--quick", "--data-home", str(panel), "--out", str(out),
                        "--cache", str(tmp_path / "cache")])
    assert [r["variant"] for r in rows][:len(module.RULES)] == list(module.RULES)
    assert all(0 <= r["nested"] <= 100 and 0 <= r["test"] <= 100 for r in rows)
    assert [r["variant"] for r in _csv(out / "rules.csv")] == [r["variant"] for r in rows]
    assert (out / "rules.md").exists()


def test_cawpe_weights_the_settings_by_their_loo_accuracy():
    module = _script("tune_panel_ensembles.py")
    y = np.array([0, 1, 0, 1])
    classes, Y = np.array([0, 1]), np.where(np.eye(2)[y] > 0, 1.0, -1.0)
    right, half = Y.copy(), Y.copy()
    half[:2] *= -1  # the first two series predicted wrong
    n_alpha = len(module.DEFAULT_ALPHA)
    t = dict(loo=np.array([[half] * n_alpha, [right] * n_alpha]), Y=Y, y=y, classes=classes)
    picks = module.rule_cawpe(t, [0, 1])
    assert [p[0] for p, _ in picks] == [1, 0]  # best first
    np.testing.assert_allclose([w for _, w in picks], [1.0, 0.5 ** 4])
    assert len(module.rule_cawpe(t, [0, 1], k=1)) == 1


def test_tune_panel_ensembles_replace_quick(panel, tmp_path):
    module = _script("tune_panel_ensembles.py")
    rows = module.main(["--replace", "--quick", "--data-home", str(panel), "--out",
                        str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    by_name = {r["variant"]: r for r in rows}
    assert rows[0]["variant"] == "the default" and rows[0]["nested_diff"] == 0
    for name in ("without last_d0", "without spec_band8_short",
                 "band8_cap128_lag3d1 for band8_cap128", "pool8_bi for pool8",
                 "raw_band8_cap128_lag3d1 for raw_band8_cap128", "+ band8_cap128_bw"):
        assert 0 <= by_name[name]["nested"] <= 100
    assert all(0 <= r["test"] <= 100 for r in rows)
    assert (tmp_path / "out" / "replace.md").exists()


def test_tune_precision_quick(panel, tmp_path):
    module = _script("tune_precision.py")
    cache = tmp_path / "cache"
    module.main(["--quick", "--data-home", str(panel), "--out", str(tmp_path / "out"),
                 "--cache", str(cache)])
    rows = _csv(tmp_path / "out" / "precision.csv")
    assert [(r["dataset"], r["precision"]) for r in rows] == [
        ("Beef", p) for p in module.PRECISIONS]
    assert all(0 <= float(r[h]) <= 100 for r in rows for h in ("nested", "shot2", "test"))
    # seven Grams per precision, cached apart; "auto" reads them
    assert len(list(cache.glob("Beef__*__float32.npz"))) == len(module.SEVEN)
    assert len(list(cache.glob("Beef__*.npz"))) == 2 * len(module.SEVEN)
    assert "auto - float64" in (tmp_path / "out" / "precision.md").read_text()
    assert module.setting_precision("auto", "last_d0") == "float64"
    assert module.setting_precision("auto", "pool8") == "float32"


def test_tune_local_shapes_quick(panel, tmp_path):
    module = _script("tune_local_shapes.py")
    rows = module.main(["--quick", "--data-home", str(panel), "--out", str(tmp_path / "out"),
                        "--cache", str(tmp_path / "cache")])
    variants = list(module.plans())
    assert [r["variant"] for r in rows] == variants  # Beef alone
    assert len(variants) == 1 + 2 * len(module.VARIANTS)
    assert all(0 <= r[h] <= 100 for r in rows for h in ("nested", "shot2", "test"))
    assert "in place of the quantiles" in (tmp_path / "out" / "local_shapes.md").read_text()
    # --replace: qd_c beside qd_b, in place of each setting outside the prior pair
    rows = module.main(["--quick", "--replace", "--data-home", str(panel), "--out",
                        str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    plans = module.replace_plans()
    assert [r["variant"] for r in rows] == list(plans)
    assert len(plans) == 3 + 4 and all(len(p) == 7 for p in list(plans.values())[3:])
    assert "in place of last_d0" in (tmp_path / "out" / "replace.md").read_text()
    # --levels: the default's two shape settings on 32 levels, each or both
    replaced = rows
    rows = module.main(["--quick", "--levels", "--data-home", str(panel), "--out",
                        str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    # its baseline is the --replace study's kept variant: the same settings, the same scores
    kept = next(r for r in replaced if r["variant"].endswith("in place of last_d0"))
    assert {h: rows[0][h] for h in module.HOWS} == {h: kept[h] for h in module.HOWS}
    assert [r["variant"] for r in rows] == list(module.levels_plans())
    assert all(len(p) == 7 and 0 not in p for p in module.levels_plans().values())
    assert "both on 32 levels" in (tmp_path / "out" / "levels.md").read_text()


def test_tune_cntk_quick(panel, tmp_path):
    module = _script("tune_cntk.py")
    rows = module.main(["--quick", "--data-home", str(panel), "--out", str(tmp_path / "out"),
                        "--cache", str(tmp_path / "cache")])
    variants = list(module.plans())
    assert [r["variant"] for r in rows] == variants  # Beef alone
    assert len(variants) == 1 + 2 * len(module.VARIANTS)
    assert all(0 <= r[h] <= 100 for r in rows for h in ("nested", "shot2", "test"))
    assert all(r["gram_seconds"] > 0 for r in rows[1:])
    assert "beside the seven" in (tmp_path / "out" / "cntk.md").read_text()


def test_tune_channels_quick(ts_panel, tmp_path):
    module = _script("tune_channels.py")
    rows = module.main(["--quick", "--data-home", str(ts_panel), "--out", str(tmp_path / "out"),
                        "--cache", str(tmp_path / "cache")])
    assert [r["variant"] for r in rows] == list(module.plans())
    assert all(r["channels"] == 2 and 0 <= r["nested"] <= 100 for r in rows)
    # the mean over channels is the mean of the one-channel Grams
    xtr, _, xte, _ = _script("tune_local_shapes.py").load("Motions", ts_panel)
    G = module.set_grams("Motions", (xtr, xte), tmp_path / "cache")
    one = [_script("harness.py").grams(f"Motions__ch{c}", "pool8",
                                               ([x[:, c:c + 1] for x in xtr], None),
                                               tmp_path / "cache", "float32")[0]
           for c in range(2)]
    np.testing.assert_allclose(G[10 + module.SIX.index("pool8") - 1][0], (one[0] + one[1]) / 2)
    scaled = module.channels_scaled(xtr)
    assert all(np.allclose(np.mean(s * s, axis=0), 0.5) for s in scaled)
    assert "mean over channels" in (tmp_path / "out" / "channels.md").read_text()


def test_tune_target_transform_quick(tser_panel, tmp_path):
    module = _script("tune_target_transform.py")
    rows = module.main(["--quick", "--data-home", str(tser_panel), "--out", str(tmp_path)])
    # the first set has negative targets: the identity alone
    assert [r["transform"] for r in rows] == ["identity"]
    assert rows[0]["nested_rmse"] > 0 and rows[0]["test_rmse"] > 0
    X = np.abs(np.random.default_rng(0).normal(size=(24, 10))) + 1.0
    y = X.mean(axis=1)
    got = module.scores(X[:16], y[:16], X[16:], y[16:], _script("bench_tser.py").QUICK_GRID)
    assert list(got) == list(module.TRANSFORMS)
    assert (tmp_path / "target_transform.md").exists()


def test_tune_precision_tser_quick(tser_panel, tmp_path):
    module = _script("tune_precision.py")
    rows = module.main(["--quick", "--tser", str(tser_panel), "--out", str(tmp_path)])
    assert [r["precision"] for r in rows] == ["float64", "auto"]
    assert all(r["test_rmse"] > 0 and r["nested_rmse"] > 0 for r in rows)
    assert [r["precision"] for r in _csv(tmp_path / "regression.csv")] == ["float64", "auto"]
    assert "geometric mean" in (tmp_path / "regression.md").read_text()


def test_bench_panel_compares_precisions(panel, tmp_path):
    module = _script("bench_panel.py")
    module.main(["--quick", "--compare-precision", "float64", "--datasets", "Beef",
                 "--data-home", str(panel), "--out", str(tmp_path / "out")])
    (row,) = _csv(tmp_path / "out" / "results.csv")
    assert 0 <= float(row["precision_acc"]) <= 100 and float(row["precision_s"]) > 0
    assert "With the other precision" in (tmp_path / "out" / "summary.md").read_text()


def test_lag_window_reads_the_lagged_steps_as_channels():
    lag_window = _script("harness.py").lag_window
    x = np.column_stack([np.arange(1.0, 6.0), -np.arange(1.0, 6.0)])
    expected = np.array([[1, -1, 0, 0], [2, -2, 0, 0], [3, -3, 1, -1], [4, -4, 2, -2],
                         [5, -5, 3, -3]]) / np.sqrt(2)
    np.testing.assert_allclose(lag_window(x, 2, 2), expected, rtol=1e-15)
    np.testing.assert_array_equal(lag_window(x, 1, 3), x)
    # taps before the first step are zeros, however long the dilation
    np.testing.assert_allclose(lag_window(x, 3, 4)[:, 4:], 0)
    np.testing.assert_allclose(lag_window(x, 3, 4)[4, 2:4] * np.sqrt(3), x[0])


def test_tune_default_grid_quick(panel, tmp_path):
    module = _script("tune_default_grid.py")
    module.main(["--quick", "--data-home", str(panel), "--out", str(tmp_path)])
    rows = _csv(tmp_path / "nested_cv.csv")
    assert [r["grid"] for r in rows] == list(module.GRIDS)
    assert {r["dataset"] for r in rows} == {"Beef"}
    assert all(0 <= float(r["nested_cv"]) <= 1 for r in rows)
    assert (tmp_path / "nested_cv.md").exists()


def test_tune_readout_grid_quick(panel, tmp_path):
    module = _script("tune_readout_grid.py")
    module.main(["--quick", "--data-home", str(panel), "--out", str(tmp_path / "out"),
                 "--cache", str(tmp_path / "cache")])
    rows = _csv(tmp_path / "out" / "nested.csv")
    assert [r["grid"] for r in rows] == list(module.GRIDS)
    assert {r["dataset"] for r in rows} == {"Beef"}
    assert all(0 <= float(r["nested_cv"]) <= 1 and 0 <= float(r["test"]) <= 1
               for r in rows)


def test_bench_large_n_unit_rms_quick(tmp_path):
    out = tmp_path / "large_n.csv"
    _script("bench_large_n.py").main(["--quick", "--unit-rms", "60", "--out", str(out)])
    rows = _csv(out)
    assert [r["method"][-3:].strip() for r in rows] == ["on", "off"]
    # two kernels (the level band's inputs differ by sqrt(99 / 100)): both good, not equal
    # by construction
    assert all(float(r["accuracy"]) > 0.9 for r in rows)
    assert all(r["part"] == "unit_rms" and float(r["fit_s"]) > 0 for r in rows)


def test_bench_large_n_quick(tmp_path):
    out = tmp_path / "large_n.csv"
    _script("bench_large_n.py").main(["--quick", "--only", "rntk", "--out", str(out)])
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1 and "[features]" in rows[0]["method"]
    assert int(rows[0]["n_components"]) == 40 and float(rows[0]["accuracy"]) > 0.5


def test_bench_large_n_multichannel_quick(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)  # the CI run has no aeon
    out = tmp_path / "large_n.csv"
    module = _script("bench_large_n.py")
    X, y = module.multichannel_waves(8)
    assert X.shape == (8, 36, 6) and set(y) <= {0, 1, 2, 3}
    module.main(["--quick", "--multichannel", "2500", "--out", str(out)])
    (row,) = list(csv.DictReader(out.open()))
    assert row["part"] == "multichannel" and int(row["n_train"]) == 300
    assert float(row["accuracy"]) > 0.5


def test_bench_dask_search_quick(tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "dask.csv"
    _script("bench_dask_search.py").main(["--quick", "--threads", "--out", str(out)])
    rows = _csv(out)
    # the scaling rows of the cluster say that Dask's profiler was off in its workers
    assert [(r["part"], r["where"]) for r in rows] == [
        ("check", "in process"), ("check", "cluster"), ("scaling profiler off", "cluster"),
        ("scaling", "in process"), ("scaling profiler off", "cluster")]
    assert all(float(r["peak_worker_mb"]) > 0 for r in rows if r["where"] == "cluster"
               and r["part"] != "check")
    # the cluster's search is the one of this process, to rounding
    assert all(r["same_selection"] == "True" for r in rows if r["same_selection"])
    assert all(float(r["max_decision_diff"]) < 1e-10 for r in rows if r["max_decision_diff"])
    assert all(float(r["accuracy"]) > 0.9 for r in rows)
    assert (tmp_path / "dask.png").stat().st_size > 0


@pytest.mark.slow
def test_bench_first_run_quick(tmp_path, monkeypatch):
    # on a copy of the package: the cold run deletes the numba cache of the tree it times
    shutil.copytree(ROOT / "rntk", tmp_path / "rntk",
                    ignore=shutil.ignore_patterns("__pycache__"))
    module = _script("bench_first_run.py")
    monkeypatch.setattr(module, "ROOT", tmp_path)
    summary = module.main(["--quick"])
    after = summary["after"]
    assert after["cold_wall"] > 0 and after["warm_wall"] > 0
    assert np.isfinite(after["cold_fit"]) and np.isfinite(after["warm_fit"])


@pytest.fixture
def tser_panel(tmp_path):
    """A tiny extrinsic-regression panel: ``<name>/<name>_{TRAIN,TEST}.ts`` and the
    published RMSEs beside it."""
    rng = np.random.default_rng(0)
    home = tmp_path / "tser"
    rows = []
    for name, n, t, m in (("Levels", 24, 16, 2), ("Sums", 20, 12, 1)):
        (home / name).mkdir(parents=True)
        for split, size in (("TRAIN", n), ("TEST", n // 2)):
            X = rng.normal(size=(size, m, t)) + rng.normal(size=(size, 1, 1))
            y = X.mean(axis=(1, 2)) + 0.1 * rng.normal(size=size)
            lines = ["@problemName " + name, "@timeStamps false", "@missing false",
                     f"@univariate {'true' if m == 1 else 'false'}",
                     f"@dimensions {m}", "@equalLength true", f"@seriesLength {t}",
                     "@targetLabel true", "@data"]
            lines += [":".join(",".join(f"{v:.6g}" for v in ch) for ch in x) + f":{yy:.6g}"
                      for x, yy in zip(X, y)]
            (home / name / f"{name}_{split}.ts").write_text("\n".join(lines) + "\n")
        rows.append({"dataset": name, "method": "FreshPRINCE", "rmse": 0.5,
                     "mean_rmse_30_resamples": 0.5})
    _write_csv(home / "published_rmse.csv", rows)
    return home


@pytest.mark.parametrize("hide_aeon", [False, True])
def test_bench_tser_quick(tser_panel, tmp_path, monkeypatch, hide_aeon):
    if hide_aeon:  # the CI run has no aeon: MiniRocket's columns are absent
        monkeypatch.setitem(sys.modules, "aeon", None)
    aeon = importlib.util.find_spec("aeon") is not None
    rows = _script("bench_tser.py").main(["--quick", "--data-home", str(tser_panel),
                                          "--out", str(tmp_path / "out")])
    assert [r["dataset"] for r in rows] == ["Levels"]
    assert rows[0]["rntk_rmse"] < rows[0]["mean_rmse"]  # the level is the target
    assert rows[0]["published_FreshPRINCE"] == 0.5
    assert ("minirocket_rmse" in rows[0]) == aeon
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "1 sets: rntk below the mean predictor on 1" in text
    assert (tmp_path / "out" / "results.csv").exists()


def test_bench_tser_full_default_on_the_tiny_panel(tser_panel, tmp_path, monkeypatch):
    """Without --quick the default RNTKRegressorCV() runs on every set."""
    monkeypatch.setitem(sys.modules, "aeon", None)
    rows = _script("bench_tser.py").main(["--data-home", str(tser_panel),
                                          "--out", str(tmp_path / "out")])
    assert [r["dataset"] for r in rows] == ["Levels", "Sums"]
    assert all(r["rntk_rmse"] < r["mean_rmse"] for r in rows)


def test_bench_tser_on_resamples(tser_panel, tmp_path, monkeypatch):
    """--resamples: one CSV row per set and split, the summary on their means, the
    published columns the bake-off's means over 30 resamples."""
    monkeypatch.setitem(sys.modules, "aeon", None)
    rows = _script("bench_tser.py").main(["--quick", "--resamples", "3", "--data-home",
                                          str(tser_panel), "--out", str(tmp_path / "out")])
    raw = _csv(tmp_path / "out" / "results.csv")
    assert [int(r["resample"]) for r in raw] == [0, 1, 2]
    assert rows[0]["resamples"] == 3
    assert np.isclose(rows[0]["rntk_rmse"], np.mean([float(r["rntk_rmse"]) for r in raw]))
    assert len({r["rntk_rmse"] for r in raw}) == 3  # three different splits
    assert rows[0]["published_FreshPRINCE"] == 0.5
    assert "Means over 3 resamples" in (tmp_path / "out" / "summary.md").read_text()


def test_regression_resamples_keep_the_sizes_and_draw_at_random(rng):
    module = _script("bench_resamples.py")
    X = rng.normal(size=(15, 6))
    y = rng.normal(size=15)
    a, ya, b, yb = module.resample(X[:10], y[:10], X[10:], y[10:], 1, stratify=False)
    assert len(ya) == 10 and len(yb) == 5
    assert sorted(np.r_[ya, yb]) == sorted(y)  # a partition of the pooled targets
    assert not np.array_equal(np.sort(ya), np.sort(y[:10]))


def test_tune_regression_resamples_quick(tser_panel, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)
    tune = _script("tune_regression_resamples.py")
    rows = tune.main(["--quick", "--data-home", str(tser_panel), "--out",
                      str(tmp_path / "out")])
    assert {r["protocol"] for r in rows} == {"resampled", "nested"}
    assert {r["method"] for r in rows} == {"default", "intervals"}
    assert all(0 < r["rmse"] < r["mean_rmse"] * 1.5 for r in rows)
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "| intervals |" in text and "ratio to default's" in text


def test_the_averaging_rules_of_the_regression_study(rng):
    """The prefix and greedy rules refit averages of the best members, as scored."""
    tune = _script("tune_regression_resamples.py")
    X = rng.normal(size=(30, 16))
    y = X[:, :8].mean(axis=1) + 0.05 * rng.normal(size=30)
    for members in ("prefix", "greedy"):
        fitted = tune.Variant(("intervals", "quantiles", "band"), 3,
                              [1e-3, np.inf], members=members)().fit(X, y)
        search = fitted.search_
        assert search.loo_score_ > 0.5
        assert fitted.predict(X[:3]).shape == (3,)


def test_tune_regression_grid_quick(tser_panel, tmp_path):
    tune = _script("tune_regression_grid.py")
    rows = tune.main(["--quick", "--data-home", str(tser_panel), "--out",
                      str(tmp_path / "out"), "--test"])
    grids = {(r["grid"], r["k"]) for r in rows}
    assert ("spectrum", 1) in grids and ("spectrum+band+pool8", 2) in grids
    assert all(r["dataset"] == "Levels" for r in rows)
    assert all(0 < r["nested_ratio"] < 1.5 and r["gram_seconds"] > 0 for r in rows)
    assert "| grid | k |" in (tmp_path / "out" / "nested.md").read_text()
    # the cached Grams are reused: a second run reads them
    again = tune.main(["--quick", "--data-home", str(tser_panel), "--out",
                       str(tmp_path / "out")])
    assert [r["nested_ratio"] for r in again] == [r["nested_ratio"] for r in rows]


def test_bench_probabilities_quick(panel, tmp_path):
    rows = _script("bench_probabilities.py").main(["--quick", "--data-home", str(panel),
                                                   "--out", str(tmp_path / "out")])
    assert len(rows) == 1
    r = rows[0]
    for m in ("rntk", "calibrated"):
        assert 0 <= r[f"{m}_accuracy"] <= 1 and r[f"{m}_nll"] > 0 and 0 <= r[f"{m}_ece"] <= 1
    assert r["rntk_s"] > 0 and r["no_proba_s"] > 0 and r["calibrated_s"] > 0
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "without probabilities" in text and "CalibratedClassifierCV" in text


def test_tune_calibration_quick(panel, tmp_path):
    rows = _script("tune_calibration.py").main(["--quick", "--data-home", str(panel),
                                                "--out", str(tmp_path / "out")])
    assert len(rows) == 1 and set(rows[0]) == {"dataset", "labels", "platt", "none"}
    assert all(v > 0 for k, v in rows[0].items() if k != "dataset")
    assert "| platt |" in (tmp_path / "out" / "calibration.md").read_text()


def test_tune_calibration_fits_the_packages_temperature(rng):
    """The script's candidates are the package's temperature, on its two targets."""
    from rntk._model_selection._calibration import fit_temperature

    tune = _script("tune_calibration.py")
    D = rng.normal(size=(30, 3)) + np.eye(3)[np.repeat([0, 1, 2], 10)]
    y = np.repeat([0, 1, 2], 10)
    assert tune.CANDIDATES["platt"](D, y) == pytest.approx(fit_temperature(D, y), rel=1e-4)
    assert tune.CANDIDATES["labels"](D, y) == pytest.approx(
        fit_temperature(D, y, targets="labels"), rel=1e-4)


def test_tune_screening_quick(panel, tmp_path):
    module = _script("tune_screening.py")
    rows = module.main(["--quick", "--data-home", str(panel), "--min-train", "10",
                        "--out", str(tmp_path / "out")])
    assert [r["dataset"] for r in rows] == ["Beef"]  # the smallest eligible set only
    (row,) = _csv(tmp_path / "out" / "screening.csv")
    assert all(0 <= float(row[k]) <= 100 for k in
               ("nested_none", "nested_screen", "test_none", "test_screen"))
    assert float(row["fit_s_none"]) > 0 and 0 <= float(row["nested_same"]) <= 1
    assert "Nested CV difference" in (tmp_path / "out" / "screening.md").read_text()
    assert module.main(["--quick", "--data-home", str(panel), "--min-train", "1000",
                        "--out", str(tmp_path / "none")]) == []


def test_tune_beside_quick(panel, tmp_path):
    module = _script("tune_beside.py")
    rows = beside = module.main(["--quick", "--data-home", str(panel), "--out",
                                 str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    plans = module.plans()
    assert [r["variant"] for r in rows] == list(plans)  # Beef alone
    assert len(plans) == 1 + len(module.PLACES) + len(module.VARIANTS) * (1 + len(module.PLACES))
    assert all(len(p) in (6, 7) and 0 not in p for p in plans.values() if len(p) < 8)
    assert plans["without band8 (six settings)"] == [2, 3, 4, 5, 6, 7]
    assert all(0 <= r[h] <= 100 for r in rows for h in ("nested", "shot2", "test"))
    assert "mlp_z in place of qd_b" in (tmp_path / "out" / "beside.md").read_text()
    # the aligned series: step t of one against step t of the other, at unit norm
    a = module.aligned([np.arange(4.0), np.arange(7.0)], 7, z=False)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0)
    np.testing.assert_allclose(a[0], a[1])  # a ramp interpolated onto 7 steps is the ramp
    # the contrasts of a line are zero (each value is its neighbours' mean)
    s = np.arange(40.0)[:, None]
    grid = (np.arange(8) + 0.5) / 8
    cols = module.contrast(s, grid)
    assert len(cols) == 6 and all(np.allclose(c, 0) for c in cols[1:])
    # the sliced patches: a column per direction and channel, blind to an offset (the
    # directions sum to zero), zeros at a dilation the series is too short for
    two = np.column_stack([np.sin(np.arange(40.0)), np.arange(40.0) ** 0.5])
    cols = module.sliced(two, grid, 4)
    assert len(cols) == 6 and all(c.shape == (8, 8) for c in cols[1:])
    for a, b in zip(cols[1:], module.sliced(two + 5.0, grid, 4)[1:]):
        np.testing.assert_allclose(a, b, atol=1e-9)
    assert not np.allclose(cols[3], 0) and np.allclose(cols[4], 0)  # 8 x 4 < 40 <= 8 x 8
    # the bag of words: unit rows; the words of z-normalised windows are blind to a
    # series' scale (a power of two: the same windows to the last bit)
    rng = np.random.default_rng(1)
    train = [rng.standard_normal((60, 1)) for _ in range(4)]
    a, b = module.bag_of_words(train, [4.0 * train[0], train[1]], (0.2, 0.4), 4)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0)
    np.testing.assert_allclose(b[0], a[0], atol=1e-12)
    assert a.shape == (4, 2 * 4 ** 4) and not np.allclose(a[0], a[1])
    # --transforms: the training Grams only (NaN test column); a cosine-normalised Gram
    # has a unit diagonal, a Gaussian one too, and both stay positive semi-definite
    rows = module.main(["--quick", "--transforms", "--data-home", str(panel), "--out",
                        str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert [r["variant"] for r in rows] == list(module.transform_plans())
    assert all(0 <= r["nested"] <= 100 and "test" not in r for r in rows)
    md = (tmp_path / "out" / "transforms.md").read_text()
    assert "gauss1 of each, in its place" in md
    several = module.transform_plans(module.SEVERAL)
    assert several["cos of each, in its place"] == [8 + i - 1 for i in module.SEVERAL]
    # --rules: the default's rule on the seven scores as the default plan above
    rules = module.main(["--quick", "--rules", "--data-home", str(panel), "--out",
                         str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert [r["variant"] for r in rules] == [*module.E.RULES, *module.FEW_RULES,
                                             *module.BAGGED_RULES]
    # the bootstrap draws: three settings right on every series, two wrong on every one;
    # every draw picks the three right ones, and the average weighs them alike
    y = np.arange(30) % 2
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    n_a = len(module.DEFAULT_ALPHA)
    loo = np.array([[Y if s < 3 else -Y] * n_a for s in range(5)])
    t = dict(loo=loo, Y=Y, y=y, classes=np.array([0, 1]))
    picks = dict(module.bagged(t, range(5)))
    assert {s for s, _ in picks} == {0, 1, 2}
    np.testing.assert_allclose(list(picks.values()), 1.0)
    default = next(r for r in beside if r["variant"] == "the default (seven settings)")
    assert rules[0]["nested"] == default["nested"] and rules[0]["test"] == default["test"]
    # --priors: every fixed set of 1-3 of the seven at 3 ridges, the pair first; the
    # package's prior is one of them
    rules = module.prior_rules(module.SEVEN)
    assert len(rules) == 3 * (7 + 21 + 35) and next(iter(rules)) == "level_band+spectrum @ 0.1"
    prior = "+".join(name for name, _ in DEFAULT_PRIOR) + " @ 0.1"
    assert {alpha for _, alpha in DEFAULT_PRIOR} == {0.1} and prior in rules
    priors = module.main(["--quick", "--priors", "--data-home", str(panel), "--out",
                          str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert [r["variant"] for r in priors] == list(rules)
    assert all(0 <= r["shot1"] <= 100 for r in priors)
    assert "level_band+spectrum @ 0.1" in (tmp_path / "out" / "priors_summary.md").read_text()
    # the choice made without each set in turn, on two sets whose best sets differ
    two = [{"dataset": n, "variant": v, "shot1": s} for n, row in
           (("a", (50.0, 60.0, 40.0)), ("b", (50.0, 40.0, 70.0))) for v, s in zip("pqr", row)]
    text = module.prior_summary(two)
    # without a, r is best (70 on b): on a 40 - 50; without b, q (60 on a): on b 40 - 50
    assert "Chosen without each set in turn (q, r), on that set: -10.00 +- 0.00" in text
    few = module.fewer_than(3, lambda t, subset: "few")
    assert few({"y": np.array([0, 0, 1, 1, 1])}, []) == "few"  # a class of 2 series
    z = np.random.default_rng(0).standard_normal((6, 3))
    for f in module.TRANSFORMS.values():
        K = f(z @ z.T + 1.0)
        np.testing.assert_allclose(np.diag(K), 1.0)
        assert np.linalg.eigvalsh(K).min() > -1e-10
    # the quarters of a series that steps up: each quarter's values at its own level
    step = np.repeat([0.0, 1.0, 2.0, 3.0], 5)[:, None]
    q = module.segments(step, grid)
    assert len(q) == 12
    np.testing.assert_allclose(q[0], 0.0)
    np.testing.assert_allclose(q[3], 1.0)  # the last quarter at its unit RMS


def test_tune_gradient_quick(panel, tmp_path):
    module = _script("tune_gradient.py")
    out = tmp_path / "out"
    rows = module.main(["--quick", "--data-home", str(panel), "--out", str(out), "--cache",
                        str(tmp_path / "cache"), "--settings", "1,6", "--maxfun", "4"])
    plans = module.plans([1, 6])
    assert [r["variant"] for r in rows] == list(plans)  # Beef alone
    assert plans["band fitted"] == {1: True, **{p: False for p in range(2, 8)}}
    assert all(0 <= r[h] <= 100 for r in rows for h in ("nested", "test"))
    params = _csv(out / "gradient_params.csv")
    assert len(params) == 2 * 6  # two settings, 5 outer folds and the test split
    lo, hi = np.exp(module.BOUNDS).T
    assert all(np.all((lo - 1e-9 <= v) & (v <= hi + 1e-9)) for v in
               (np.array(p["values"].split(), dtype=float) for p in params))
    assert "every setting fitted" not in (out / "gradient.md").read_text()
    # --channels on series of several channels: a scale per channel, the band left out
    rows = module.main(["--quick", "--channels", "--several-channels", "--data-home",
                        str(panel), "--out", str(out), "--cache", str(tmp_path / "cache"),
                        "--settings", "4", "--maxfun", "3"])
    assert [r["variant"] for r in rows] == ["the default (6 settings)", "pool fitted",
                                            "these fitted"]
    assert len(_csv(out / "channels_params.csv")) == 6
    # a channel's scale multiplies each of its signals (columns k m + c)
    x = np.ones((3, 4))
    np.testing.assert_array_equal(module.scaled([x], [2.0, 3.0])[0][0], [2, 3, 2, 3])
    # the criterion: the least LOO squared error over the ridges, against leaving each
    # series out and refitting ridge with an unpenalised intercept
    rng = np.random.default_rng(1)
    z = rng.standard_normal((9, 4))
    K, y = z @ z.T, np.array([0, 1, 2] * 3)
    Y = -np.ones((9, 3))
    Y[np.arange(9), y] = 1.0
    errors = []
    for a in DEFAULT_ALPHA:
        ridge = a * np.trace(K) / 9
        sq = 0.0
        for i in range(9):
            o = np.delete(np.arange(9), i)
            A = np.block([[K[np.ix_(o, o)] + ridge * np.eye(8), np.ones((8, 1))],
                          [np.ones((1, 8)), np.zeros((1, 1))]])
            sol = np.linalg.solve(A, np.vstack([Y[o], np.zeros((1, 3))]))
            sq += np.sum((K[i, o] @ sol[:8] + sol[8] - Y[i]) ** 2)
        errors.append(sq / 27)
    np.testing.assert_allclose(module.loo_error(K, y), min(errors), rtol=1e-8)
    # the fit never ends worse than where it starts
    xs = [rng.standard_normal((20, 1)) for _ in range(12)]
    yy = np.arange(12) % 2
    kw = dict(module.T.MEAN, readout_band=4)
    w, b = module.fit_network(xs, yy, kw, maxfun=6)
    start, end = (module.loo_error(rntk_kernel(xs, **dict(kw, sigma_w=a, sigma_b=c),
                                               precision="float32"), yy)
                  for a, c in ((kw["sigma_w"], kw["sigma_b"]), (w, b)))
    assert end <= start * (1 + 1e-9)


@pytest.mark.parametrize("hide_aeon", [False, True])
def test_bench_resamples_quick(panel, tmp_path, monkeypatch, hide_aeon):
    if hide_aeon:
        monkeypatch.setitem(sys.modules, "aeon", None)
    module = _script("bench_resamples.py")
    rows = module.main(["--quick", "--data-home", str(panel), "--out", str(tmp_path / "out")])
    sets = {r["dataset"] for r in rows}
    assert len(sets) == 2 and {r["resample"] for r in rows} == {0, 1}
    assert all(0 <= r["accuracy"] <= 1 and r["seconds"] > 0 for r in rows)
    assert {r["method"] for r in rows} == ({"rntk"} if hide_aeon or
                                           importlib.util.find_spec("aeon") is None
                                           else {"rntk", "minirocket"})
    assert "resamples each" in (tmp_path / "out" / "summary.md").read_text()


def test_bench_resamples_reads_a_ts_panel(ts_panel, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)
    rows = _script("bench_resamples.py").main(
        ["--quick", "--data-home", str(ts_panel), "--out", str(tmp_path / "out")])
    assert {r["dataset"] for r in rows} == {"Motions"} and len(rows) == 2


@pytest.mark.parametrize("layout", ["array", "padded", "list"])
def test_resamples_keep_the_official_sizes_and_class_counts(layout, rng):
    module = _script("bench_resamples.py")
    y_train = np.array(["a"] * 6 + ["b"] * 3 + ["c"])
    y_test = np.array(["a"] * 4 + ["b"] * 5 + ["c"] * 2)
    X = rng.normal(size=(21, 7))
    if layout == "padded":  # NaN padding, the parts padded to different widths
        X_train, X_test = X[:10].copy(), X[10:, :5].copy()
        X_train[0, 4:] = np.nan
    elif layout == "list":
        X_train = [x[:3 + i % 4] for i, x in enumerate(X[:10])]
        X_test = [x[:4] for x in X[10:]]
    else:
        X_train, X_test = X[:10], X[10:]
    assert module.resample(X_train, y_train, X_test, y_test, 0)[0] is X_train

    def rows(Z):  # each series as its values, padding dropped
        return [tuple(np.round(np.asarray(z, float)[~np.isnan(np.asarray(z, float))], 6))
                for z in Z]

    everything = sorted(rows(X_train) + rows(X_test))
    draws = []
    for seed in (1, 2):
        a, ya, b, yb = module.resample(X_train, y_train, X_test, y_test, seed)
        assert len(a) == 10 and len(b) == 11
        assert sorted(rows(a) + rows(b)) == everything  # a partition of the pooled series
        for c in "abc":
            assert np.sum(ya == c) == np.sum(y_train == c)
        draws.append(rows(a))
    assert draws[0] != draws[1]


def test_bench_resamples_scores_by_nested_cv_beside(panel, tmp_path, monkeypatch):
    """--nested: one row per set and method scored on the training part alone, its own
    section of the summary, and none of it in the resampled figures."""
    monkeypatch.setitem(sys.modules, "aeon", None)
    module = _script("bench_resamples.py")
    out = tmp_path / "out"
    rows = module.main(["--quick", "--datasets", "Beef", "--data-home", str(panel),
                        "--nested", "3", "--out", str(out)])
    nested = [r for r in rows if r["protocol"] == "nested"]
    assert [r["method"] for r in nested] == ["rntk"] and nested[0]["dataset"] == "Beef"
    assert len([r for r in rows if r["protocol"] == "resampled"]) == 2
    n_train = len(module._load("Beef", str(panel))[1])
    assert nested[0]["accuracy"] * n_train == pytest.approx(round(nested[0]["accuracy"]
                                                                 * n_train))
    text = (out / "summary.md").read_text()
    assert "2 resamples each" in text and "Nested CV on the official training parts" in text
    only = module.main(["--quick", "--datasets", "Beef", "--data-home", str(panel),
                        "--resamples", "0", "--nested", "3", "--out", str(out)])
    assert {r["protocol"] for r in only} == {"nested"}
    assert "resamples each" not in (out / "summary.md").read_text()


def test_draws_of_few_training_series_keep_every_class(rng):
    """--train-size: each class its share of the official training part (at least one),
    drawn from the pooled series, every other series tested; seed 0 draws too."""
    module = _script("bench_resamples.py")
    y_train = np.array([0] * 40 + [1] * 16 + [2] * 4)
    assert module.drawn_counts(y_train, 15) == {0: 10, 1: 4, 2: 1}
    assert module.drawn_counts(y_train, 100) == {0: 40, 1: 16, 2: 4}  # already fewer
    assert module.drawn_counts(np.arange(5), 2) == {c: 1 for c in range(5)}
    y_test = np.array([0] * 20 + [1] * 8 + [2] * 2)
    X_train, X_test = rng.normal(size=(60, 7)), rng.normal(size=(30, 7))
    draws = []
    for seed in (0, 1):
        a, ya, b, yb = module.resample(X_train, y_train, X_test, y_test, seed,
                                       train_size=15)
        assert np.bincount(ya).tolist() == [10, 4, 1] and len(yb) == 90 - 15
        pooled = np.concatenate([X_train, X_test])
        seen = {tuple(x) for x in np.concatenate([a, b])}
        assert seen == {tuple(x) for x in pooled}  # a partition of the pooled series
        draws.append(sorted(map(tuple, a)))
    assert draws[0] != draws[1]
    a, ya, b, yb = module.resample(X_train, y_train, X_test, y_test, 0)
    assert a is X_train  # without train_size seed 0 is the official split


def test_bench_resamples_reports_draws_of_few_series(panel, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)
    module = _script("bench_resamples.py")
    out = tmp_path / "out"
    rows = module.main(["--quick", "--datasets", "Beef", "--data-home", str(panel),
                        "--train-size", "6", "--out", str(out)])
    assert {r["protocol"] for r in rows} == {"drawn"} and len(rows) == 2
    assert "2 draws each of about 6 training series" in (out / "summary.md").read_text()
    with pytest.raises(SystemExit):
        module.main(["--quick", "--train-size", "0", "--out", str(out)])


def test_bench_resamples_fits_the_variants_a_study_registers(panel, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)
    module = _script("bench_resamples.py")
    fitted = []

    def variant():
        fitted.append(True)
        return RNTKClassifierCV([{"readout": ["mean"], "readout_band": [0]}])

    monkeypatch.setitem(module.VARIANTS, "rntk_no_band", variant)
    rows = module.main(["--quick", "--datasets", "Beef", "--data-home", str(panel),
                        "--resamples", "1", "--variant", "rntk_no_band",
                        "--out", str(tmp_path / "out")])
    assert [r["method"] for r in rows] == ["rntk", "rntk_no_band"]
    assert fitted and 0 <= rows[1]["accuracy"] <= 1
    with pytest.raises(SystemExit):
        module.main(["--quick", "--data-home", str(panel), "--variant", "nope"])


#: The resampled studies and the methods each adds to a run by default.
RESAMPLED_STUDIES = {
    "linear_member.py": {"rntk_with_linear", "rntk_with_linear_gated"},
    "rocket_front_end.py": {"rntk_with_rocket", "rntk_with_rocket_gated"},
    "log_levels.py": {"rntk_with_log_band", "rntk_log_level_band"},
    "band_pool.py": {"rntk_band_pool_q90"},
    "elastic_member.py": {"rntk_with_gak"},
    "octave_reach.py": {"rntk_octave_reach"},
    "multichannel_band.py": {"rntk_band_on_channels"},
    "few_series.py": {"rntk_shift_invariant", "rntk_one_ridge"},
    "cheaper_default.py": {"rntk_screen_150", "rntk_band_4", "rntk_band_4_screen_150"},
}


@pytest.mark.parametrize("study", sorted(RESAMPLED_STUDIES))
def test_the_resampled_studies_run_quick(study, panel, tmp_path):
    # in a process of its own: a study's install() changes the package for its run
    out = tmp_path / "out"
    subprocess.run([sys.executable, str(STUDIES / study), "--quick", "--datasets", "Beef",
                    "--data-home", str(panel), "--resamples", "1", "--out", str(out)],
                   check=True, capture_output=True)
    assert RESAMPLED_STUDIES[study] <= {r["method"] for r in _csv(out / "results.csv")}


def test_the_linear_member_is_the_linear_kernel_of_the_series_in_place(rng):
    """The setting of ``--with linear``: 2 / (T T') times the dot product of the two
    series aligned at their ends (the one-layer linear network without recurrence,
    each step read out against the same step of the other series)."""
    module = _script("bench_resamples.py")
    setting = {k: v[0] for k, v in module.EXTRA_SETTINGS["linear"].items()
               if k != "normalize"}
    X = [rng.normal(size=t) for t in (9, 14, 11)]
    K = RNTK(**setting)(as_object_array(X))
    want = np.array([[2 * np.dot(a[len(a) - min(len(a), len(b)):],
                                 b[len(b) - min(len(a), len(b)):]) / (len(a) * len(b))
                      for b in X] for a in X])
    assert np.allclose(K, want, rtol=1e-10, atol=0)


def test_the_log_levels_study_reads_a_signed_log_where_series_keep_their_level(monkeypatch):
    module = _script("log_levels.py")
    module.install(monkeypatch)  # undone after the test
    seqs = [np.array([[1.0, -4.0], [3.0, 0.0]]), np.array([[-2.0, 8.0]])]
    assert np.array_equal(module.log_scale(seqs), [2.0, 4.0])  # median |x| per channel
    monkeypatch.setattr(module, "SCALE_STATISTIC", "mean")  # --scale mean
    assert np.allclose(module.log_scale(seqs), [2.0, 4.0])  # mean |x|: 6 / 3, 12 / 3
    monkeypatch.setattr(module, "SCALE_STATISTIC", "median")
    assert np.array_equal(module.log_scale([np.array([[1.0], [1.0], [7.0]])]), [1.0])
    monkeypatch.setattr(module, "SCALE_STATISTIC", "mean")
    assert np.allclose(module.log_scale([np.array([[1.0], [1.0], [7.0]])]), [3.0])
    monkeypatch.setattr(module, "SCALE_STATISTIC", "median")
    assert np.allclose(module.signed_log(seqs, np.array([2.0, 4.0]))[0],
                       [[np.log(1.5), -np.log(2.0)], [np.log(2.5), 0.0]], rtol=1e-12)
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 8)
    counts = rng.lognormal(3.0, 1.5, size=(16, 12)) * np.where(y == 1, 3.0, 1.0)[:, None]
    # the setting's series: the signed log with the training series' scale, also at predict
    est = RNTKClassifier(normalize=False, intervals=module.LOG_MARK).fit(counts, y)
    scale = np.median(np.abs(counts))
    new = rng.lognormal(3.0, 1.5, size=(3, 12))
    got = est._prepare(as_sequences(new), fitted=True)
    assert np.allclose(np.stack(got)[:, :, 0], np.log1p(new / scale), rtol=1e-12)
    variant = module.bench_resamples.VARIANTS["rntk_log_level_band"]
    fitted = variant().fit(counts, y)
    assert not fitted.unit_rms_ and fitted.predict(new).shape == (3,)
    params = fitted.search_.cv_results_["params"]
    default = RNTKClassifierCV().fit(counts, y).cv_results_["params"]
    logged = [p for p in params if "intervals" in p]
    level = [p for p in default if p.get("normalize") is False and "readout_band" in p]
    assert logged == [{**p, "intervals": module.LOG_MARK} for p in level]  # pooled alike
    assert [p for p in params if "intervals" not in p] == [p for p in default if p not in level]
    # z-normalised series (unit-RMS): the default itself
    z = (counts - counts.mean(axis=1, keepdims=True)) / counts.std(axis=1, keepdims=True)
    fitted = variant().fit(z, y)
    assert fitted.unit_rms_
    default_z = RNTKClassifierCV().fit(z, y).cv_results_["params"]
    assert fitted.search_.cv_results_["params"] == default_z
    # both changes closest to the bar: the log level band, and the linear member on every set
    both = module.bench_resamples.VARIANTS["rntk_log_level_band_with_linear"]
    for series, without in ((counts, params), (z, default_z)):
        got = both().fit(series, y).search_.cv_results_["params"]
        assert got[:len(without)] == without
        added = got[len(without):]
        assert [p["alpha"] for p in added] == module._grids.DEFAULT_ALPHA
        assert all(p["activation"] == "linear" and p["readout_band"] == 0 for p in added)


def test_the_band_pool_study_pools_the_banded_settings_for_most_lengths():
    module = _script("band_pool.py")
    assert module.most_lengths([10, 20, 30, 40, 50, 60, 70, 80, 90, 1000]) == 1000
    assert module.most_lengths([100] * 19 + [1000]) == 100  # one long series in twenty
    rng = np.random.default_rng(0)
    X = [rng.normal(size=t) for t in [40] * 19 + [400]]  # one long series in twenty
    y = np.repeat([0, 1], 10)
    fitted = module.bench_resamples.VARIANTS.get("rntk_band_pool_q90", module._MostLengths())
    params = fitted().fit(as_object_array(X), y).search_.cv_results_["params"]
    default = RNTKClassifierCV().fit(as_object_array(X), y).cv_results_["params"]
    banded = [p for p in default if "readout_band" in p and p.get("pool")]
    assert banded and {p["pool"] for p in banded} == {4}  # ceil(400 / 128)
    assert [p for p in params if p not in default] == [{**p, "pool": 1} for p in banded]
    assert module._grids._sized is module._SIZED  # the default's sizing, after the fit


def test_the_rocket_front_end_is_minirockets_kernels_read_as_quantile_functions(rng):
    module = _script("rocket_front_end.py")
    kernels = module.KERNELS
    assert kernels.shape == (84, 9) and len({tuple(k) for k in kernels.tolist()}) == 84
    assert all(sorted(k) == [-1.0] * 6 + [2.0] * 3 for k in kernels.tolist())
    x = rng.normal(size=30)
    levels = (np.arange(8) + 0.5) / 8
    got = module.rocket_quantiles([x[:, None]], 8, most_dilations=2)[0]  # (T, m) series
    assert got.shape == (8, 2 * 84)
    for k, d in enumerate((1, 2)):  # column k * 84 + j: kernel j at dilation d
        padded = np.concatenate([np.full(4 * d, x[0]), x, np.full(4 * d, x[-1])])
        for j in (0, 41, 83):
            out = [np.dot(kernels[j], padded[t:t + 8 * d + 1:d]) for t in range(len(x))]
            q = np.quantile(out, levels)
            assert np.allclose(got[:, k * 84 + j], q / np.sqrt(np.mean(q ** 2)), rtol=1e-10)
    # the float32 transform by MiniRocket's sums: the same within float32 rounding
    series = [x[:, None], x[:20, None], rng.normal(size=(20, 1))]
    fast = module.fast_rocket_quantiles(series, 8, most_dilations=2)
    exact = module.rocket_quantiles(series, 8, most_dilations=2)
    assert all(np.allclose(f, e, rtol=0, atol=1e-4) for f, e in zip(fast, exact))


def test_nested_folds_are_stratified_and_cover_the_training_part():
    module = _script("bench_resamples.py")
    y = np.array(["a"] * 9 + ["b"] * 4 + ["c"])
    folds = module.nested_folds(y, 5)
    assert len(folds) == 5
    held = np.sort(np.concatenate([test for _, test in folds]))
    assert np.array_equal(held, np.arange(len(y)))  # every series held out once
    for train, test in folds:
        assert not set(train) & set(test)
        assert np.sum(y[test] == "a") in (1, 2)  # the large class spread evenly
    assert len(module.nested_folds(y[9:], 5)) == 4  # no class has 5 series: 4 folds
    assert module.nested_folds(np.array(["a", "b", "c"]), 5) == []


def test_panel_halves_are_fixed_by_name():
    module = _script("bench_resamples.py")
    names = [f"Set{i}" for i in range(40)]
    halves = [module.half(n) for n in names]
    assert set(halves) == {0, 1}
    assert halves == [module.half(n) for n in names]


def test_bench_resamples_fits_the_default_less_some_settings(panel, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)
    module = _script("bench_resamples.py")
    rows = module.main(["--quick", "--datasets", "Beef", "--data-home", str(panel),
                        "--without", "octave_shapes,level_pool",
                        "--out", str(tmp_path / "out")])
    assert {r["method"] for r in rows} == {"rntk", "rntk_without_octave_shapes_level_pool"}
    X = np.random.default_rng(0).normal(size=(12, 20))
    y = np.repeat([0, 1], 6)
    fitted = module._Without(("octave_shapes",))().fit(X, y)
    assert len(fitted.search_.cv_results_["params"]) == 6 * len(DEFAULT_ALPHA)
    assert not any("octave_shapes" in p for p in fitted.search_.cv_results_["params"])
    with pytest.raises(SystemExit):
        module.main(["--quick", "--data-home", str(panel), "--without", "nope"])
    added = module._Without((), ("intervals",))().fit(X, y)
    assert sum("intervals" in p for p in added.search_.cv_results_["params"]) == \
        len(DEFAULT_ALPHA)
    with pytest.raises(SystemExit):
        module.main(["--quick", "--data-home", str(panel), "--with", "nope"])


def _alignments(tx, ty):
    """Every monotone alignment of steps ``0..tx-1`` with ``0..ty-1``, as lists of cells."""
    if (tx, ty) == (1, 1):
        return [[(0, 0)]]
    out = []
    for di, dj in ((1, 0), (0, 1), (1, 1)):
        if tx - di >= 1 and ty - dj >= 1:
            out += [p + [(tx - 1, ty - 1)] for p in _alignments(tx - di, ty - dj)]
    return out


def test_the_elastic_study_sums_the_local_kernel_over_every_alignment(rng, monkeypatch):
    module = _script("elastic_member.py")
    x, y, inv2s2 = rng.normal(size=(4, 2)), rng.normal(size=(6, 2)), 0.3

    def brute(radius):
        total = 0.0
        for path in _alignments(len(x), len(y)):
            # the band: within ``radius`` steps of the shorter series of the diagonal
            if all(abs((i + 1) / len(x) - (j + 1) / len(y)) * min(len(x), len(y))
                   <= radius + 1e-9 for i, j in path):
                e = np.exp(-inv2s2 * ((x[[i for i, _ in path]] - y[[j for _, j in path]])
                                      ** 2).sum(axis=1))
                total += np.prod(e / (2 - e))
        return np.log(total)

    # as many as the Delannoy number D(3, 5) = sum_k C(3, k) C(5, k) 2^k
    assert len(_alignments(4, 6)) == sum(comb(3, k) * comb(5, k) * 2 ** k for k in range(4))
    for radius in (100.0, 2.5, 1.5):  # every alignment, then a band about the diagonal
        assert np.isclose(module._log_gak(x, y, inv2s2, radius), brute(radius), rtol=1e-12)
        assert np.isclose(module._log_gak_in_logs(x, y, inv2s2, radius), brute(radius),
                          rtol=1e-12)
        assert np.isclose(module._log_gak(y, x, inv2s2, radius), brute(radius), rtol=1e-12)
    # long, distant series neither underflow nor overflow (rows rescaled, else logarithms)
    a, b = rng.normal(size=(400, 1)), 5 + rng.normal(size=(300, 1))
    far = module._log_gak(a, b, 1.0, 400.0)
    assert np.isfinite(far) and far < -400
    assert np.isclose(far, module._log_gak_in_logs(a, b, 1.0, 400.0), rtol=1e-12)
    # the Gram: symmetric, unit diagonal, positive semi-definite; a test Gram of the
    # training series themselves is the training Gram (the scale from the training series)
    xs = [rng.normal(size=(t, 1)).cumsum(axis=0) for t in (20, 25, 30, 20, 22, 28)]
    K = module.gak_gram(xs, band=0.2)
    assert np.allclose(K, K.T, rtol=1e-12) and np.allclose(np.diag(K), 1.0, rtol=1e-12)
    assert np.linalg.eigvalsh(K).min() > -1e-10 and (K > 0).all() and (K <= 1 + 1e-12).all()
    assert np.allclose(module.gak_gram(xs, xs, band=0.2), K, rtol=1e-10)
    assert not np.allclose(module.gak_gram(xs, band=0.2, scale=0.5), K)
    # the setting, in the default's search
    module.install(0.2, (0.5, 1.0), patch=monkeypatch)  # undone after the test
    X = as_object_array([np.sin(np.linspace(0, 6, t) + (i % 2) * 1.5)
                         + 0.1 * rng.normal(size=t) for i, t in enumerate([30, 34] * 6)])
    y = np.arange(12) % 2
    fitted = module.bench_resamples._Without((), ("gak",))().fit(X, y)
    results = fitted.search_.cv_results_
    scored = [s for p, s in zip(results["params"], results["mean_test_score"])
              if p.get("kind") == "gak"]
    assert len(scored) == 2 * len(DEFAULT_ALPHA) and np.isfinite(scored).all()
    assert fitted.predict(X[:3]).shape == (3,)


def test_the_octave_reach_study_reads_the_octaves_up_to_an_eighth_of_the_longest(rng):
    module = _script("octave_reach.py")
    for longest in range(1, 3000, 7):
        top = max([16] + [2 ** k for k in range(12) if 8 * 2 ** k <= longest - 1])
        assert module.octave_reach(longest) == tuple(2 ** k for k in range(top.bit_length()))
    assert module.octave_reach(256) == module.DEFAULT_DILATIONS  # the default up to 256
    row = next(p for p in module._table.PREPARATIONS if p.name == "octave_shapes")
    default_step = row.steps["representation"]
    X = as_object_array([np.sin(np.linspace(0, 8, t) * (1 + i % 2)) + 0.1 * rng.normal(size=t)
                         for i, t in enumerate([300, 280] * 5)])
    y = np.arange(10) % 2
    fitted = module._Reach()().fit(X, y)
    assert fitted.dilations_ == (1, 2, 4, 8, 16, 32)  # 8 * 32 <= 299
    assert row.steps["representation"] is default_step  # restored after the fit
    with ExitStack() as stack:
        for context in fitted.patches_at_predict():
            stack.enter_context(context)
        got = row.steps["representation"](as_sequences(X[:2]), 4, {})
    assert got[0].shape == (4, 1 + 2 * 6)  # the values, then 6 differences, 6 curvatures
    assert fitted.predict(X[:3]).shape == (3,) and row.steps["representation"] is default_step
    # short series: the default's predictions, by construction
    short = as_object_array([x[:200] for x in X])
    same = module._Reach()().fit(short, y)
    assert same.dilations_ == module.DEFAULT_DILATIONS
    assert np.array_equal(same.predict(short), RNTKClassifierCV().fit(short, y).predict(short))


def test_the_multichannel_band_study_keeps_the_band_on_several_channels(rng):
    module = _script("multichannel_band.py")
    X = rng.normal(size=(12, 20, 2)).cumsum(axis=1)  # two channels
    y = np.arange(12) % 2

    def bands(search):  # the band on unit-RMS series: the setting left out
        return [p for p in search.cv_results_["params"]
                if p.get("normalize") == "rms" and "readout_band" in p
                and not any(k in p for k in ("spectrum", "shapes", "octave_shapes"))]

    assert not bands(RNTKClassifierCV().fit(X, y))
    fitted = module._BandOnChannels()().fit(X, y)
    assert len(bands(fitted.search_)) == len(DEFAULT_ALPHA)
    assert module._grids.MULTICHANNEL_LEFT_OUT == ("band",)  # restored after the fit


def test_the_shift_invariant_study_averages_the_kernel_over_pairs_of_crops(rng):
    """``K_S(x, y) = (1 / 9) sum_{s, s'} K(c_s x, c_s' y)``: the kernel of the network that
    averages its outputs over three crops of its input, against a loop over the pairs."""
    module = _script("few_series.py")
    x = np.arange(20.0)
    assert [c.tolist() for c in module.crops([x[:10]])] == [
        list(range(0, 8)), list(range(1, 9)), list(range(2, 10))]  # c = 1 step
    assert [len(c) for c in module.crops([x[:9]])] == [9, 9, 9]  # c = 0: the series
    setting = {"readout": "mean", "readout_band": 2, "sigma_w": 1.2, "sigma_u": 0.5,
               "sigma_b": 0.1}
    X = [rng.normal(size=(t, 2)) for t in (23, 17, 30)]
    Y = [rng.normal(size=(t, 2)) for t in (12, 25)]

    def gram(a, b):
        return rntk_kernel(a, b, **setting)

    def by_pairs(A, B):
        return np.array([[np.mean([rntk_kernel([ca], [cb], **setting)[0, 0]
                                   for ca in module.crops([a]) for cb in module.crops([b])])
                          for b in B] for a in A])

    K = module.invariant_gram(gram, X)
    assert np.allclose(K, by_pairs(X, X), rtol=1e-12, atol=0)
    assert np.allclose(module.invariant_gram(gram, Y, X), by_pairs(Y, X), rtol=1e-12, atol=0)
    assert np.allclose(K, K.T, rtol=1e-12, atol=0) and np.linalg.eigvalsh(K).min() > -1e-12
    assert np.allclose(module.invariant_gram(gram, X, n_crops=1), gram(X, None), rtol=1e-12)
    assert not np.allclose(K, gram(X, None), rtol=1e-3)


def test_the_shift_invariant_study_changes_the_settings_in_time_order_on_small_sets(rng):
    module = _script("few_series.py")
    X = as_object_array([np.sin(np.linspace(0, 6, 40) + 0.4 * i) + 0.2 * rng.normal(size=40)
                         for i in range(12)])
    y = np.arange(12) % 2
    seen = []
    plain = module.invariant_gram

    def spy(gram, xs, ys=None, **kw):
        seen.append((len(xs), None if ys is None else len(ys)))
        return plain(gram, xs, ys, **kw)

    plain_gram = module.RNTKKernelMixin._gram
    with patch.object(module, "invariant_gram", spy):
        fitted = module._ShiftInvariant()().fit(X, y)
        assert module.RNTKKernelMixin._gram is plain_gram  # restored after the fit
        n_fit = len(seen)
        fitted.predict(X[:5])
    # the band and the pool, on unit-RMS series and as given (not unit-RMS here); not the
    # quantile settings or the spectrum
    assert n_fit == 4 and all(s == (12, None) for s in seen[:n_fit])
    members = {id(m): m for m in fitted.search_.best_estimator_.estimators_}.values()
    assert seen[n_fit:] == [(5, 12)] * sum(map(module.in_time, members))  # each run once
    assert module.RNTKKernelMixin._gram is plain_gram  # and after the prediction
    search = RNTKClassifierCV().fit(X, y)
    assert not np.allclose(fitted.search_.cv_results_["mean_test_score"],
                           search.cv_results_["mean_test_score"])
    # more than SMALL series: the default's predictions, by construction
    with patch.object(module, "SMALL", 11):
        big = module._ShiftInvariant()().fit(X, y)
    assert not big.small_
    assert np.array_equal(big.predict(X), search.predict(X))


def test_the_cheaper_default_study_screens_above_twice_its_subsample(rng, monkeypatch):
    module = _script("cheaper_default.py")
    module.install(monkeypatch)  # undone after the test
    variant = module.bench_resamples.VARIANTS["rntk_screen_150"]
    X = rng.normal(size=(302, 12)).cumsum(axis=1)
    y = np.arange(302) % 3
    n_alpha = len(DEFAULT_ALPHA)
    for n, unscored in ((300, 0), (302, 4 * n_alpha)):  # 4 of the 7 settings
        scores = variant().fit(X[:n], y[:n]).search_.cv_results_["mean_test_score"]
        assert len(scores) == 7 * n_alpha and np.isnan(scores).sum() == unscored


def test_the_cheaper_default_study_halves_the_band_of_the_banded_settings(rng):
    module = _script("cheaper_default.py")
    X = rng.normal(size=(12, 30)).cumsum(axis=1)
    y = np.arange(12) % 2
    half = module.VARIANTS["rntk_band_4"]().fit(X, y).search_.cv_results_["params"]
    default = RNTKClassifierCV().fit(X, y).cv_results_["params"]
    assert [{**p, "readout_band": 8} if "readout_band" in p else p for p in half] == default
    assert sum(p.get("readout_band") == 4 for p in half) == 5 * len(DEFAULT_ALPHA)
    assert module._grids.DEFAULT_SETTINGS["band"]["readout_band"] == [8]  # restored


def test_the_one_ridge_study_searches_the_settings_at_one_ridge_on_small_sets(rng):
    module = _script("few_series.py")
    X = as_object_array([np.sin(np.linspace(0, 6, 30) + 0.4 * i) + 0.2 * rng.normal(size=30)
                         for i in range(10)])
    y = np.arange(10) % 2
    fitted = module._OneRidge()().fit(X, y)
    assert fitted.small_
    assert {p["alpha"] for p in fitted.search_.cv_results_["params"]} == {module.RIDGE}
    assert module._grids.DEFAULT_ALPHA == DEFAULT_ALPHA  # restored after the fit
    assert fitted.predict(X[:3]).shape == (3,)
    with patch.object(module, "SMALL", 9):
        big = module._OneRidge()().fit(X, y)
    assert not big.small_
    assert {p["alpha"] for p in big.search_.cv_results_["params"]} == set(DEFAULT_ALPHA)
