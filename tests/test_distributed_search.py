"""The default classifier's large-n search on a Dask cluster (rntk.distributed.SeriesBlocks).

The cluster path must be the search of one machine, to rounding: the same landmarks, the
same leave-one-out scores, the same selected and averaged candidates, and decisions within
1e-10. The searches here run on a local cluster of two worker threads (cheap to start; the
engine serialises its parallel regions where numba's threading layer requires it); the
tests of rntk.distributed.rntk_kernel run on worker processes.
"""

import os

import numpy as np
import pytest

from rntk import RNTKClassifierCV, RNTKRegressorCV
from rntk._model_selection import DEFAULT_SETTINGS
from rntk._model_selection._cluster import (
    ARRAY_BLOCK,
    _pick,
    _series_of,
    for_prediction,
    training_series,
)
from rntk.distributed import SeriesBlocks

LARGE_N, M = 60, 24  # the feature path with few landmarks: fast


def _waves(rng, n, T=24, n_classes=3, noise=0.4):
    """Noisy sines of random phase, frequency ``class + 1``, classes shuffled."""
    t = np.linspace(0, 1, T)
    y = rng.integers(0, n_classes, size=n)
    X = (np.sin(2 * np.pi * (y[:, None] + 1) * t + rng.uniform(0, 2 * np.pi, size=(n, 1)))
         + noise * rng.normal(size=(n, T)))
    return X, y


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="dask's distributed scheduler")
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X, y = _waves(rng, 150)
    X_test, y_test = _waves(np.random.default_rng(1), 40)
    local = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(X, y)
    return X, y, X_test, y_test, local


