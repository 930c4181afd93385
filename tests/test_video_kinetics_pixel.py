"""Kinetics-C's rain, temporal_blur and frame_rate: values, motion, backends, severities, refusals."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import torch

import perturb.video as pv
from perturb.dataset.strategy import render_draw, strategy
from perturb.registry import REGISTRY
from perturb.video.psnr import psnr
from perturb.video.kernels.rain import (DROP_LEVEL, _clip_drops, _copies, composite, draw_streaks, frame_masks,
                                        sheet_drops, sheet_size, stamp, streak_pixels, velocity)
from perturb.video.render import WINDOW, perturb_clip, renderer_of
from perturb.video.sample import sample_clip
from perturb.video.kernels.temporal import frame_rate_indices, mean_displacement

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["rain", "temporal_blur", "frame_rate"]
SEVERITIES = [1, 2, 3, 4, 5]


@lru_cache(maxsize=1)
def clip64() -> np.ndarray:
    c = np.ascontiguousarray(sample_clip(64))
    c.setflags(write=False)
    return c


def texture(t: int = 9, h: int = 30, w: int = 41, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


# ------------------------------------------------------------------------------ severity order
@pytest.mark.parametrize("ref", ["rain", "temporal_blur", "temporal_blur:kinetics-c", "frame_rate"])
def test_psnr_strictly_decreasing_on_the_sample_clip(ref: str) -> None:
    """PSNR over the whole clip (a temporal op leaves frame 0 as it is, so per-frame PSNR is inf)."""
    values = [psnr(pv.apply(clip64(), ref, s, seed=0), clip64()) for s in SEVERITIES]
    assert all(np.isfinite(values))
    assert all(a > b for a, b in zip(values, values[1:])), f"{ref}: PSNR by severity {values}"


def test_frame_rate_displacement_strictly_increasing() -> None:
    d = [mean_displacement(pv.draw("frame_rate", s, 64).drawn["index"]) for s in SEVERITIES]
    assert d == sorted(set(d)) and d[0] > 0


# ------------------------------------------------------------------------------- temporal_blur
def test_temporal_blur_on_known_values_rounds_half_up_and_repeats_the_ends() -> None:
    clip = np.repeat(np.arange(0, 50, 10, dtype=np.uint8), 2 * 2 * 3).reshape(5, 2, 2, 3)
    out = pv.apply(clip, "temporal_blur", 2)                 # c = 2: frames t-2 .. t+1
    # (0+0+0+10)/4 = 2.5 -> 3; (0+0+10+20)/4 = 7.5 -> 8; 15; 25; (20+30+40+40)/4 = 32.5 -> 33
    assert out[:, 0, 0, 0].tolist() == [3, 8, 15, 25, 33]


@pytest.mark.parametrize("c", [1, 3, 11, 200])
def test_temporal_blur_equals_the_clamped_window_mean(c: int) -> None:
    clip = texture(t=13)
    t = np.arange(13)
    window = np.clip(t[:, None] + np.arange(-c, c)[None], 0, 12)
    want = np.floor(clip[window].astype(np.int64).sum(1) / (2 * c) + 0.5).astype(np.uint8)
    assert np.array_equal(perturb_clip(pv.get("temporal_blur"), clip, None, {"c": c}), want)


def test_temporal_blur_matches_the_reference_formula_inside_the_clip() -> None:
    """Frames c .. T-c-1 of the reference's output are the truncated mean of t-c .. t+c-1."""
    clip, c = clip64()[:24], 3
    ref = np.stack([(clip[t - c:t + c].astype(np.float64).sum(0) / (2 * c)).astype(np.uint8)
                    for t in range(c, len(clip) - c)])
    ours = pv.apply(clip, "temporal_blur:kinetics-c", 1)[c:len(clip) - c]
    diff = ours.astype(np.int16) - ref
    assert diff.min() == 0 and diff.max() == 1


def test_temporal_blur_reads_a_window_of_neighbours() -> None:
    d = pv.draw("temporal_blur", 2, 26)                     # c = 2: t-2 .. t+1
    assert renderer_of(REGISTRY.get("temporal_blur")).reads == WINDOW
    assert d.drawn["window"].tolist() == [2, 1]
    assert d.source_indices([0]).tolist() == [0, 1]
    assert d.source_indices([10]).tolist() == [8, 9, 10, 11]
    assert d.source_indices([25, 10]).tolist() == [8, 9, 10, 11, 23, 24, 25]
    assert d.source_indices(None).tolist() == list(range(26))


