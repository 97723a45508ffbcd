"""The Numba engines' on-disk cache, one engine per activation and precision (STYLE item 7)."""

import os
import subprocess
import sys

import numpy as np
import pytest

# 80 x 40: 80 * 81 / 2 * 40 = 129,600 pair-steps, above the engine's serial threshold, so
# that the parallel region really runs with the thread counts asked for
_CODE = """
import numba, numpy as np
from rntk import rntk_kernel
from rntk._kernels import _rntk, _shared
X = np.random.default_rng(0).normal(size=(80, 40))
for act in ("relu", "erf", "linear"):
    K = [rntk_kernel(X, activation=act, n_jobs=n)
         for n in (1, numba.config.NUMBA_NUM_THREADS, 1)]
    numba.set_num_threads(1)
    K.append(rntk_kernel(X, activation=act))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert all(np.allclose(k, K[0], rtol=1e-13, atol=0) for k in K), act
    K32 = rntk_kernel(X, activation=act, precision="float32")
    assert np.allclose(K32, K[0], rtol=1e-4, atol=1e-4 * np.abs(K[0]).max()), act
stats = [f.stats for f in (*_rntk._PAIR_KERNELS.values(), *_shared._SELF_VARIANCES)]
print(sum(sum(s.cache_hits.values()) for s in stats),
      sum(sum(s.cache_misses.values()) for s in stats))
"""


def _run(cache, threads=None):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    if threads is not None:
        env["NUMBA_NUM_THREADS"] = str(threads)
    done = subprocess.run([sys.executable, "-c", _CODE], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return tuple(int(n) for n in done.stdout.split())


@pytest.mark.slow
def test_each_activation_compiles_once_then_loads_under_any_thread_count(tmp_path):
    # a fresh cache: the three engines in each precision and their self variances are
    # compiled and saved
    assert _run(tmp_path) == (0, 9)
    # later processes load all nine, with one thread or the default, changed between calls
    assert _run(tmp_path, threads=1) == (9, 0)
    assert _run(tmp_path) == (9, 0)


class _Dispatcher:
    """Stands for a numba dispatcher: compiled once it has signatures."""

    def __init__(self, signatures=()):
        self.signatures = list(signatures)


def _record_options(monkeypatch, avx512):
    import llvmlite.binding as llvm

    from rntk._utils import _threads

    calls = []
    monkeypatch.setattr(llvm, "set_option", lambda name, option: calls.append(option))
    monkeypatch.setattr(llvm, "get_host_cpu_features", lambda: {"avx512f": avx512})
    monkeypatch.setattr(_threads.numba.config, "CPU_NAME", None)
    monkeypatch.setattr(_threads.numba.config, "CPU_FEATURES", None)
    return calls


def test_first_compile_interleaves_then_restores_llvms_choice(monkeypatch):
    from rntk._utils import _threads

    calls = _record_options(monkeypatch, avx512=True)
    with _threads.interleaved_loops(_Dispatcher()):
        assert calls == [f"-force-vector-interleave={_threads.INTERLEAVE}"]
    assert calls[-1] == "-force-vector-interleave=0"
    # ... also when the call fails
    calls.clear()
    with pytest.raises(RuntimeError):
        with _threads.interleaved_loops(_Dispatcher()):
            raise RuntimeError("compilation failed")
    assert calls == [f"-force-vector-interleave={_threads.INTERLEAVE}",
                     "-force-vector-interleave=0"]


@pytest.mark.parametrize("case", ["compiled", "avx2", "portable", "count 0"])
def test_interleaving_is_left_alone_where_it_was_not_measured(monkeypatch, case):
    from rntk._utils import _threads

    calls = _record_options(monkeypatch, avx512=case != "avx2")
    if case == "portable":  # NUMBA_CPU_NAME=generic: a cache for other machines
        monkeypatch.setattr(_threads.numba.config, "CPU_NAME", "generic")
    with _threads.interleaved_loops(_Dispatcher(["sig"] if case == "compiled" else []),
                                    0 if case == "count 0" else 8):
        pass
    assert calls == []


def test_the_erf_engine_is_compiled_as_llvm_chooses(monkeypatch):
    # interleaving slows the erf engine (bench_kernel.py --compare): it is not asked for
    from rntk._kernels import _rntk

    asked = []
    monkeypatch.setattr(_rntk, "interleaved_loops",
                        lambda engine, count: asked.append(count) or _Null())
    X = np.random.default_rng(0).normal(size=(3, 4))
    for act in ("relu", "erf", "linear"):
        _rntk.rntk_kernel(X, activation=act)
    assert asked == [_rntk.INTERLEAVE, 0, _rntk.INTERLEAVE]


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

