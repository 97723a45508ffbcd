"""Regression tests of the reliability issue: no silent wrong kernels, no silent overflow."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import FitFailedWarning

import rntk
from rntk import (
    KernelOverflowError,
    RNTKClassifier,
    RNTKClassifierCV,
    RNTKRegressor,
    mlp_ntk_kernel,
    rntk_kernel,
)
from rntk._kernels import rntk_diag
from rntk._utils import normalize_series
from tests.reference import rntk_gram


def test_erf_self_pairs_do_not_cancel(rng):
    """Item 1: erf, nngp, 3 layers, sigma_u at RNTK's lower bound: a PSD Gram, exact diagonal."""
    X = rng.normal(size=(20, 30))
    params = dict(activation="erf", kind="nngp", n_layers=3, sigma_w=0.5)
    for sigma_u in (1e-3, 1e-2):
        K = rntk_kernel(X, sigma_u=sigma_u, **params)
        ref = rntk_gram(list(X[:3]), sigma_u=sigma_u, **params)  # exact closed forms
        np.testing.assert_allclose(np.diag(K)[:3], np.diag(ref), rtol=1e-9)
        assert np.all(np.diag(K) > 0)
        ev = np.linalg.eigvalsh(K)
        assert ev.min() >= -1e-10 * ev.max()


@pytest.mark.parametrize("kw", [
    dict(sigma_w=2.0), dict(activation="linear", sigma_w=1.5), dict(activation="erf", sigma_w=2.0),
])
def test_long_unstable_recursions_raise_a_clear_overflow(rng, kw):
    """Item 3: T = 5000 with a large sigma_w overflows: refused, naming the settings."""
    X = rng.normal(size=(3, 5000))
    with pytest.raises(KernelOverflowError, match=r"overflows float64.*sigma_w"):
        rntk_kernel(X, **kw)
    with pytest.raises(KernelOverflowError, match="rntk_diag overflows"):
        rntk_diag(X, **kw)


def test_huge_inputs_and_scales_are_refused_or_rescaled(rng):
    X = rng.normal(size=(6, 20))
    with pytest.raises(KernelOverflowError):
        rntk_kernel(X * 1e160)
    with pytest.raises(ValueError, match="sigma_v=1e.*200 is too large"):
        rntk_kernel(X, sigma_v=1e200)
    with pytest.raises(ValueError, match="sigma_w.*too large"):
        rntk_kernel(X, sigma_w=1e200)
    with pytest.raises(KernelOverflowError, match="mlp_ntk_kernel"):
        mlp_ntk_kernel(X * 1e160)
    with pytest.raises(KernelOverflowError):
        RNTKRegressor().fit(X * 1e160, np.arange(6.0))
    # the unit norm of huge series is computed without overflow: the same predictions
    y = np.r_[np.zeros(3), np.ones(3)]
    small = RNTKClassifier().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = RNTKClassifier().fit(X * 1e200, y)
    np.testing.assert_array_equal(huge.predict(X * 1e200), small.predict(X))
    np.testing.assert_allclose(huge.decision_function(X * 1e200), small.decision_function(X),
                               rtol=1e-6)  # libsvm's solution moves with the last bits


@pytest.mark.parametrize("how", ["norm", "rms"])
@pytest.mark.parametrize("factor", [1e-170, 1e-300, 1e-310])
def test_tiny_series_are_normalised_without_underflow(rng, how, factor):
    # the squares of entries below about 1e-154 underflow: the norm is taken after
    # scaling by the peak, so the series is not mistaken for a series of zeros
    X = [rng.normal(size=(20, 2)) for _ in range(3)]
    expected = normalize_series(X, how)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = normalize_series([x * factor for x in X], how)
    for a, b in zip(tiny, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6 if factor < 1e-300 else 1e-12)
    assert normalize_series([np.zeros((4, 1))], how)[0].max() == 0
    y = np.r_[np.zeros(6), np.ones(6)]
    Z = rng.normal(size=(12, 30)) + 2 * y[:, None]
    small = RNTKClassifier(normalize=how).fit(Z, y)
    tiny = RNTKClassifier(normalize=how).fit(Z * factor, y)
    np.testing.assert_array_equal(tiny.predict(Z * factor), small.predict(Z))