# ---------------------------------------------------------------------------------- frame_rate
# ffmpeg 5.1: a 20-frame clip at 30 fps through -vf fps=R,fps=30 (the first 20 frames out)
FFMPEG_ROUND_TRIP = {
    20: [0, 0, 2, 3, 3, 5, 6, 6, 8, 9, 9, 11, 12, 12, 14, 15, 15, 17, 18, 18],
    16: [0, 0, 2, 2, 4, 4, 6, 6, 8, 10, 10, 12, 12, 14, 14, 15, 15, 17, 17, 19],
    12: [1, 1, 1, 3, 3, 6, 6, 6, 8, 8, 11, 11, 11, 13, 13, 16, 16, 16, 18, 18],
    9: [1, 1, 1, 4, 4, 4, 4, 8, 8, 8, 11, 11, 11, 14, 14, 14, 14, 18, 18, 18],
    6: [2, 2, 2, 2, 2, 7, 7, 7, 7, 7, 12, 12, 12, 12, 12, 17, 17, 17, 17, 17],
}


@pytest.mark.parametrize("fps", sorted(FFMPEG_ROUND_TRIP))
def test_frame_rate_keeps_the_frames_ffmpeg_keeps(fps: int) -> None:
    assert frame_rate_indices(20, fps).tolist() == FFMPEG_ROUND_TRIP[fps]


def test_frame_rate_edge_cases() -> None:
    assert frame_rate_indices(7, 30).tolist() == list(range(7))          # same rate: unchanged
    assert frame_rate_indices(7, 60).tolist() == list(range(7))
    assert frame_rate_indices(1, 6).tolist() == [0]
    assert frame_rate_indices(4, 2).tolist() == [3, 3, 3, 3]              # past the end: the last frame
    assert frame_rate_indices(10, 12.5, clip_fps=25).tolist() == [0, 0, 2, 2, 4, 4, 6, 6, 8, 8]
    clip = texture(t=20)
    assert np.array_equal(pv.apply(clip, "frame_rate", 5), clip[FFMPEG_ROUND_TRIP[6]])


# ---------------------------------------------------------------------------------------- rain
def test_rain_composite_on_known_values() -> None:
    grey = np.full((4, 5, 3), 100, np.uint8)
    assert np.array_equal(composite(grey, np.zeros((4, 5), bool), 0.5), grey)
    # all streak: lift floor(220·(155/255)²) = 81; blend (255·100 + 220·81)/255 = 169.9 -> 170
    assert np.all(composite(grey, np.ones((4, 5), bool), 0.5) == 170)


def reference_rain_step(frame: np.ndarray, mask: np.ndarray, darken: float) -> np.ndarray:
    """The reference's composite re-stated in float64 (truncating, as it does)."""
    import cv2

    m = mask[..., None] * float(DROP_LEVEL)
    x = frame.astype(np.float64)
    lifted = frame + (m * (1 - x / 255) * (1 - x.mean() / 255)).astype(np.uint8)
    blurred = cv2.blur(lifted, (3, 3)).astype(np.float64)
    v = (blurred * m / 255 + x * (1 - m / 255)) / 255
    mean = v.mean(axis=(0, 1), keepdims=True)
    return (np.clip((v - mean) * darken + mean, 0, 1) * 255).astype(np.uint8)


@pytest.mark.parametrize("severity", [1, 3, 5])
def test_rain_composite_equals_the_reference_step_up_to_rounding(severity: int) -> None:
    d = pv.draw("rain", severity, 4, seed=1, per_frame=True)
    for frame, mask in zip(clip64()[:4], frame_masks(d.drawn, d.params, np.arange(4), 224, 224)):
        darken = d.params["darken"]
        diff = composite(frame, mask, darken).astype(np.int16) - reference_rain_step(frame, mask, darken)
        assert diff.min() >= 0 and diff.max() <= 1 and mask.any()


