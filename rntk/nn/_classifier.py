"""Trained finite-width RNN classifiers: the RNTK paper's Gaussian, identity and GRU baselines."""

import copy
import math
import numbers
from contextlib import contextmanager

import numpy as np
import torch
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

from .._utils import DOC, fill_doc, validate_fit_data, validate_predict_data
from ._elman import ElmanRNN

__all__ = ["RNNClassifier"]


@contextmanager
def _torch_threads(n_jobs):
    """Run a block with ``effective_n_jobs(n_jobs)`` torch threads, then restore."""
    old = torch.get_num_threads()
    torch.set_num_threads(max(1, effective_n_jobs(n_jobs)))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _clip_grad_norm(module, max_norm):
    """Rescale all gradients together to Euclidean norm at most ``max_norm``.

    As ``torch.nn.utils.clip_grad_norm_``, but the norm is summed in float64, so the
    result does not depend on the number of torch threads (a float32 sum does, in
    its last bits, and seeded fits would then differ between thread counts).
    """
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    if not grads:
        return
    total = math.sqrt(sum(float(torch.sum(g.double() ** 2)) for g in grads))
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / total)


class _TorchRNN(nn.Module):
    """``torch.nn.RNN`` / ``GRU`` reading each series to its own end, linear readout."""

    def __init__(self, cell, n_in, hidden_size, n_layers, n_out):
        super().__init__()
        if cell == "gru":
            # torch's default: every weight and bias U(-1/sqrt(n), 1/sqrt(n))
            self.rnn = nn.GRU(n_in, hidden_size, n_layers, batch_first=True)
        else:
            self.rnn = nn.RNN(n_in, hidden_size, n_layers, nonlinearity="relu",
                              batch_first=True)
            # identity RNN (Le, Jaitly and Hinton 2015): recurrent weights = identity,
            # biases 0, input weights N(0, 0.001^2)
            with torch.no_grad():
                for name, p in self.rnn.named_parameters():
                    if name.startswith("weight_hh"):
                        p.copy_(torch.eye(hidden_size))
                    elif name.startswith("bias"):
                        p.zero_()
                    else:
                        p.normal_(0.0, 1e-3)
        self.readout = nn.Linear(hidden_size, n_out)

    def forward(self, X):
        lengths = torch.tensor([len(x) for x in X])
        padded = pad_sequence(list(X), batch_first=True)
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        _, h_n = self.rnn(packed)
        return self.readout(h_n[-1])


