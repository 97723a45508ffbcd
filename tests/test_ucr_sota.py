"""The published state of the art beside our methods: the table, the statistics, the report."""

import importlib.util
import json

import numpy as np
import pytest

import rntk.benchmarking._sota as sota
from rntk.benchmarking import (
    critical_difference,
    load_paper_table,
    load_published_results,
    write_reports,
)
from rntk.benchmarking.published_results import BAKEOFF_CITATION, BAKEOFF_METHODS
from rntk.benchmarking.stats import nemenyi_critical_difference, win_tie_loss

HAVE_MPL = importlib.util.find_spec("matplotlib") is not None


# --------------------------------------------------------------------------- the table
def test_the_bakeoff_table_is_shipped_whole():
    table = load_published_results("bakeoff_redux")
    assert len(table) == 112
    for name, row in table.items():
        assert set(row) == set(BAKEOFF_METHODS), name
        assert all(0.0 <= v <= 100.0 for v in row.values()), name
    # every dataset of the RNTK paper's Table 2 is there, spelled the same way
    assert set(load_paper_table()) <= set(table)
    # the archive's 128 minus the variable-length and missing-value sets and Fungi
    assert not {"Fungi", "PLAID", "AllGestureWiimoteX", "DodgerLoopWeekend"} & set(table)
    assert table["Coffee"]["hc2"] == pytest.approx(100.0)
    assert "Bake off redux" in BAKEOFF_CITATION
    # a copy: the caller may change it without touching the next reader's
    table["Coffee"]["hc2"] = 0.0
    assert load_published_results()["Coffee"]["hc2"] == pytest.approx(100.0)
    assert load_published_results("rntk_paper") == load_paper_table()
    with pytest.raises(ValueError, match="source must be one of"):
        load_published_results("bakeoff")