def test_rain_streaks_are_drawn_at_the_density_and_slant() -> None:
    drops = sheet_drops(np.random.default_rng(0), 200, 300, 500)
    assert drops.shape == (120, 2) and drops[:, 0].max() < 300 and drops[:, 1].max() < 200
    one = np.array([[10, 5]])
    mask = draw_streaks(one, (40, 30), (0, 0), 40, 30, -3, 12)
    ys, xs = np.nonzero(mask)
    assert len(ys) == 13 and (ys.min(), ys.max()) == (5, 17) and (xs.max(), xs.min()) == (10, 7)
    # a streak through the bottom-right corner comes in at the top and the left (a torus)
    wrapped = draw_streaks(np.array([[29, 35]]), (40, 30), (0, 0), 40, 30, 2, 12)
    assert wrapped[35:, 29].any() and wrapped[:8, 0:2].any() and wrapped.sum() == 13


def test_rain_frame_is_a_window_of_the_whole_torus_sheet() -> None:
    """Against the sheet drawn whole (every streak and its copies across both seams), rolled."""
    import cv2

    d = pv.draw("rain", 5, 4, seed=6)
    slant, length = int(d.drawn["slant"]), d.params["length"]
    h, w = 50, 60
    sh, sw = sheet_size(h, w, slant, d.params)
    drops = _clip_drops(int(d.drawn["key"]), sh, sw, d.params["area"])
    big = np.zeros((3 * sh, 3 * sw), np.uint8)
    for x, y in drops.tolist():
        for oy in (0, sh):
            for ox in (0, sw, 2 * sw):
                cv2.line(big, (x + ox, y + oy), (x + ox + slant, y + oy + length), 1, 1, cv2.LINE_8)
    torus = big[sh:2 * sh, sw:2 * sw]
    for dy, dx in [(0, 0), (17, -3), (sh - 5, 9), (3 * sh + 11, -2 * sw - 1)]:
        want = np.roll(torus, (dy, dx), axis=(0, 1))[:h, :w]
        assert np.array_equal(draw_streaks(drops, (sh, sw), (dy, dx), h, w, slant, length), want)


def test_rain_streak_pixels_are_opencvs_line_wherever_it_starts() -> None:
    import cv2

    rng = np.random.default_rng(8)
    for slant, length in [(-10, 10), (9, 10), (0, 1), (-3, 60), (7, 80), (-10, 3)]:
        starts = np.stack([rng.integers(12, 80, 6), rng.integers(0, 40, 6)], 1)
        want = np.zeros((130, 100), np.uint8)
        for x, y in starts.tolist():
            cv2.line(want, (x, y), (x + slant, y + length), 1, 1, cv2.LINE_8)
        got = np.zeros_like(want)
        stamp(got, starts[:, 1] * 100 + starts[:, 0], np.full(6, slant), length, 1)
        assert np.array_equal(got, want)
        dy, dx = streak_pixels(slant, length)
        assert (dy.min(), dy.max()) == (0, length) and {dx.min(), dx.max()} == {0, slant} | {min(0, slant)}


def test_rain_torus_copies_are_every_shift_into_the_range() -> None:
    index, value = _copies(np.array([3, 9, 0]), -12, 8, 10)
    assert sorted(zip(index.tolist(), value.tolist())) == [(0, -7), (0, 3), (1, -11), (1, -1), (2, -10), (2, 0)]
    assert len(_copies(np.array([5]), 6, 14, 10)[0]) == 0


def test_rain_sheet_drawn_once_equals_each_frames_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """frame_masks (the sheet drawn once over the frames' windows where that applies, else each
    window on a stacked canvas) against draw_streaks frame by frame, consecutive and scattered frames."""
    from perturb.video.kernels import rain as rain_kernel

    original, once = rain_kernel.sheet_windows, []

    def spy(*args, **kwargs):
        once.append(args[3:5])
        return original(*args, **kwargs)

    monkeypatch.setattr(rain_kernel, "sheet_windows", spy)
    d = pv.draw("rain", 4, 300, seed=11)
    slant = int(d.drawn["slant"])
    for fall in (0.0, 0.4, 30.0, 400.0):
        params = dict(d.params, fall=fall)
        for h, w in [(120, 90), (50, 60), (7, 3)]:
            sheet = sheet_size(h, w, slant, params)
            vx, vy = velocity(slant, params)
            drops = _clip_drops(int(d.drawn["key"]), *sheet, params["area"])
            for ids in (np.arange(16), np.array([299, 3, 150, 3, 77])):
                want = [draw_streaks(drops, sheet, (int(np.rint(t * vy)), int(np.rint(t * vx))), h, w, slant,
                                     params["length"]) for t in ids.tolist()]
                assert np.array_equal(frame_masks(d.drawn, params, ids, h, w), np.stack(want))
    assert len(once) >= 4                                   # both ways of drawing were compared


