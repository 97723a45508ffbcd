"""A global alignment kernel as a member of the classifier, on resamples.

Issue 61 names elastic alignment last among the new capacities: on the development sets
where the distance family leads (``OliveOil``, ``EOGHorizontalSignal``, ``ArrowHead``,
``Lightning7``, ``FaceFour``: proximity forest or ShapeDTW 1.4-7.6 points above the
default, 30 published resamples), the classes differ by shapes that sit at warped times,
and every setting of the default compares series at fixed shifts (bands of readouts) or
as distributions (quantile functions, spectra).

The member: Cuturi's global alignment kernel (Cuturi, Vert, Birkenes and Matsui, 2007;
Cuturi, 2011) of the series scaled to unit RMS and pooled as the banded settings are (at
most ``BAND_STEPS`` steps), the sum over every monotone alignment ``pi`` of the two
series of the product of a local kernel along it::

    k_GA(x, y) = sum_pi prod_{(i, j) in pi} kappa(x_i, y_j),
    kappa(a, b) = exp(-phi),  phi = |a - b|^2 / (2 s^2) + log(2 - exp(-|a - b|^2 / (2 s^2))),

positive definite for this ``kappa`` (``kappa / (1 + kappa)`` is the Gaussian kernel
halved). ``s = c * median |x_t - y_u| * sqrt(median T)`` (points of the training series,
the heuristic of Cuturi, 2011; ``c``: ``--scales``), alignments kept within a
Sakoe-Chiba band of ``--band`` of the shorter length about the diagonal, and the Gram
cosine-normalised (``k(x, y) / sqrt(k(x, x) k(y, y))``, computed in logarithms). It is
not the kernel of a network: a study of whether warping pays, before a kernel of the
family (a soft alignment over the network's states) is worth building.

It is added to the default classifier grid as an eighth setting (``gak``), the same ridges
and leave-one-out selection, by ``bench_resamples.py --with``: the default, MiniRocket
and the default with it on the same stratified resamples of each development set (and
``--nested K``). The setting rides on the estimators' ``kind`` parameter: ``kind="gak"``
makes :func:`install`'s ``_gram`` this kernel for the run.

Usage::

    python benchmarks/studies/elastic_member.py [--band F] [--scales C,...]
        [bench_resamples.py's options]
    python benchmarks/studies/elastic_member.py --plot benchmarks/studies/resamples_with_gak.csv

``resamples_with_gak.csv`` beside this script (a ``panel`` column added) is the run
``--resamples 5 --nested 5 --datasets OliveOil,EOGHorizontalSignal,ArrowHead,Lightning7,
FaceFour,SmoothSubspace,GunPointAgeSpan,SyntheticControl,MiddlePhalanxTW,Meat`` (the ten
sets where the published 30-resample means of the distance family lead the default's
resamples most) at the default ``--band`` and ``--scales``.
"""

import argparse
import sys
from pathlib import Path

import numba
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_resamples  # noqa: E402
from harness import Assign, plot_differences, resampled_study  # noqa: E402

from rntk._estimators import _base  # noqa: E402
from rntk._model_selection import _grids  # noqa: E402
from rntk._utils._sequences import pack_end_aligned  # noqa: E402


@numba.njit(cache=True, nogil=True)
def _band(i, tx, ty, reach):
    """Return the first and last ``j`` of row ``i`` in the band ``|i T_y - j T_x| <= reach``."""
    lo = max(1, int(np.floor((i * ty - reach) / tx)))
    hi = min(ty, int(np.ceil((i * ty + reach) / tx)))
    while lo <= hi and abs(i * ty - lo * tx) > reach:  # the band is an interval of j
        lo += 1
    while hi >= lo and abs(i * ty - hi * tx) > reach:
        hi -= 1
    return lo, hi


@numba.njit(cache=True, nogil=True)
def _cost(x, y, i, j, inv2s2):
    """Return ``|x_i - y_j|^2 / (2 s^2)`` (steps from 1)."""
    d2 = 0.0
    for c in range(x.shape[1]):
        d = x[i - 1, c] - y[j - 1, c]
        d2 += d * d
    return d2 * inv2s2


