"""Kernels and representations beside the default's seven settings, by nested CV.

Every setting of 0.4.0's default is a mean readout of the banded or pooled RNTK: on the
series (z-normalised and as given), their spectrum, and the quantile functions of their
values, slopes and curvatures (``shapes=64``, ``octave_shapes=64``: the default before
its octaves went to 32 levels, which score the same). This script scores more members,
each as an eighth setting and in place of each setting outside the prior pair (the level
band and the spectrum), and each of those settings left out. The first four:

* ``mlp``, ``mlp_z``: the NTK of a wide ReLU perceptron of one hidden layer
  (``rntk.mlp_ntk_kernel``) on each series interpolated onto the longest training length
  and scaled to unit norm (``mlp_z``: each channel z-normalised first): a kernel that
  compares step ``t`` of one series with step ``t`` of the other only, where the
  default's settings compare every step with its neighbours or with every other step
  (spectra such as ``Beef`` and ``OliveOil``, whose classes differ at fixed positions);
  ``mlp3_z``: three hidden layers;
* ``segments``: the quantile functions (at most 16 levels) of the values, steps and
  curvatures in each quarter of a series, 12 signals per channel: where in the series a
  distribution holds;
* ``contrast``: the quantile functions of the values and of each value against the mean
  of the 9 values around it at dilations 1, 2, 4, 8 and 16 (MiniRocket's kernels are
  such contrasts, three of nine taps against their mean), 6 signals per channel.

The last two are read by the banded network of the shape settings (on the representation
scaled to unit RMS per step, float32). Protocol of ``tune_local_shapes.py`` (``--cache``,
``--precision``; the default's rule, nested CV on 5 outer folds of each training set,
draws of 1 and 2 training series per class, the test set reported only); ``--data-home``
of ``.ts`` sets as there.

The members added later, by the same protocol: ``sliced8`` and ``sliced16``, the
quantile functions of the values and of the 9-tap patches ``x_t, x_{t+d}, ...,
x_{t+8d}`` at dilations 1 to 16, each projected on 8 or 16 fixed random zero-sum
directions: a sliced comparison of the distributions of local shapes, the random-feature
counterpart of a wide convolutional layer with a threshold activation (MiniRocket's
proportions of positive values).
``band8_d1``, ``raw_pool4_d1``, ``pool8_d1``: three of the default's settings with
``diff=True`` (each step reads the value and its first difference, as MultiRocket reads
the first differences beside the series), float64. ``words``: a bag of SFA words
(HIVE-COTE 2's dictionary view, as BOSS): the windows of 10, 20 and 40% of the longest
training series (every ``w // 16`` steps), each z-normalised, their first two Fourier
coefficients (real and imaginary parts) cut into 4 letters at the quartiles of the
training windows, word counts of each series (a repeated word counted once), the linear
kernel of their square roots at unit norm (Hellinger).

``--transforms``: each of the default's Grams turned into its cosine-normalised kernel
``K_ij / sqrt(K_ii K_jj)`` or into the Gaussian kernel of the distances it defines,
``exp(-g d_ij^2 / median d^2)`` with ``d_ij^2 = K_ii + K_jj - 2 K_ij`` (``TRANSFORMS``),
each in place of its own, or all beside them (twice the settings); scored on the
training sets only (nested, 1 and 2 per class: the cache holds no test-vs-test
diagonals, so the test column is NaN). Writes ``transforms.csv`` and ``transforms.md``.

``--rules``: the combination rules of ``tune_panel_ensembles.py`` (``E.RULES``) on the
seven, two for few training series: every setting averaged, or the prior pair,
where a class has fewer than 3 training series (``FEW_RULES``), and the top 3 (or 2) of
each of 32 bootstrap draws of the LOO scores, averaged (``BAGGED_RULES``). Writes ``rules.csv``
and ``rules.md``. ``--several-channels``: ``--transforms``, ``--rules`` and ``--priors``
on the default of series of several channels (``SEVERAL``, the banded setting left
out), for the UEA panel.

``--priors``: every fixed average of one to three of the default's settings, each at the
ridge ``1e-2``, ``1e-1`` or ``1`` (``PRIOR_RIDGES``), on the draws of 1 training series
per class (where the default takes its prior: no LOO accuracy tells its candidates
apart), against the prior pair of the default before ``rntk``'s prior gained the shape
setting (``E.PRIOR``). Writes ``priors.csv``, ``priors.md`` and ``priors_summary.md``
(the best ones, and the best one chosen without each set in turn, scored on it).

Writes ``beside.csv`` and ``beside.md`` under ``--out``. Results: see
``benchmarks/README.md``.

Usage::

    python benchmarks/studies/tune_beside.py [--quick] [--transforms | --rules | --priors]
        [--several-channels] [--data-home DIR] [--cache DIR] [--out DIR]
        [--precision auto|float64]
"""

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent),  # the harness, the studies
                str(Path(__file__).resolve().parents[1])]  # the timing scripts
