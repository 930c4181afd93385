"""Temporal and camera perturbations: index patterns, severity order, rotation conventions."""
from __future__ import annotations

import numpy as np
import pytest

import perturb
from perturb.selection import SEVERITY_LEVELS as SEVERITIES
from perturb.video.kernels import camera
from perturb.video.kernels import temporal
from perturb.video.sample import sample_clip
from perturb.video.severity_params import table

TEMPORAL = ["jumble", "box_jumble", "sampling", "reverse_sampling", "freeze"]
CAMERA = ["static_rotate", "rotate", "translate"]
ORDERED = ["jumble", "sampling", "freeze"]          # mean displacement strictly increasing


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return np.array(sample_clip())          # writable copy of the 64-frame sample clip


def coded_clip(n_frames: int, size: int = 4) -> np.ndarray:
    """A clip whose frame t carries t in its pixels (R = t % 256, G = t // 256)."""
    t = np.arange(n_frames)
    out = np.zeros((n_frames, size, size, 3), dtype=np.uint8)
    out[..., 0] = (t % 256)[:, None, None]
    out[..., 1] = (t // 256)[:, None, None]
    return out


def decode(out: np.ndarray) -> np.ndarray:
    """Source index of every output frame of a perturbed coded clip."""
    assert (out == out[:, :1, :1]).all(), "a temporal op must move whole frames"
    return out[:, 0, 0, 0].astype(int) + 256 * out[:, 0, 0, 1].astype(int)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = ((a.astype(float) - b.astype(float)) ** 2).reshape(len(a), -1).mean(axis=1)
    return float(np.mean(10 * np.log10(255.0 ** 2 / mse)))


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", TEMPORAL + CAMERA)
def test_contract_on_sample_clip(clip, name, severity):
    before = clip.copy()
    spec = perturb.video.get(name)
    out = perturb.video.apply(clip, name, severity, seed=7)
    assert out.shape == clip.shape and out.dtype == np.uint8
    assert np.array_equal(clip, before), "input modified"
    assert not np.shares_memory(out, clip)
    assert not np.array_equal(out, clip), "output equals input"
    assert np.array_equal(out, perturb.video.apply(clip, name, severity, seed=7))
    if spec.random:
        assert not np.array_equal(out, perturb.video.apply(clip, name, severity, seed=8))


@pytest.mark.parametrize("name", TEMPORAL)
def test_kernel_uses_its_index_function(name):
    fn = temporal.INDEX_FUNCTIONS[name]
    for severity, params in table(name).items():
        out = perturb.video.apply(coded_clip(70), name, severity, seed=3)
        assert np.array_equal(decode(out), fn(70, rng=np.random.default_rng(3), **params))


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("seed", range(8))
def test_mean_displacement_strictly_increases(name, seed):
    fn = temporal.INDEX_FUNCTIONS[name]
    d = [temporal.mean_displacement(fn(64, rng=np.random.default_rng(seed), **p))
         for p in table(name).values()]
    assert all(a < b for a, b in zip(d, d[1:])), d


def test_mean_displacement_ordered_through_apply(clip):
    for name in ORDERED:
        d = [temporal.mean_displacement(decode(perturb.video.apply(coded_clip(64), name, s, seed=11)))
             for s in SEVERITIES]
        assert all(a < b for a, b in zip(d, d[1:])), (name, d)


def test_sampling_index_pattern():
    assert temporal.sampling_indices(10, 4).tolist() == [0, 0, 0, 0, 4, 4, 4, 4, 8, 8]
    assert temporal.reverse_sampling_indices(10, 4).tolist() == [8, 8, 4, 4, 4, 4, 0, 0, 0, 0]
    for n in (1, 5, 31, 64, 100):
        for r in (2, 4, 8, 16, 32):
            t = np.arange(n)
            assert np.array_equal(temporal.sampling_indices(n, r), (t // r) * r)
            assert np.array_equal(temporal.reverse_sampling_indices(n, r), ((n - 1 - t) // r) * r)


@pytest.mark.parametrize("name", ["sampling", "reverse_sampling"])
def test_sampling_pattern_through_apply(name):
    fn = temporal.INDEX_FUNCTIONS[name]
    for severity, params in table(name).items():
        got = decode(perturb.video.apply(coded_clip(64), name, severity))
        assert np.array_equal(got, fn(64, **params))


@pytest.mark.parametrize("severity", SEVERITIES)
def test_freeze_keeps_the_stated_fraction(severity):
    keep = table("freeze")[severity]["keep"]
    for seed in range(3):
        idx = decode(perturb.video.apply(coded_clip(400), "freeze", severity, seed=seed))
        assert idx[0] == 0
        assert np.all(np.diff(idx) >= 0) and np.all(idx <= np.arange(400))   # held, never ahead
        assert abs(len(np.unique(idx)) / 400 - keep) <= 0.1 * keep
    assert temporal.freeze_count(64, keep) == max(1, round(keep * 64))


def test_freeze_nested_under_one_seed():
    kept = [set(temporal.freeze_indices(64, p["keep"], np.random.default_rng(5)).tolist())
            for p in table("freeze").values()]
    assert all(b < a for a, b in zip(kept, kept[1:]))


def test_jumble_shuffles_inside_segments_and_moves_every_segment():
    for seed in range(20):
        idx = temporal.jumble_indices(30, 4, np.random.default_rng(seed))
        for start in range(0, 30, 4):
            part = idx[start:start + 4]
            assert sorted(part.tolist()) == list(range(start, min(start + 4, 30)))
            assert not np.array_equal(part, np.arange(start, min(start + 4, 30)))


def test_box_jumble_reorders_whole_segments():
    for seed in range(20):
        idx = temporal.box_jumble_indices(30, 9, np.random.default_rng(seed))
        assert sorted(idx.tolist()) == list(range(30))
        runs = np.split(idx, np.flatnonzero(np.diff(idx) != 1) + 1)
        starts = sorted(int(r[0]) for r in runs)           # cut points, at a random phase
        assert starts[0] == 0 and len({s % 9 for s in starts[1:]}) == 1   # one phase for all cuts
        assert not np.array_equal(idx, np.arange(30))
    phases = {int(temporal.box_jumble_indices(64, 36, np.random.default_rng(s))[0]) for s in range(20)}
    assert len(phases) > 5                                  # two-segment clips still vary


def test_short_clips():
    rng = np.random.default_rng(0)
    for name, fn in temporal.INDEX_FUNCTIONS.items():
        for params in table(name).values():
            assert fn(1, rng=rng, **params).tolist() == [0]
    idx = temporal.jumble_indices(5, 64, rng)                 # one segment: the whole clip
    assert sorted(idx.tolist()) == list(range(5)) and idx.tolist() != list(range(5))
    for seed in range(10):                                  # at most one cut: kept or swapped
        idx = temporal.box_jumble_indices(5, 36, np.random.default_rng(seed)).tolist()
        assert idx == list(range(5)) or (idx[-1] == idx[0] - 1 and sorted(idx) == list(range(5)))
    assert temporal.sampling_indices(5, 32).tolist() == [0] * 5


def test_bad_index_arguments():
    with pytest.raises(ValueError, match="T >= 1"):
        temporal.jumble_indices(0, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="segment"):
        temporal.box_jumble_indices(10, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="fraction"):
        temporal.freeze_count(10, 1.5)


def test_static_rotate_90_is_rot90(clip):
    out = perturb.video.apply(clip[:4], "static_rotate", 5)
    expected = np.rot90(clip[:4], k=1, axes=(1, 2))           # counter-clockwise
    assert np.array_equal(out[:, 1:-1, 1:-1], expected[:, 1:-1, 1:-1])


def test_static_rotate_psnr_strictly_decreases(clip):
    values = [psnr(clip, perturb.video.apply(clip, "static_rotate", s)) for s in SEVERITIES]
    assert all(a > b for a, b in zip(values, values[1:])), values


def test_rotation_angles():
    rng = np.random.default_rng(0)
    assert np.array_equal(camera.static_angles(5, 30), np.full(5, 30.0))
    for severity, params in table("rotate").items():
        a = camera.random_angles(500, params["max_degrees"], rng)
        assert np.all(np.abs(a) < 6 * severity) and a.min() < 0 < a.max()
        assert len(np.unique(a)) == 500
    frame = np.array(sample_clip(1))
    assert np.array_equal(camera.render_rotation(frame, np.zeros(1)), frame)


def test_translation_offsets_and_rendering():
    rng = np.random.default_rng(0)
    for severity, params in table("translate").items():
        off = camera.translate_offsets(1000, params["max_shift"], rng)
        assert off.shape == (1000, 2) and off.min() == 0 and off.max() == 8 * severity - 1
    frames = np.array(sample_clip(3))
    off = np.array([[0, 0], [5, 2], [40, 13]])
    out = camera.render_translation(frames, off)
    assert np.array_equal(out[0], frames[0])
    for t, (dx, dy) in enumerate(off):
        assert np.array_equal(out[t, :224 - dy, :224 - dx], frames[t, dy:, dx:])
    with pytest.raises(ValueError, match="offsets"):
        camera.render_translation(frames, off[:2])
    with pytest.raises(ValueError, match="max_shift"):
        camera.translate_offsets(3, 0, rng)


def test_translate_and_rotate_vary_per_frame(clip):
    still = np.repeat(clip[:1], 12, axis=0)
    for name in ("rotate", "translate"):
        out = perturb.video.apply(still, name, 3, seed=1)
        assert len({out[t].tobytes() for t in range(12)}) > 6, name


@pytest.mark.parametrize("alias,name", [
    ("Jumble", "jumble"), ("BoxJumble", "box_jumble"), ("SampleRate", "sampling"),
    ("Sampling", "sampling"), ("ReverseSample", "reverse_sampling"),
    ("ReverseSampling", "reverse_sampling"), ("Freeze", "freeze"), ("StaticRotate", "static_rotate"),
    ("VarRotate", "rotate"), ("Rotate", "rotate"), ("Translate", "translate")])
def test_paper_names(alias, name):
    assert perturb.video.get(alias).name == name


def test_flags():
    for name in TEMPORAL:
        assert perturb.video.get(name).temporal
    for name in CAMERA:
        assert not perturb.video.get(name).temporal
    assert {n for n in TEMPORAL + CAMERA if not perturb.video.get(n).random} == {
        "sampling", "reverse_sampling", "static_rotate"}
