"""``rntk-ucr`` keeps every result it computed: seeds, data versions; stale temporaries go."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rntk.benchmarking._ucr as ucr
from rntk.benchmarking import run_benchmark
from rntk.benchmarking._files import remove_stale_temporaries

FAST = dict(protocol="fast", quiet=True)


@pytest.fixture(autouse=True)
def _no_rntk_data(monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)


def _no_compute(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("recomputed a result that was cached")

    monkeypatch.setattr(ucr, "run_method", refuse)


def _toy(home, noise):
    folder = Path(home) / "Toy"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(noise)
    t = np.linspace(0, 2 * np.pi, 16)
    for part in ("TRAIN", "TEST"):
        rows = ["\t".join([str(1 + k % 2)] + [f"{v:.4f}" for v in
                                              np.sin((1 + k % 2) * t) + rng.normal(size=16)])
                for k in range(10)]
        (folder / f"Toy_{part}.tsv").write_text("\n".join(rows) + "\n")


def test_another_seed_does_not_overwrite_a_result(tmp_path, monkeypatch):
    out = tmp_path / "out"
    seed0 = run_benchmark(["Coffee"], ["rbf"], out=out, seed=0, **FAST)[0]
    seed1 = run_benchmark(["Coffee"], ["rbf"], out=out, seed=1, **FAST)[0]
    assert (seed0["seed"], seed1["seed"]) == (0, 1)
    files = sorted(p.name for p in (out / "cache").glob("*.json"))
    assert len(files) == 2, files  # the latest and the one kept beside it
    kept = [json.loads((out / "cache" / f).read_text()) for f in files]
    assert sorted(r["seed"] for r in kept) == [0, 1]
    # both come back from the cache, computing nothing
    _no_compute(monkeypatch)
    for seed, first in ((0, seed0), (1, seed1), (0, seed0)):
        row = run_benchmark(["Coffee"], ["rbf"], out=out, seed=seed, **FAST)[0]
        assert row["seed"] == seed and row["accuracy"] == first["accuracy"]
        assert row["params"] == first["params"]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["accuracy"]["rbf"]["Coffee"] == pytest.approx(100 * first["accuracy"])


def test_changed_data_keeps_the_old_result(tmp_path, monkeypatch):
    home, out = tmp_path / "ucr", tmp_path / "out"
    kw = dict(data_home=home, out=out, **FAST)
    _toy(home, 0)
    old = run_benchmark(["Toy"], ["rbf"], **kw)[0]
    _toy(home, 1)
    new = run_benchmark(["Toy"], ["rbf"], **kw)[0]
    assert new["data_sha256"] != old["data_sha256"]
    _toy(home, 0)  # the first version of the data comes back: its result too
    _no_compute(monkeypatch)
    again = run_benchmark(["Toy"], ["rbf"], **kw)[0]
    assert again["data_sha256"] == old["data_sha256"]
    assert again["accuracy"] == old["accuracy"] and again["params"] == old["params"]


def test_force_keeps_a_result_of_another_seed(tmp_path):
    out = tmp_path / "out"
    run_benchmark(["Coffee"], ["rbf"], out=out, seed=0, **FAST)
    run_benchmark(["Coffee"], ["rbf"], out=out, seed=1, force=True, **FAST)
    run_benchmark(["Coffee"], ["rbf"], out=out, seed=1, force=True, **FAST)
    seeds = sorted(json.loads(p.read_text())["seed"] for p in (out / "cache").glob("*.json"))
    assert seeds == [0, 1]


# --------------------------------------------------------------------------- temporaries
def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(os.name != "posix", reason="process ids probed with os.kill")
def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    out = tmp_path / "out"
    (out / "cache").mkdir(parents=True)
    dead, old = _dead_pid(), time.time() - 3600
    stale = [out / f".accuracy_vs_paper.png.{dead}-0123abcd.tmp",
             out / "cache" / f".Coffee__rbf__fast.json.{dead}-89abcdef.tmp"]
    live = out / f".summary.md.{os.getpid()}-0123abcd.tmp"  # a writer still running
    fresh = out / f".summary.csv.{dead}-0123abcd.tmp"  # too recent to be judged
    mine = [out / "notes.tmp", out / f".notes.{dead}-xyz.tmp", out / "cache" / "keep.json"]
    for p in (*stale, live, *mine):
        p.write_text("x")
        os.utime(p, (old, old))
    fresh.write_text("x")
    run_benchmark(["Coffee"], ["rbf"], out=out, **FAST)
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in (live, fresh, *mine))
    assert remove_stale_temporaries(tmp_path / "missing") == []
