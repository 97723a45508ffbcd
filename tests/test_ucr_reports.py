"""The reports of ``rntk-ucr``: every cached result of the protocol, MiniRocket, plots."""

import csv
import importlib.util
import io
import json
import struct
from pathlib import Path

import pytest

import rntk.benchmarking._cache as bcache
import rntk.benchmarking._protocols as protocols
import rntk.benchmarking._reports as reports
import rntk.benchmarking._ucr as ucr
from rntk.benchmarking import run_benchmark, write_reports
from rntk.benchmarking._cli import main

ROOT = Path(__file__).resolve().parent.parent
TABLE2 = ROOT / "rntk" / "benchmarking" / "data" / "rntk_paper_table2.csv"
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
DATASETS = ["Coffee", "GunPoint"]


@pytest.fixture(autouse=True)
def _no_rntk_data(monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)


def _png_size(path):
    """(width, height) of a PNG, after checking its signature."""
    head = Path(path).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _fake(out, dataset, method, accuracy, protocol="fast", like="rbf", **changes):
    """Write a cache record of ``method`` with the runner's own writer and record format.

    It copies the cached ``like`` result of ``dataset`` (same data fingerprint and seed),
    with the grids hash the runner expects for ``method`` under ``protocol``.
    """
    cache = Path(out) / "cache"
    base = json.loads(bcache.cache_path(cache, dataset, like, "fast").read_text())
    record = {**base, "method": method, "protocol": protocol, "accuracy": accuracy,
              "params": {}, "cv_score": float("nan"), "paper": None,
              "grid_hash": protocols.grid_hash(protocol, method), **changes}
    path = bcache.cache_path(cache, dataset, method, protocol)
    bcache.write_cache(path, record)
    assert bcache.read_cache(path, dataset, method, protocol)[1] is None
    return path


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """``rbf`` then ``poly`` into the same folder (fast protocol, bundled datasets)."""
    out = tmp_path_factory.mktemp("ucr")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("RNTK_DATA", raising=False)
        first = run_benchmark(DATASETS, ["rbf"], protocol="fast", out=out, quiet=True)
        second = run_benchmark(DATASETS, ["poly"], protocol="fast", out=out, quiet=True)
    return out, first, second


def _copy(src, dst):
    """A private copy of an output folder (the module fixture stays untouched)."""
    import shutil

    shutil.copytree(src, dst)
    return dst


# --------------------------------------------------------------------------- coverage
def test_a_second_run_with_other_methods_reports_both(two_runs):
    out, first, second = two_runs
    assert {r["method"] for r in first} == {"rbf"}
    assert {r["method"] for r in second} == {"poly"}
    md = (out / "summary.md").read_text()
    assert "| dataset | n_train | n_test | length | rbf | poly |" in md
    assert "# UCR benchmark (fast protocol)" in md and "Protocol `fast`: 4 result(s)" in md
    for d in DATASETS:
        assert f"- {d} / rbf:" in md and f"- {d} / poly:" in md
    summary = json.loads((out / "summary.json").read_text())
    assert summary["protocol"] == "fast"
    assert summary["methods"] == ["rbf", "poly"] and summary["datasets"] == DATASETS
    assert set(summary["metrics"]) == {"rbf", "poly"}
    assert summary["this_invocation"]["n_results"] == 2
    assert summary["this_invocation"]["n_computed"] == 2
    # the wall time is this invocation's; results.csv lists this invocation's results
    assert "Wall time of this invocation only:" in md
    assert "for its 2 result(s): 2 computed, 0 read from the cache" in md
    with open(out / "results.csv", newline="") as f:
        assert {r["method"] for r in csv.DictReader(f)} == {"poly"}
    with open(out / "summary.csv", newline="") as f:
        assert [r["method"] for r in csv.DictReader(f)] == ["rbf", "poly"]


def test_report_only_reports_everything_cached(two_runs, tmp_path, capsys):
    out = _copy(two_runs[0], tmp_path / "out")
    # nothing cached for rntk: it is only noticed, and the report holds rbf and poly
    assert main(["--datasets", "Coffee", "--protocol", "fast", "--methods", "rntk",
                 "--out", str(out), "--report-only", "--paper-table", str(TABLE2)]) == 0
    captured = capsys.readouterr()
    assert "no cached result for Coffee / rntk" in captured.err
    md = (out / "summary.md").read_text()
    assert "| rbf | poly |" in md and "| GunPoint |" in md
    assert "for its 0 result(s): 0 computed, 0 read from the cache" in md
    assert "| GunPoint |" in captured.out


