"""RNNClassifier: learning, reproducibility, variable lengths, scikit-learn contract."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from rntk.nn import ElmanRNN, RNNClassifier  # noqa: E402


def _waves(rng, n, lengths=(8, 16), noise=0.3):
    """Two classes of noisy sine / cosine series of random lengths."""
    X, y = [], []
    for i in range(n):
        T = int(rng.integers(*lengths))
        t = np.linspace(0, 1, T)
        c = i % 2
        X.append((np.sin(6 * t) if c else np.cos(6 * t)) + noise * rng.standard_normal(T))
        y.append(["cos", "sin"][c])
    return X, np.array(y)


@pytest.mark.parametrize("cell, lr", [("ntk", 1e-2), ("irnn", 3e-3), ("gru", 1e-2)])
def test_learns_variable_length_task_above_chance(cell, lr):
    # (the identity-initialised ReLU RNN diverges at lr=1e-2, as Le et al. warn)
    rng = np.random.default_rng(0)
    X, y = _waves(rng, 60)
    Xt, yt = _waves(rng, 60)
    clf = RNNClassifier(cell, hidden_size=16, lr=lr, max_epochs=15, validation_fraction=0.2,
                        random_state=0)
    clf.fit(X, y)
    assert clf.score(Xt, yt) > 0.75
    assert set(clf.classes_) == {"cos", "sin"}
    assert 1 <= clf.best_epoch_ <= clf.n_epochs_ <= 15
    assert len(clf.validation_scores_) == clf.n_epochs_
    proba = clf.predict_proba(Xt)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xt), clf.classes_[proba.argmax(1)])


def test_seeded_fits_are_reproducible_and_leave_global_rng_alone():
    rng = np.random.default_rng(1)
    X, y = _waves(rng, 30)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    threads = torch.get_num_threads()
    a = RNNClassifier(hidden_size=8, max_epochs=4, random_state=3, n_jobs=-1).fit(X, y)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.get_num_threads() == threads
    b = RNNClassifier(hidden_size=8, max_epochs=4, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    c = RNNClassifier(hidden_size=8, max_epochs=4, random_state=4).fit(X, y)
    assert not np.array_equal(a.decision_function(X), c.decision_function(X))


def test_ntk_cell_is_the_papers_gaussian_relu_rnn():
    rng = np.random.default_rng(2)
    X, y = _waves(rng, 10)
    clf = RNNClassifier("ntk", hidden_size=8, n_layers=2, max_epochs=1, random_state=0)
    clf.fit(X, y)
    net = clf.module_
    assert isinstance(net, ElmanRNN)
    assert net.activation == "relu" and net.n_layers == 2 and net.n_out == 2
    assert net.sigma_w == (2**0.5, 2**0.5) and net.sigma_u == (1.0, 1.0)
    assert net.sigma_b == (0.0, 0.0) and net.sigma_v == 2**0.5


def test_irnn_starts_from_identity():
    rng = np.random.default_rng(3)
    X, y = _waves(rng, 10)
    clf = RNNClassifier("irnn", hidden_size=6, lr=1e-12, max_epochs=1,
                        validation_fraction=None, random_state=0).fit(X, y)
    w = clf.module_.rnn.weight_hh_l0.detach().numpy()
    np.testing.assert_allclose(w, np.eye(6), atol=1e-6)
    assert clf.module_.rnn.weight_ih_l0.detach().abs().max() < 0.01


def test_padding_layouts_agree_and_short_series_unaffected():
    rng = np.random.default_rng(4)
    X, y = _waves(rng, 20)
    for cell in ("ntk", "gru"):
        clf = RNNClassifier(cell, hidden_size=8, max_epochs=2, random_state=0).fit(X, y)
        padded = np.full((len(X), max(map(len, X))), np.nan)
        for i, x in enumerate(X):
            padded[i, :len(x)] = x
        d_list = clf.decision_function(X)
        np.testing.assert_allclose(clf.decision_function(padded), d_list, rtol=1e-5,
                                   atol=1e-6)
        alone = np.array([clf.decision_function([x])[0] for x in X[:4]])
        np.testing.assert_allclose(alone, d_list[:4], rtol=1e-5, atol=1e-6)


def test_early_stopping_and_pickle():
    rng = np.random.default_rng(5)
    X, y = _waves(rng, 40)
    clf = RNNClassifier(hidden_size=8, lr=1e-2, max_epochs=200, patience=2, min_epochs=0,
                        random_state=0)
    clf.fit(X, y)
    assert clf.n_epochs_ < 200
    assert clf.n_epochs_ - clf.best_epoch_ == 2
    assert clf.validation_scores_[clf.best_epoch_ - 1] == max(clf.validation_scores_)
    assert max(clf.validation_scores_[clf.best_epoch_:]) <= max(clf.validation_scores_)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))
    no_val = clone(clf).set_params(validation_fraction=None, max_epochs=3).fit(X, y)
    assert no_val.n_epochs_ == 3 and no_val.validation_scores_ == []


def test_min_epochs_delays_early_stopping():
    rng = np.random.default_rng(5)
    X, y = _waves(rng, 40)
    free = RNNClassifier(hidden_size=8, lr=1e-2, patience=2, min_epochs=0, random_state=0)
    free.fit(X, y)
    late = clone(free).set_params(min_epochs=free.n_epochs_ + 5).fit(X, y)
    assert late.n_epochs_ >= free.n_epochs_ + 5
    # the same seed gives the same path: the first epochs' scores agree
    np.testing.assert_allclose(late.validation_scores_[:free.n_epochs_],
                               free.validation_scores_)
    assert late.validation_scores_[late.best_epoch_ - 1] == max(late.validation_scores_)


@pytest.mark.parametrize("cell", ["ntk", "irnn", "gru"])
def test_clip_norm_bounds_the_gradient_each_step(cell, monkeypatch):
    # record the norm of the whole gradient that RMSProp is given at every step
    norms = []
    step = torch.optim.RMSprop.step

    def recording_step(self, *args, **kwargs):
        grads = [p.grad for g in self.param_groups for p in g["params"] if p.grad is not None]
        norms.append(float(torch.linalg.vector_norm(torch.cat([g.ravel() for g in grads]))))
        return step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.RMSprop, "step", recording_step)
    rng = np.random.default_rng(8)
    X, y = _waves(rng, 24, lengths=(30, 40), noise=1.0)
    X = [5 * x for x in X]  # large inputs: large gradients
    kw = dict(hidden_size=8, lr=1e-3, max_epochs=3, batch_size=8, random_state=0)
    RNNClassifier(cell, clip_norm=None, **kw).fit(X, y)
    unclipped, norms[:] = list(norms), []
    RNNClassifier(cell, clip_norm=1e-2, **kw).fit(X, y)
    assert len(norms) == len(unclipped) > 0
    assert max(norms) <= 1e-2 * (1 + 1e-5)
    assert min(unclipped) > 1e-2  # the bound was active, so the test can fail
    with pytest.raises(ValueError, match="clip_norm"):
        RNNClassifier(cell, clip_norm=0.0).fit(X, y)


def test_invalid_input():
    rng = np.random.default_rng(6)
    X, y = _waves(rng, 10)
    clf = RNNClassifier(hidden_size=4, max_epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="channel"):
        clf.predict(rng.standard_normal((3, 5, 2)))
    with pytest.raises(ValueError, match="cell"):
        RNNClassifier("lstm").fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        clf.predict([np.array([1.0, np.nan, 2.0])])


_LENGTH_REASON = ("series of another length than in fit are valid input (variable-length "
                  "sequences), so predicting on X with fewer columns does not raise")


def _expected_failed_checks(estimator):
    return {
        "check_n_features_in_after_fitting": _LENGTH_REASON,
        # check_classifiers_train ends with predict(X.T): series of another length
        "check_classifiers_train": _LENGTH_REASON,
    }


@parametrize_with_checks(
    # the wrapper code is the same for every cell: the checks run on the cheapest
    [RNNClassifier("ntk", hidden_size=4, max_epochs=3, random_state=0)],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_multichannel_3d_input_and_integer_labels():
    rng = np.random.default_rng(7)
    n, T = 40, 10
    y = np.arange(n) % 3
    t = np.linspace(0, 1, T)
    X = np.stack([np.stack([np.sin((2 + c) * 3 * t), np.cos((2 + c) * 3 * t)], axis=1)
                  for c in y]) + 0.2 * rng.standard_normal((n, T, 2))
    clf = RNNClassifier("gru", hidden_size=16, lr=1e-2, max_epochs=30,
                        validation_fraction=None, random_state=0).fit(X, y)
    assert clf.n_channels_in_ == 2 and not hasattr(clf, "n_features_in_")
    assert clf.decision_function(X).shape == (n, 3)
    assert clf.score(X, y) > 0.6
    np.testing.assert_array_equal(clf.predict(list(X)), clf.predict(X))
