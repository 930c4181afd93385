"""Weather ops (fog, frost, snow, spatter): coherent layers, per_frame draws, composites, backends."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import torch

import perturb.video as pv
from perturb.video.psnr import mean_psnr
from perturb.video.render import perturb_clip
from perturb.video.sample import sample_clip
from perturb.video.kernels.weather import (COMPOSITES, LAYERS, composite_fog, composite_frost, composite_snow,
                                   composite_spatter, drift_starts, frame_layers, spatter_planes)
from perturb.video.kernels.weather_layers import frost_layer, plasma_fractal, streak_blur

NAMES = ["fog", "frost", "snow", "spatter"]
SEVERITIES = [1, 2, 3, 4, 5]


@lru_cache(maxsize=1)
def clip16() -> np.ndarray:
    c = sample_clip(16)
    c.setflags(write=False)
    return c


def to_levels(values: np.ndarray) -> np.ndarray:
    """float32 levels rounded half to even and saturated, as OpenCV's uint8 conversion does."""
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


def texture(t: int = 5, h: int = 40, w: int = 52) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


def level_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.astype(np.int16) - b.astype(np.int16))


# ------------------------------------------------------------------------------ severity order
@pytest.mark.parametrize("name", NAMES)
def test_mean_psnr_strictly_decreasing_on_the_sample_clip(name: str) -> None:
    psnrs = [mean_psnr(pv.apply(clip16(), name, s, seed=0), clip16()) for s in SEVERITIES]
    assert all(np.isfinite(psnrs))
    assert all(a > b for a, b in zip(psnrs, psnrs[1:])), f"{name}: PSNR by severity {psnrs}"


# ------------------------------------------------------------------------------------ motion
def test_drift_starts_move_content_by_the_rounded_velocity() -> None:
    starts = drift_starts((1.0, -0.5), 5)          # vx = 1 px/frame right, vy = 0.5 px/frame up
    # offsets (y, x) = rint(t·(-0.5, 1)) = (0,0) (-0,1) (-1,2) (-2,3) (-2,4); starts = max - off
    assert starts.tolist() == [[0, 4], [0, 3], [1, 2], [2, 1], [2, 0]]
    assert drift_starts((0.0, 0.0), 3).tolist() == [[0, 0]] * 3


@pytest.mark.parametrize("name", ["fog", "snow", "spatter"])
def test_coherent_layers_are_windows_of_one_layer_moving_at_the_drawn_velocity(name: str) -> None:
    d = pv.draw(name, 3, 12, seed=4)
    h, w = 30, 40
    layers = frame_layers(name, d.drawn, d.params, np.arange(12), h, w)
    starts = d.drawn["starts"]
    assert starts.min(axis=0).tolist() == [0, 0] and np.any(starts[0] != starts[-1])
    for t in (0, 5, 10):                         # frame t + 1 is frame t moved by the start change
        dy, dx = (starts[t] - starts[t + 1]).tolist()
        a = layers[t][max(0, -dy):h - max(0, dy), max(0, -dx):w - max(0, dx)]
        b = layers[t + 1][max(0, dy):h - max(0, -dy), max(0, dx):w - max(0, -dx)]
        assert np.array_equal(a, b)


def test_snow_falls_down_and_frost_stays_still() -> None:
    snow = pv.draw("snow", 3, 10, seed=1)
    assert np.all(np.diff(snow.drawn["starts"][:, 0]) <= 0)          # window climbs: flakes fall
    assert snow.drawn["starts"][0, 0] - snow.drawn["starts"][-1, 0] >= 9 * 4 * np.sin(np.pi / 4) - 1
    assert np.all(snow.drawn["angles"] == snow.drawn["angles"][0])   # one streak angle per clip
    frost = pv.draw("frost", 3, 10, seed=1)
    assert frost.drawn["starts"].tolist() == [[0, 0]] * 10


def test_spatter_planes_split_the_layer_into_opencv_operands() -> None:
    layer = np.random.default_rng(3).uniform(-5, 260, (6, 7, 4)).astype(np.float32)
    keep, add = spatter_planes(layer)
    assert keep.shape == add.shape == (6, 7, 3) and keep.flags.c_contiguous and add.flags.c_contiguous
    assert np.array_equal(keep, np.repeat(layer[..., :1], 3, axis=2)) and np.array_equal(add, layer[..., 1:])
    water_keep, water_add = spatter_planes(layer, mud=False)
    assert water_keep is None and np.array_equal(water_add, add)


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("mud_severity", [2, 5])                # water, then mud
def test_formed_layers_are_the_planes_of_each_frames_layer_and_composite_alike(
        per_frame: bool, mud_severity: int) -> None:
    d = pv.draw("spatter", mud_severity, 6, seed=9, per_frame=per_frame)
    mud = bool(d.params["mud"])
    ids, h, w = np.array([0, 3, 5]), 31, 45
    plain = frame_layers("spatter", d.drawn, d.params, ids, h, w)
    form = lambda layer: spatter_planes(layer, mud)              # noqa: E731
    formed = frame_layers("spatter", d.drawn, d.params, ids, h, w, form)
    frames = texture(3, h, w)
    for frame, layer, planes in zip(frames, plain, formed):
        assert len(planes) == 2 and (planes[0] is None) == (not mud)
        for got, want in zip(planes, spatter_planes(layer, mud)):
            assert (got is None and want is None) or np.array_equal(got, want)
        want = to_levels(frame.astype(np.float32) * layer[..., :1] + layer[..., 1:])
        assert np.array_equal(composite_spatter(frame, planes, d.params), want)
        assert np.array_equal(composite_spatter(frame, layer, d.params), want)
    if not per_frame:                       # windows of planes formed once for the clip, read-only
        assert formed[0][1].base is formed[1][1].base and not formed[0][1].flags.writeable


