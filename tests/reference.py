"""Plain, slow reference implementations written from the project's math spec.

Scalar Python loops, one pair at a time, no shared code with the package: the
oracles that the fast kernels are tested against.
"""

import math
from fractions import Fraction

import numpy as np


def _finite(*values):
    """Refuse a covariance that overflowed: the oracle is right or raises."""
    for v in values:
        if not math.isfinite(v):
            raise OverflowError(f"reference recursion overflows float64 ({v})")


def _one_minus_sq(num, den1, den2):
    """1 - num^2 / (den1 den2), in exact rational arithmetic, as a float."""
    num, den1, den2 = Fraction(num), Fraction(den1), Fraction(den2)
    return float(1 - num * num / (den1 * den2))


def _asin(a, one_minus_a2):
    """asin(a), accurate near |a| = 1 from a given 1 - a^2."""
    if abs(a) <= 0.5:
        return math.asin(a)
    one_minus = one_minus_a2 / (1 + abs(a))  # 1 - |a|, without cancellation
    return math.copysign(math.pi / 2 - 2 * math.asin(math.sqrt(one_minus / 2)), a)


def v_phi(activation, k1, k2, k3, same=False):
    """Return (V_phi[K], V_phi'[K]) for K = [[k1, k3], [k3, k2]] (spec, corrected).

    ``1 - c^2`` is computed exactly (rational arithmetic on the float covariances), and
    ``sqrt(k1 k2)`` as ``sqrt(k1) sqrt(k2)`` (the product overflows long before the
    kernel does); a covariance that is not finite raises OverflowError.
    """
    _finite(k1, k2, k3)
    if activation == "linear":
        return k3, 1.0
    if activation == "relu":
        n12 = math.sqrt(k1) * math.sqrt(k2)
        if same:
            c, s = 1.0, 0.0
        elif n12 > 0:
            c = min(1.0, max(-1.0, k3 / n12))
            s = math.sqrt(max(0.0, _one_minus_sq(k3, k1, k2)))  # sqrt(1 - c^2)
        else:
            c, s = 0.0, 1.0
        theta = math.atan2(s, c)
        v = n12 * (s + (math.pi - theta) * c) / (2 * math.pi)
        _finite(v)
        return v, (math.pi - theta) / (2 * math.pi)
    if activation == "erf":
        if same:
            a = 2 * k1 / (1 + 2 * k1)
            dv = 4 / (math.pi * math.sqrt(1 + 4 * k1))
            om = (1 + 4 * k1) / (1 + 2 * k1) / (1 + 2 * k1)  # 1 - a^2
        else:
            d1, d2 = 1 + 2 * k1, 1 + 2 * k2
            a = min(1.0, max(-1.0, 2 * k3 / (math.sqrt(d1) * math.sqrt(d2))))
            om = _one_minus_sq(2 * k3, d1, d2)  # 1 - a^2
            den = math.sqrt(d1) * math.sqrt(d2) * math.sqrt(max(om, 0.0))
            if not 0 < den < math.inf:
                raise OverflowError("reference recursion: 1 - c^2 is not resolved in "
                                    f"float64 (k1={k1}, k2={k2}, k3={k3})")
            dv = 4 / (math.pi * den)
        return 2 / math.pi * _asin(a, om), dv
    raise ValueError(activation)


def _per_layer(value, n_layers):
    value = np.asarray(value, dtype=float)
    return np.full(n_layers, float(value)) if value.ndim == 0 else value


def _forward(activation, x, xp, same, sw, su, sb, sh):
    """Sigma^(l,t)(x, x') on the aligned diagonal, x no longer than xp.

    Returns a list over layers of lists over the T = len(x) aligned steps.
    """
    T, tau, m = len(x), len(xp) - len(x), x.shape[1]
    n_layers = len(sw)
    sx = self_sigma(activation, x, sw, su, sb, sh)
    sxp = self_sigma(activation, xp, sw, su, sb, sh)
    sig = [[0.0] * T for _ in range(n_layers)]
    for l in range(n_layers):
        for t in range(T):
            if l == 0:
                inp = su[0] ** 2 / m * float(np.dot(x[t], xp[t + tau]))
            else:
                k1, k2 = sx[l - 1][t], sxp[l - 1][t + tau]
                inp = su[l] ** 2 * v_phi(activation, k1, k2, sig[l - 1][t], same)[0]
            if t == 0:
                rec = sh**2 if same else 0.0
            else:
                k1, k2 = sx[l][t - 1], sxp[l][t + tau - 1]
                rec = v_phi(activation, k1, k2, sig[l][t - 1], same)[0]
            sig[l][t] = sw[l] ** 2 * rec + inp + sb[l] ** 2
    return sig