def test_other_protocols_are_not_mixed_in(two_runs, tmp_path):
    out = _copy(two_runs[0], tmp_path / "out")
    _fake(out, "Coffee", "ntk", 0.5, protocol="loo")
    _fake(out, "GunPoint", "rbf", 0.25, protocol="loo")
    run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=out, quiet=True)
    summary = json.loads((out / "summary.json").read_text())
    md = (out / "summary.md").read_text()
    assert summary["methods"] == ["rbf", "poly"]
    assert 25.0 not in summary["accuracy"]["rbf"].values()
    assert "| ntk" not in md and "/ ntk" not in md and "loo" not in md
    assert "25.00" not in md
    assert "for its 1 result(s): 0 computed, 1 read from the cache" in md
    # the loo report holds the loo results only, and says so
    run_benchmark(["Trace"], ["rntk"], protocol="loo", out=out, quiet=True, report_only=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["protocol"] == "loo"
    assert summary["accuracy"] == {"ntk": {"Coffee": 50.0}, "rbf": {"GunPoint": 25.0}}
    md = (out / "summary.md").read_text()
    assert md.startswith("# UCR benchmark (loo protocol)") and "Protocol `loo`" in md
    assert "poly" not in md


def test_stale_and_broken_cache_files_are_left_out(two_runs, tmp_path):
    out = _copy(two_runs[0], tmp_path / "out")
    _fake(out, "Coffee", "ntk", 0.5, seed=7)  # another seed
    _fake(out, "GunPoint", "ntk", 0.5, data_sha256="0" * 64)  # other data files
    _fake(out, "Coffee", "rntk", 0.5, grid_hash="0")  # other grids
    (out / "cache" / "Trace__gru__fast.json").write_text("{\"accuracy\": 0.9, \"dat")
    (out / "cache" / "Nope__rbf__fast.json").write_text(
        json.dumps({**json.loads((out / "cache" / "Coffee__rbf__fast.json").read_text()),
                    "dataset": "Nope"}))
    err = io.StringIO()
    run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=out, stream=err,
                  report_only=True)
    assert "5 cached result(s) of the fast protocol left out of the reports" in err.getvalue()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["methods"] == ["rbf", "poly"]
    why = {x["file"]: x["why"] for x in summary["left_out"]}
    assert why == {
        "Coffee__ntk__fast.json": "computed with seed 7",
        "GunPoint__ntk__fast.json": "the dataset's files changed since",
        "Coffee__rntk__fast.json": "computed with other grids",
        "Trace__gru__fast.json": why["Trace__gru__fast.json"],
        "Nope__rbf__fast.json": "its dataset is not found or not readable in the data "
                                "folder in use"}
    assert why["Trace__gru__fast.json"].startswith("is not valid JSON")
    md = (out / "summary.md").read_text()
    assert "Cached results left out" in md and "`Coffee__ntk__fast.json`: computed " in md


def test_a_failure_of_this_invocation_hides_its_cached_result(two_runs, tmp_path,
                                                              monkeypatch):
    out = _copy(two_runs[0], tmp_path / "out")

    def boom(method, data, *args):
        raise FloatingPointError("boom")

    monkeypatch.setattr(ucr, "run_method", boom)
    with pytest.warns(RuntimeWarning, match="Coffee / rbf"):
        run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=out, quiet=True, force=True)
    summary = json.loads((out / "summary.json").read_text())
    assert "Coffee" not in summary["accuracy"]["rbf"] and "Coffee" in summary["accuracy"][
        "poly"]
    assert "Failed in this invocation (not in the tables above)" in (
        out / "summary.md").read_text()