# --------------------------------------------------------------------------------- per_frame
@pytest.mark.parametrize("name", NAMES)
def test_per_frame_draws_the_image_recipe_anew_for_every_frame(name: str) -> None:
    d = pv.draw(name, 4, 6, seed=2, per_frame=True)
    assert d.params["per_frame"] is True and d.drawn["starts"].tolist() == [[0, 0]] * 6
    h, w = 24, 28
    layers = frame_layers(name, d.drawn, d.params, np.array([1, 4]), h, w)
    key = int(d.drawn["key"])
    angles = d.drawn.get("angles", np.zeros(6))
    params = {k: v for k, v in d.params.items() if k != "per_frame"}
    for t, layer in zip((1, 4), layers):
        want = LAYERS[name](np.random.default_rng([key, t]), h, w, params, float(angles[t]))
        assert np.array_equal(layer, want)
    assert not np.array_equal(layers[0], layers[1])
    if name == "snow":
        assert len(np.unique(d.drawn["angles"])) == 6      # a streak angle per frame


@pytest.mark.parametrize("name", NAMES)
def test_per_frame_subsets_equal_the_whole_and_backends_agree(name: str) -> None:
    clip = texture(6)
    d = pv.draw(name, 5, 6, seed=3, per_frame=True)
    full = d.render_clip(clip)
    assert np.array_equal(full, pv.apply(clip, name, 5, seed=3, per_frame=True))
    assert np.array_equal(d.render(clip[[1, 4]], [4, 1]), full[[4, 1]])   # src: sorted sources
    got = d.render_clip(torch.from_numpy(clip.copy())).numpy()
    diff = level_diff(got, full)
    assert diff.max() <= 1 and (diff > 0).mean() <= 0.01
    assert not np.array_equal(full, pv.apply(clip, name, 5, seed=3))     # coherent mode differs


def test_per_frame_is_keyword_only_and_checked() -> None:
    clip = texture(2)
    with pytest.raises(ValueError, match="jpeg has no per_frame option; ops that take it: blue_noise_sample, brownish_noise, "
                                         "caustic_refraction, checkerboard_cutout, cocentric_sine_waves, fog, frost"):
        pv.apply(clip, "jpeg", 3, per_frame=True)
    with pytest.raises(ValueError, match="per_frame must be True or False"):
        pv.draw("fog", 3, 4, per_frame="yes")
    with pytest.raises(TypeError):
        pv.apply(clip, "fog", 3, 0, True)                                  # noqa: the option is keyword-only
    p = pv.Perturbation("spatter", 2, seed=5, per_frame=True)
    assert np.array_equal(p(clip), pv.apply(clip, "spatter", 2, seed=5, per_frame=True))
    assert p.draw(2).params["per_frame"] is True


# -------------------------------------------------------------------------------- backends
@pytest.mark.parametrize("severity", [1, 3, 5])
@pytest.mark.parametrize("name", NAMES)
def test_numpy_and_torch_cpu_agree_on_the_sample_clip_and_a_random_texture(name: str, severity: int) -> None:
    for clip in (clip16()[:6], texture()):
        ref = pv.apply(clip, name, severity, seed=11)
        got = pv.apply(torch.from_numpy(clip.copy()), name, severity, seed=11).numpy()
        diff = level_diff(got, ref)
        assert diff.max() <= 1 and (diff > 0).mean() <= 0.01, (diff.max(), (diff > 0).mean())


# ------------------------------------------------------------------------------- composites
def test_composites_on_known_values() -> None:
    frame = np.full((2, 3, 3), 100, np.uint8)
    zero = np.zeros((2, 3), np.float32)
    assert np.all(composite_frost(frame, np.full((2, 3, 3), 50, np.float32),
                                  {"scale": 0.7, "frost": 0.7}) == 105)       # 70 + 35
    white = np.full((2, 3, 3), 255, np.uint8)
    # peak 1: (1 + 0)·1 / (1 + 2) = 1/3 -> 85; a full-strength field: (1 + 2)/3 -> 255
    assert np.all(composite_fog(white, zero, {"strength": 2.0}) == 85)
    assert np.all(composite_fog(white, zero + 1, {"strength": 2.0}) == 255)
    black = np.zeros((2, 3, 3), np.uint8)
    # b·0 + (1 - b)·max(0, 0.5) + flakes 0.2 = 0.4·0.5 + 0.2 = 0.4 -> 102
    assert np.all(composite_snow(black, zero + 0.2, {"blend": 0.6}) == 102)
    mud = np.concatenate([np.full((2, 3, 1), 0.25, np.float32), np.full((2, 3, 3), 30, np.float32)], -1)
    assert np.all(composite_spatter(frame, mud, {}) == 55)                  # 100·0.25 + 30