import harness as T  # noqa: E402
import tune_local_shapes as LS  # noqa: E402
import tune_panel_ensembles as E  # noqa: E402

from rntk import mlp_ntk_kernel  # noqa: E402
from rntk._model_selection._loo import decision_to_labels
from rntk._utils import as_sequences, normalize_series
from rntk.model_selection import DEFAULT_ALPHA

#: The default's seven settings: ``LS.SIX`` but the last step (position 0), then the two
#: shape settings (positions 6 and 7, ``LS.REPLACE``).
SEVEN = [1, 2, 3, 4, 5, 6, 7]
#: The default on series of several channels: the seven but the banded setting
#: (``rntk``'s ``MULTICHANNEL_LEFT_OUT``; ``--several-channels``).
SEVERAL = [2, 3, 4, 5, 6, 7]
#: Settings of the seven a variant takes the place of (not the prior pair, 2 and 5).
PLACES = {"qd_b": 6, "band8": 1, "raw_pool4": 3, "pool8": 4}
#: name -> (kind, parameters).
VARIANTS = {
    "mlp": ("aligned", dict(n_layers=1, z=False)),
    "mlp_z": ("aligned", dict(n_layers=1, z=True)),
    "mlp3_z": ("aligned", dict(n_layers=3, z=True)),
    "segments": ("quantiles", dict(max_levels=16)),
    "contrast": ("quantiles", dict(max_levels=64)),
    "sliced8": ("quantiles", dict(max_levels=32, directions=8)),
    "sliced16": ("quantiles", dict(max_levels=32, directions=16)),
    "band8_d1": ("setting", dict(key="band8_cap128_d1")),
    "raw_pool4_d1": ("setting", dict(key="raw_pool4_d1")),
    "pool8_d1": ("setting", dict(key="pool8_d1")),
    "words": ("words", dict(fractions=(0.1, 0.2, 0.4), letters=4)),
}
#: The settings of the ``diff=True`` members, as ``tune_panel_grid.SETTINGS`` holds them
#: (given to ``T.grams``, which reads them as its own).
DIFF_SETTINGS = {"band8_cap128_d1": E.NEW["band8_cap128_d1"],
                 "raw_pool4_d1": (False, 4, dict(T.MEAN, diff=True)),
                 "pool8_d1": ("rms", 8, dict(T.MEAN, diff=True))}