@numba.njit(cache=True, nogil=True)
def _log_gak(x, y, inv2s2, radius):
    """Return ``log k_GA(x, y)`` of two ``(T, m)`` series, alignments within ``radius``.

    The band: the cells ``(i, j)`` (from 1) with ``|i / T_x - j / T_y| min(T_x, T_y) <=
    radius``, within ``radius`` steps of the shorter series of the diagonal, the same
    cells whichever series comes first (the kernel is symmetric).

    The recursion ``M[i, j] = kappa(x_i, y_j) (M[i-1, j-1] + M[i-1, j] + M[i, j-1])``
    row by row, each row divided by its largest value (the logarithms of the divisors
    summed) so that long series neither underflow nor overflow; where a cell the result
    needs underflows all the same (alignments far costlier than the row's best), in
    logarithms (:func:`_log_gak_in_logs`).
    """
    tx, ty = x.shape[0], y.shape[0]
    reach = radius * max(tx, ty)
    prev = np.zeros(ty + 1)
    cur = np.zeros(ty + 1)
    prev[0] = 1.0
    log_scale = 0.0
    for i in range(1, tx + 1):
        lo, hi = _band(i, tx, ty, reach)
        cur[:] = 0.0
        top = 0.0
        for j in range(lo, hi + 1):
            e = np.exp(-_cost(x, y, i, j, inv2s2))
            v = e / (2.0 - e) * (prev[j - 1] + prev[j] + cur[j - 1])
            cur[j] = v
            if v > top:
                top = v
        if top <= 0.0:  # every alignment of the band underflowed
            return _log_gak_in_logs(x, y, inv2s2, radius)
        for j in range(lo, hi + 1):
            cur[j] /= top
        log_scale += np.log(top)
        prev, cur = cur, prev
        prev[0] = 0.0
    if prev[ty] <= 0.0:  # the last cell underflowed against the row's largest
        return _log_gak_in_logs(x, y, inv2s2, radius)
    return np.log(prev[ty]) + log_scale


@numba.njit(cache=True, nogil=True)
def _log_gak_in_logs(x, y, inv2s2, radius):
    """:func:`_log_gak` with every cell held as a logarithm (slower, never underflows)."""
    tx, ty = x.shape[0], y.shape[0]
    reach = radius * max(tx, ty)
    prev = np.full(ty + 1, -np.inf)
    cur = np.full(ty + 1, -np.inf)
    prev[0] = 0.0
    for i in range(1, tx + 1):
        lo, hi = _band(i, tx, ty, reach)
        cur[:] = -np.inf
        for j in range(lo, hi + 1):
            g = _cost(x, y, i, j, inv2s2)
            a, b, e = prev[j - 1], prev[j], cur[j - 1]
            top = max(a, max(b, e))
            if top == -np.inf:
                continue
            total = top + np.log(np.exp(a - top) + np.exp(b - top) + np.exp(e - top))
            cur[j] = total - g - np.log(2.0 - np.exp(-g))
        prev, cur = cur, prev
        prev[0] = -np.inf
    return prev[ty]


@numba.njit(cache=True, parallel=True)
def _log_gak_gram(xd, xs, yd, ys, inv2s2, band, symmetric):
    """Return the ``(n, n')`` logarithms of ``k_GA`` of end-aligned stacks.

    ``xd``, ``yd``: ``(T_max, n, m)`` stacks of :func:`pack_end_aligned`, series ``i`` at
    steps ``xs[i]:``.
    """
    n, n2, tx, ty = xd.shape[1], yd.shape[1], xd.shape[0], yd.shape[0]
    out = np.empty((n, n2))
    for i in numba.prange(n):
        for j in range(i if symmetric else 0, n2):
            radius = max(band * min(tx - xs[i], ty - ys[j]), 1.0)
            out[i, j] = _log_gak(xd[xs[i]:, i], yd[ys[j]:, j], inv2s2, radius)
            if symmetric:
                out[j, i] = out[i, j]
    return out


