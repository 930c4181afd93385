"""The counter-based words and cheap samplers behind the noise ops draw the distributions they claim."""
from __future__ import annotations

import math

import numpy as np
import pytest

from perturb.registry import REGISTRY
from perturb.video.kernels import fast_random as fr
from perturb.video.kernels import opencv_frames as _opencv_frames
from perturb.video.kernels.keyed_words import check_frame_indices, draw_key, frame_seeds, words_numpy
from perturb.video.kernels.noise_rows import clipped_poisson_pmf, shot_rows, shot_tables
from perturb.video.kernels.noise import KERNELS, shot_table, speckle_table
from perturb.video.render import perturb_clip

NOISE_OPS = ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"]


def noisy(name: str, clip: np.ndarray, rng: np.random.Generator, **params: float) -> np.ndarray:
    """The whole clip under noise op ``name`` with ``params``, its key drawn from ``rng``."""
    return perturb_clip(REGISTRY.get(name), clip, rng, params)


def ref_mix(x: int) -> int:
    """The documented 32-bit mixer, written out on Python ints."""
    x ^= x >> 16
    x = (x * 0x21F0AAAD) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x735A2D97) & 0xFFFFFFFF
    return x ^ (x >> 15)


def ref_words(key: int, frame: int, n: int) -> list[int]:
    seed = ref_mix(ref_mix(frame ^ (key & 0xFFFFFFFF)) ^ (key >> 32))
    out = []
    for i in range((n + 1) // 2):
        h = ref_mix(ref_mix(i) ^ seed)
        out += [h & 0xFFFF, h >> 16]
    return out[:n]


@pytest.mark.parametrize("key,frame", [(0, 0), (123456789, 7), (2**64 - 1, 2**32 - 1), (2**63 + 5, 1)])
def test_words_follow_the_documented_formula(key: int, frame: int) -> None:
    seed = int(frame_seeds(key, np.array([frame]))[0])
    assert words_numpy(seed, 11, 0, 11).tolist() == ref_words(key, frame, 11)


def test_words_pinned_values() -> None:
    seeds = frame_seeds(2**64 - 1, np.array([0, 1, 2**32 - 1]))
    assert seeds.tolist() == [3313243744, 1579166874, 2578835075]
    seed = int(frame_seeds(123456789, np.array([7]))[0])
    assert words_numpy(seed, 10, 0, 10).tolist() == [53780, 7687, 10603, 27497, 1047,
                                                     39453, 8927, 15153, 4300, 18460]
    assert draw_key(np.random.default_rng(0)) == 11749869230777074271


def test_words_of_a_range_are_that_range_of_the_frame(monkeypatch) -> None:
    from perturb.video.kernels import keyed_words as _keyed_words

    whole = words_numpy(99, 1001, 0, 1001)
    for start, stop in [(0, 1), (2, 3), (500, 1001), (1000, 1001), (4, 4)]:
        assert np.array_equal(words_numpy(99, 1001, start, stop), whole[start:stop])
    monkeypatch.setattr(_keyed_words, "CACHED_PAIRS", 10)          # big-frame path: no cache
    assert np.array_equal(words_numpy(99, 1001, 0, 1001), whole)
    assert np.array_equal(words_numpy(99, 1001, 500, 777), whole[500:777])
    with pytest.raises(ValueError, match="even start"):
        words_numpy(99, 1001, 3, 10)


def test_words_are_uniform_and_frames_independent() -> None:
    n = 1_000_003
    w = words_numpy(int(frame_seeds(5, np.array([0]))[0]), n, 0, n)
    assert w.dtype == np.uint16 and w.size == n
    for bits in (w >> 12, w & 0xF, (w >> 6) & 0xF):                  # high, low and middle bits
        counts = np.bincount(bits, minlength=16)
        assert np.abs(counts / n - 1 / 16).max() < 0.002
    seeds = frame_seeds(5, np.arange(4))
    frames = [words_numpy(int(s), n, 0, n).astype(np.float64) for s in seeds]
    for other in frames[1:]:
        assert abs(np.corrcoef(frames[0], other)[0, 1]) < 0.005
    assert abs(np.corrcoef(frames[0][:-1], frames[0][1:])[0, 1]) < 0.005  # neighbours too


def test_keys_and_frame_indices_are_checked() -> None:
    for bad in (-1, 2**64, 1.5, True, "3"):
        with pytest.raises(ValueError, match="noise key"):
            frame_seeds(bad, np.array([0]))
    with pytest.raises(ValueError, match="2 integer frame indices"):
        check_frame_indices([0, 1, 2], 2)
    with pytest.raises(ValueError, match="integer frame indices"):
        check_frame_indices(np.array([0.0, 1.0]), 2)
    with pytest.raises(ValueError, match=r"\[0, 2\*\*32\)"):
        check_frame_indices(np.array([-1, 0]), 2)


def test_normal_table_is_a_symmetric_standard_normal() -> None:
    z = fr.normal_table()
    assert z.shape == (fr.WORDS,) and np.all(np.diff(z) > 0)
    assert np.array_equal(z, -z[::-1])
    assert abs(z.var() - 1) < 2e-4 and 4.2 < z.max() < 4.4


@pytest.mark.parametrize("sigma,bits", [(0.15, 15), (0.35, 14), (3.0, 12)])
def test_speckle_factors_make_exact_float32_products(sigma: float, bits: int) -> None:
    f = speckle_table(sigma).astype(np.float64)
    assert np.all(f * 2**bits == np.rint(f * 2**bits))                   # on a 2^-bits grid (or finer)
    assert np.abs(f * 255).max() < 2**24                                 # so x·f is exact in float32
    for x in (255, 251, 127):
        assert np.array_equal((np.float32(x) * speckle_table(sigma)).astype(np.float64), x * f)
    assert np.abs(f - (1 + sigma * fr.normal_table())).max() <= 2.0**-(bits + 1)


@pytest.mark.parametrize("p", [0.0, 0.03, 0.09, 0.2, 0.27, 1.0])
def test_hit_words_rate_colours_and_independence(p: float) -> None:
    n = 400_000
    x = np.full(n, 100, np.uint8)
    out = fr.hit_words(x, words_numpy(1, n, 0, n), p)
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


def test_shot_rows_are_distributions_with_the_poisson_mean() -> None:
    rows = shot_rows(50.0)
    assert rows.shape == (256, 256) and np.allclose(rows.sum(1), 1)
    assert rows[0, 0] == 1.0                                       # no light, no photons
    levels = np.arange(256)
    mean = rows @ levels                                           # E[output] per input level
    assert np.all(np.abs(mean[:200] - levels[:200]) < 1.0)           # unbiased until clipping
    assert abs(clipped_poisson_pmf(3.0, 10).sum() - 1) < 1e-12


def test_packed_shot_table_draws_what_the_alias_tables_draw() -> None:
    keep, alias = shot_tables(30.0)
    packed = shot_table(30.0).astype(np.int64)
    low = np.arange(256)[None, :]                                  # every low byte, every cell
    column = np.tile(np.arange(256), 256)[:, None]
    plain = np.where(low < keep[:, None], column, alias[:, None])
    ours = np.where(low < (packed & 0xFF)[:, None], column, (packed >> 8)[:, None])
    assert np.array_equal(plain, ours)


@pytest.mark.parametrize("level", [0, 30, 100, 250])
def test_shot_noise_draws_its_rows(level: int) -> None:
    photons = 15.0
    clip = np.full((4, 100, 100, 3), level, np.uint8)
    out = noisy("shot_noise", clip, np.random.default_rng(2), photons=photons)
    freq = np.bincount(out.ravel(), minlength=256) / out.size
    assert np.abs(freq - shot_rows(photons)[level]).max() < 0.005


def test_results_do_not_depend_on_the_thread_count_or_chunking(monkeypatch) -> None:
    assert _opencv_frames.threads() >= 1
    clip = np.random.default_rng(0).integers(0, 256, (6, 200, 200, 3), dtype=np.uint8)
    ops = [("gaussian_noise", {"sigma": 0.2}), ("shot_noise", {"photons": 30.0}), ("impulse_noise", {"amount": 0.2})]
    pooled = [noisy(n, clip, np.random.default_rng(3), **p) for n, p in ops]
    monkeypatch.setattr(_opencv_frames, "MAX_THREADS", 1)
    monkeypatch.setattr(fr, "CHUNK", 1 << 10)                  # many chunks per frame
    single = [noisy(n, clip, np.random.default_rng(3), **p) for n, p in ops]
    assert all(np.array_equal(a, b) for a, b in zip(pooled, single))


@pytest.mark.parametrize("severity", [1, 5])
@pytest.mark.parametrize("name", NOISE_OPS)
def test_any_subset_or_window_renders_as_in_the_whole_clip(name: str, severity: int) -> None:
    spec, kernels = REGISTRY.get(name), KERNELS[name]
    params = spec.params(severity)
    clip = np.random.default_rng(4).integers(0, 256, (11, 40, 56, 3), dtype=np.uint8)
    key = draw_key(np.random.default_rng(21))
    whole = perturb_clip(spec, clip, np.random.default_rng(21), params)   # one key, every frame
    assert np.array_equal(whole, kernels.render_numpy(clip, np.arange(11), key, params))
    for idx in ([3], [0, 4, 8], [10, 2, 2, 7], list(range(5, 11))):   # subsets, repeats, a window
        sub = kernels.render_numpy(clip[idx], np.array(idx), key, params)
        assert np.array_equal(sub, whole[idx])
    assert not np.array_equal(whole[0], whole[1])            # still a new draw every frame
    other = kernels.render_numpy(clip, np.arange(11), key + 1, params)
    assert not np.array_equal(other, whole)                  # the key matters


@pytest.mark.parametrize("name", NOISE_OPS)
def test_bad_frames_and_params_are_refused(name: str) -> None:
    kernels = KERNELS[name]
    good = REGISTRY.get(name).params(3)
    clip = np.zeros((2, 4, 4, 3), np.uint8)
    with pytest.raises(ValueError, match=r"uint8 frames of shape \(F, H, W, 3\)"):
        kernels.render_numpy(clip.astype(np.float32), [0, 1], 1, good)
    with pytest.raises(ValueError, match=r"uint8 frames of shape \(F, H, W, 3\)"):
        kernels.render_numpy(clip[..., :2], [0, 1], 1, good)
    with pytest.raises(ValueError, match="2 integer frame indices"):
        kernels.render_numpy(clip, [0], 1, good)
    with pytest.raises(TypeError, match="expected exactly the parameter"):
        kernels.render_numpy(clip, [0, 1], 1, {**good, "other": 1})
    (param,) = good
    for bad in (float("nan"), -1.0, "0.1"):
        with pytest.raises(ValueError, match=param):
            kernels.render_numpy(clip, [0, 1], 1, {param: bad})
