"""Wall time of ``python -m rntk`` cold (no numba cache) and warm, before and after a change.

Each run is a fresh subprocess. A cold run first deletes the package's numba cache files
(``*.nbi`` / ``*.nbc`` under ``rntk/**/__pycache__``), so the run compiles every engine
it calls; a warm run follows it and loads them from disk. Besides the wall time, each run
reports the ``time:`` line of ``python -m rntk`` (the fit: compilation included when cold).

``--before REV`` exports the package of git revision ``REV`` into a temporary folder and
runs it the same way, alternating with the working tree's package, so that their
ratio is meaningful on a noisy machine. Medians over ``--repeat`` rounds are reported.

Run::

    python benchmarks/bench_first_run.py --before main          # 3 rounds
    python benchmarks/bench_first_run.py --quick                # 1 round, this tree only
    python benchmarks/bench_first_run.py --before main --repeat 5 -- --protocol paper --quick

Arguments after ``--`` are passed to ``python -m rntk``.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def clear_cache(package_root):
    """Delete the numba cache files of the package under ``package_root``; return how many."""
    n = 0
    for pattern in ("*.nbi", "*.nbc"):
        for path in Path(package_root, "rntk").rglob(f"__pycache__/{pattern}"):
            path.unlink()
            n += 1
    return n


def run_once(package_root, args):
    """Run ``python -m rntk ARGS`` with ``package_root`` first on the path.

    Returns ``(wall seconds, fit seconds from the 'time:' line)``.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(package_root), env.get("PYTHONPATH", "")])
    env.pop("NUMBA_CACHE_DIR", None)  # the cache next to the sources, which clear_cache clears
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rntk", *args], cwd=package_root, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"python -m rntk failed in {package_root}:\n{proc.stderr}")
    match = re.search(r"^time: ([0-9.]+) s", proc.stdout, re.MULTILINE)
    fit = float(match.group(1)) if match else float("nan")
    return wall, fit, proc.stderr


def export(rev, folder):
    """Write the ``rntk`` package of git revision ``rev`` into ``folder``."""
    archive = subprocess.run(["git", "archive", rev, "rntk"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)


def main(argv=None):
    """Measure and print cold and warm times; return the results as a dict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", default=None,
                        help="also time the package of this git revision")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (median reported)")
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    parser.add_argument("rntk_args", nargs="*", help="arguments of python -m rntk (after --)")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        roots = {"after": ROOT}
        if args.before:
            roots = {"before": Path(tmp)} | roots
            export(args.before, roots["before"])
        times = {name: {"cold_wall": [], "cold_fit": [], "warm_wall": [], "warm_fit": []}
                 for name in roots}
        for r in range(repeat):
            for name, root in roots.items():
                clear_cache(root)
                cold_wall, cold_fit, stderr = run_once(root, args.rntk_args)
                warm_wall, warm_fit, _ = run_once(root, args.rntk_args)
                for key, value in zip(times[name], (cold_wall, cold_fit, warm_wall, warm_fit)):
                    times[name][key].append(value)
                notices = sum("compiling" in line for line in stderr.splitlines())
                print(f"round {r + 1} {name:>6}: cold {cold_wall:6.1f} s (fit {cold_fit:5.1f} s, "
                      f"{notices} compile notices), warm {warm_wall:5.1f} s "
                      f"(fit {warm_fit:4.1f} s)", flush=True)
    summary = {name: {key: statistics.median(v) for key, v in t.items()}
               for name, t in times.items()}
    print(f"median over {repeat} round(s) of python -m rntk {' '.join(args.rntk_args)}")
    for name, s in summary.items():
        print(f"{name:>6}: cold {s['cold_wall']:6.1f} s wall, fit {s['cold_fit']:5.1f} s; "
              f"warm {s['warm_wall']:5.1f} s wall, fit {s['warm_fit']:4.1f} s; "
              f"compile ~ {s['cold_fit'] - s['warm_fit']:5.1f} s")
    if "before" in summary:
        b, a = summary["before"], summary["after"]
        print(f"after / before: cold wall {a['cold_wall'] / b['cold_wall']:.2f}, "
              f"compile {(a['cold_fit'] - a['warm_fit']) / (b['cold_fit'] - b['warm_fit']):.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"rounds": times, "median": summary}, indent=1))
    return summary


if __name__ == "__main__":
    main()