def test_plasma_is_a_normalised_deterministic_fractal() -> None:
    a = plasma_fractal(np.random.default_rng(0), 64, 2.0, 100.0)
    assert a.shape == (64, 64) and a.dtype == np.float32 and a.min() == 0 and a.max() == 1
    assert np.array_equal(a, plasma_fractal(np.random.default_rng(0), 64, 2.0, 100.0))
    with pytest.raises(ValueError, match="power of two"):
        plasma_fractal(np.random.default_rng(0), 48, 2.0, 100.0)
    smooth = plasma_fractal(np.random.default_rng(1), 64, 3.0, 100.0)      # faster decay: smoother
    rough = plasma_fractal(np.random.default_rng(1), 64, 1.4, 100.0)
    assert np.abs(np.diff(smooth, axis=1)).mean() < np.abs(np.diff(rough, axis=1)).mean()


def test_streak_blur_spreads_a_point_along_the_angle_with_unit_gain() -> None:
    layer = np.zeros((41, 41), np.float32)
    layer[20, 20] = 1
    out = streak_blur(layer, 5, 3, -90.0)                 # taps read rows above: the point smears down
    assert np.isclose(out.sum(), 1, atol=1e-6)
    assert np.all(out[:20] == 0) and out[20:, 20].sum() == pytest.approx(1, abs=1e-6)


def test_frost_texture_is_seeded_bluish_and_textured() -> None:
    a = frost_layer(np.random.default_rng(0), 96, 128, {}, 0.0)
    assert a.shape == (96, 128, 3) and a.dtype == np.float32
    assert np.array_equal(a, frost_layer(np.random.default_rng(0), 96, 128, {}, 0.0))
    assert not np.array_equal(a, frost_layer(np.random.default_rng(1), 96, 128, {}, 0.0))
    means = a.mean(axis=(0, 1))
    assert means[2] > means[0] and 60 < means.mean() < 200 and a.std() > 15


# ----------------------------------------------------------------------------- bad input, misc
@pytest.mark.parametrize("name", NAMES)
def test_input_untouched_and_tiny_or_odd_clips_work(name: str) -> None:
    for shape in [(1, 8, 8, 3), (3, 9, 13, 3), (2, 1, 1, 3)]:
        clip = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
        before = clip.copy()
        for s in (1, 5):
            out = pv.apply(clip, name, s, seed=3)
            assert out.shape == clip.shape and out.dtype == np.uint8
        assert np.array_equal(clip, before)


@pytest.mark.parametrize("name,key,value,match", [
    ("fog", "strength", 0.0, "fog: expected strength > 0"),
    ("snow", "zoom", -1.0, "snow: expected zoom to be a finite number >= 0"),
    ("spatter", "threshold", float("nan"), "spatter: expected threshold to be a finite number"),
    ("frost", "scale", "big", "frost: expected scale to be a finite number"),
])
def test_bad_parameters_raise_value_errors(name: str, key: str, value, match: str) -> None:
    params = dict(pv.get(name).params(3), **{key: value})
    with pytest.raises(ValueError, match=match):
        perturb_clip(pv.get(name), texture(1), np.random.default_rng(0), params)


def test_every_weather_op_is_registered_with_its_catalogue_entry() -> None:
    for name in NAMES:
        spec = pv.get(name)
        assert spec.category == "weather" and spec.random and spec.extra["per_frame"]
        assert "imagecorruptions" in spec.deviation or "reference" in spec.deviation
        assert name in COMPOSITES
    assert pv.get("fog").paper[4]["strength"] == 2.5 and pv.get("fog").severities[4]["strength"] == 2.75


@pytest.mark.parametrize("name", NAMES + ["rain"])
def test_a_render_does_not_depend_on_an_earlier_one_in_the_process(name: str) -> None:
    """The kernels' caches (the clip's layer or streak sheet, its planes, a streak's pixels) are
    keyed by everything that shapes them: per-frame and coherent renders of one clip and seed,
    interleaved, whole or in 64-frame windows of one draw, each give their own first result."""
    clip = np.random.default_rng(1).integers(0, 256, (140, 40, 52, 3), dtype=np.uint8)
    first = {pf: pv.apply(clip, name, 1, seed=3, per_frame=pf) for pf in (True, False)}
    assert not np.array_equal(first[True], first[False])
    for per_frame in (False, True, False, True):
        assert np.array_equal(pv.apply(clip, name, 1, seed=3, per_frame=per_frame), first[per_frame])
        d = pv.draw(name, 1, len(clip), seed=3, per_frame=per_frame)
        windows = [d.render(clip[i:i + 64], np.arange(i, min(i + 64, len(clip)))) for i in range(0, len(clip), 64)]
        assert np.array_equal(np.concatenate(windows), first[per_frame])