# --------------------------------------------------------------------------- statistics
def test_win_tie_loss_counts_and_validates():
    assert win_tie_loss([1.0, 2.0, 3.0, np.nan], [1.0, 1.0, 4.0, 0.0]) == (1, 1, 1)
    # a tie within the tolerance (a rounded published value)
    assert win_tie_loss([100 / 3], [33.3333], tie=1e-4) == (0, 1, 0)
    assert win_tie_loss([100 / 3], [33.3333]) == (1, 0, 0)
    with pytest.raises(ValueError, match="same length"):
        win_tie_loss([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="tie"):
        win_tie_loss([1.0], [1.0], tie=-1.0)


def test_nemenyi_cd_against_demsars_table():
    # Demsar (2006), Table 5a: q_0.05 for k = 2..10 (studentized range / sqrt(2)), 3 digits
    q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, q in zip(range(2, 11), q05):
        cd = nemenyi_critical_difference(k, 20)
        assert cd / np.sqrt(k * (k + 1) / (6 * 20)) == pytest.approx(q, abs=1e-3)
    # k = 4, N = 20 by hand: 2.569 * sqrt(4 * 5 / 120)
    assert nemenyi_critical_difference(4, 20) == pytest.approx(2.569 * np.sqrt(1 / 6), rel=2e-4)
    # q_0.10 for k = 4 (Table 5b): 2.291
    assert nemenyi_critical_difference(4, 20, alpha=0.10) == pytest.approx(
        2.291 * np.sqrt(1 / 6), rel=3e-4)
    for bad in ({"n_methods": 1, "n_datasets": 5}, {"n_methods": 3, "n_datasets": 0},
                {"n_methods": 3.0, "n_datasets": 5}):
        with pytest.raises(ValueError, match="integer"):
            nemenyi_critical_difference(**bad)
    with pytest.raises(ValueError, match="alpha"):
        nemenyi_critical_difference(3, 5, alpha=1.5)


def test_critical_difference_ranks_and_cliques_by_hand():
    # 4 methods, 5 datasets; ranks by hand (ties averaged):
    acc = [[90, 80, 70, 60],   # 1 2 3 4
           [85, 85, 70, 60],   # 1.5 1.5 3 4
           [80, 90, 70, 60],   # 2 1 3 4
           [90, 80, 60, 70],   # 1 2 4 3
           [90, 70, 80, 60],   # 1 3 2 4
           [np.nan, 1, 2, 3]]  # dropped
    res = critical_difference(acc)
    np.testing.assert_allclose(res["average_ranks"], [6.5 / 5, 9.5 / 5, 15 / 5, 19 / 5])
    assert res["n_datasets"] == 5
    cd = 2.569 * np.sqrt(4 * 5 / (6 * 5))  # 2.0975
    assert res["cd"] == pytest.approx(cd, rel=2e-4)
    # 1.3 vs 3.0 (1.7) and 1.9 vs 3.8 (1.9) are within CD, 1.3 vs 3.8 (2.5) is not
    assert res["cliques"] == [[0, 1, 2], [1, 2, 3]]
    assert res["significant"][0, 3] and not res["significant"][0, 2]
    assert res["significant"].tolist() == res["significant"].T.tolist()
    assert 0.0 < res["friedman_p"] < 0.05
    with pytest.raises(ValueError, match="test must be"):
        critical_difference(acc, test="t-test")
    with pytest.raises(ValueError, match="at least 2 methods"):
        critical_difference([[1.0], [2.0]])


def test_wilcoxon_holm_by_hand():
    # a beats b and c on all 10 datasets, with distinct differences; b == c everywhere
    b = np.linspace(50, 80, 10)
    a = b + np.arange(1, 11)
    res = critical_difference(np.column_stack([a, b, b]), test="wilcoxon-holm")
    # exact two-sided signed-rank p-value of 10 positive differences: 2 / 2**10; Holm
    # multiplies the smallest of the 3 pairs by 3, the next by 2, and keeps them monotone
    p = 2 / 2**10
    P = res["p_values"]
    assert P[0, 1] == pytest.approx(3 * p) and P[0, 2] == pytest.approx(3 * p)
    assert P[1, 2] == 1.0
    assert res["cd"] is None
    assert res["significant"].tolist() == [[False, True, True], [True, False, False],
                                           [True, False, False]]
    assert res["cliques"] == [[1, 2]]


# --------------------------------------------------------------------------- comparison
PUBLISHED = {"A": {"x": 90.0, "y": 80.0}, "B": {"x": 70.0, "y": 75.0},
             "C": {"x": 60.0, "y": 60.0}, "D": {"x": 50.0}}


def test_compare_with_a_small_published_table():
    ours = {"m": {"A": 95.0, "B": 70.0, "C": 50.0, "D": 99.0, "E": 10.0}}
    comp = sota.compare_with_published(ours, PUBLISHED, labels={"x": "X"}, citation="T")
    v = comp["per_method"]["m"]
    # D lacks y and E is not published: both left out
    assert v["datasets"] == ["A", "B", "C"]
    assert v["mean"] == pytest.approx(215 / 3)
    assert v["published_mean"] == {"X": pytest.approx(220 / 3), "y": pytest.approx(215 / 3)}
    assert v["wtl"] == {"X": [1, 1, 1], "y": [1, 0, 2]}
    assert comp["published"] == ["X", "y"] and comp["common"] == ["A", "B", "C"]
    r = comp["ranking"]
    assert r["names"] == ["m", "X", "y"]
    # ranks: A 1 2 3; B 2.5 2.5 1; C 3 1.5 1.5
    np.testing.assert_allclose(r["average_ranks"], [6.5 / 3, 6 / 3, 5.5 / 3])
    md = "\n".join(sota.sota_markdown(comp, ("cd.png", "because")))
    assert "| m | 3 | 71.67 | 73.33 (1/1/1) | 71.67 (1/0/2) |" in md
    assert "`cd.png`: not drawn: because" in md
    # a method without a shared dataset: no ranking
    comp = sota.compare_with_published({"m": {"E": 1.0}}, PUBLISHED)
    assert comp["ranking"] is None and comp["per_method"]["m"]["n_datasets"] == 0
    assert "None of the reported datasets" in "\n".join(sota.sota_markdown(comp))


def _row(dataset, method, accuracy, protocol="loo"):
    return {"dataset": dataset, "method": method, "protocol": protocol,
            "accuracy": accuracy, "cv_score": float("nan"), "params": {}, "paper": None,
            "gram_time": 0.0, "fit_time": 0.1, "predict_time": 0.01, "total_time": 0.2,
            "n_settings": 1, "padded": False, "n_train": 10, "n_test": 10,
            "min_length": 20, "max_length": 20, "n_channels": 1, "n_classes": 2,
            "engine": "test"}


def test_reports_show_the_state_of_the_art_and_the_cd_plot(tmp_path, monkeypatch):
    table = load_published_results()
    names = ["Coffee", "GunPoint", "ECG200", "Trace", "Beef"]
    rows = [_row(d, "rntk", 0.9) for d in names] + [_row("NotPublished", "rntk", 0.5)]
    summary = write_reports(rows, tmp_path, quiet=True)
    s = summary["state_of_the_art"]
    assert s["per_method"]["rntk"]["n_datasets"] == 5
    hc2 = np.mean([table[d]["hc2"] for d in names])
    assert s["per_method"]["rntk"]["published_mean"]["HC2"] == pytest.approx(hc2)
    wins = sum(90.0 > table[d]["hc2"] + 1e-4 for d in names)
    assert s["per_method"]["rntk"]["wtl"]["HC2"][0] == wins
    assert s["ranking"]["names"] == ["rntk", *BAKEOFF_METHODS.values()]
    json.dumps(summary["state_of_the_art"])  # the JSON summary holds it
    md = (tmp_path / "summary.md").read_text()
    assert "## Beside the published state of the art" in md and "Bake off redux" in md
    assert "| rntk | 5 | 90.00 | " in md
    assert "Nemenyi critical difference" in md
    if HAVE_MPL:
        assert s["plot"] == "drawn"
        assert (tmp_path / sota.PLOT_CD).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # without matplotlib the diagram is skipped, its old file removed, and the reason said
    monkeypatch.setattr(sota, "_matplotlib_missing", lambda: True)
    (tmp_path / sota.PLOT_CD).write_bytes(b"old")
    summary = write_reports(rows, tmp_path, quiet=True)
    assert "matplotlib is not installed" in summary["state_of_the_art"]["plot"]
    assert not (tmp_path / sota.PLOT_CD).exists()
    assert "not drawn: matplotlib is not installed" in (tmp_path / "summary.md").read_text()


@pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib")
def test_cd_plot_draws_every_method(tmp_path):
    from rntk.benchmarking._cdplot import plot_critical_difference

    rng = np.random.default_rng(0)
    acc = rng.uniform(50, 100, size=(12, 5))
    names = ["ours", "a", "b", "c", "d"]
    fig = plot_critical_difference(acc, names, tmp_path / "cd.png", highlight={"ours"},
                                   title="t")
    texts = [t.get_text() for t in fig.axes[0].texts]
    ranks = critical_difference(acc)["average_ranks"]
    for n, r in zip(names, ranks):
        assert any(n in t and f"{r:.2f}" in t for t in texts), n
    assert any(t.startswith("CD = ") for t in texts)
    assert (tmp_path / "cd.png").stat().st_size > 0
    fig = plot_critical_difference(acc, names, test="wilcoxon-holm")
    assert not any(t.get_text().startswith("CD = ") for t in fig.axes[0].texts)
    with pytest.raises(ValueError, match="one column per name"):
        plot_critical_difference(acc, names[:3])
