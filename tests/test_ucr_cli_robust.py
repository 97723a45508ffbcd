"""Reliability of ``rntk-ucr``: bad data files, bad cache files, bad arguments, crashes."""

import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rntk.benchmarking._cache as bcache
import rntk.benchmarking._ucr as ucr
from rntk.benchmarking import run_benchmark
from rntk.benchmarking._cli import main
from rntk.benchmarking._files import atomic_write_text

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--protocol", "fast", "--methods", "rbf"]


@pytest.fixture(autouse=True)
def _no_rntk_data(monkeypatch):
    monkeypatch.delenv("RNTK_DATA", raising=False)


def _write_dataset(home, name, n_train=12, n_test=12, length=20, seed=0,
                   parts=("TRAIN", "TEST")):
    """A small two-class UCR-layout dataset (label, then tab-separated values)."""
    rng = np.random.default_rng(seed)
    folder = Path(home) / name
    folder.mkdir(parents=True, exist_ok=True)
    t = np.linspace(0, 2 * np.pi, length)
    for part, n in (("TRAIN", n_train), ("TEST", n_test)):
        if part not in parts:
            continue
        lines = []
        for k in range(n):
            x = np.sin((1 + k % 2) * t) + 0.3 * rng.normal(size=length)
            lines.append("\t".join([str(1 + k % 2)] + [f"{v:.4f}" for v in x]))
        (folder / f"{name}_{part}.tsv").write_text("\n".join(lines) + "\n")
    return folder


def _cache_files(out):
    return {p.name: p for p in sorted((Path(out) / "cache").glob("*.json"))}


def _add_a_series(path):
    """Correct a dataset file: one more series (a copy of its first)."""
    text = path.read_text()
    path.write_text(text + text.splitlines()[0] + "\n")


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _stamp(paths):
    return {n: (p.stat().st_mtime_ns, p.read_bytes()) for n, p in paths.items()}