def aligned(X, length, z):
    """Each series interpolated onto ``length`` steps, flattened, at unit norm."""
    u = np.linspace(0.0, 1.0, length)
    out = []
    for s in as_sequences(X, "X"):
        t = np.linspace(0.0, 1.0, len(s))
        v = np.stack([np.interp(u, t, c) for c in s.T], axis=1)
        if z:
            sd = v.std(axis=0)
            v = (v - v.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        norm = np.linalg.norm(v)
        out.append(v.ravel() / (norm if norm > 0 else 1.0))
    return np.array(out)


def _unit_quantiles(z, grid):
    q = np.quantile(z, grid, axis=0)
    rms = np.sqrt(np.mean(q * q, axis=0))
    return q / np.where(rms > 0, rms, 1.0)


def segments(s, grid, n_segments=4):
    """Quantile functions of values, steps and curvatures in each quarter of ``s``."""
    zero = np.zeros((1, s.shape[1]))
    d = s[1:] - s[:-1] if len(s) > 1 else zero
    c = d[1:] - d[:-1] if len(d) > 1 else zero
    cols = []
    for z in (s, d, c):
        edges = np.linspace(0, len(z), n_segments + 1).astype(int)
        cols += [_unit_quantiles(z[min(a, len(z) - 1):max(b, a + 1)], grid)
                 for a, b in zip(edges[:-1], edges[1:])]
    return cols


def contrast(s, grid, dilations=(1, 2, 4, 8, 16)):
    """Quantile functions of the values and of each value against its 9 neighbours' mean."""
    cols = [_unit_quantiles(s, grid)]
    for d in dilations:
        if len(s) > 8 * d:
            mid = np.arange(4 * d, len(s) - 4 * d)
            around = np.mean([s[mid + j * d] for j in range(-4, 5)], axis=0)
            cols.append(_unit_quantiles(s[mid] - around, grid))
        else:  # too short for this dilation: one zero
            cols.append(np.zeros((len(grid), s.shape[1])))
    return cols


def sliced(s, grid, directions, dilations=(1, 2, 4, 8, 16), taps=9, seed=0):
    """Quantile functions of the values and of 9-tap patches along fixed directions.

    At each dilation ``d``, the patches ``x_t, x_{t+d}, ..., x_{t+8d}`` projected on
    ``directions`` fixed Gaussian directions made zero-sum (as MiniRocket's kernels, blind
    to a series' offset) and unit-norm, the same for every series and dilation: a sliced
    comparison of the distributions of local shapes, the random-feature counterpart of a
    wide convolutional layer's kernel with a threshold activation (PPV).
    """
    w = np.random.default_rng(seed).standard_normal((taps, directions))
    w -= w.mean(axis=0)
    w /= np.linalg.norm(w, axis=0)
    cols = [_unit_quantiles(s, grid)]
    for d in dilations:
        span = (taps - 1) * d
        if len(s) > span:
            # (steps, taps, channels) -> projections (steps, directions x channels)
            patches = np.stack([s[j * d:len(s) - span + j * d] for j in range(taps)], 1)
            z = np.einsum("tjc,jk->tkc", patches, w).reshape(len(s) - span, -1)
            cols.append(_unit_quantiles(z, grid))
        else:  # too short for this dilation: zeros
            cols.append(np.zeros((len(grid), directions * s.shape[1])))
    return cols


def window_coefficients(x, w):
    """Return the first two Fourier coefficients of ``x``'s z-normalised ``w``-step windows.

    Windows every ``max(1, w // 16)`` steps (a series shorter than ``w`` padded with its
    last value); a constant window has zeros. Shape ``(windows, 4)``: real, imaginary.
    """
    if len(x) < w:
        x = np.pad(x, (0, w - len(x)), mode="edge")
    W = np.lib.stride_tricks.sliding_window_view(x, w)[::max(1, w // 16)]
    W = W - W.mean(axis=1, keepdims=True)
    sd = W.std(axis=1, keepdims=True)
    W = np.where(sd > 1e-8, W / np.where(sd > 1e-8, sd, 1.0), 0.0)
    F = np.fft.rfft(W, axis=1)[:, 1:3]
    return np.stack([F.real, F.imag], axis=2).reshape(len(W), 4)


def bag_of_words(xtr, xte, fractions, letters):
    """Hellinger features of the SFA word counts (``words``) of training and test series.

    The letters' edges are the quantiles of each coefficient over the training windows,
    per window length and channel; each window length and channel has its own
    ``letters ** 4`` words.
    """
    longest = max(len(s) for s in xtr)
    feats = ([], [])
    for f in fractions:
        w = max(8, round(f * longest))
        C = [[[window_coefficients(s[:, c], w) for c in range(s.shape[1])] for s in X]
             for X in (xtr, xte)]
        for c in range(xtr[0].shape[1]):
            edges = np.quantile(np.concatenate([cs[c] for cs in C[0]]),
                                np.arange(1, letters) / letters, axis=0)
            for k, X in enumerate(C):
                H = np.zeros((len(X), letters ** 4))
                for i, cs in enumerate(X):
                    sym = np.stack([np.searchsorted(edges[:, j], cs[c][:, j])
                                    for j in range(4)], axis=1)
                    word = sym @ letters ** np.arange(4)
                    np.add.at(H[i], word[np.r_[True, word[1:] != word[:-1]]], 1.0)
                feats[k].append(H)
    A, B = (np.sqrt(np.concatenate(f, axis=1)) for f in feats)
    return (F / np.linalg.norm(F, axis=1, keepdims=True) for F in (A, B))


def quantile_representation(key, X, levels):
    """``segments``, ``contrast`` or ``sliced*`` of every series (``(levels, signals)``)."""
    grid = (np.arange(levels) + 0.5) / levels
    params = VARIANTS[key][1]
    if "directions" in params:
        def signals(s, grid):
            return sliced(s, grid, params["directions"])
    else:
        signals = segments if key == "segments" else contrast
    return [np.ascontiguousarray(np.concatenate(signals(s, grid), axis=1))
            for s in as_sequences(X, "X")]


def variant_grams(name, key, data, cache):
    """Training and test-vs-train Grams of a variant (cached)."""
    kind, params = VARIANTS[key]
    if kind == "setting":
        return T.grams(name, params["key"], data, cache,
                       setting=DIFF_SETTINGS[params["key"]])
    path = cache / f"{name}__beside_{key}.npz"
    if path.exists():
        return T.timed_grams(path, None, None)
    xtr, xte = data
    longest = max(len(x) for x in as_sequences(xtr, "X"))
    if kind == "words":
        a, b = bag_of_words(as_sequences(xtr, "X"), as_sequences(xte, "X"), **params)
        return T.timed_grams(path, a, b, gram=lambda X, Y=None: X @ (X if Y is None else Y).T)
    if kind == "aligned":
        params = dict(params)
        z = params.pop("z")
        a, b = (aligned(x, longest, z) for x in (xtr, xte))
        return T.timed_grams(path, a, b, gram=mlp_ntk_kernel, **params)
    levels = max(2, min(params["max_levels"], longest // 4 if key == "segments" else longest))
    a, b = (normalize_series(quantile_representation(key, x, levels), "rms")
            for x in (xtr, xte))
    return T.timed_grams(path, a, b, readout_band=8, precision="float32", **T.MEAN)


def cosine(K):
    """``K_ij / sqrt(K_ii K_jj)``."""
    d = np.sqrt(np.clip(np.diag(K), 1e-300, None))
    return K / d[:, None] / d[None, :]


def gaussian(g):
    """``K -> exp(-g d^2 / median d^2)``, ``d`` the distance of ``K``'s feature space."""
    def transform(K):
        d = np.diag(K)
        d2 = np.clip(d[:, None] + d[None, :] - 2 * K, 0.0, None)
        off = d2[~np.eye(len(K), dtype=bool)]
        scale = np.median(off[off > 0]) if (off > 0).any() else 1.0
        return np.exp(-g * d2 / scale)
    return transform


#: ``--transforms``: name -> a function of a training Gram.
TRANSFORMS = {"cos": cosine, "gauss0.25": gaussian(0.25), "gauss1": gaussian(1.0),
              "gauss4": gaussian(4.0)}


def transform_plans(default=SEVEN):
    """``variant -> settings`` of ``--transforms``: ``default``'s Grams transformed.

    Positions: ``LS.SIX``, ``LS.REPLACE``, then the seven transformed by each of
    ``TRANSFORMS`` in turn.
    """
    out = {"the default": default}
    for j, key in enumerate(TRANSFORMS):
        moved = [8 + 7 * j + i - 1 for i in default]
        out[f"{key} of each, in its place"] = moved
        out[f"{key} of each, beside them"] = default + moved
    return out


def fewer_than(k, rule):
    """``rule`` where a class has fewer than ``k`` training series, else the default's."""
    def switch(t, subset):
        few = np.unique(t["y"], return_counts=True)[1].min() < k
        return rule(t, subset) if few else E.rule_top(t, subset)
    return switch


#: ``--rules``: the rules for few training series, beside ``E.RULES``.
FEW_RULES = {"every setting where a class has < 3 series":
             fewer_than(3, lambda t, s: E.rule_top(t, s, len(s))),
             "the prior pair where a class has < 3 series": fewer_than(3, lambda t, s: E.PRIOR)}


def bagged(t, subset, draws=32, k=3, seed=0):
    """Average the default's top-``k`` chosen on each of ``draws`` bootstrap draws.

    Each draw ranks the candidates by their LOO accuracy (then squared error) on a
    bootstrap sample of the training series, from the same LOO predictions; each draw's
    ``k`` picks weigh ``1 / draws``. Where the margins between settings are within
    the LOO noise, the average spreads over the settings that top the draws. Where LOO
    cannot tell, the default's prior.
    """
    best, keys = E.per_setting(t, subset)
    if E.undecided(keys):
        return E.with_prior(t, subset, keys, best, k)
    cands = [(s, a) for s in subset for a in range(len(DEFAULT_ALPHA))]
    labels = np.array([decision_to_labels(t["classes"], t["loo"][c]) for c in cands])
    right = labels == t["y"][None]
    sq = np.array([((t["loo"][c] - t["Y"]) ** 2).mean(axis=1) for c in cands])
    rng = np.random.default_rng(seed)
    n, weights = len(t["y"]), {}
    for _ in range(draws):
        i = rng.integers(0, n, n)
        score = {c: (right[j, i].mean(), -sq[j, i].mean()) for j, c in enumerate(cands)}
        tops = [max((c for c in cands if c[0] == s), key=score.__getitem__) for s in subset]
        for c in sorted(tops, key=score.__getitem__, reverse=True)[:k]:
            weights[c] = weights.get(c, 0.0) + 1.0 / draws
    return list(weights.items())


#: ``--rules``: the top 3 of bootstrap draws of the LOO scores, averaged.
BAGGED_RULES = {"top-3 of 32 bootstrap draws of the LOO scores, averaged": bagged,
                "top-2 of 32 bootstrap draws, averaged":
                lambda t, s: bagged(t, s, k=2)}


#: ``rntk``'s names of the default's settings, by position.
NAMES = {1: "band", 2: "level_band", 3: "level_pool", 4: "pool", 5: "spectrum",
         6: "shapes", 7: "octave_shapes"}
#: ``--priors``: the ridges of the fixed averages.
PRIOR_RIDGES = (1e-2, 1e-1, 1.0)


def prior_rules(default):
    """``name -> rule`` of ``--priors``: each rule takes one fixed set of candidates.

    The first is the pair of ``E.PRIOR`` (the baseline).
    """
    def fixed(picks):
        return lambda t, subset: picks

    pair = "+".join(NAMES[s] for s, _ in E.PRIOR) + " @ 0.1"
    out = {pair: fixed(E.PRIOR)}
    for r in (1, 2, 3):
        for members in itertools.combinations(default, r):
            for alpha in PRIOR_RIDGES:
                name = "+".join(NAMES[s] for s in members) + f" @ {alpha:g}"
                a = DEFAULT_ALPHA.index(alpha)
                out.setdefault(name, fixed([(s, a) for s in members]))
    return out


def prior_summary(rows, best=10):
    """Markdown: the ``best`` fixed sets, and the best chosen without each set, on it."""
    names = sorted({r["dataset"] for r in rows if r["shot1"] == r["shot1"]})
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    by = {(r["dataset"], r["variant"]): r["shot1"] for r in rows}
    M = np.array([[by[n, v] for n in names] for v in variants])  # variants x sets
    d = M - M[0]
    lines = [f"| fixed set (1 per class) | mean | vs {variants[0]} | up / down |",
             "|---|---:|---:|---:|"]
    for i in np.argsort(-M.mean(axis=1), kind="stable")[:best]:
        se = d[i].std(ddof=1) / np.sqrt(len(names)) if len(names) > 1 else np.nan
        lines.append(f"| {variants[i]} | {M[i].mean():.2f} | {d[i].mean():+.2f} +- {se:.2f} "
                     f"| {(d[i] > 0).sum()} / {(d[i] < 0).sum()} |")
    if len(names) < 2:
        return "\n".join(lines) + "\n"
    # the choice made on the other sets, scored on each set
    chosen = [int(np.argmax(np.delete(M, j, axis=1).mean(axis=1))) for j in range(len(names))]
    gain = np.array([d[i, j] for j, i in enumerate(chosen)])
    se = gain.std(ddof=1) / np.sqrt(len(gain))
    picked = ", ".join(sorted({variants[i] for i in chosen}))
    lines += ["", f"Chosen without each set in turn ({picked}), on that set: "
              f"{gain.mean():+.2f} +- {se:.2f} against {variants[0]} ({len(names)} sets)."]
    return "\n".join(lines) + "\n"


def plans():
    """``variant -> settings`` (positions: ``LS.SIX``, ``LS.REPLACE``, then ``VARIANTS``)."""
    out = {"the default (seven settings)": SEVEN}
    for place, i in PLACES.items():  # what each replacement's place alone is worth
        out[f"without {place} (six settings)"] = [s for s in SEVEN if s != i]
    for j, key in enumerate(VARIANTS):
        out[f"{key} beside the seven"] = SEVEN + [8 + j]
        for place, i in PLACES.items():
            out[f"{key} in place of {place}"] = [s for s in SEVEN if s != i] + [8 + j]
    return out


def main(argv=None):
    def options(ap):
        ap.add_argument("--transforms", action="store_true",
                        help="the seven Grams cosine-normalised or Gaussian, on the "
                             "training sets (transforms.csv, transforms.md)")
        ap.add_argument("--rules", action="store_true",
                        help="the combination rules on the seven (rules.csv, rules.md)")
        ap.add_argument("--priors", action="store_true",
                        help="fixed averages of 1-3 settings with 1 series per class "
                             "(priors.csv, priors.md, priors_summary.md)")
        ap.add_argument("--several-channels", action="store_true",
                        help="--transforms, --rules and --priors on the default of series "
                             "of several channels (the seven but the banded setting)")

    args, cache, out = T.study_args(argv, __doc__.splitlines()[0], "results/tune_beside",
                                    precision=True, options=options)
    names = T.folder_names(args.data_home, args.quick)

    def set_grams(name):
        xtr, y, xte, yte = LS.load(name, args.data_home)
        G = LS.default_grams(name, (xtr, xte), cache, args.precision)
        if args.transforms:  # training Grams only: no test-vs-test diagonal to scale by
            G += [(f(np.asarray(G[i][0], dtype=float)), None) for f in TRANSFORMS.values()
                  for i in SEVEN]
        elif not (args.rules or args.priors):
            G += [variant_grams(name, k, (xtr, xte), cache) for k in VARIANTS]
        return G, y, yte, {}

    default = SEVERAL if args.several_channels else SEVEN
    if args.priors:
        rules = prior_rules(default)
        rows = LS.score_panel(names, set_grams, dict.fromkeys(rules, default), out, "priors",
                              hows=("shot1",), rules=rules, against=next(iter(rules)))
        summary = prior_summary(rows)
        (out / "priors_summary.md").write_text(summary)
        print(summary)
        return rows
    if args.rules:
        rules = {**E.RULES, **FEW_RULES, **BAGGED_RULES}
        return LS.score_panel(names, set_grams, dict.fromkeys(rules, default), out, "rules",
                              rules=rules, against="top-3 (the default)")
    if args.transforms:
        return LS.score_panel(names, set_grams, transform_plans(default), out, "transforms",
                              hows=("nested", "shot1", "shot2"), against="the default")
    return LS.score_panel(names, set_grams, plans(), out, "beside", against="the default")


if __name__ == "__main__":
    main()
