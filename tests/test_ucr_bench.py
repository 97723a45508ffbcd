"""Tests of the UCR benchmark: metrics, the precomputed-kernel CV and a fast CLI run."""

import csv
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from rntk._model_selection import default_grid
from rntk.benchmarking import friedman_ranks, run_benchmark, summary_metrics
from rntk.benchmarking._cli import main
from rntk.benchmarking._data import Dataset, folds
from rntk.benchmarking._progress import Progress
from rntk.benchmarking._runners import run_kernel

TABLE2 = (Path(__file__).resolve().parent.parent / "rntk" / "benchmarking" / "data"
          / "rntk_paper_table2.csv")


# --------------------------------------------------------------------------- metrics
def test_metrics_on_a_hand_made_table():
    acc = [[90.0, 85.0, 60.0],   # best 90: 85 >= 81 (P90) but < 85.5 (P95)
           [50.0, 50.0, 40.0],   # tie for best; 40 < 45
           [70.0, 100.0, 95.0]]  # best 100
    m = summary_metrics(acc)
    np.testing.assert_allclose(m["mean"], [70.0, 235 / 3, 65.0])
    np.testing.assert_allclose(m["P90"], [2 / 3, 1.0, 1 / 3])
    np.testing.assert_allclose(m["P95"], [2 / 3, 2 / 3, 1 / 3])
    np.testing.assert_allclose(m["PMA"], [(1 + 1 + 0.7) / 3, (85 / 90 + 1 + 1) / 3,
                                          (60 / 90 + 0.8 + 0.95) / 3])
    # ranks: [1, 2, 3], [1.5, 1.5, 3], [3, 1, 2]
    np.testing.assert_allclose(m["friedman_rank"], [5.5 / 3, 4.5 / 3, 8 / 3])
    assert m["n_datasets"] == 3
    np.testing.assert_allclose(m["std"], np.std(np.array(acc), axis=0, ddof=1))


def test_friedman_ties():
    acc = [[80, 80, 80, 70], [60, 90, 90, 90]]
    np.testing.assert_array_equal(friedman_ranks(acc), [[2, 2, 2, 4], [4, 2, 2, 2]])
    np.testing.assert_array_equal(friedman_ranks(acc, ties="min"), [[1, 1, 1, 4], [4, 1, 1, 1]])
    # the mean rank over methods is always (M + 1) / 2 with averaged ties
    rng = np.random.default_rng(0)
    r = friedman_ranks(rng.integers(0, 4, size=(20, 5)).astype(float))
    np.testing.assert_allclose(r.mean(axis=1), 3.0)