def test_overflowing_candidates_score_nan_in_every_protocol(rng):
    """Item 2: a setting whose Gram overflows scores NaN, with a warning, never selected."""
    X = rng.normal(size=(30, 3000))
    y = np.r_[np.zeros(24), np.ones(6)]
    with pytest.warns(RuntimeWarning, match="non-finite"):
        cv = RNTKClassifierCV({"sigma_w": [3.0, 1.0], "C": [0.01]}, protocol="paper", cv=3,
                              refit=False).fit(X, y)
    assert np.isnan(cv.cv_results_["mean_test_score"][0]) and cv.best_index_ == 1
    with pytest.warns(RuntimeWarning, match="non-finite"), pytest.raises(ValueError,
                                                                        match="No candidate"):
        RNTKClassifierCV({"sigma_w": [3.0]}).fit(X, y)


def test_minor_input_checks(rng):
    X = rng.normal(size=(4, 5))
    with pytest.raises(ValueError, match="unknown activation"):
        rntk_kernel(X, activation=["relu"])
    with pytest.raises(ValueError, match="unknown kind"):
        rntk_kernel(X, kind=["ntk"])
    # a masked array's masked trailing steps are padding, as NaN would be
    masked = np.ma.masked_array(X, mask=np.zeros_like(X, dtype=bool))
    masked[0, 3:] = np.ma.masked
    np.testing.assert_allclose(rntk_kernel(masked),
                               rntk_kernel([X[0, :3]] + list(X[1:])), rtol=1e-14)
    # numeric strings: refused alike by the kernel and the estimators
    strings = np.array([["1", "2", "3"], ["2", "1", "0"]], dtype=object)
    with pytest.raises(TypeError, match="strings"):
        rntk_kernel(strings)
    with pytest.raises(TypeError, match="strings"):
        RNTKClassifier().fit(strings, [0, 1])


def test_exported():
    assert rntk.KernelOverflowError is KernelOverflowError
    assert issubclass(KernelOverflowError, ValueError)
    assert issubclass(KernelOverflowError, OverflowError)


def test_gram_larger_than_memory_is_refused_up_front():
    """Item 6: the size is checked before anything is allocated."""
    with pytest.raises(MemoryError, match=r"200000 x 200000 series needs 298\.0 GiB"):
        rntk_kernel([np.zeros(2)] * 200_000)


def test_threads_with_the_workqueue_layer(tmp_path):
    """Item 7: two Python threads calling the kernel under the workqueue layer."""
    import os
    import subprocess
    import sys

    script = tmp_path / "threads.py"
    script.write_text(
        "import threading\n"
        "import numpy as np\n"
        "from rntk import rntk_kernel\n"
        "X = np.random.default_rng(0).normal(size=(300, 40))\n"
        "def work():\n"
        "    for _ in range(3):\n"
        "        rntk_kernel(X, n_jobs=2)\n"
        "ts = [threading.Thread(target=work) for _ in range(2)]\n"
        "[t.start() for t in ts]\n"
        "[t.join() for t in ts]\n"
        "import numba\n"
        "print(numba.threading_layer())\n")
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "workqueue"


def test_zero_gram_says_so_not_the_alpha_message():
    # all-zero (constant, z-normalised) series and sigma_b = 0: the Gram is 0, so the
    # relative ridge alpha * trace(K) / n is 0; the user set alpha=1e-3 and runs no LOO
    X, y = np.zeros((6, 10)), [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="training Gram is zero") as info:
        RNTKClassifier(model="ridge").fit(X, y)
    assert "alpha" not in str(info.value).split("relative")[0]
    search = RNTKClassifierCV(param_grid={"sigma_b": [0.0], "alpha": [1e-3, 1.0]})
    with pytest.warns(FitFailedWarning, match="training Gram is zero"), \
            pytest.raises(ValueError, match="training Gram is zero"):
        search.fit(X, y)