def test_rain_falls_coherently_along_its_slant() -> None:
    d = pv.draw("rain", 3, 12, seed=4)
    h, w = 60, 70
    slant = int(d.drawn["slant"])
    vx, vy = velocity(slant, d.params)
    assert vy > 0 and np.isclose(np.hypot(vx, vy), d.params["fall"]) and np.sign(vx) == np.sign(slant)
    masks = frame_masks(d.drawn, d.params, np.arange(12), h, w)
    t = np.arange(12)
    dy, dx = np.rint(t * vy).astype(int), np.rint(t * vx).astype(int)
    for a in (0, 5, 10):                      # frame a+1 is frame a moved by the change of offset
        sy, sx = dy[a + 1] - dy[a], dx[a + 1] - dx[a]
        moved = np.roll(masks[a], (sy, sx), axis=(0, 1))
        inner = (slice(max(sy, 0), h + min(sy, 0)), slice(max(sx, 0), w + min(sx, 0)))
        assert np.array_equal(moved[inner], masks[a + 1][inner])
    sheet = sheet_size(h, w, slant, d.params)
    assert sheet[0] >= h + 128 * vy and sheet[1] >= w + 128 * abs(vx)


def test_rain_draw_does_not_depend_on_the_clip_length() -> None:
    """So the builder renders it window by window (its 'render' strategy) and matches apply()."""
    a, b = pv.draw("rain", 2, 3, seed=5), pv.draw("rain", 2, 3000, seed=5)
    assert all(np.array_equal(a.drawn[k], b.drawn[k]) for k in a.drawn)
    spec = REGISTRY.get("rain")
    assert strategy(spec, 4).mode == "render"
    clip = texture(t=70, h=20, w=24)
    d = render_draw(spec, spec.params(4), np.random.default_rng(9))
    pieces = [d.render(clip[i:i + 64], np.arange(i, min(i + 64, 70))) for i in range(0, 70, 64)]
    assert np.array_equal(np.concatenate(pieces), pv.apply(clip, "rain", 4, seed=9))


def test_rain_per_frame_draws_a_new_sheet_and_slant_every_frame() -> None:
    d = pv.draw("rain", 4, 6, seed=2, per_frame=True)
    assert d.drawn["slant"].shape == (6,) and len(np.unique(d.drawn["slant"])) > 1
    masks = frame_masks(d.drawn, d.params, np.array([1, 4]), 40, 50)
    key = int(d.drawn["key"])
    for t, mask in zip((1, 4), masks):
        drops = sheet_drops(np.random.default_rng([key, t]), 40, 50, d.params["area"])
        want = draw_streaks(drops, (40, 50), (0, 0), 40, 50, int(d.drawn["slant"][t]), d.params["length"])
        assert np.array_equal(mask, want)
    clip = texture(t=6)
    full = d.render_clip(clip)
    assert np.array_equal(full, pv.apply(clip, "rain", 4, seed=2, per_frame=True))
    assert np.array_equal(d.render(clip[[1, 4]], [4, 1]), full[[4, 1]])
    assert np.array_equal(d.render_clip(torch.from_numpy(clip.copy())).numpy(), full)
    assert not np.array_equal(full, pv.apply(clip, "rain", 4, seed=2))