def self_sigma(activation, x, sw, su, sb, sh):
    """Sigma^(l,t)(x, x) for every layer and step (each sample's own initial state)."""
    T, m = x.shape
    n_layers = len(sw)
    sig = [[0.0] * T for _ in range(n_layers)]
    for l in range(n_layers):
        for t in range(T):
            if l == 0:
                inp = su[0] ** 2 / m * float(np.dot(x[t], x[t]))
            else:
                k = sig[l - 1][t]
                inp = su[l] ** 2 * v_phi(activation, k, k, k, True)[0]
            rec = sh**2 if t == 0 else v_phi(activation, *(3 * [sig[l][t - 1]]), True)[0]
            sig[l][t] = sw[l] ** 2 * rec + inp + sb[l] ** 2
    return sig


def rntk_pair(x, xp, same=False, *, n_layers=1, sigma_w=2**0.5, sigma_u=1.0, sigma_b=0.0,
              sigma_h=0.0, sigma_v=1.0, activation="relu", kind="ntk"):
    """Theta(x, x') (or the NNGP K(x, x')) of one pair, by the spec's recursion."""
    x = np.asarray(x, float).reshape(len(x), -1)
    xp = np.asarray(xp, float).reshape(len(xp), -1)
    if len(x) > len(xp):
        x, xp = xp, x
    sw, su, sb = (_per_layer(s, n_layers) for s in (sigma_w, sigma_u, sigma_b))
    sig = _forward(activation, x, xp, same, sw, su, sb, sigma_h)
    sx = self_sigma(activation, x, sw, su, sb, sigma_h)
    sxp = self_sigma(activation, xp, sw, su, sb, sigma_h)
    T, tau, L = len(x), len(xp) - len(x), n_layers

    def cov(l, t):
        return sx[l][t], sxp[l][t + tau], sig[l][t]

    K = sigma_v**2 * v_phi(activation, *cov(L - 1, T - 1), same)[0]
    _finite(K)
    if kind == "nngp":
        return K
    pi = [[0.0] * T for _ in range(L)]
    for t in range(T - 1, -1, -1):
        for l in range(L - 1, -1, -1):
            D = v_phi(activation, *cov(l, t), same)[1]
            if l == L - 1 and t == T - 1:
                pi[l][t] = sigma_v**2 * D
                continue
            acc = 0.0
            if t < T - 1:
                acc += sw[l] ** 2 * pi[l][t + 1]
            if l < L - 1:
                acc += su[l + 1] ** 2 * pi[l + 1][t]
            pi[l][t] = D * acc
    theta = sum(pi[l][t] * sig[l][t] for l in range(L) for t in range(T)) + K
    _finite(theta)
    return theta


def rntk_gram(X, Y=None, **params):
    """Gram matrix of rntk_pair over lists of (T_i, m) arrays; Y=None is K(X, X)."""
    if Y is None:
        return np.array([[rntk_pair(a, b, same=(i == j), **params) for j, b in enumerate(X)]
                         for i, a in enumerate(X)])
    return np.array([[rntk_pair(a, b, **params) for b in Y] for a in X])


def mean_readout_gram(X, Y=None, stride=1, band=None, **params):
    """The mean readout by its definition: f(x) averages the readouts at the steps
    T, T - s, ... with the same readout weights, so its kernel is the mean, over the
    pairs of readout steps, of the last-step kernel of the two prefixes. Two prefixes
    are one sample paired with itself only when they are the same prefix of the same
    series (the initial state of a series is shared, but the chains of two different
    prefixes never start from it together).

    With a band B the readout weights of the readouts k = 0, 1, ... (from the end) are
    v_k = (z_k + ... + z_{k+B}) / sqrt(B + 1), z independent: Cov(v_k, v_l) =
    max(0, 1 - |k - l| / (B + 1)) weighs the pair (k, l); still divided by |R_x| |R_y|."""
    sym = Y is None
    Y = X if sym else Y
    K = np.zeros((len(X), len(Y)))
    for i, a in enumerate(X):
        for j, b in enumerate(Y):
            total = 0.0
            steps_a = list(range(len(a), 0, -stride))
            steps_b = list(range(len(b), 0, -stride))
            for k, t in enumerate(steps_a):
                for l, u in enumerate(steps_b):
                    w = 1.0 if band is None else max(0.0, 1.0 - abs(k - l) / (band + 1))
                    if w > 0:
                        total += w * rntk_pair(a[:t], b[:u], same=sym and i == j and t == u,
                                               **params)
            K[i, j] = total / (len(steps_a) * len(steps_b))
    return K


def family_gram(X, Y=None, *, direction="forward", diff=False, readout="last",
                readout_stride=1, readout_band=None, **params):
    """The RNTK family by definition: transform the inputs, add the kernels of the RNNs.

    ``diff`` appends x_t - x_{t-1} (0 at t = 1) to every step; a backward RNN reads the
    series reversed; a bidirectional network holds a forward and a backward RNN with
    independent weights and sums their readouts, so its kernel is the sum. With
    ``readout="mean"`` each RNN's readout is the mean over its readout steps.
    """
    def transform(S, reverse):
        out = []
        for s in S:
            s = np.asarray(s, float).reshape(len(s), -1)
            if diff:
                d = np.zeros_like(s)
                for t in range(1, len(s)):
                    d[t] = s[t] - s[t - 1]
                s = np.hstack([s, d])
            out.append(s[::-1].copy() if reverse else s)
        return out

    readers = {"forward": [False], "backward": [True], "bidirectional": [False, True]}
    if readout == "mean":
        return sum(mean_readout_gram(transform(X, r), None if Y is None else transform(Y, r),
                                     readout_stride, readout_band, **params)
                   for r in readers[direction])
    return sum(rntk_gram(transform(X, r), None if Y is None else transform(Y, r), **params)
               for r in readers[direction])