# --------------------------------------------------------------------------- MiniRocket
def test_minirocket_table_and_plots(two_runs, tmp_path):
    out = _copy(two_runs[0], tmp_path / "out")
    acc = {(d, m): json.loads(bcache.cache_path(out / "cache", d, m, "fast").read_text())
           ["accuracy"] for d in DATASETS for m in ("rbf", "poly")}
    # MiniRocket: below rbf on Coffee unless rbf is at 0, equal to rbf on GunPoint
    mr = {"Coffee": max(acc[("Coffee", "rbf")] - 0.05, 0.0),
          "GunPoint": acc[("GunPoint", "rbf")]}
    for d in DATASETS:
        _fake(out, d, "minirocket", mr[d], padded=False)
    stale = out / "accuracy_vs_minirocket.png"
    assert not stale.exists()
    assert main(["--datasets", "Coffee", "--protocol", "fast", "--methods", "minirocket",
                 "--out", str(out), "--report-only", "--quiet",
                 "--paper-table", str(TABLE2)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["methods"] == ["rbf", "poly", "minirocket"]
    v = summary["vs_minirocket"]
    assert set(v) == {"rbf", "poly"}
    assert (v["rbf"]["wins"], v["rbf"]["ties"], v["rbf"]["losses"]) == (1, 1, 0)
    assert v["rbf"]["mean_difference"] == pytest.approx(100 * (acc[("Coffee", "rbf")]
                                                               - mr["Coffee"]) / 2)
    wins = sum(acc[(d, "poly")] > mr[d] for d in DATASETS)
    losses = sum(acc[(d, "poly")] < mr[d] for d in DATASETS)
    assert (v["poly"]["wins"], v["poly"]["losses"]) == (wins, losses)
    md = (out / "summary.md").read_text()
    assert "## Methods vs MiniRocket" in md
    assert ("| method | datasets | mean (%) | MiniRocket mean (%) | mean difference (pp) | "
            "W / T / L |") in md
    d_rbf = v["rbf"]["mean_difference"]
    assert f"| rbf | 2 | {v['rbf']['mean']:.2f} | {v['rbf']['mean_reference']:.2f} | " \
           f"{d_rbf:+.2f} | 1 / 1 / 0 |" in md
    with open(out / "summary.csv", newline="") as f:
        rows = {r["method"]: r for r in csv.DictReader(f)}
    assert (rows["rbf"]["vs_minirocket_wins"], rows["rbf"]["vs_minirocket_ties"]) == ("1", "1")
    assert rows["minirocket"]["vs_minirocket_wins"] == ""
    if HAVE_MPL:
        assert "- `accuracy_vs_minirocket.png`: each method's test accuracy" in md
        width, height = _png_size(out / "accuracy_vs_minirocket.png")
        assert width > height > 300  # two panels side by side
        assert (out / "accuracy_vs_minirocket.png").stat().st_size > 10_000
    # without MiniRocket results (stale now): a notice, and the old plot is removed
    for d in DATASETS:
        _fake(out, d, "minirocket", mr[d], seed=3)
    run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=out, quiet=True)
    md = (out / "summary.md").read_text()
    assert "No MiniRocket result for the `fast` protocol" in md
    assert "`accuracy_vs_minirocket.png`: not drawn: no MiniRocket result" in md
    assert "W / T / L |" not in md
    assert not (out / "accuracy_vs_minirocket.png").exists()
    assert json.loads((out / "summary.json").read_text())["vs_minirocket"] is None


# --------------------------------------------------------------------------- write_reports
def _row(dataset, method, accuracy, paper=None, protocol="fast"):
    return {"dataset": dataset, "method": method, "protocol": protocol,
            "accuracy": accuracy, "cv_score": float("nan"), "params": {}, "paper": paper,
            "gram_time": 0.0, "fit_time": 0.1, "predict_time": 0.01, "total_time": 0.2,
            "n_settings": 1, "padded": False, "n_train": 10, "n_test": 10,
            "min_length": 20, "max_length": 20, "n_channels": 1, "n_classes": 2,
            "engine": "test"}


@pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib")
def test_many_datasets_label_only_the_farthest_points(tmp_path, monkeypatch):
    names = [f"Data{i:02d}" for i in range(40)]
    rows = []
    for i, d in enumerate(names):
        base = 0.5 + 0.01 * i
        rows += [_row(d, "minirocket", base), _row(d, "rntk", base + (0.2 if i % 15 == 0 else 0.0),
                                                   paper=100 * base - 1),
                 _row(d, "rbf", base - 0.001 * i)]
    rows.append(_row("Other", "rbf", 0.3, protocol="loo"))  # another protocol: left out
    labelled = []
    real = reports._label_points

    def spy(ax, x, y, names, lo):
        real(ax, x, y, names, lo)
        labelled.append({t.get_text() for t in ax.texts})

    monkeypatch.setattr(reports, "_label_points", spy)
    summary = write_reports(rows, tmp_path, quiet=True)
    assert "Other" not in summary["datasets"] and len(summary["datasets"]) == 40
    assert summary["vs_minirocket"]["rntk"]["wins"] == 3
    assert summary["vs_minirocket"]["rbf"]["ties"] == 1  # Data00
    assert summary["plots"] == {"accuracy_vs_minirocket.png": "drawn",
                                "accuracy_vs_paper.png": "drawn"}
    # vs MiniRocket: rntk (3 off the diagonal, apart), rbf; vs the paper: rntk
    rntk_labels, rbf_labels, paper_labels = labelled
    assert rntk_labels == {"Data00", "Data15", "Data30"}
    # rbf: farthest first (Data39), its neighbours on the line are too close to be named
    assert "Data39" in rbf_labels and "Data38" not in rbf_labels
    assert "Data00" not in rbf_labels and 5 < len(rbf_labels) <= 15
    assert {"Data00", "Data15", "Data30"} <= paper_labels and 5 < len(paper_labels) <= 15
    for name in ("accuracy_vs_minirocket.png", "accuracy_vs_paper.png"):
        assert (tmp_path / name).stat().st_size > 10_000


@pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib")
def test_few_datasets_label_every_point(tmp_path, monkeypatch):
    rows = [_row("A", "minirocket", 0.9), _row("A", "rntk", 0.95, paper=93.0),
            _row("B", "minirocket", 1.0), _row("B", "rntk", 1.0, paper=100.0),
            _row("C", "minirocket", 1.0), _row("C", "rntk", 1.0, paper=100.0),
            # 94.667% is the paper's 94.67 within its rounding: "equal"
            _row("D", "minirocket", 0.9), _row("D", "rntk", 142 / 150, paper=94.67)]
    labelled, titles = [], []
    real_label, real_draw = reports._label_points, reports._draw

    def spy_label(ax, x, y, names, lo):
        real_label(ax, x, y, names, lo)
        labelled.append(sorted(t.get_text() for t in ax.texts))

    def spy_draw(panels, path, title):
        titles.extend(p["title"] for p in panels)
        return real_draw(panels, path, title)

    monkeypatch.setattr(reports, "_label_points", spy_label)
    monkeypatch.setattr(reports, "_draw", spy_draw)
    summary = write_reports(rows, tmp_path, quiet=True)
    # B and C lie on the same point: one shared label
    assert labelled == [["A", "B, C", "D"], ["A", "B, C", "D"]]
    v = summary["vs_minirocket"]["rntk"]
    assert (v["wins"], v["ties"], v["losses"]) == (2, 2, 0)
    assert v["mean_difference"] == pytest.approx((5 + 100 * 142 / 150 - 90) / 4)
    assert titles[0].endswith("W/T/L 2/2/0")
    assert titles[1].endswith("higher/equal/lower 1/3/0")


def test_plots_are_skipped_without_matplotlib(tmp_path, monkeypatch):
    rows = [_row("A", "minirocket", 0.9), _row("A", "rntk", 0.95, paper=93.0)]
    for name in ("accuracy_vs_minirocket.png", "accuracy_vs_paper.png"):
        (tmp_path / name).write_bytes(b"old")
    monkeypatch.setattr(reports, "_matplotlib_missing", lambda: True)
    summary = write_reports(rows, tmp_path, quiet=True)
    assert set(summary["plots"].values()) == {"not drawn: matplotlib is not installed"}
    assert not list(tmp_path.glob("*.png"))
    md = (tmp_path / "summary.md").read_text()
    assert "`accuracy_vs_paper.png`: not drawn: matplotlib is not installed" in md
    assert "| rntk | 1 | 95.00 | 90.00 | +5.00 | 1 / 0 / 0 |" in md