# ------------------------------------------------------------------------------------ backends
@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", ["rain", "temporal_blur", "temporal_blur:kinetics-c"])
def test_numpy_and_torch_cpu_give_the_same_pixels(name: str, severity: int) -> None:
    for clip in (clip64()[:16], texture(t=16)):
        ref = pv.apply(clip, name, severity, seed=11)
        x = torch.from_numpy(clip.copy())
        assert np.array_equal(pv.apply(x, name, severity, seed=11).numpy(), ref)
        tchw = x.permute(0, 3, 1, 2).float() / 255
        got = pv.apply(tchw, name, severity, seed=11)
        assert np.array_equal((got * 255).round().to(torch.uint8).permute(0, 2, 3, 1).numpy(), ref)


def _digest(name: str, per_frame: bool = False) -> str:
    out = pv.apply(texture(t=8), name, 5, seed=123, per_frame=per_frame)
    return hashlib.sha256(out.tobytes()).hexdigest()


def test_same_seed_same_output_in_another_process() -> None:
    code = ("import sys; sys.path.insert(0, 'tests'); import test_video_kinetics_pixel as k; "
            "print(*(k._digest(n) for n in k.NAMES), k._digest('rain', True))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [*(_digest(n) for n in NAMES), _digest("rain", True)]


@pytest.mark.parametrize("name", NAMES)
def test_input_untouched_and_tiny_clips_work(name: str) -> None:
    for shape in [(1, 1, 1, 3), (3, 2, 5, 3), (2, 9, 13, 3)]:
        clip = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
        before = clip.copy()
        x = torch.from_numpy(clip.copy())
        for s in (1, 5):
            out = pv.apply(clip, name, s, seed=3)
            assert out.shape == clip.shape and out.dtype == np.uint8 and not np.shares_memory(out, clip)
            assert np.array_equal(pv.apply(x, name, s, seed=3).numpy(), out)
        assert np.array_equal(clip, before) and torch.equal(x, torch.from_numpy(before))


# ------------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize("name, params, match", [
    ("rain", {"area": 0}, "rain: expected area to be an int >= 1"),
    ("rain", {"length": 2.5}, "rain: expected length to be an int >= 1"),
    ("rain", {"darken": 1.5}, r"rain: expected darken to be a number in \[0, 1\]"),
    ("rain", {"fall": float("nan")}, "rain: expected fall to be a number"),
    ("rain", {"per_frame": "yes"}, "per_frame must be True or False"),
    ("temporal_blur", {"c": 0}, "temporal_blur: expected c to be an int >= 1"),
    ("temporal_blur", {"c": True}, "temporal_blur: expected c to be an int >= 1"),
    ("frame_rate", {"fps": 0}, "frame_rate: expected fps to be a finite number of frames/s > 0"),
    ("frame_rate", {"clip_fps": float("inf")}, "frame_rate: expected clip_fps"),
    ("frame_rate", {"fps": "12"}, "frame_rate: expected fps"),
])
def test_bad_parameters_raise_value_errors(name: str, params: dict, match: str) -> None:
    spec = pv.get(name)
    with pytest.raises(ValueError, match=match):
        perturb_clip(spec, texture(t=3), np.random.default_rng(0), {**spec.params(3), **params})


@pytest.mark.parametrize("name", ["temporal_blur", "frame_rate"])
def test_per_frame_is_refused_where_there_is_no_layer(name: str) -> None:
    with pytest.raises(ValueError, match=f"{name} has no per_frame option; ops that take it: .*rain"):
        pv.apply(texture(t=2), name, 3, per_frame=True)


# ------------------------------------------------------------------------------------ registry
def test_registry_entries_and_the_kinetics_c_table() -> None:
    rain, blur, rate = (REGISTRY.get(n) for n in NAMES)
    assert (rain.category, rain.random, rain.temporal) == ("weather", True, False) and rain.extra["per_frame"]
    assert (blur.category, blur.random, blur.temporal) == ("blur", False, True)
    assert (rate.category, rate.random, rate.temporal) == ("temporal", False, True)
    assert rain.params(5) == {"area": 400, "length": 80, "darken": 0.5, "fall": 40.0}
    assert blur.params(5) == {"c": 6} and REGISTRY.get("temporal_blur:kinetics-c").params(5) == {"c": 11}
    assert rate.params(1) == {"fps": 20, "clip_fps": 30.0}
    for spec in (rain, blur, rate):
        assert "Yi et al. 2021" in spec.deviation and "kinetics-c" in REGISTRY.suites_of(spec)
        assert "..." not in spec.deviation
