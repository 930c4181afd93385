"""The ImageNet-C weather ops: fog, frost, snow, spatter."""
from __future__ import annotations

import numpy as np
import pytest

import perturb
from perturb.video.psnr import psnr
from perturb.video.sample import sample_clip
from perturb.video.weather import WEATHER_OPS, check_params
from perturb.video.weather_layers import FROST_MEAN, FROST_STD, frost_layer, plasma

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return sample_clip()


def texture(frames: int = 6, h: int = 48, w: int = 64) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, size=(frames, h, w, 3), dtype=np.uint8)


def mean_psnr(clip: np.ndarray, op: str, severity: int, seeds=(0,)) -> float:
    return float(np.mean([psnr(perturb.video.apply(clip, op, severity, seed=s), clip) for s in seeds]))


@pytest.mark.parametrize("op", ["fog", "frost", "spatter"])
def test_damage_grows_with_severity(clip, op):
    levels = [mean_psnr(clip, op, s) for s in range(1, 6)]
    assert all(a > b for a, b in zip(levels, levels[1:])), levels


def test_snow_damage_grows_with_severity_over_three_draws(clip):
    # levels 2 and 3 do about equal damage; their order varies with the draw (see the catalogue)
    levels = [mean_psnr(clip, "snow", s, seeds=(0, 1, 2)) for s in range(1, 6)]
    assert all(a > b for a, b in zip(levels, levels[1:])), levels


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("op", WEATHER_OPS)
def test_numpy_and_torch_cpu_render_the_same_pixels(clip, op, per_frame):
    for frames in (clip[:8], texture()):
        for severity in (1, 3, 5):
            ours = perturb.video.apply(frames, op, severity, seed=3, per_frame=per_frame)
            theirs = perturb.video.apply(torch.from_numpy(frames.copy()), op, severity, seed=3, per_frame=per_frame)
            np.testing.assert_array_equal(theirs.numpy(), ours)


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("op", WEATHER_OPS)
def test_any_frame_renders_alone_as_in_the_whole_clip(op, per_frame):
    frames = texture(frames=9)
    whole = perturb.video.apply(frames, op, 4, seed=11, per_frame=per_frame)
    d = perturb.video.draw(op, 4, len(frames), seed=11, per_frame=per_frame)
    for subset in ([0], [8], [2, 5], [7, 1]):
        out = d.render(frames[d.source_indices(subset)], subset)
        np.testing.assert_array_equal(out, whole[subset])


@pytest.mark.parametrize("op", ["frost", "spatter"])
def test_frost_and_spatter_stay_put_unless_per_frame(op):
    grey = np.full((5, 40, 56, 3), 120, np.uint8)
    still = perturb.video.apply(grey, op, 5, seed=0)
    assert all(np.array_equal(still[0], f) for f in still[1:])
    moving = perturb.video.apply(grey, op, 5, seed=0, per_frame=True)
    assert not np.array_equal(moving[0], moving[1])


def test_fog_drifts_and_snow_falls_by_whole_pixels():
    grey = np.full((3, 64, 64, 3), 100, np.uint8)
    d = perturb.video.draw("snow", 3, 3, seed=1)
    dy, dx = d.drawn["shift"][2] - d.drawn["shift"][1]
    assert dy >= 1                                     # down the frame
    out = d.render_clip(grey)
    np.testing.assert_array_equal(np.roll(out[1], (int(dy), int(dx)), axis=(0, 1)), out[2])
    fog = perturb.video.draw("fog", 3, 40, seed=1).drawn["shift"]
    step = np.hypot(*(fog[-1] - fog[0]).T) / 39
    assert 0.4 <= step <= 1.6


def test_same_seed_same_output_and_input_untouched(clip):
    frames = clip[:4].copy()
    for op in WEATHER_OPS:
        a = perturb.video.apply(frames, op, 3, seed=5)
        np.testing.assert_array_equal(frames, clip[:4])
        np.testing.assert_array_equal(a, perturb.video.apply(frames, op, 3, seed=5))
        assert not np.array_equal(a, perturb.video.apply(frames, op, 3, seed=6))


def test_frost_texture_has_the_reference_photographs_statistics():
    layer = frost_layer(np.random.default_rng(0), 224, 224, {}) * 255
    np.testing.assert_allclose(layer.reshape(-1, 3).mean(0), FROST_MEAN, atol=2.0)
    np.testing.assert_allclose(layer.reshape(-1, 3).std(0), FROST_STD, atol=2.0)


def test_plasma_is_periodic_and_spans_zero_to_one():
    p = plasma(np.random.default_rng(0), 64, 2.0)
    assert p.min() == 0 and p.max() == 1
    inner = np.abs(np.diff(p, axis=0)).mean()
    seam = np.abs(p[0] - p[-1]).mean()               # rows 63 -> 0 are neighbours too
    assert seam < 3 * inner


def test_per_frame_is_refused_where_it_means_nothing():
    frames = texture(frames=2)
    with pytest.raises(ValueError, match="per_frame=True applies to ops that draw one layer"):
        perturb.video.apply(frames, "jpeg", 3, per_frame=True)
    with pytest.raises(ValueError, match="per_frame to be True or False"):
        perturb.video.apply(frames, "fog", 3, per_frame="yes")


@pytest.mark.parametrize("op, params, message", [
    ("fog", {"strength": -1, "decay": 2}, "strength"),
    ("fog", {"strength": 1}, "'decay'"),
    ("snow", {"loc": 0.1, "scale": 0.3, "zoom": 3, "threshold": 0.5, "radius": 10, "sigma": 4,
              "blend": 1.5}, "blend"),
    ("spatter", {"loc": 0.6, "scale": 0.3, "sigma": 4, "threshold": 0.6, "intensity": 0.5, "mud": 0.5},
     "mud"),
    ("frost", {"image": float("nan"), "frost": 0.4}, "image"),
])
def test_bad_parameters_are_refused_by_name(op, params, message):
    with pytest.raises(ValueError, match=message):
        check_params(op, params)


def test_catalogue_entries_and_gallery_rows():
    for op in WEATHER_OPS:
        spec = perturb.video.get(op)
        assert spec.category == "weather" and "imagecorruptions 1.1.2" in spec.deviation
    assert perturb.video.get("frost").paper is not None          # the source's level order
