"""The cheap samplers behind the noise ops draw the distributions they claim."""
from __future__ import annotations

import math

import numpy as np
import pytest

from perturb.registry import REGISTRY
from perturb.video import _fast_random as fr
from perturb.video import _opencv_frames
from perturb.video._noise_rows import clipped_poisson_pmf, shot_rows, shot_tables
from perturb.video.noise import gaussian_noise, impulse_noise, shot_noise


def test_normal_table_is_a_symmetric_standard_normal() -> None:
    z = fr.normal_table()
    assert z.shape == (fr.WORDS,) and np.all(np.diff(z) > 0)
    assert np.array_equal(z, -z[::-1])
    assert abs(z.var() - 1) < 2e-4 and 4.2 < z.max() < 4.4


@pytest.mark.parametrize("p", [0.0, 0.03, 0.09, 0.2, 0.27, 1.0])
def test_hit_words_rate_colours_and_independence(p: float) -> None:
    n = 400_000
    x = np.full(n, 100, np.uint8)
    out = fr.hit_words(x, fr.words(np.random.default_rng(1), n), p)
    assert out.shape == x.shape and out.dtype == np.uint8
    assert set(np.unique(out)) <= {0, 100, 255}
    hit = out != 100
    assert abs(hit.mean() - p) < 4 * math.sqrt(p * (1 - p) / n) + 1e-5
    if 0 < p:
        assert abs((out[hit] == 255).mean() - 0.5) < 4 * math.sqrt(0.25 / hit.sum())
    if 0 < p < 1:   # hits are independent: gaps between them are geometric with mean 1/p
        assert abs(np.diff(np.flatnonzero(hit)).mean() * p - 1) < 0.02


def test_hit_words_exact_thresholds_and_bad_amounts() -> None:
    w = np.array([0, 1, 2, 3, 4, 5, 6, 65535], np.uint16)
    x = np.full(8, 7, np.uint8)
    # amount 6/2^16: words 0-5 are hits, 0-2 pepper, 3-5 salt
    assert fr.hit_words(x, w, 6 / 65536).tolist() == [0, 0, 0, 255, 255, 255, 7, 7]
    with pytest.raises(ValueError, match="amount"):
        fr.hit_words(x, w, 1.5)


def test_words_are_uniform_16_bit() -> None:
    w = fr.words(np.random.default_rng(0), 1_000_003)
    assert w.dtype == np.uint16 and w.size == 1_000_003
    counts = np.bincount(w >> 12, minlength=16)                 # top 4 bits: 16 equal cells
    assert np.abs(counts / w.size - 1 / 16).max() < 0.002


def test_shot_rows_are_distributions_with_the_poisson_mean() -> None:
    rows = shot_rows(50.0)
    assert rows.shape == (256, 256) and np.allclose(rows.sum(1), 1)
    assert rows[0, 0] == 1.0                                       # no light, no photons
    levels = np.arange(256)
    mean = rows @ levels                                           # E[output] per input level
    assert np.all(np.abs(mean[:200] - levels[:200]) < 1.0)           # unbiased until clipping
    assert abs(clipped_poisson_pmf(3.0, 10).sum() - 1) < 1e-12


def test_sample_levels_matches_its_rows() -> None:
    photons = 15.0
    clip = np.full((4, 100, 100, 3), 100, np.uint8)
    out = fr.sample_levels(clip, np.random.default_rng(2), shot_tables(photons))
    freq = np.bincount(out.ravel(), minlength=256) / out.size
    expected = shot_rows(photons)[100]
    assert np.abs(freq - expected).max() < 0.005


def test_results_do_not_depend_on_the_thread_count(monkeypatch) -> None:
    assert _opencv_frames.threads() >= 1
    clip = np.random.default_rng(0).integers(0, 256, (6, 200, 200, 3), dtype=np.uint8)
    pooled = [f(clip, np.random.default_rng(3), a) for f, a in
              [(gaussian_noise, 0.2), (shot_noise, 30.0), (impulse_noise, 0.2)]]
    monkeypatch.setattr(_opencv_frames, "MAX_THREADS", 1)
    single = [f(clip, np.random.default_rng(3), a) for f, a in
              [(gaussian_noise, 0.2), (shot_noise, 30.0), (impulse_noise, 0.2)]]
    assert all(np.array_equal(a, b) for a, b in zip(pooled, single))


NOISE_OPS = ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"]


@pytest.mark.parametrize("severity", [1, 5])
@pytest.mark.parametrize("name", NOISE_OPS)
@pytest.mark.parametrize("cuts", [(1,), (3, 4), (5, 2, 7)])
def test_noise_applied_chunk_by_chunk_equals_the_whole_clip(name: str, severity: int,
                                                            cuts: tuple[int, ...]) -> None:
    spec = REGISTRY.get(name)
    params = spec.params(severity)
    clip = np.random.default_rng(4).integers(0, 256, (11, 40, 56, 3), dtype=np.uint8)
    whole = spec.fn(clip, np.random.default_rng(21), **params)
    rng = np.random.default_rng(21)                         # one Generator carried across chunks
    bounds = np.cumsum((0,) + cuts + (len(clip),)).clip(0, len(clip))
    pieces = [spec.fn(clip[a:b], rng, **params) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    assert np.array_equal(np.concatenate(pieces), whole)
    assert not np.array_equal(whole[0], whole[1])            # still a new draw every frame