def gak_scale(seqs, points=2000, seed=0):
    """Return ``median |x_t - y_u| * sqrt(median T)`` over points of ``seqs``.

    The points: at most ``points`` of all the series' steps, drawn with ``seed`` (the
    same series give the same scale).
    """
    allpts = np.concatenate(seqs)
    rng = np.random.default_rng(seed)
    if len(allpts) > points:
        allpts = allpts[rng.choice(len(allpts), points, replace=False)]
    d = np.sqrt(((allpts[:, None, :] - allpts[None, :, :]) ** 2).sum(-1))
    med = np.median(d[np.triu_indices(len(allpts), 1)])
    return float(max(med, 1e-12) * np.sqrt(np.median([len(s) for s in seqs])))


def gak_gram(xs, ys=None, scale=1.0, band=0.1):
    """Return the cosine-normalised global alignment Gram of ``xs`` against ``ys``.

    ``scale``: ``c`` of ``s = c * gak_scale(training series)``, the training series
    being ``ys`` when given (a test Gram) and ``xs`` otherwise; ``band``: the
    Sakoe-Chiba radius as a fraction of the shorter length (at least one step, so that
    an alignment exists).
    """
    xs = [np.ascontiguousarray(x, dtype=np.float64) for x in xs]
    train = xs if ys is None else [np.ascontiguousarray(y, dtype=np.float64) for y in ys]
    s = scale * gak_scale(train)
    inv2s2 = 1.0 / (2.0 * s * s)
    xd, xstart = pack_end_aligned(xs)
    if ys is None:
        log_k = _log_gak_gram(xd, xstart, xd, xstart, inv2s2, band, True)
        dx = dy = np.diag(log_k).copy()
    else:
        log_k = _log_gak_gram(xd, xstart, *pack_end_aligned(train), inv2s2, band, False)
        dx, dy = (np.array([_log_gak(x, x, inv2s2, max(band * len(x), 1.0)) for x in seqs])
                  for seqs in (xs, train))
    return np.exp(log_k - 0.5 * dx[:, None] - 0.5 * dy[None, :])


def install(band=0.1, scales=(0.5, 1.0, 2.0), patch=Assign):
    """Make ``kind="gak"`` the global alignment kernel; register the setting ``gak``.

    ``gak``: the series scaled to unit RMS and pooled to at most ``BAND_STEPS`` steps
    (the banded settings' sizing), the kernel at ``s = c * gak_scale`` for each ``c`` of
    ``scales`` (one Gram each, ``c`` carried by ``sigma_h``, which the kernel does not
    read otherwise), the default's ridges. ``patch``: how each change is made.
    """
    original = _base.RNTKKernelMixin._gram

    def _gram(self, xs, ys=None):
        if getattr(self, "kind", None) != "gak":
            return original(self, xs, ys)
        return gak_gram(xs, ys, scale=self.sigma_h, band=band)

    patch.setattr(_base.RNTKKernelMixin, "_gram", _gram)
    patch.setitem(bench_resamples.EXTRA_SETTINGS, "gak", {
        **_grids.MEAN_NETWORK, "readout_band": [_grids.MEAN_BAND], "kind": ["gak"],
        "sigma_h": [float(c) for c in scales]})


def plot(path):
    """Draw the per-set differences of the default with the member from it (``.png``)."""
    return plot_differences(path, "rntk_with_gak", "default + alignment kernel - default "
                            "(points)", "The global alignment kernel as an eighth setting, "
                            "on the 10 sets where the distance family leads")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    p.add_argument("--band", type=float, default=0.1)
    p.add_argument("--scales", default="0.5,1,2", help="comma list of c (default 0.5,1,2)")
    args, rest = p.parse_known_args(argv)
    scales = [float(c) for c in args.scales.split(",")]
    return resampled_study(rest, lambda: install(args.band, scales), "--with", ("gak",),
                           plot)


if __name__ == "__main__":
    main()