def test_metrics_drop_incomplete_rows_and_validate():
    m = summary_metrics([[1.0, 0.5], [np.nan, 0.2], [0.5, 1.0]])
    assert m["n_datasets"] == 2
    np.testing.assert_allclose(m["mean"], [0.75, 0.75])
    with pytest.raises(ValueError, match="2-D"):
        summary_metrics([1.0, 2.0])
    with pytest.raises(ValueError, match="no dataset"):
        summary_metrics([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="ties"):
        friedman_ranks([[1.0, 2.0]], ties="max")


def test_metrics_reproduce_the_papers_table1():
    """Table 1 of the RNTK paper is computed from its Table 2 (56 datasets, 7 methods)."""
    with open(TABLE2, newline="") as f:
        rows = list(csv.DictReader(f))
    cols = ["RNTK", "NTK", "RBF", "POLY", "GaussianRNN", "IdentityRNN", "GRU"]
    acc = np.array([[float(r[c]) for c in cols] for r in rows])
    assert acc.shape == (56, 7)
    m = summary_metrics(acc)
    np.testing.assert_allclose(m["mean"], [80.15, 77.74, 78.15, 77.69, 55.98, 63.08, 69.50],
                               atol=0.011)
    np.testing.assert_allclose(m["std"], [15.99, 16.61, 16.59, 16.40, 26.42, 19.02, 22.67],
                               atol=0.011)
    # the paper prints 87.60 for RBF's P90, which is 49/56 = 87.50
    np.testing.assert_allclose(100 * m["P90"], [92.86, 85.71, 87.50, 82.14, 28.57, 42.86,
                                                60.71], atol=0.011)
    np.testing.assert_allclose(100 * m["P95"], [80.36, 66.07, 75.00, 67.86, 17.86, 21.43,
                                                46.43], atol=0.011)
    np.testing.assert_allclose(100 * m["PMA"], [97.23, 94.30, 94.86, 94.23, 67.06, 78.22,
                                                84.31], atol=0.02)
    # the paper ranked ties with the lowest rank ("min"), not the averaged Friedman ranks
    fr = summary_metrics(acc, ties="min")["friedman_rank"]
    np.testing.assert_allclose(fr, [2.38, 3.00, 2.89, 3.46, 5.86, 5.21, 4.21], atol=0.06)


# --------------------------------------------------------------------------- CV engine
def test_precomputed_cv_matches_gridsearchcv(monkeypatch):
    """One Gram per setting gives GridSearchCV's scores on the same folds."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    import rntk.benchmarking._protocols as cli

    monkeypatch.delenv("RNTK_DATA", raising=False)
    monkeypatch.setitem(cli.PROTOCOLS, "tiny", {"cv": 4, "C": [0.1, 10.0],
                                                "rbf": {"gamma": [0.5, 5.0]}})
    data = Dataset("ECG200", None)
    splits = folds(data.y_train, 4, 0)
    res = run_kernel("rbf", data, "tiny", splits, 1, Progress(1, quiet=True))
    gs = GridSearchCV(SVC(kernel="rbf"), {"gamma": [0.5, 5.0], "C": [0.1, 10.0]},
                      cv=splits).fit(data.flat_train, data.y_train)
    assert res["cv_score"] == pytest.approx(gs.best_score_)
    i = gs.cv_results_["params"].index({"gamma": res["params"]["gamma"],
                                        "C": res["params"]["C"]})
    assert gs.cv_results_["mean_test_score"][i] == pytest.approx(gs.best_score_)
    best = SVC(kernel="rbf", **res["params"]).fit(data.flat_train, data.y_train)
    assert res["accuracy"] == pytest.approx(best.score(data.flat_test, data.y_test))


def test_folds_fall_back_when_classes_are_small():
    y = np.array([0, 0, 1, 1, 2, 2])
    splits = folds(y, 10, 0)
    assert len(splits) == 6
    assert sorted(np.concatenate([va for _, va in splits]).tolist()) == list(range(6))


# --------------------------------------------------------------------------- CLI
def test_fast_protocol_smoke_run(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("RNTK_DATA", raising=False)
    out = tmp_path / "out"
    args = ["--datasets", "Coffee,PickupGestureWiimoteZ", "--protocol", "fast",
            "--methods", "rntk,ntk,rbf,poly,gak", "--out", str(out),
            "--paper-table", str(TABLE2)]
    assert main(args) == 0
    captured = capsys.readouterr()
    if importlib.util.find_spec("tslearn") is None:
        assert "skipping method 'gak'" in captured.err
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    methods = {"rntk", "ntk", "rbf", "poly"}
    assert {(r["dataset"], r["method"]) for r in rows} >= {
        (d, m) for d in ("Coffee", "PickupGestureWiimoteZ") for m in methods}
    by = {(r["dataset"], r["method"]): r for r in rows}
    for r in rows:
        assert 0.0 <= float(r["accuracy"]) <= 100.0
        assert float(r["gram_time"]) >= 0 and float(r["fit_time"]) >= 0
        json.loads(r["params"])
    # the paper's Table 2 value sits beside ours; variable length is padded except for RNTK
    assert float(by[("Coffee", "rntk")]["paper"]) == 100.0
    assert by[("PickupGestureWiimoteZ", "rntk")]["padded"] == "False"
    assert by[("PickupGestureWiimoteZ", "rbf")]["padded"] == "True"
    assert float(by[("Coffee", "rntk")]["accuracy"]) >= 85.0
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["metrics"]) >= methods
    md = (out / "summary.md").read_text()
    assert "P90" in md and "Friedman rank" in md and "*" in md
    assert "| Coffee |" in captured.out
    # beside the published state of the art: Coffee is in the bake off redux, the
    # variable-length PickupGestureWiimoteZ is not
    assert "## Beside the published state of the art" in captured.out
    assert summary["state_of_the_art"]["per_method"]["rntk"]["datasets"] == ["Coffee"]
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "accuracy_vs_paper.png").stat().st_size > 0
        assert (out / "reliability.png").stat().st_size > 0
    # the bake off redux's metrics, from every method's predict_proba
    for r in rows:
        assert 0 <= float(r["balanced_accuracy"]) <= 1 and float(r["nll"]) > 0
        assert 0 <= float(r["ece"]) <= 1
    assert 0.5 <= float(by[("Coffee", "rntk")]["auroc"]) <= 1
    assert set(summary["probability_metrics"]) >= methods
    assert "## Probabilities" in md and "| rntk | 2 |" in md
    # a second run resumes from the cache: the (edited) cached value is reused
    cache = out / "cache" / "Coffee__rbf__fast.json"
    res = json.loads(cache.read_text())
    res["accuracy"] = 0.123
    cache.write_text(json.dumps(res))
    assert main(args[:5] + ["rbf", "--out", str(out), "--quiet"]) == 0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["accuracy"]) for r in rows if r["dataset"] == "Coffee"] == [12.3]


def test_loo_protocol_runs_every_kernel_through_the_ridge_engine(tmp_path, monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)
    rows = run_benchmark(["Coffee"], ["rntk", "rbf"], protocol="loo", out=tmp_path, quiet=True)
    by = {r["method"]: r for r in rows}
    # one setting of the estimator's default grid (Coffee: 28 training series of 286 steps)
    grid = default_grid([286] * 28, [1.0])
    assert set(by["rntk"]["params"]) in [{*g} for g in grid]
    assert set(by["rbf"]["params"]) == {"gamma", "alpha"}
    assert by["rbf"]["engine"] == "kernel ridge, exact LOO"
    assert all(r["accuracy"] >= 0.85 for r in rows)


def test_report_only_computes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)
    rows = run_benchmark(["GunPoint"], ["rbf"], protocol="fast", out=tmp_path,
                         report_only=True, quiet=True)
    assert rows == [] and not (tmp_path / "results.csv").exists()
    with pytest.raises(ValueError, match="unknown method"):
        run_benchmark(["GunPoint"], ["svm"], out=tmp_path, quiet=True)


def test_cli_list_and_errors(monkeypatch, capsys):
    monkeypatch.delenv("RNTK_DATA", raising=False)
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "GunPoint" in out and "29-361" in out
    with pytest.raises(SystemExit, match="unknown dataset.*available: Coffee"):
        main(["--datasets", "Nope"])
    with pytest.raises(SystemExit, match="unknown method"):
        main(["--methods", "svm"])