# --------------------------------------------------------------------------- data files
def test_a_corrupt_dataset_does_not_stop_the_others(tmp_path, capsys):
    home, out = tmp_path / "ucr", tmp_path / "out"
    _write_dataset(home, "Good")
    bad = _write_dataset(home, "Bad")
    (bad / "Bad_TRAIN.tsv").write_text("1\t0.5\tabc\n")
    _write_dataset(home, "Partial", parts=("TRAIN",))
    # naming a valid dataset does not read the others
    assert main(["--data-home", str(home), "--datasets", "Good", *FAST, "--out",
                 str(out), "--quiet"]) == 0
    # 'all': the corrupt one is reported and the others still run; exit status 1
    capsys.readouterr()
    assert main(["--data-home", str(home), *FAST, "--out", str(out), "--force",
                 "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "warning: skipping dataset Partial: its TEST file Partial_TEST.tsv is missing" in err
    assert "dataset Bad failed: cannot be loaded:" in err and "Bad_TRAIN.tsv" in err
    assert "not a number" in err
    assert "error: 1 failure(s): Bad (unreadable)" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["datasets"] == ["Good"]
    assert [f["dataset"] for f in summary["failed"]] == ["Bad"]
    assert "Failed" in (out / "summary.md").read_text()
    # --list shows every readable dataset and reports the others
    assert main(["--list", "--data-home", str(home)]) == 1
    captured = capsys.readouterr()
    assert "Good" in captured.out and "Bad" in captured.out
    assert "Bad_TRAIN.tsv" in captured.err and "Partial_TEST.tsv is missing" in captured.err


def test_a_failing_method_does_not_stop_the_others(tmp_path, monkeypatch):
    run_one = ucr.run_method

    def flaky(method, data, *args):
        if data.name == "Coffee":
            raise FloatingPointError("boom")
        return run_one(method, data, *args)

    monkeypatch.setattr(ucr, "run_method", flaky)
    err = io.StringIO()
    with pytest.warns(RuntimeWarning, match="1 failure.*Coffee / rbf: FloatingPointError: boom"):
        rows = run_benchmark(["Coffee", "GunPoint"], ["rbf"], protocol="fast", out=tmp_path,
                             quiet=True, stream=err)
    assert [r["dataset"] for r in rows] == ["GunPoint"]
    assert "dataset Coffee / rbf failed: FloatingPointError: boom" in err.getvalue()
    assert not (tmp_path / "cache" / "Coffee__rbf__fast.json").exists()


def test_dataset_names_are_checked_without_reading_files(tmp_path):
    home = tmp_path / "ucr"
    _write_dataset(home, "Good")
    _write_dataset(home, "NoTest", parts=("TRAIN",))
    _write_dataset(home, "NoTrain", parts=("TEST",))
    base = ["--data-home", str(home), *FAST, "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit, match="NoTest: its TEST file NoTest_TEST.tsv is missing"):
        main(base + ["--datasets", "NoTest"])
    with pytest.raises(SystemExit, match="its TRAIN file NoTrain_TRAIN.tsv is missing"):
        main(base + ["--datasets", "Good,NoTrain"])
    with pytest.raises(SystemExit, match="unknown dataset.*Nope; available: Good"):
        main(base + ["--datasets", "Nope"])
    for spec in (",", " , ,"):
        with pytest.raises(SystemExit, match="no dataset named in --datasets"):
            main(base + ["--datasets", spec])
    with pytest.raises(SystemExit, match="no method named in --methods"):
        main(["--methods", ",", "--out", str(tmp_path / "out")])


@pytest.mark.parametrize("args, code, message", [
    (["--n-jobs", "0"], 2, "argument --n-jobs: must be a number of threads >= 1"),
    (["--n-jobs", "two"], 2, "argument --n-jobs: not an integer: 'two'"),
    (["--seed", "-1"], 2, r"argument --seed: must be an integer in \[0, 2\*\*32 - 1\]; got -1"),
    (["--list", "--data-home", "{tmp}/missing"], None,
     "error: data folder .*missing \\(--data-home\\) does not exist or is not a folder"),
    (["--datasets", "Coffee", "--data-home", "{tmp}/missing"], None, "does not exist"),
    (["--paper-table", "{tmp}/missing.csv"], None,
     "error: cannot read --paper-table .*missing.csv: No such file or directory"),
    (["--out", "{tmp}/a_file"], 2, "--out .*a_file exists and is not a folder"),
    (["--out", "{tmp}/a_file/sub"], None, "error: cannot create the --out folder"),
])
def test_cli_argument_errors_are_clean(tmp_path, capsys, args, code, message):
    (tmp_path / "a_file").write_text("not a folder")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    args += [] if "--out" in args else ["--out", str(tmp_path / "out")]
    args += [] if "--datasets" in args else ["--datasets", "Coffee"]
    with pytest.raises(SystemExit) as info:
        main(args + FAST)
    if code is None:  # a SystemExit carrying the message itself (status 1)
        assert re.search(message, str(info.value)), info.value
    else:  # argparse's parser.error: usage and message on stderr, status 2
        assert info.value.code == code
        assert re.search(message, capsys.readouterr().err)


# --------------------------------------------------------------------------- cache
@pytest.mark.parametrize("content", [
    "", "{\"accuracy\": 0.9, \"dat", "[1, 2]", "{\"accuracy\": 0.5}", "\xff\xfe",
    "{mutate accuracy}", "{mutate method}"])
def test_unusable_cache_files_are_reported_and_recomputed(tmp_path, content):
    err = io.StringIO()
    run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=tmp_path, quiet=True)
    path = tmp_path / "cache" / "Coffee__rbf__fast.json"
    good = json.loads(path.read_text())
    if content.startswith("{mutate"):
        key = content.split()[1].rstrip("}")
        content = json.dumps({**good, key: "x" if key == "accuracy" else "rntk"})
    path.write_bytes(content.encode("latin-1"))
    # --report-only: skipped with the warning, nothing computed, no crash
    rows = run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=tmp_path, quiet=True,
                         stream=err, report_only=True)
    assert rows == []
    assert f"warning: ignoring the cache file {path}: it " in err.getvalue()
    assert "recomputing" not in err.getvalue()
    # a run: the file is reported and recomputed (even when quiet)
    err = io.StringIO()
    rows = run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=tmp_path, quiet=True,
                         stream=err)
    assert f"warning: ignoring the cache file {path}: it " in err.getvalue()
    assert "; recomputing it" in err.getvalue()
    assert rows[0]["accuracy"] == good["accuracy"]
    record, problem = bcache.read_cache(path, "Coffee", "rbf", "fast")
    assert problem is None and record["data_sha256"] == good["data_sha256"]
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_the_cache_follows_the_data_seed_and_grids(tmp_path):
    home, out = tmp_path / "ucr", tmp_path / "out"
    folder = _write_dataset(home, "Toy")
    kw = dict(protocol="fast", data_home=home, out=out, quiet=True)
    first = run_benchmark(["Toy"], ["rbf"], **kw)[0]
    path = out / "cache" / "Toy__rbf__fast.json"
    parts = {s: _sha((folder / f"Toy_{s.upper()}.tsv").read_bytes()) for s in ("test", "train")}
    assert first["data_sha256"] == _sha(f"test={parts['test']}\ntrain={parts['train']}\n"
                                        .encode())
    assert first["data_source"] == str(folder)
    before = _stamp({"f": path})
    run_benchmark(["Toy"], ["rbf"], **kw)
    assert _stamp({"f": path}) == before  # reused, not rewritten
    # the dataset's TEST file changes: its result is recomputed
    test_file = folder / "Toy_TEST.tsv"
    _add_a_series(test_file)
    err = io.StringIO()
    second = run_benchmark(["Toy"], ["rbf"], **{**kw, "quiet": False}, stream=err)[0]
    assert "cached result Toy__rbf__fast.json is stale (the dataset's files changed since)" \
        in err.getvalue()
    assert second["data_sha256"] != first["data_sha256"]
    assert json.loads(path.read_text())["data_sha256"] == second["data_sha256"]
    # another seed, other grids, or a record of an older rntk (no fingerprint): recomputed
    for key, value in (("seed", 7), ("grid_hash", "0"), ("data_sha256", None)):
        record = json.loads(path.read_text())
        record[key] = value
        if value is None:
            del record[key]
        record["accuracy"] = 0.0
        path.write_text(json.dumps(record))
        assert run_benchmark(["Toy"], ["rbf"], **kw)[0]["accuracy"] == second["accuracy"]
    # bundled datasets are fingerprinted by their file
    row = run_benchmark(["Coffee"], ["rbf"], protocol="fast", out=out, quiet=True)[0]
    npz = ROOT / "rntk" / "datasets" / "data" / "Coffee.npz"
    assert row["data_sha256"] == _sha(f"bundled={_sha(npz.read_bytes())}\n".encode())