def ridge_loo_by_refits(K, Y, ridge):
    """Leave-one-out predictions of kernel ridge with an intercept, by explicit refits.

    Each sample left out in turn: the bordered system of the other samples' Gram (the
    intercept unpenalised, ``ridge`` added to the diagonal) solved afresh for the
    targets ``Y`` of shape (n, k), then the left-out sample predicted.
    """
    n = len(K)
    D = np.empty_like(Y, dtype=float)
    for i in range(n):
        keep = np.arange(n) != i
        A = np.zeros((n, n))
        A[0, 1:] = A[1:, 0] = 1.0
        A[1:, 1:] = K[np.ix_(keep, keep)] + ridge * np.eye(n - 1)
        sol = np.linalg.solve(A, np.r_[np.zeros((1, Y.shape[1])), Y[keep]])
        D[i] = sol[0] + K[i, keep] @ sol[1:]
    return D


def cntk_pair(x, xp, same=False, *, n_layers=1, taps=3, dilation=1, sigma_w=2**0.5,
              sigma_b=0.0, sigma_v=1.0, kind="ntk"):
    """The 1-D CNTK with global average pooling by its recursion over every pair of steps.

    The steps of both series form one index set; the covariance of every pair of steps
    (within a series and across the two) goes through the layers as the network's
    pre-activations do: a layer's covariance at two steps is the sum, over the taps, of
    the previous layer's at the two steps shifted by the same tap (zero outside a
    series), scaled by sigma_w^2 / (taps * fan-in), plus sigma_b^2. The output averages
    the last layer over the steps of each series. ``same``: ``xp`` is ``x`` itself (a
    diagonal entry of a Gram), so a step of one is the same sample as that step of the
    other.
    """
    series = [np.asarray(x, float).reshape(len(x), -1), np.asarray(xp, float).reshape(len(xp), -1)]
    m = series[0].shape[1]
    dils = [dilation] * n_layers if np.ndim(dilation) == 0 else list(dilation)
    steps = [(s, t) for s in range(2) for t in range(len(series[s]))]
    n = len(steps)
    sw2, sb2 = sigma_w**2, sigma_b**2
    centre = (taps - 1) // 2

    def shifted(layer, p, q, value):
        (s, t), (u, v) = steps[p], steps[q]
        total = 0.0
        for j in range(taps):
            o = (j - centre) * dils[layer]
            if 0 <= t + o < len(series[s]) and 0 <= v + o < len(series[u]):
                total += value(s, t + o, u, v + o)
        return total

    def first(s, t, u, v):
        return sum(series[s][t, c] * series[u][v, c] for c in range(m)) / m

    sig = [[sw2 / taps * shifted(0, p, q, first) + sb2 for q in range(n)] for p in range(n)]
    theta = [row[:] for row in sig]
    index = {step: p for p, step in enumerate(steps)}
    for layer in range(n_layers):
        V = [[0.0] * n for _ in range(n)]
        D = [[0.0] * n for _ in range(n)]
        for p in range(n):
            for q in range(n):
                one = p == q or (same and steps[p][1] == steps[q][1])
                V[p][q], D[p][q] = v_phi("relu", sig[p][p], sig[q][q], sig[p][q], same=one)
        if layer + 1 == n_layers:
            break

        def prev_v(s, t, u, v, V=V):
            return V[index[(s, t)]][index[(u, v)]]

        def prev_td(s, t, u, v, V=V, D=D, theta=theta):
            p, q = index[(s, t)], index[(u, v)]
            return theta[p][q] * D[p][q]

        sig = [[sw2 / taps * shifted(layer + 1, p, q, prev_v) + sb2 for q in range(n)]
               for p in range(n)]
        theta = [[sig[p][q] + sw2 / taps * shifted(layer + 1, p, q, prev_td)
                  for q in range(n)] for p in range(n)]
    T, Tp = len(series[0]), len(series[1])
    total = 0.0
    for p in range(T):
        for q in range(T, T + Tp):
            total += V[p][q] + (theta[p][q] * D[p][q] if kind == "ntk" else 0.0)
    return sigma_v**2 * total / (T * Tp)


def cntk_gram(X, Y=None, **params):
    """Gram matrix of cntk_pair over lists of (T_i, m) arrays; Y=None is K(X, X)."""
    if Y is None:
        return np.array([[cntk_pair(a, b, same=(i == j), **params) for j, b in enumerate(X)]
                         for i, a in enumerate(X)])
    return np.array([[cntk_pair(a, b, **params) for b in Y] for a in X])
