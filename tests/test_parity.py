"""One parity suite: every engine a CPU can run, on cases drawn from the option table.

The cases are a pairwise covering of the values of every option of
``rntk._kernels._params.RNTK_PARAMS`` (and of the channel count): every two values of
two options meet in at least one case, with mixed series lengths. Each engine computes
``K(X, Y)``, ``K(X, X)`` (whose diagonal pairs a series with itself) or the diagonal,
and is compared with the slow definition of ``tests/reference.py``:

* the Numba engine (``rntk_kernel``, ``rntk_diag``, the GP kernel object ``RNTK``);
* the Numba engine in blocks of rows written into a ``numpy.memmap``;
* the differentiable torch engine (``rntk.nn.rntk_kernel_torch``), if torch is installed;
* the features of ``RNTKNystroem`` at full rank (their inner products are the Gram);
* the fused CUDA engine on numba's simulator, if numba-cuda is installed;
* ``rntk.distributed`` on an in-process Dask cluster, for one case, if Dask is installed.

A new option of the table fails :func:`test_every_option_of_the_table_is_varied` until
its values are listed here; it then reaches every engine through the cases.
"""

import importlib.util
import itertools

import numpy as np
import pytest

import rntk
from rntk._kernels import rntk_diag
from rntk._kernels._params import (
    ACTIVATIONS,
    DIRECTIONS,
    KINDS,
    READOUTS,
    RNTK_DEFAULTS,
    RNTK_PARAM_NAMES,
    resolve_params,
)
from tests.cuda_sim import simulated_cuda
from tests.reference import family_gram

#: The values each option takes in the cases (categorical ones: every choice of the table).
VALUES = {
    "n_layers": [1, 2],
    "sigma_w": [1.2, "per-layer"],
    "sigma_u": [1.0, 0.8],
    "sigma_b": [0.0, 0.3],
    "sigma_h": [0.0, 0.6],
    "sigma_v": [1.0, 1.5],
    "activation": sorted(ACTIVATIONS),
    "kind": list(KINDS),
    "direction": list(DIRECTIONS),
    "diff": [False, True],
    "readout": list(READOUTS),
    "readout_stride": [1, 2],
    "readout_band": [None, 0, 2],
}
#: Not a kernel option, varied with them: channels per step of the series.
DATA_VALUES = {"channels": [1, 2]}
X_LENGTHS = (4, 6, 3)
Y_LENGTHS = (5, 2, 6)
RTOL = 1e-10


def _covering(values, seed=0, tries=60):
    """Rows (dicts) in which every pair of values of two factors meets (greedy, seeded)."""
    names = list(values)
    uncovered = {((a, i), (b, j)) for a, b in itertools.combinations(names, 2)
                 for i in range(len(values[a])) for j in range(len(values[b]))}
    rng = np.random.default_rng(seed)
    rows = []
    while uncovered:
        # start each candidate from one uncovered pair, fill the rest at random
        (a, i), (b, j) = min(uncovered)
        best, best_gain = None, -1
        for _ in range(tries):
            row = {n: int(rng.integers(len(values[n]))) for n in names}
            row[a], row[b] = i, j
            gain = sum(((p, row[p]), (q, row[q])) in uncovered
                       for p, q in itertools.combinations(names, 2))
            if gain > best_gain:
                best, best_gain = row, gain
        uncovered -= {((p, best[p]), (q, best[q])) for p, q in itertools.combinations(names, 2)}
        rows.append({n: values[n][k] for n, k in best.items()})
    return rows


def _case(row):
    params = {k: v for k, v in row.items() if k in RNTK_PARAM_NAMES}
    if params["sigma_w"] == "per-layer":
        params["sigma_w"] = [1.3, 0.9][:params["n_layers"]]
    return params, row["channels"]


CASES = [_case(r) for r in _covering({**VALUES, **DATA_VALUES})]


def _id(case):
    params, m = case
    return ",".join(f"{k}={v}" for k, v in params.items()) + f",m={m}"


def _data(m, seed=0):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(t, m)) / np.sqrt(t) for t in X_LENGTHS]
    Y = [rng.normal(size=(t, m)) / np.sqrt(t) for t in Y_LENGTHS]
    return X, Y