def test_the_atomic_writer_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    atomic_write_text(path, "old")
    assert path.read_text() == "old"

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(path, "new")
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# --------------------------------------------------------------------------- crash
def test_a_killed_run_resumes_from_its_intact_results(tmp_path):
    """SIGKILL mid-run, truncate a result, change a dataset: only what must be is redone."""
    assert (ROOT / "rntk" / "benchmarking" / "_cli.py").read_text().rstrip().endswith(
        'if __name__ == "__main__":  # pragma: no cover\n    sys.exit(main())')
    home, out = tmp_path / "ucr", tmp_path / "out"
    _write_dataset(home, "Aaa", seed=1)
    _write_dataset(home, "Bbb", seed=2)
    _write_dataset(home, "Ccc", n_train=300, n_test=40, length=256, seed=3)  # the slow one
    cmd = [sys.executable, "-m", "rntk.benchmarking._cli", "--data-home", str(home),
           "--datasets", "Aaa,Bbb,Ccc", "--protocol", "fast", "--methods", "rbf,rntk",
           "--out", str(out), "--quiet"]
    env = {k: v for k, v in os.environ.items() if k != "RNTK_DATA"}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")

    def resume():
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stderr

    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    # kill once two results are written (one to corrupt, one that must be reused)
    while len(_cache_files(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stderr.close()
    finished = _cache_files(out)
    assert len(finished) >= 2, "the run wrote no result in 60 s"
    for p in finished.values():  # written atomically: every visible result is complete
        assert bcache.read_cache(p, *p.stem.split("__"))[1] is None
    # truncate one finished result; the others must be reused as they are
    victim = finished.pop(next(iter(finished)))
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    intact = _stamp(finished)
    err = resume()
    assert f"warning: ignoring the cache file {victim}: it is not valid JSON" in err
    now = _cache_files(out)
    assert len(now) == 6
    assert {n: s for n, s in _stamp(now).items() if n in intact} == intact
    assert bcache.read_cache(victim, *victim.stem.split("__"))[1] is None
    # a dataset changes: its results, and only those, are recomputed
    before = _stamp(now)
    test_file = home / "Bbb" / "Bbb_TEST.tsv"
    _add_a_series(test_file)
    resume()
    after = _stamp(_cache_files(out))
    changed = {n for n in before if after[n] != before[n]}
    assert changed == {"Bbb__rbf__fast.json", "Bbb__rntk__fast.json"}
    sha = {json.loads(after[n][1])["data_sha256"] for n in changed}
    old_sha = {json.loads(before[n][1])["data_sha256"] for n in changed}
    assert len(sha) == 1 and sha != old_sha
    # the results of the old data are kept beside the new ones, unchanged
    kept = set(after) - set(before)
    assert len(kept) == 2 and all(n.startswith("Bbb__") for n in kept)
    assert sorted(after[n][1] for n in kept) == sorted(before[n][1] for n in changed)