@pytest.mark.parametrize("protocol", ["loo", "paper"])
def test_one_class_is_refused_before_the_search(protocol):
    # before: the leave-one-out search failed inside numpy ("zero-size array to reduction
    # operation maximum"), the paper's protocol after 27,000 failing fits
    X = np.random.default_rng(0).normal(size=(6, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FitFailedWarning: nothing is fitted
        with pytest.raises(ValueError, match="greater than one; got 1 class"):
            RNTKClassifierCV(protocol=protocol).fit(X, np.ones(6))


def _fake_memory(tmp_path, cgroup_lines, files):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 209715200 kB\nMemAvailable: 104857600 kB\n"
                       "SwapFree: 0 kB\n")  # 100 GiB available to the system
    proc = tmp_path / "cgroup"
    proc.write_text(cgroup_lines)
    root = tmp_path / "sys_fs_cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return meminfo, proc, root


@pytest.mark.parametrize("cgroup_lines,files,expected_gib", [
    # cgroup v2, limit on the process's own cgroup: 4 GiB - 3 GiB used + 0.5 GiB cache
    ("0::/box\n", {"box/memory.max": f"{4 * 2**30}\n",
                   "box/memory.current": f"{3 * 2**30}\n",
                   "box/memory.stat": f"anon 1\ninactive_file {2**29}\n"}, 1.5),
    # cgroup v2, the limit set on an ancestor; "max" on the leaf
    ("0::/a/b\n", {"a/b/memory.max": "max\n", "a/b/memory.current": "1\n",
                   "a/memory.max": f"{2 * 2**30}\n", "a/memory.current": f"{2**30}\n"}, 1.0),
    # cgroup v1, memory controller with its own path
    ("4:memory:/docker/x\n1:cpu:/\n0::/\n",
     {"memory/docker/x/memory.limit_in_bytes": f"{3 * 2**30}\n",
      "memory/docker/x/memory.usage_in_bytes": f"{2**30}\n",
      "memory/docker/x/memory.stat": "total_inactive_file 0\n"}, 2.0),
    # v1 without a limit (2^63 rounded to a page), v2 "max": the system's memory
    ("4:memory:/\n", {"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 100.0),
    ("0::/\n", {"memory.max": "max\n"}, 100.0),
    ("0::/\n", {}, 100.0),
])
def test_available_memory_reads_the_cgroup_limit(tmp_path, cgroup_lines, files,
                                                 expected_gib):
    from rntk._utils import _validation

    meminfo, proc, root = _fake_memory(tmp_path, cgroup_lines, files)
    got = _validation._available_memory(meminfo, proc, root)
    assert got == pytest.approx(expected_gib * 2**30)


def test_gram_within_the_system_but_over_the_container_limit_is_refused(tmp_path,
                                                                         monkeypatch):
    from rntk._utils import _validation

    meminfo, proc, root = _fake_memory(
        tmp_path, "0::/\n", {"memory.max": f"{2**30}\n", "memory.current": "0\n"})
    monkeypatch.setattr(_validation, "_MEMINFO", str(meminfo))
    monkeypatch.setattr(_validation, "_PROC_CGROUP", str(proc))
    monkeypatch.setattr(_validation, "_CGROUP_ROOT", str(root))
    _validation.check_memory(2**29, "half a GiB")  # fits the 1 GiB limit
    with pytest.raises(MemoryError, match="only 1.0 GiB"):
        _validation.check_memory(2 * 2**30, "the Gram")  # 100 GiB free, 1 GiB allowed
    X = np.random.default_rng(0).normal(size=(12000, 3))  # a 1.07 GiB Gram
    with pytest.raises(MemoryError, match="only 1.0 GiB"):
        rntk_kernel(X)