_REFERENCE = {}


def _reference(k):
    """``(K(X, X), K(X, Y))`` of case ``k`` by the slow definition (computed once)."""
    if k not in _REFERENCE:
        params, m = CASES[k]
        X, Y = _data(m, k)
        _REFERENCE[k] = family_gram(X, **params), family_gram(X, Y, **params)
    return _REFERENCE[k]


def _close(got, want, what):
    got = np.asarray(got)
    assert got.shape == want.shape, what
    # relative to the largest entry: a kernel entry may be 0 (or cancel to almost 0)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max(),
                               err_msg=what)


# ------------------------------------------------------------------------- the cases
def test_every_option_of_the_table_is_varied():
    assert set(VALUES) == set(RNTK_PARAM_NAMES), (
        "every option of the table needs its values in tests/test_parity.py")
    assert set(VALUES["activation"]) == set(ACTIVATIONS)
    assert set(VALUES["kind"]) == set(KINDS)
    assert set(VALUES["direction"]) == set(DIRECTIONS)
    assert set(VALUES["readout"]) == set(READOUTS)
    for name, values in VALUES.items():
        assert len(values) >= 2, name


def test_the_cases_cover_every_pair_of_values():
    rows = [{**params, "channels": m} for params, m in CASES]
    for row in rows:  # undo the per-layer expansion, to compare with the listed values
        if isinstance(row["sigma_w"], list):
            row["sigma_w"] = "per-layer"
    values = {**VALUES, **DATA_VALUES}
    for a, b in itertools.combinations(values, 2):
        seen = {(repr(r[a]), repr(r[b])) for r in rows}
        want = {(repr(u), repr(v)) for u in values[a] for v in values[b]}
        assert want <= seen, (a, b, sorted(want - seen))
    assert len(CASES) < 40  # a covering, not the product (2 ** 11 * 3 ** 3 = 55296 cases)


# ------------------------------------------------------------------------- engines
@pytest.mark.parametrize("k", range(len(CASES)), ids=[_id(c) for c in CASES])
def test_numba_engine(k):
    params, m = CASES[k]
    X, Y = _data(m, k)
    KXX, KXY = _reference(k)
    K = rntk.rntk_kernel(X, **params)
    _close(K, KXX, "rntk_kernel(X)")
    np.testing.assert_array_equal(K, K.T)  # symmetric by construction
    _close(rntk.rntk_kernel(X, Y, **params), KXY, "rntk_kernel(X, Y)")
    _close(rntk_diag(X, **params), np.diag(KXX), "rntk_diag(X)")
    _close(rntk.RNTK(**params)(X, Y), KXY, "RNTK(X, Y)")
    _close(rntk.RNTK(**params).diag(X), np.diag(KXX), "RNTK.diag(X)")


@pytest.mark.parametrize("k", range(len(CASES)), ids=[_id(c) for c in CASES])
def test_numba_engine_in_blocks_into_a_memmap(k, tmp_path):
    params, m = CASES[k]
    X, Y = _data(m, k)
    KXX, KXY = _reference(k)
    out = np.lib.format.open_memmap(tmp_path / "xx.npy", mode="w+", shape=KXX.shape)
    # one row per block: every block copies its columns before the diagonal from earlier rows
    assert rntk.rntk_kernel(X, out=out, block_rows=1, **params) is out
    _close(out, KXX, "rntk_kernel(X, out=memmap, block_rows=1)")
    out = np.lib.format.open_memmap(tmp_path / "xy.npy", mode="w+", shape=KXY.shape)
    rntk.rntk_kernel(X, Y, out=out, block_rows=2, **params)
    _close(out, KXY, "rntk_kernel(X, Y, out=memmap, block_rows=2)")
    del out