@fill_doc(**DOC)
class RNNClassifier(ClassifierMixin, BaseEstimator):
    """A recurrent network trained by gradient descent, as a scikit-learn classifier.

    The three finite-RNN baselines of the RNTK paper's UCR comparison (Alemohammad
    et al., Appendix A.1): a ReLU RNN with the Gaussian NTK initialisation
    (``cell="ntk"``: :class:`~rntk.nn.ElmanRNN` with ``sigma_w = sigma_v = sqrt 2``,
    ``sigma_u = 1``, ``sigma_b = 0``), a ReLU RNN with identity initialisation
    (``cell="irnn"``, Le et al. 2015) and a GRU with torch's uniform initialisation
    (``cell="gru"``). Each reads every series to its own end (different lengths need
    no padding) and classifies the last hidden state with a linear readout, trained
    with cross-entropy and RMSProp; training stops when the accuracy on a held-out
    validation split has not improved for ``patience`` epochs, and the weights of
    the best epoch are kept. Equal accuracies are ranked by validation loss, so a
    plateau of accuracy (common on small validation sets) does not stop a network
    that is still learning.

    Two defaults go beyond the paper's description (which names only RMSProp, 200
    epochs and patience 5), because without them the networks stay at chance on
    small UCR sets (see Notes): the gradient norm is clipped to ``clip_norm``, and
    early stopping cannot end training before ``min_epochs`` epochs.

    Parameters
    ----------
    cell : {"ntk", "irnn", "gru"}, default="ntk"
        Architecture and initialisation (see above).
    hidden_size : int, default=100
        Width of every recurrent layer (the paper searches 50, 100, 200, 500).
    n_layers : int, default=1
        Number of stacked recurrent layers (the paper searches 1, 2).
    lr : float, default=1e-3
        RMSProp learning rate (the paper searches 1e-2 to 1e-5).
    max_epochs : int, default=200
        Maximum number of passes over the training data.
    patience : int, default=5
        Epochs without a better validation accuracy (or, at equal accuracy, a lower
        validation loss) before training stops (not before ``min_epochs``).
    validation_fraction : float or None, default=0.1
        Fraction of the training data held out (stratified when possible) for early
        stopping. ``None`` or 0 trains for ``max_epochs`` on all the data.
    batch_size : int, default=32
        Mini-batch size.
    min_epochs : int, default=50
        Early stopping cannot end training before this many epochs (the best epoch
        is still chosen among all of them). 0 gives the paper's rule as written.
    clip_norm : float or None, default=1.0
        Before each step, the gradient of all parameters together is rescaled to
        at most this Euclidean norm (as ``torch.nn.utils.clip_grad_norm_``). ``None``
        disables clipping.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the initialisation and the batch order; with an int, two
        fits give the same model. torch's global generator is left as it was.
    device : str or torch.device, default="cpu"
        Where the network is trained.
    n_jobs : int, default=None
        torch threads during ``fit`` and prediction; ``None``: joblib's current setting
        (one unless set by ``joblib.parallel_config``), ``-1``: all cores; torch's
        setting is restored afterwards. The steps of a recurrent network are
        small sequential operations: one thread is usually fastest, and much faster
        than several on a busy machine.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    module_ : torch.nn.Module
        The trained network (weights of the best validation epoch).
    n_channels_in_ : int
        Channels per time step seen in ``fit``.
    n_features_in_ : int
        Number of time steps, only when ``fit`` got a 2-D array.
    n_epochs_ : int
        Epochs run.
    best_epoch_ : int
        Epoch whose weights were kept (1-based; ``n_epochs_`` without validation).
    validation_scores_ : list of float
        Validation accuracy after each epoch (empty without validation).
    loss_curve_ : list of float
        Mean training loss of each epoch.

    See Also
    --------
    rntk.RNTKClassifier : The kernel machine these networks are compared with.

    Notes
    -----
    Inputs are the package's layouts: 2-D ``(n_samples, n_timesteps)``, 3-D
    ``(n_samples, n_timesteps, n_channels)`` or a list of ``(T_i,)`` /
    ``(T_i, n_channels)`` arrays, trailing NaN steps being padding. The network
    trains in float32; predictions use a float64 copy of its weights, so they do not
    depend on how the test series are batched.

    Why ``min_epochs`` and ``clip_norm``: UCR training sets have 20 to a few
    hundred series, so an epoch is only a few RMSProp steps, and the accuracy on a
    validation split of 5 to 20 series sits at chance for the first epochs; with
    patience 5 alone, training stopped at epoch 6 to 7 after some 20 steps, before
    anything was learnt (GRU and identity RNN on GunPoint). The Gaussian ReLU RNN
    at ``sigma_w = sqrt 2`` is at the edge of chaos only at infinite width: at width
    100 over 150 steps its initial outputs range from about 1 to 1e5 between seeds,
    and without clipping the first gradients wreck the network (GunPoint: 49% test
    accuracy without clipping, 93% with it, the paper reports 82%). Clipping by norm
    is the standard remedy for exploding gradients in ReLU RNNs (Pascanu et al.
    2013; Le et al. 2015 used it for the identity RNN). Note that RMSProp's first
    steps move every parameter by about ``10 * lr`` whatever the gradient's size
    (torch's RMSProp has no bias correction), which clipping cannot prevent: the
    identity RNN, whose recurrent matrix must stay near the identity, diverges for
    ``lr >= 1e-4`` at width 100 and needs ``lr`` around ``1e-5`` (the smallest
    value of the paper's grid).

    The training loop is written here rather than with skorch: early stopping on
    validation accuracy, restoring the best epoch, variable-length batches and the
    scikit-learn contract (``parametrize_with_checks``) take about a hundred lines,
    which is less than the glue a skorch wrapper would need, and avoids a dependency.

    Examples
    --------
    >>> import numpy as np
    >>> from rntk.nn import RNNClassifier
    >>> rng = np.random.default_rng(0)
    >>> t = np.linspace(0, 1, 12)
    >>> X = np.r_[np.sin(6 * t) + 0.1 * rng.standard_normal((20, 12)),
    ...           -np.sin(6 * t) + 0.1 * rng.standard_normal((20, 12))]
    >>> y = np.r_[np.zeros(20), np.ones(20)]
    >>> clf = RNNClassifier(hidden_size=16, lr=1e-2, max_epochs=30, random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "cell": [StrOptions({"ntk", "irnn", "gru"})],
        "hidden_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_layers": [Interval(numbers.Integral, 1, None, closed="left")],
        "lr": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "patience": [Interval(numbers.Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="left"), None],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "min_epochs": [Interval(numbers.Integral, 0, None, closed="left")],
        "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "device": [str, torch.device],
        "n_jobs": [numbers.Integral, None],
    }

    def __init__(self, cell="ntk", *, hidden_size=100, n_layers=1, lr=1e-3, max_epochs=200,
                 patience=5, validation_fraction=0.1, batch_size=32, min_epochs=50,
                 clip_norm=1.0, random_state=None, device="cpu", n_jobs=None):
        self.cell = cell
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.lr = lr
        self.max_epochs = max_epochs
        self.patience = patience
        self.validation_fraction = validation_fraction
        self.batch_size = batch_size
        self.min_epochs = min_epochs
        self.clip_norm = clip_norm
        self.random_state = random_state
        self.device = device
        self.n_jobs = n_jobs

    # -- helpers ----------------------------------------------------------------------
    def _build(self, n_in, n_out):
        if self.cell == "ntk":
            return ElmanRNN(n_in, self.hidden_size, n_out=n_out, n_layers=self.n_layers,
                            activation="relu", sigma_w=2**0.5, sigma_u=1.0, sigma_b=0.0,
                            sigma_h=0.0, sigma_v=2**0.5)
        return _TorchRNN(self.cell, n_in, self.hidden_size, self.n_layers, n_out)

    def _tensors(self, xs, dtype=torch.float32):
        device = torch.device(self.device)
        return [torch.tensor(np.array(x), dtype=dtype, device=device) for x in xs]

    def _logits(self, module, series):
        out = []
        with torch.no_grad():
            for i in range(0, len(series), max(self.batch_size, 256)):
                out.append(module(series[i:i + max(self.batch_size, 256)]))
        return torch.cat(out)

    def _split(self, n, y, rs):
        frac = self.validation_fraction
        idx = np.arange(n)
        if not frac or len(np.unique(y)) < 2:
            return idx, None
        n_val = int(np.ceil(frac * n))
        if n - n_val < 1 or n_val < 1:
            return idx, None
        counts = np.bincount(y)
        stratify = y if (counts.min() >= 2 and n_val >= len(counts)
                         and n - n_val >= len(counts)) else None
        train, val = train_test_split(idx, test_size=n_val, stratify=stratify,
                                      random_state=rs.randint(np.iinfo(np.int32).max))
        return train, val

    # -- public API -------------------------------------------------------------------
    def fit(self, X, y):
        """Train the network on series ``X`` with labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, T) or (n_samples, T, n_channels), or list
            Training series (any of the package's layouts; lengths may differ).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : RNNClassifier
            The fitted classifier.
        """
        self._validate_params()
        with _torch_threads(self.n_jobs):
            return self._fit(X, y)

    def _fit(self, X, y):
        xs, y = validate_fit_data(self, X, y, regressor=False)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        rs = check_random_state(self.random_state)
        train, val = self._split(len(xs), y_enc, rs)
        seed = int(rs.randint(np.iinfo(np.int32).max))
        series = self._tensors(xs)
        device = torch.device(self.device)
        targets = torch.as_tensor(y_enc, dtype=torch.long, device=device)
        n_out = max(len(self.classes_), 2)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = self._build(self.n_channels_in_, n_out).to(device)
        optimizer = torch.optim.RMSprop(module.parameters(), lr=self.lr)
        loss_fn = nn.CrossEntropyLoss()
        self.loss_curve_, self.validation_scores_ = [], []
        best_key, best_state, best_epoch, waited = (-np.inf, -np.inf), None, 0, 0
        epoch = 0
        for epoch in range(1, self.max_epochs + 1):
            module.train()
            order = train[rs.permutation(len(train))]
            total = 0.0
            for i in range(0, len(order), self.batch_size):
                batch = order[i:i + self.batch_size]
                optimizer.zero_grad()
                loss = loss_fn(module([series[j] for j in batch]), targets[batch])
                loss.backward()
                if self.clip_norm is not None:
                    _clip_grad_norm(module, self.clip_norm)
                optimizer.step()
                total += float(loss.detach()) * len(batch)
            self.loss_curve_.append(total / len(order))
            if val is None:
                continue
            module.eval()
            logits = self._logits(module, [series[j] for j in val])
            score = float((logits.argmax(1) == targets[val]).double().mean())
            # accuracy first; among equal accuracies, the lower validation loss
            key = (score, -float(loss_fn(logits, targets[val])))
            self.validation_scores_.append(score)
            if key > best_key:
                best_key, best_epoch, waited = key, epoch, 0
                best_state = copy.deepcopy(module.state_dict())
            else:
                waited += 1
                if waited >= self.patience and epoch >= self.min_epochs:
                    break
        if best_state is not None:
            module.load_state_dict(best_state)
        else:
            best_epoch = epoch
        module.eval()
        self.module_ = module
        self.n_epochs_ = epoch
        self.best_epoch_ = best_epoch
        return self

    def _validate_predict(self, X):
        return self._tensors(validate_predict_data(self, X), torch.float64)

    def _predict_logits(self, X):
        """Return float64 outputs (from a float64 copy of the weights), batch-independent."""
        series = self._validate_predict(X)
        with _torch_threads(self.n_jobs):
            module = copy.deepcopy(self.module_).double().eval()
            return self._logits(module, series).cpu().numpy()

    def decision_function(self, X):
        """Network outputs (logits) for each class.

        {X_predict}

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Logits; for two classes, the logit difference (positive: ``classes_[1]``).
        """
        logits = self._predict_logits(X)
        if len(self.classes_) == 2:
            return logits[:, 1] - logits[:, 0]
        if len(self.classes_) == 1:
            return np.zeros(len(logits))
        return logits

    def predict_proba(self, X):
        """Class probabilities (softmax of the network outputs).

        {X_predict}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities in the order of ``classes_``.
        """
        logits = self._predict_logits(X)
        if len(self.classes_) == 1:
            return np.ones((logits.shape[0], 1))
        return torch.softmax(torch.from_numpy(logits), dim=1).numpy()

    def predict(self, X):
        """Predicted class of each series.

        {X_predict}

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
