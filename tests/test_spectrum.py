"""The amplitude-spectrum representation (``spectrum=``): the transform, its kernel, wide nets."""

import numpy as np
import pytest

from rntk import RNTKClassifier, RNTKClassifierCV, rntk_kernel
from tests.reference import family_gram
from tests.transforms import amplitude_spectrum
from tests.wide_networks import assert_wide_networks_converge


def _direct_dft_amplitude(x):
    """|sum_t (x_t - mean) exp(-2 pi i k t / T)| / T at k = 0..T/2, by the sum itself."""
    T = len(x)
    t = np.arange(T)
    x = x - x.mean()
    return np.array([abs(np.sum(x * np.exp(-2j * np.pi * k * t / T))) / T
                     for k in range(T // 2 + 1)])


def test_the_spectrum_is_the_amplitude_of_the_fourier_sum(rng):
    # T = 2 (n_bins - 1): the grid is exactly the frequencies k / T, no interpolation
    X = rng.normal(size=(3, 12))
    np.testing.assert_allclose(amplitude_spectrum(X, n_bins=7),
                               [_direct_dft_amplitude(x) for x in X], atol=1e-12)


def test_a_sinusoid_gives_half_its_amplitude_at_its_frequency_whatever_the_phase():
    t = np.arange(32)
    X = np.array([3.0 * np.cos(2 * np.pi * 4 * t / 32 + phase) + 5.0
                  for phase in (0.0, 1.0, 2.5)])
    S = amplitude_spectrum(X, n_bins=17)  # frequencies k / 32, k = 0..16
    expected = np.zeros(17)
    expected[4] = 1.5  # the offset 5 is removed with the mean
    np.testing.assert_allclose(S, np.tile(expected, (3, 1)), atol=1e-12)


def test_series_of_any_length_share_the_frequency_grid(rng):
    t64, t16 = np.arange(64), np.arange(16)
    X = [np.sin(2 * np.pi * t64 / 8), np.sin(2 * np.pi * t16 / 8), rng.normal(size=(9, 2))]
    with pytest.raises(ValueError, match="channel"):
        amplitude_spectrum(X, n_bins=9)
    S = amplitude_spectrum(X[:2], n_bins=9)  # frequencies 0, 1/16, ..., 1/2
    assert S.shape == (2, 9)
    np.testing.assert_allclose(S[0], S[1], atol=1e-12)  # the same tone, 4x the length
    assert amplitude_spectrum(rng.normal(size=(4, 10, 3)), n_bins=5).shape == (4, 5, 3)


SPEC = dict(readout="mean", readout_band=2, sigma_w=1.2, sigma_u=0.5, sigma_b=0.1)


def test_the_estimator_reads_the_rms_scaled_spectra(rng):
    X = [rng.normal(size=T) for T in (9, 14, 11, 20)]
    y = [0, 1, 0, 1]
    clf = RNTKClassifier(spectrum=6, normalize="rms", model="ridge", **SPEC).fit(X, y)
    S = amplitude_spectrum(X, n_bins=6)
    S = [s / np.sqrt(np.mean(s**2)) for s in S]  # unit root-mean-square per step
    np.testing.assert_allclose(clf._gram(clf.X_fit_), family_gram(S, **SPEC), rtol=1e-10)
    Xn = [rng.normal(size=T) for T in (7, 30)]
    Sn = [s / np.sqrt(np.mean(s**2)) for s in amplitude_spectrum(Xn, n_bins=6)]
    np.testing.assert_allclose(clf.decision_function(Xn),
                               clf.estimator_.decision_function(family_gram(Sn, S, **SPEC)),
                               rtol=1e-10)
    # the spectrum is a kernel setting of the search: one Gram per value
    search = RNTKClassifierCV(param_grid={"spectrum": [None, 4], "alpha": [1e-3, 1.0]},
                              estimator=RNTKClassifier(normalize="rms", **SPEC)).fit(X, y)
    assert sorted(search.cv_results_["param_spectrum"], key=str) == [4, 4, None, None]


def test_wide_networks_reading_the_spectrum_tend_to_its_kernel(rng):
    torch = pytest.importorskip("torch")
    from rntk.nn import RNTKNetwork

    X = [rng.normal(size=T) for T in (8, 13, 10)]
    clf = RNTKClassifier(spectrum=5, normalize="rms", model="ridge", **SPEC).fit(X, [0, 1, 0])
    K = clf._gram(clf.X_fit_)
    S = clf.X_fit_  # the network's inputs: the scaled spectra, frequencies as steps
    np.testing.assert_allclose(K, rntk_kernel(S, **SPEC), rtol=1e-12)
    assert_wide_networks_converge(
        torch, K, S, lambda width: RNTKNetwork(1, width, max_length=5, **SPEC))