@pytest.mark.parametrize("k", range(len(CASES)), ids=[_id(c) for c in CASES])
def test_torch_engine(k, one_torch_thread):
    from rntk.nn import rntk_kernel_torch

    params, m = CASES[k]
    X, Y = _data(m, k)
    KXX, KXY = _reference(k)
    _close(rntk_kernel_torch(X, **params).numpy(), KXX, "rntk_kernel_torch(X)")
    _close(rntk_kernel_torch(X, Y, **params).numpy(), KXY, "rntk_kernel_torch(X, Y)")
    _close(rntk_kernel_torch(X, Y, paired=True, **params).numpy(), np.diag(KXY),
           "rntk_kernel_torch(X, Y, paired=True)")


@pytest.mark.parametrize("k", range(len(CASES)), ids=[_id(c) for c in CASES])
def test_nystroem_features_at_full_rank(k):
    params, m = CASES[k]
    X, Y = _data(m, k)
    KXX, KXY = _reference(k)
    nys = rntk.RNTKNystroem(n_components=len(X), normalize=False, **params)
    FX = nys.fit_transform(X)
    assert nys.n_components_ == len(X)
    # at full rank the features of the landmarks reproduce the Gram, up to the
    # conditioning of K(X, X) (series of 2 to 6 steps: well conditioned)
    for got, want, what in ((FX @ FX.T, KXX, "F(X) F(X)^T"),
                            (FX @ nys.transform(Y).T, KXY, "F(X) F(Y)^T")):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8 * np.abs(want).max(),
                                   err_msg=what)


def _cuda_kernel():
    """``rntk_kernel_cuda`` on numba's CUDA simulator (or a usable GPU), else skip."""
    simulated_cuda()
    from rntk._kernels._cuda import rntk_kernel_cuda

    return rntk_kernel_cuda


#: The simulator runs every GPU thread as a Python thread, but these series are short
#: (about 0.4 s a case on a 2-core machine): every case.
CUDA_CASES = list(range(len(CASES)))


@pytest.mark.parametrize("k", CUDA_CASES, ids=[_id(CASES[k]) for k in CUDA_CASES])
def test_cuda_engine_on_the_simulator(k):
    kernel = _cuda_kernel()
    params, m = CASES[k]
    X, Y = _data(m, k)
    KXX, KXY = _reference(k)
    _close(kernel(X, **params), KXX, "rntk_kernel_cuda(X)")
    _close(kernel(X, Y, **params), KXY, "rntk_kernel_cuda(X, Y)")


def test_distributed_engine():
    distributed = pytest.importorskip("distributed")
    from rntk.distributed import rntk_kernel as dask_kernel

    k = next(k for k, (p, _) in enumerate(CASES) if p["readout"] == "mean")
    params, m = CASES[k]
    X, Y = _data(m, k)
    KXX, KXY = _reference(k)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                            dashboard_address=":0") as client:
        _close(dask_kernel(X, client=client, block_size=2, **params), KXX,
               "rntk.distributed.rntk_kernel(X)")
        _close(dask_kernel(X, Y, client=client, block_size=2, **params), KXY,
               "rntk.distributed.rntk_kernel(X, Y)")


# ------------------------------------------------------------------ one resolver
#: Bad options, and the error every entry point raises for them (from resolve_params).
BAD_OPTIONS = [
    (dict(n_layers=0), ValueError, "n_layers must be >= 1"),
    (dict(n_layers=1.5), TypeError, "n_layers must be an integer"),
    (dict(sigma_w=-1.0), ValueError, "sigma_w must be non-negative"),
    (dict(n_layers=2, sigma_u=[1.0, 1.0, 1.0]), ValueError, "one value per layer"),
    (dict(sigma_h=np.inf), ValueError, "sigma_h must be finite"),
    (dict(sigma_v=1e200), ValueError, "sigma_v=.* is too large"),
    (dict(activation="tanh"), ValueError, "unknown activation"),
    (dict(kind="gp"), ValueError, "unknown kind"),
    (dict(direction="sideways"), ValueError, "unknown direction"),
    (dict(diff="yes"), TypeError, "diff must be True or False"),
    (dict(readout="max"), ValueError, "unknown readout"),
    (dict(readout="mean", readout_stride=0), ValueError, "readout_stride must be"),
    (dict(readout="mean", readout_band=-1), ValueError, "readout_band must be"),
]


