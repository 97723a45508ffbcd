"""rntk.distributed: the Gram in blocks on a Dask cluster (issue "Beyond one Gram in memory",
part 3). The cluster tests are skipped without dask's distributed scheduler, and unless
RNTK_TEST_DISTRIBUTED=1 (local clusters of processes: slow, and two runs in about thirty
hung once, see test_a_killed_worker_costs_a_retry_not_the_result)."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import rntk
from rntk import KernelOverflowError
from rntk.distributed import _auto_block_size, _blocks, _work, rntk_kernel

try:
    import distributed
except ImportError:  # pragma: no cover - depends on the environment
    distributed = None

needs_cluster = pytest.mark.skipif(
    os.environ.get("RNTK_TEST_DISTRIBUTED") != "1" or distributed is None,
    reason="set RNTK_TEST_DISTRIBUTED=1 (and install dask[distributed]) to run the Dask "
           "tests (local clusters of processes)")


@pytest.mark.parametrize("n_x, n_y, size, symmetric",
                         [(12, 12, 5, True), (7, 7, 7, True), (10, 3, 4, False), (9, 9, 2, True)])
def test_blocks_cover_the_gram_once_largest_first(n_x, n_y, size, symmetric):
    blocks = _blocks(n_x, n_y, size, symmetric)
    seen = np.zeros((n_x, n_y), dtype=int)
    for (i0, i1), (j0, j1) in blocks:
        seen[i0:i1, j0:j1] += 1
    expected = np.triu(np.ones((n_x, n_y), dtype=int)) if symmetric else 1
    # a symmetric Gram: every pair on and above the diagonal once (whole diagonal blocks)
    assert ((seen == 1) | (seen == 0) & (expected == 0)).all()
    assert (seen[expected == 1] == 1).all()
    works = [_work(b, symmetric) for b in blocks]
    assert works == sorted(works, reverse=True)


def test_auto_block_size():
    assert _auto_block_size(6000, 6000, True, 2) == 1024  # 21 blocks, not 6 of 2000
    assert _auto_block_size(20000, 20000, True, 2) == 2000  # 55 blocks
    assert _auto_block_size(50, 50, True, 2) == 50  # below the smallest block: one
    assert _auto_block_size(3000, 1000, False, 8) == 208  # 75 blocks for 64
    assert _auto_block_size(3000, 1000, False, 64) == 200  # the smallest block
    assert _auto_block_size(100000, 5, False, 4) == 5


def test_bad_options_are_refused_before_any_cluster_starts(rng):
    """The options are checked before Dask is imported: also where it is not installed."""
    X = rng.normal(size=(4, 6))
    with pytest.raises(ValueError, match="readout_band"):
        rntk_kernel(X, readout="mean", readout_band=-1)
    with pytest.raises(ValueError, match="unknown readout"):
        rntk_kernel(X, readout="max")
    with pytest.raises(ValueError, match="unknown direction"):
        rntk_kernel(X, direction="sideways")
    with pytest.raises(ValueError, match="sigma_w must be non-negative"):
        rntk_kernel(X, sigma_w=-1.0)
    with pytest.raises(ValueError, match="n_jobs"):
        rntk_kernel(X, n_jobs=0)


@needs_cluster
def test_own_local_cluster(rng):
    """client=None: a local cluster for the call (first, before the shared one starts)."""
    X = _series(rng, 15)
    np.testing.assert_allclose(rntk_kernel(X, block_size=8), rntk.rntk_kernel(X), rtol=1e-12,
                               atol=0)


@pytest.fixture(scope="module")
def client():
    if distributed is None:  # pragma: no cover - the tests using it are skipped
        pytest.skip("dask's distributed scheduler is not installed")
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _series(rng, n, low=3, high=25, m=2):
    return [rng.normal(size=(t, m)) for t in rng.integers(low, high, size=n)]


@needs_cluster
def test_equals_the_local_gram(client, rng, tmp_path):
    X, Y = _series(rng, 71), _series(rng, 23)
    for kw in ({}, {"direction": "bidirectional", "sigma_h": 0.4, "diff": True}):
        K = rntk.rntk_kernel(X, **kw)
        out = np.lib.format.open_memmap(tmp_path / "k.npy", mode="w+", shape=K.shape)
        res = rntk_kernel(X, client=client, block_size=20, out=out, **kw)
        assert res is out
        np.testing.assert_allclose(np.asarray(out), K, rtol=1e-12, atol=0)
        del out, res
        KY = rntk_kernel(X, Y, client=client, block_size=30, **kw)
        np.testing.assert_allclose(KY, rntk.rntk_kernel(X, Y, **kw), rtol=1e-12, atol=0)


@needs_cluster
def test_progress_and_errors(client, rng, capsys):
    X = rng.normal(size=(12, 10))
    rntk_kernel(X, client=client, block_size=5, verbose=True, n_layers=2)
    err = capsys.readouterr().err
    assert "rntk.distributed: 6/6 blocks" in err  # 3 x 3 blocks, 6 on and above the diagonal
    with pytest.raises(TypeError, match="unknown keyword.*sigma_x"):
        rntk_kernel(X, client=client, sigma_x=1.0)
    with pytest.raises(ValueError, match="unknown activation"):
        rntk_kernel(X, client=client, activation="tanh")
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        rntk_kernel(X, client=client, block_size=0)
    with pytest.raises(ValueError, match="out must be a float64 array"):
        rntk_kernel(X, client=client, out=np.empty((3, 3)))
    X[7] *= 1e160
    with pytest.raises(KernelOverflowError):
        rntk_kernel(X, client=client, block_size=5)


@needs_cluster
def test_a_killed_worker_costs_a_retry_not_the_result(client, rng):
    """SIGKILL a worker process while it runs a block: the scheduler reruns its tasks."""
    X = _series(rng, 600, low=150, high=200, m=1)
    expected = rntk.rntk_kernel(X)
    # no block of an earlier call may still run: the killer would take it for one of this
    # call and could kill a worker during the scatter, which then fails
    deadline = time.monotonic() + 60
    while any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(client.processing().values()), "the cluster stayed busy"
    pids = client.run(os.getpid)
    killed = {}

    def kill_when_busy():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not killed:
            for worker, keys in client.processing().items():
                if any("_block" in str(k) for k in keys) and worker in pids:
                    killed["pid"], killed["pending"] = pids[worker], len(keys)
                    os.kill(pids[worker], signal.SIGKILL)
                    return
            time.sleep(0.002)

    thread = threading.Thread(target=kill_when_busy)
    thread.start()
    K = rntk_kernel(X, client=client, block_size=50)
    thread.join()
    assert killed, "no worker was busy"
    assert killed["pid"] not in client.run(os.getpid).values()  # it died (and was replaced)
    np.testing.assert_allclose(K, expected, rtol=1e-12, atol=0)