def _assert_same_search(fitted, local, X_test):
    assert fitted.best_params_ == local.best_params_
    assert fitted.averaged_params_ == local.averaged_params_
    np.testing.assert_allclose(fitted.cv_results_["mean_test_score"],
                               local.cv_results_["mean_test_score"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(fitted.decision_function(X_test),
                               local.decision_function(X_test), rtol=0, atol=1e-10)


def test_blocks_of_an_array_equal_the_search_in_memory(client, data):
    X, y, X_test, y_test, local = data
    blocks = SeriesBlocks.from_array(X, block_size=40)  # 4 blocks, the last of 30
    fitted = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(blocks, y)
    _assert_same_search(fitted, local, X_test)
    # landmarks: those of the search in memory, in the same order
    for a, b in zip(fitted.best_estimator_.estimators_, local.best_estimator_.estimators_):
        np.testing.assert_array_equal(np.asarray(a.X_fit_), np.asarray(b.X_fit_))
    # predictions block by block, on the cluster
    test_blocks = SeriesBlocks.from_array(X_test, block_size=15)
    np.testing.assert_array_equal(fitted.predict(test_blocks), local.predict(X_test))
    np.testing.assert_allclose(fitted.predict_proba(test_blocks), local.predict_proba(X_test),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(fitted.decision_function(test_blocks),
                               local.decision_function(X_test), rtol=0, atol=1e-10)
    assert fitted.score(test_blocks, y_test) == local.score(X_test, y_test)
    assert fitted.n_channels_in_ == 1 and not hasattr(fitted, "n_features_in_")


def test_features_in_memory_and_no_file_left(client, data):
    """``features="memory"``: the same search; the default's files are all deleted."""
    X, y, X_test, _, local = data
    fitted = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(
        SeriesBlocks.from_array(X, block_size=40, features="memory"), y)
    _assert_same_search(fitted, local, X_test)

    def leftovers(dask_worker):
        return sorted(f for f in os.listdir(dask_worker.local_directory)
                      if f.startswith("rntk-"))

    assert all(not files for files in client.run(leftovers).values())
    RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(
        SeriesBlocks.from_array(X, block_size=40), y)  # features and predictions on disk
    assert all(not files for files in client.run(leftovers).values())


def test_memmaps_files_and_dask_arrays(client, data, tmp_path):
    X, y, X_test, _, local = data
    np.save(tmp_path / "x.npy", X)
    memmap = np.load(tmp_path / "x.npy", mmap_mode="r")
    from_memmap = SeriesBlocks.from_array(memmap, block_size=64)
    assert all(callable(b) for b in from_memmap.blocks)  # read by the workers, not sent
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, start in enumerate(range(0, len(X), 50)):
        np.save(parts / f"part-{i}.npy", X[start:start + 50])
    dask_array = pytest.importorskip("dask.array")
    for source in (from_memmap, SeriesBlocks.from_files(parts),
                   SeriesBlocks.from_files(str(parts / "part-*.npy")),
                   dask_array.from_array(X, chunks=(70, 12))):
        fitted = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(source, y)
        _assert_same_search(fitted, local, X_test)


def test_series_of_different_lengths(client):
    rng = np.random.default_rng(2)
    X, y = _waves(rng, 120)
    xs = [x[:12 + i % 12] for i, x in enumerate(X)]
    local = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(xs, y)
    fitted = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(
        SeriesBlocks([xs[i:i + 50] for i in range(0, 120, 50)]), y)
    _assert_same_search(fitted, local, xs[:30])


def test_joblib_dask_backend_and_progress(client, data, capsys):
    """Series in memory under joblib's Dask backend: the cluster runs the search."""
    joblib = pytest.importorskip("joblib")
    X, y, X_test, _, local = data
    with joblib.parallel_config(backend="dask"):
        fitted = RNTKClassifierCV(large_n=LARGE_N, n_components=M, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "[rntk.distributed] 150 series in 1 block(s), 1 channel(s), lengths 24 to 24" in out
    n = len(DEFAULT_SETTINGS)
    assert f"[rntk.distributed] kernel setting {n}/{n}: block 1/1" in out
    _assert_same_search(fitted, local, X_test)
    # at or below the threshold the series stay in memory, as without the backend
    with joblib.parallel_config(backend="dask"):
        small = RNTKClassifierCV(n_components=M, verbose=1).fit(X, y)
    assert "rntk.distributed" not in capsys.readouterr().out
    assert len(small.best_estimator_.estimators_[0].X_fit_) == len(X)


def test_few_series_on_a_cluster_are_searched_exactly(client, data):
    X, y, X_test, _, _ = data
    exact = RNTKClassifierCV().fit(X, y)
    fitted = RNTKClassifierCV().fit(SeriesBlocks.from_array(X, block_size=64), y)
    assert fitted.best_params_ == exact.best_params_
    np.testing.assert_allclose(fitted.decision_function(X_test), exact.decision_function(X_test),
                               rtol=0, atol=1e-10)


def test_an_overflowing_setting_scores_nan_as_in_memory(client):
    """Huge series overflow the settings that read them as given: NaN, never selected."""
    X, y = _waves(np.random.default_rng(3), 120)
    X[7] *= 1e160
    with pytest.warns(RuntimeWarning, match="non-finite"):
        local = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(X, y)
    with pytest.warns(RuntimeWarning, match="non-finite"):
        fitted = RNTKClassifierCV(large_n=LARGE_N, n_components=M).fit(
            SeriesBlocks.from_array(X, block_size=50), y)
    scores = local.cv_results_["mean_test_score"]
    assert np.isnan(scores).any() and not np.isnan(scores).all()
    np.testing.assert_array_equal(np.isnan(fitted.cv_results_["mean_test_score"]),
                                  np.isnan(scores))
    _assert_same_search(fitted, local, X[:20] / np.abs(X[:20]).max(axis=1, keepdims=True))


@pytest.mark.parametrize("how, learnt", [("dataset", "channel_mean_"), ("log", "log_scale_")])
def test_a_map_learnt_from_the_training_series_is_refused_on_a_cluster(client, data, how,
                                                                        learnt):
    X, y = data[:2]
    search = RNTKClassifierCV({"readout": ["mean"], "normalize": [how], "alpha": [0.1]},
                              large_n=LARGE_N, n_components=M)
    with pytest.raises(ValueError, match=f"learns .*{learnt}.*normalize='dataset' or 'log'"
                       r".*per-series normalize"):
        search.fit(SeriesBlocks.from_array(X, block_size=64), y)


def test_bad_blocks_are_named(client, data):
    X, y, _, _, _ = data
    two_channels = np.repeat(X[100:, :, None], 2, axis=2)
    with pytest.raises(ValueError, match=r"different channel counts \[1, 2\] \(first in "
                                         r"blocks \[0, 1\]\)"):
        RNTKClassifierCV(large_n=LARGE_N).fit(SeriesBlocks([X[:100], two_channels]), y)
    holed = X[100:].copy()
    holed[3, 5] = np.nan
    with pytest.raises(ValueError, match="block 1 of the series: X: series 3 has NaN inside"):
        RNTKClassifierCV(large_n=LARGE_N).fit(SeriesBlocks([X[:100], holed]), y)
    infinite = X[:100].copy()
    infinite[0, 0] = np.inf
    with pytest.raises(ValueError, match="block 0 of the series.*infinite"):
        RNTKClassifierCV(large_n=LARGE_N).fit(SeriesBlocks([infinite, X[100:]]), y)
    with pytest.raises(ValueError, match="y has 150 labels for 100 series"):
        RNTKClassifierCV(large_n=LARGE_N).fit(SeriesBlocks([X[:100]]), y)
    with pytest.raises(ValueError, match="classifier's large-n search"):
        RNTKRegressorCV(large_n=LARGE_N).fit(SeriesBlocks([X]), y.astype(float))
    with pytest.raises(ValueError, match="protocol='paper'"):
        RNTKClassifierCV(large_n=LARGE_N, protocol="paper").fit(SeriesBlocks([X]), y)
    with pytest.raises(ValueError, match="normalize='dataset'"):
        RNTKClassifierCV(large_n=LARGE_N, param_grid={"normalize": ["dataset"]}).fit(
            SeriesBlocks([X]), y)
    # missing values filled on the workers, as in memory
    filled = RNTKClassifierCV(large_n=LARGE_N, n_components=M, missing="interpolate")
    filled.fit(SeriesBlocks([X[:100], holed], missing="interpolate"), y)
    assert filled.best_score_ > 0.8


# -- without a cluster -----------------------------------------------------------------
def test_blocks_of_an_array(rng, tmp_path):
    X = rng.normal(size=(10, 7))
    blocks = SeriesBlocks.from_array(X, block_size=4)
    assert [len(b) for b in blocks.blocks] == [4, 4, 2]
    assert len(SeriesBlocks.from_array(np.zeros((ARRAY_BLOCK + 1, 3))).blocks) == 2
    np.save(tmp_path / "x.npy", X)
    memmap = SeriesBlocks.from_array(np.load(tmp_path / "x.npy", mmap_mode="r"), block_size=4)
    np.testing.assert_array_equal(memmap.blocks[1](), X[4:8])  # what a worker reads
    view = np.load(tmp_path / "x.npy", mmap_mode="r")[::2]  # a strided view: rows sent
    np.testing.assert_array_equal(SeriesBlocks.from_array(view, block_size=4).blocks[0],
                                  X[::2][:4])
    with pytest.raises(ValueError, match="2-D or 3-D array"):
        SeriesBlocks.from_array([X[0], X[1]])
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        SeriesBlocks.from_array(X, block_size=0)


def test_blocks_of_files(rng, tmp_path):
    X = rng.normal(size=(9, 5))
    for i in range(3):
        np.save(tmp_path / f"b{i}.npy", X[3 * i:3 * i + 3])
    np.savez(tmp_path / "c.npz", X=X[:2])
    blocks = SeriesBlocks.from_files(tmp_path)
    assert len(blocks.blocks) == 4  # b0, b1, b2, c: sorted by name
    np.testing.assert_array_equal(blocks.blocks[2](), X[6:9])
    np.testing.assert_array_equal(blocks.blocks[3](), X[:2])
    listed = SeriesBlocks.from_files([tmp_path / "b1.npy"], loader=lambda p: np.load(p) * 2)
    np.testing.assert_array_equal(listed.blocks[0](), 2 * X[3:6])
    with pytest.raises(ValueError, match="no file of series"):
        SeriesBlocks.from_files(os.fspath(tmp_path / "none-*.npy"))
    with pytest.raises(ValueError, match="at least one block"):
        SeriesBlocks([])
    with pytest.raises(ValueError, match="missing must be"):
        SeriesBlocks([X], missing="drop")


def test_features_on_disk_are_read_back_or_computed_again(rng):
    """Outside a worker the file goes to the temporary folder; a lost file is recomputed."""
    from rntk import RNTKNystroem
    from rntk._model_selection._cluster_path import _first_pass, _second_pass
    from rntk._model_selection._loo import one_vs_all_targets
    from rntk._model_selection._on_workers import loo_of
    X = rng.normal(size=(30, 8))
    labels = np.arange(30) % 3
    classes, y = one_vs_all_targets(labels)
    nys = RNTKNystroem(n_components=5, random_state=0).fit(X)
    est = RNTKClassifierCV()._base_estimator()
    inputs = (X[10:], 1, "raise", est, nys, [], np.empty((0, 5)))
    # the passes receive each series' class code and each class's targets
    targets = (labels[10:].astype(np.uint8), one_vs_all_targets(classes)[1])
    np.testing.assert_array_equal(targets[1][targets[0]], y[10:])
    memory, R = _first_pass(inputs, targets, "memory")
    held, R_disk = _first_pass(inputs, targets, "disk")
    assert os.path.exists(held.path)
    np.testing.assert_array_equal(R_disk, R)
    from rntk._model_selection._features import FeatureStats
    stats = FeatureStats(R, 20, 5)
    expected = stats.loo(memory, y[10:], [0.1, 1.0])
    args = ((est, nys), targets, classes, [0.1, 1.0])
    loo, counts = _second_pass(stats, memory, *args, "memory")
    np.testing.assert_array_equal(loo, expected)
    (path, address), counts_disk = _second_pass(stats, held, *args, "disk")
    assert address is None  # outside a worker: no worker to read it on
    np.testing.assert_array_equal(np.load(path), expected)  # the predictions, on disk
    np.testing.assert_array_equal(loo_of(path, 1), expected[1])
    np.testing.assert_array_equal(loo_of(loo, 1), expected[1])
    os.remove(path)
    with pytest.raises(RuntimeError, match="gone with the worker that wrote them"):
        loo_of(path, 1)
    assert not os.path.exists(held.path)  # read once, then deleted
    loo_again, _ = _second_pass(stats, held, *args, "memory")  # the file is gone: computed
    np.testing.assert_allclose(loo_again, expected, rtol=1e-12)
    # the counts: correct labels and squared errors per ridge
    correct = (classes[expected.argmax(axis=2)] == labels[10:]).sum(axis=1)
    np.testing.assert_array_equal(counts[0], correct)
    np.testing.assert_allclose(counts[1], ((expected - y[10:]) ** 2).sum(axis=(1, 2)))
    np.testing.assert_array_equal(counts_disk[0], counts[0])
    with pytest.raises(ValueError, match="features must be 'disk' or 'memory'"):
        SeriesBlocks([X], features="ram")


def test_a_file_of_features_travels_light_and_finds_its_block_again(client, rng):
    """What the second pass receives from another worker: the file and the block's key,
    neither the series nor the setting's landmarks (they stayed there until it ran)."""
    import pickle

    from rntk import RNTKNystroem
    from rntk._model_selection._cluster_path import _block_features, _first_pass, _item_ref
    from rntk._model_selection._loo import one_vs_all_targets
    X = rng.normal(size=(400, 50))
    targets = ((np.arange(400) % 2).astype(np.uint8)[40:], one_vs_all_targets([0, 1])[1])
    nys = RNTKNystroem(n_components=40, random_state=0).fit(X[:40])
    est = RNTKClassifierCV()._base_estimator()
    [block] = client.scatter([X[40:]], hash=False)
    inputs = (X[40:], 1, "raise", est, nys, [], np.empty((0, 40)))
    held, _ = _first_pass(inputs, targets, "disk", _item_ref(block))
    assert len(pickle.dumps(held)) < 2000 < X[40:].nbytes  # was the series and nys: 0.2 MB
    os.remove(held.path)  # as on another machine: computed again from the cluster's block
    again = client.submit(lambda h, e, n: h.load(e, n), held, est, nys).result()
    np.testing.assert_allclose(again, _block_features(*inputs), rtol=1e-12)


def test_a_block_is_validated_with_its_number(rng):
    X = rng.normal(size=(3, 6))
    assert [s.shape for s in _series_of(lambda: X, 0, "raise")] == [(6, 1)] * 3
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match="block 4 of the series: X: series 1 has NaN"):
        _series_of(X, 4, "raise")
    with pytest.raises(TypeError, match="block 0 of the series"):
        _series_of(np.array([["a", "b"]]), 0, "raise")


def test_blocks_elsewhere_are_refused_clearly(rng):
    from rntk import RNTKClassifier, rntk_kernel
    blocks = SeriesBlocks.from_array(rng.normal(size=(10, 5)))
    with pytest.raises(TypeError, match="X is a rntk.distributed.SeriesBlocks"):
        RNTKClassifier().fit(blocks, np.arange(10) % 2)
    with pytest.raises(TypeError, match="SeriesBlocks"):
        rntk_kernel(blocks)


def test_series_in_memory_stay_in_memory_without_dasks_backend(rng):
    X = rng.normal(size=(100, 6))
    assert training_series(X, 10) is None
    blocks = SeriesBlocks.from_array(X)
    assert training_series(blocks, 10) is blocks


@pytest.mark.parametrize("n_blocks", [1, 2, 8, 9, 17, 25, 65, 513])
def test_the_tree_built_while_submitting_is_combine_rs_tree(n_blocks):
    # the R factors combined as they are submitted (a bounded number waiting): the same
    # nodes as combine_r's level-by-level tree, so the same factor bitwise
    from rntk._model_selection._cluster_path import _Tree
    from rntk._model_selection._features import combine_r

    class Done:  # a finished future
        def __init__(self, value):
            self.value = value

        def result(self):
            return self.value

    class Client:
        def submit(self, fn, *args, **kwargs):
            return Done(fn(*[a.value for a in args]))

    rng = np.random.default_rng(n_blocks)
    factors = [np.triu(rng.normal(size=(6, 6))) for _ in range(n_blocks)]
    tree = _Tree(Client())
    for f in factors:
        tree.add(Done(f))
    np.testing.assert_array_equal(tree.root().result(), combine_r(factors))


def test_the_tree_lets_go_of_the_nodes_it_waited_for(monkeypatch):
    # a node's future held by the tree keeps its R factor (2 MB at 500 landmarks) on a
    # worker until the setting ends: once waited for, only its parent holds it
    import weakref

    from rntk._model_selection import _cluster_path as _cluster

    class Done:
        def __init__(self, value):
            self.value = value

    class Client:
        def submit(self, fn, *args, **kwargs):
            return Done(fn(*[a.value for a in args]))

    waited = []
    monkeypatch.setattr(_cluster, "dask_names",
                        lambda name: [lambda node: waited.append(weakref.ref(node))])
    tree = _cluster._Tree(Client())
    rng = np.random.default_rng(0)
    n_blocks = 9 * _cluster.R_FANIN ** 2
    for k in range(n_blocks):
        tree.wait_for(k - _cluster._AHEAD)
        tree.add(Done(np.triu(rng.normal(size=(4, 4)))))
    nodes = waited
    assert len(nodes) == n_blocks // _cluster.R_FANIN - _cluster._AHEAD // _cluster.R_FANIN
    # a node's parent (a fake future here) keeps only its value: every node is gone
    assert sum(ref() is not None for ref in nodes) == 0


def test_what_a_worker_holds_for_the_client_is_not_a_whole_block(data):
    X, y, X_test, _, local = data
    # the landmarks picked from a block are copies: a view would keep the whole block
    # alive on its worker until the client gathers it (every block read ahead)
    picked = _pick(X, 0, "raise", [3, 7])
    assert not any(np.shares_memory(p, X) for p in picked)
    np.testing.assert_array_equal(np.concatenate(picked)[:, 0], X[[3, 7]].ravel())
    # the model sent to the workers to predict has no leave-one-out decisions of the
    # training series (n rows per member); the fitted model keeps them
    model = local.best_estimator_
    light = for_prediction(model)
    members = [m for m in model.estimators_ if hasattr(m, "oos_decision_")]
    assert hasattr(model, "oos_decision_") and len(members) == len(model.estimators_)
    assert not hasattr(light, "oos_decision_")
    assert not any(hasattr(m, "oos_decision_") for m in light.estimators_ + light.estimators)
    assert all(a is b for a, b in zip(light.estimators, light.estimators_))  # one object each
    np.testing.assert_array_equal(light.decision_function(X_test),
                                  model.decision_function(X_test))
    np.testing.assert_array_equal(light.predict_proba(X_test), model.predict_proba(X_test))


def test_results_are_gathered_a_few_blocks_at_a_time(capsys):
    # a block's result (its predictions, or its leave-one-out of one ridge) waits on its
    # worker until gathered: submitted all at once, they waited together, n x n_targets
    # floats over the workers; at most two batches of two per worker thread wait now
    from rntk._model_selection import _cluster

    class Client:
        waiting = most = 0

        def nthreads(self):
            return {"a": 1, "b": 1}

        def submit(self, item):
            self.waiting += 1
            self.most = max(self.most, self.waiting)
            return lambda: 10 * item

        def gather(self, futures):
            self.waiting -= len(futures)
            return [f() for f in futures]

    client = Client()
    progress = _cluster._Progress(50, 1, "predict: block")
    out = _cluster._gather_bounded(client, client.submit, range(50), progress)
    assert out == [10 * k for k in range(50)]
    assert client.waiting == 0 and client.most == 2 * 2 * 2
    lines = capsys.readouterr().out.splitlines()  # every tenth
    assert [line.split("|")[0].split()[-1] for line in lines] == [
        f"{k}/50" for k in range(5, 51, 5)]
    assert _cluster._gather_bounded(client, client.submit, []) == []


def test_the_workers_hold_a_class_code_per_series_not_its_targets(client, data):
    # held for the whole fit, the targets and labels were n x (n_targets + 1) floats over
    # the workers (40 MB at a million series of 4 classes); a byte per series now
    from rntk._model_selection._cluster import BoundSeries
    from rntk._model_selection._cluster_path import ClusterFeaturePath
    from rntk._model_selection._loo import one_vs_all_targets
    X, y, *_ = data
    labels = np.array(["ant", "bee", "cow"])[y]
    series = BoundSeries(SeriesBlocks.from_array(X, block_size=40))
    path = ClusterFeaturePath(series, labels, n_components=10)
    codes, table = (f.result() for f in path._target_blocks(1))
    assert codes.dtype == np.uint8 and codes.shape == (40,)
    classes, Y = one_vs_all_targets(labels)
    np.testing.assert_array_equal(table[codes], Y[40:80])  # the same targets, bitwise
    np.testing.assert_array_equal(classes[codes], labels[40:80])