def _entry_points():
    X = [np.ones((3, 1)), np.ones((2, 1))]
    points = {
        "rntk_kernel": lambda **p: rntk.rntk_kernel(X, **p),
        "rntk_diag": lambda **p: rntk_diag(X, **p),
        "RNTK": lambda **p: rntk.RNTK(**p)(X),
        "distributed": lambda **p: __import__("rntk.distributed").distributed.rntk_kernel(
            X, **p),
    }
    if importlib.util.find_spec("torch") is not None:
        from rntk.nn import rntk_gram_log_gradient, rntk_kernel_torch

        points["rntk_kernel_torch"] = lambda **p: rntk_kernel_torch(X, **p)
        points["rntk_gram_log_gradient"] = lambda **p: rntk_gram_log_gradient(X, [], **p)
        points["sensitivity"] = lambda **p: rntk.sensitivity(X[0], X[1], **p)
        from rntk.nn import ElmanRNN, RNTKNetwork

        # the networks take the options of their architecture (ElmanRNN also has tanh)
        points["ElmanRNN"] = lambda **p: ElmanRNN(1, 4, max_length=3, **p)
        points["ElmanRNN"].takes = {"n_layers", "sigma_w", "sigma_u", "sigma_b", "sigma_h",
                                    "sigma_v", "readout", "readout_stride", "readout_band"}
        points["RNTKNetwork"] = lambda **p: RNTKNetwork(1, 4, max_length=3, **p)
        points["RNTKNetwork"].takes = points["ElmanRNN"].takes | {"direction", "diff"}
    if importlib.util.find_spec("numba_cuda") is not None:
        from rntk._kernels._cuda import rntk_kernel_cuda_batched

        # validated before any GPU work: no simulator or GPU needed
        points["rntk_kernel_cuda_batched"] = lambda **p: rntk_kernel_cuda_batched(
            X, None, [p])
    return points


@pytest.mark.parametrize("bad, err, match", BAD_OPTIONS,
                         ids=[",".join(f"{k}={v}" for k, v in b.items()) for b, _, _ in
                              BAD_OPTIONS])
def test_every_entry_point_refuses_a_bad_option_alike(bad, err, match):
    # (the estimators check their parameters first with scikit-learn's validation of the
    # table's constraints, in its own words)
    for name, call in _entry_points().items():
        if not set(bad) <= getattr(call, "takes", set(bad)):
            continue
        with pytest.raises(err, match=match):
            call(**bad)


def test_the_resolved_options():
    spec = resolve_params()
    assert dict(spec.given) == RNTK_DEFAULTS
    assert (spec.act, spec.kind, spec.readers, spec.stride, spec.band) == (
        ACTIVATIONS["relu"], "ntk", (False,), 0, -1)
    spec = resolve_params(n_layers=2, sigma_w=[1.5, 0.5], sigma_h=2.0, activation="erf",
                          direction="bidirectional", readout="mean", readout_stride=3,
                          readout_band=1, kind="nngp")
    assert spec.sw2 == (2.25, 0.25) and spec.su2 == (1.0, 1.0) and spec.sh2 == 4.0
    assert spec.sigma_w == (1.5, 0.5) and spec.sigma_h == 2.0
    assert (spec.act, spec.want_ntk, spec.readers, spec.stride, spec.band) == (
        ACTIVATIONS["erf"], False, (False, True), 3, 1)
    sw2, su2, sb2 = spec.layer_variances()
    np.testing.assert_array_equal(sw2, [2.25, 0.25])
    assert sw2.dtype == np.float64 and sw2.flags.writeable
    assert spec.settings(longest_series=7) == {
        "n_layers": 2, "sigma_w": [1.5, 0.5], "sigma_h": 2.0, "activation": "erf",
        "kind": "nngp", "direction": "bidirectional", "readout": "mean",
        "readout_stride": 3, "readout_band": 1, "longest_series": 7}
    with pytest.raises(AttributeError):
        spec.n_layers = 3  # frozen
    with pytest.raises(TypeError, match="unknown kernel parameter.*sigma_x"):
        resolve_params(sigma_x=1.0)
