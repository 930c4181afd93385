"""ImageNet-C-bar's texture ops: fields on known inputs, the reference's parameters, draws,
coherence over a clip, per_frame, subsets, tiny frames, numpy against torch."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

import perturb.video as pv
from perturb.video.kernels import cbar_fields as fields
from perturb.video.kernels.cbar_texture import LAYERS
from perturb.video.kernels.reference_forms import reference_params
from perturb.video.render import Draw, perturb_clip
from perturb.video.sample import sample_clip

NAMES = ["single_frequency_greyscale", "cocentric_sine_waves", "plasma_noise", "perlin_noise", "brownish_noise",
         "blue_noise_sample"]
# imagenet_c_bar.csv of the reference: each op's five severities on its 1-10 scale
LEVELS = {"single_frequency_greyscale": (1.0, 1.5, 2.0, 4.5, 5.0), "cocentric_sine_waves": (3.0, 5.0, 8.0, 9.0, 10.0),
          "plasma_noise": (4.75, 7.0, 8.5, 9.25, 10.0), "perlin_noise": (4.6, 5.2, 5.8, 7.6, 8.8),
          "brownish_noise": (1.0, 2.0, 3.0, 4.0, 5.0), "blue_noise_sample": (0.8, 1.6, 2.4, 4.0, 5.6)}


@lru_cache(maxsize=1)
def clip8() -> np.ndarray:
    c = np.ascontiguousarray(sample_clip(8)[:, ::2, ::2])          # 8 x 112 x 112, real content
    c.setflags(write=False)
    return c


def grey(t: int, h: int, w: int, level: int = 100) -> np.ndarray:
    return np.full((t, h, w, 3), level, np.uint8)


def changed(out: np.ndarray, clip: np.ndarray) -> float:
    return float(np.abs(out.astype(np.int16) - clip.astype(np.int16)).mean())


def draw_of(name: str, drawn: dict, severity: int = 1, n_frames: int = 1) -> Draw:
    params = pv.get(name).params(severity)
    return Draw(name, severity, n_frames, params, {k: np.asarray(v) for k, v in drawn.items()})


# ------------------------------------------------------------------------ known outputs
def test_single_frequency_at_phase_zero_is_a_quarter_period_grating() -> None:
    """freq (pi/2, 0), phase 0: sin(x·pi/2) = 0, 1, 0, -1 along a row, the same in every row;
    severity 1 adds 19.6 levels times that to every channel (rounded)."""
    d = draw_of("single_frequency_greyscale", {"freq": [[np.pi / 2, 0.0]], "phase": [0.0]})
    out = d.render(grey(1, 3, 6))
    assert out[0, :, :, 0].tolist() == [[100, 120, 100, 80, 100, 120]] * 3
    assert np.array_equal(out[..., 0], out[..., 2])
    turned = draw_of("single_frequency_greyscale", {"freq": [[0.0, np.pi / 2]], "phase": [0.0]})
    assert turned.render(grey(1, 6, 3))[0, :, 0, 1].tolist() == [100, 120, 100, 80, 100, 120]


def test_cocentric_rings_centre_x_by_width_y_by_height() -> None:
    """freq 0 (no wobble), ring width 0.8 x side 5 = 4 px, centre (x, y) = (0, 0.2·5 = 1): row 1
    reads distances 0..4 mod 4 / 4 - 1/2 = -1/2, -1/4, 0, 1/4, -1/2, times 38.4 (severity 1)."""
    d = draw_of("cocentric_sine_waves", {"offset": [[0.0, 0.2]], "freq": [0.0], "amplitude": [0.05],
                                         "ring_width": [0.8]})
    out = d.render(grey(1, 5, 5))[0, :, :, 0]
    assert out[1].tolist() == [81, 90, 100, 110, 81]
    assert out[:, 0].tolist() == [90, 81, 90, 100, 110]


def test_cocentric_rings_equal_the_formula_pixel_by_pixel() -> None:
    """Angle atan2(x - x0, y - y0) (x first, as the reference), on a frame that is not square."""
    h, w, x0, y0, freq, amp, ring = 6, 9, 2.5, 4.25, 3.7, 1.3, 2.2
    got = fields.cocentric_rings(h, w, x0, y0, freq, amp, ring)
    for y in range(h):
        for x in range(w):
            r = math.hypot(x - x0, y - y0) + math.sin(math.atan2(x - x0, y - y0) * freq) * amp
            assert got[y, x] == pytest.approx((r % ring) / ring - 0.5, abs=1e-12)
    assert not fields.cocentric_rings(3, 3, 1, 1, 2.0, 1.0, 0.0).any()


def test_plasma_equals_the_iteration_pixel_by_pixel() -> None:
    """Each pixel's point (x, y) / scale flows ``iterations`` steps; channels r, g, b."""
    h, w, time, iters, sharp, scale = 4, 7, 5.1, 5, 0.7, 3.3
    got = fields.plasma(h, w, time, iters, sharp, scale)
    assert got.shape == (h, w, 3)
    for y in range(h):
        for x in range(w):
            px, py, freq, speed, damp, shift = x / scale, y / scale, 1.0, 1.0, 1.0, 0.0
            for _ in range(iters):
                dx = math.cos(py * freq - shift + time / speed) / damp
                dy = math.sin(px * freq - shift + time / speed) / damp
                px, py = px + dx - 0.3 * dy, py + dy + 0.3 * dx
                freq, speed, damp, shift = freq * 1.93, speed * 1.15, damp * (2.25 - sharp), shift * time * speed
            want = [math.sin(px - time), math.sin((px + py + math.sin(time)) * 0.5), math.sin(py + time)]
            assert got[y, x].tolist() == pytest.approx(want, abs=1e-9)


# Values of the reference code (augmentation-corruption ba4d5a5) at these seeds and sizes.
def test_perlin_tables_and_turbulence_equal_the_references() -> None:
    p, g = fields.perlin_tables(123)
    assert p[:8].tolist() == [88, 146, 204, 167, 250, 123, 124, 77]
    assert g[:2].ravel().tolist() == pytest.approx([0.9189577912635082, 0.3943559025500881,
                                                    0.8858315352801553, 0.46400699467055756], abs=1e-15)
    assert sorted(p[:256].tolist()) == list(range(256)) and np.array_equal(p[256:512], p[:256])
    assert np.array_equal(p[512:], p[:2]) and np.allclose(np.linalg.norm(g, axis=1), 1)
    turbulence = fields.perlin_turbulence(20, 20, 123, 32 * 20 / 224)     # rows first: (y, x)
    got = [turbulence[y, x] for y, x in [(0, 0), (3, 7), (10, 2), (19, 17)]]
    assert got == pytest.approx([0.0, 0.4125881692, 0.7089566602, 0.7778550284], abs=1e-9)


def test_perlin_at_the_origin_blends_mid_grey() -> None:
    """The noise is 0 on lattice points, so pixel (0, 0) gets 0.77·100 + 0.23·255·0.5 = 106.3."""
    out = pv.apply(grey(1, 4, 4), "perlin_noise", 1, seed=0)
    assert out[0, 0, 0].tolist() == [106, 106, 106]


def test_fft_noises_equal_the_references_on_odd_and_even_squares() -> None:
    assert fields.brownish_noise(5, 5, 7)[1, :, 0] == pytest.approx(
        [-0.0093511182, -0.8086686123, -1.7320779067, 0.6612894113, 0.8965924259], abs=1e-9)
    assert fields.brownish_noise(6, 6, 7)[1, :, 0] == pytest.approx(
        [-0.217736086, -0.1597650371, -0.915498697, -0.9045799411, -0.5826431751, 1.2536447981], abs=1e-9)
    assert fields.blue_noise(5, 5, 7)[2] == pytest.approx(
        [-0.6666252061, 0.7334901089, -0.5861072607, 1.0332463773, -0.5085855978], abs=1e-9)
    assert fields.blue_noise(6, 6, 7)[2] == pytest.approx(
        [-0.1553740104, -1.5484024526, -0.8162651747, 0.0273743384, 0.6218339462, 0.1380133856], abs=1e-9)


def test_fft_noise_has_unit_spread_on_any_size_and_is_zero_without_one() -> None:
    for h, w in [(7, 4), (4, 7), (1, 7), (2, 1), (3, 5)]:
        field = fields.blue_noise(h, w, 3)
        assert field.shape == (h, w) and np.std(field) == pytest.approx(1.0)
    assert fields.blue_noise(1, 1, 3).tolist() == [[0.0]]
    assert fields.brownish_noise(1, 1, 3).tolist() == [[[0.0, 0.0, 0.0]]]
    channels = fields.brownish_noise(8, 8, 3)
    assert not np.allclose(channels[..., 0], channels[..., 1])


def test_blue_noise_sample_blackens_exactly_the_pixels_at_or_below_the_threshold() -> None:
    clip = np.ascontiguousarray(clip8()[:2, :40, :50])
    d = pv.draw("blue_noise_sample", 5, 2, seed=6)
    out = d.render(clip)
    black = fields.blue_noise(40, 50, int(d.drawn["seed"][0])) <= -0.82
    assert np.array_equal(out[:, black], np.zeros_like(out[:, black]))
    assert np.array_equal(out[:, ~black], clip[:, ~black])
    assert 0.1 < black.mean() < 0.35


# ----------------------------------------------------------------- the reference's terms
def test_single_frequency_reference_form_names_the_draw() -> None:
    d = draw_of("single_frequency_greyscale", {"freq": [[0.5, -0.25], [1.0, 2.0]], "phase": [1.0, 2.0]}, 4, 2)
    kw = reference_params("single_frequency_greyscale", d.drawn, d.params, 1, 64)
    assert sorted(kw) == ["freq", "intensity", "phase"]
    assert kw["freq"].tolist() == [1.0, 2.0] and kw["phase"] == 2.0 and kw["intensity"] == 88.2


def test_single_frequency_draws_follow_the_reference() -> None:
    """|freq| of one component ~ U(0, pi); the other within it; each order half the time."""
    d = pv.draw("single_frequency_greyscale", 1, 4000, seed=0, per_frame=True)
    freq = d.drawn["freq"]
    big = np.abs(freq).max(axis=1)
    assert freq.shape == (4000, 2) and big.max() <= np.pi
    assert 0.45 < (np.abs(freq[:, 0]) >= np.abs(freq[:, 1])).mean() < 0.55
    assert abs(big.mean() - np.pi / 2) < 0.05
    assert 0 <= d.drawn["phase"].min() and d.drawn["phase"].max() < 2 * np.pi


# ------------------------------------------------------------------------- every op
@pytest.mark.parametrize("name", NAMES)
def test_damage_grows_with_severity_on_the_sample_clip(name: str) -> None:
    damage = [changed(pv.apply(clip8(), name, s, seed=2), clip8()) for s in range(1, 6)]
    assert all(a < b for a, b in zip(damage, damage[1:])), damage


@pytest.mark.parametrize("name", NAMES)
def test_one_draw_per_clip_unless_per_frame(name: str) -> None:
    clip = grey(4, 20, 24)
    out = pv.apply(clip, name, 5, seed=1)
    assert out.shape == clip.shape and out.dtype == np.uint8 and not np.array_equal(out, clip)
    assert all(np.array_equal(out[0], frame) for frame in out[1:])
    fresh = pv.apply(clip, name, 5, seed=1, per_frame=True)
    assert not any(np.array_equal(fresh[0], frame) for frame in fresh[1:])
    assert np.array_equal(pv.apply(clip, name, 5, seed=1), out)
    assert not np.array_equal(pv.apply(clip, name, 5, seed=2), out)


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_a_subset_renders_as_in_the_whole_clip(name: str, per_frame: bool) -> None:
    d = pv.draw(name, 3, 8, seed=5, per_frame=per_frame)
    whole = d.render(clip8())
    picked = np.array([6, 1, 3])
    assert np.array_equal(d.render(clip8()[np.sort(picked)], np.sort(picked)), whole[np.sort(picked)])
    assert np.array_equal(d.render_clip(clip8(), picked), whole[picked])


@pytest.mark.parametrize("name", NAMES)
def test_tiny_odd_and_long_frames(name: str) -> None:
    for shape in [(2, 1, 1, 3), (2, 1, 7, 3), (2, 3, 5, 3), (2, 4000, 16, 3), (3, 16, 1, 3)]:
        clip = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
        before = clip.copy()
        for severity in (1, 5):
            for per_frame in (False, True):
                out = pv.apply(clip, name, severity, seed=3, per_frame=per_frame)
                assert out.shape == clip.shape and out.dtype == np.uint8
        assert np.array_equal(clip, before)


@pytest.mark.parametrize("name", NAMES)
def test_layers_are_finite_on_tiny_frames(name: str) -> None:
    d = pv.draw(name, 5, 1, seed=4)
    for h, w in [(1, 1), (1, 2), (2, 1), (1, 7), (3, 5), (4000, 16)]:
        row = {k: (v[0].item() if v[0].ndim == 0 else v[0]) for k, v in d.drawn.items()}
        for part in LAYERS[name](row, d.params, h, w):
            assert part is None or np.isfinite(part).all()


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_torch_renders_within_one_level_of_numpy(name: str, per_frame: bool, torch_kernels_on_cpu) -> None:
    torch = pytest.importorskip("torch")
    for severity in (1, 3, 5):
        ours = pv.apply(torch.from_numpy(clip8().copy()), name, severity, seed=9, per_frame=per_frame).numpy()
        ref = pv.apply(clip8(), name, severity, seed=9, per_frame=per_frame)
        assert np.abs(ours.astype(np.int16) - ref.astype(np.int16)).max() <= 1


@pytest.mark.parametrize("name", NAMES)
def test_registered_with_its_source_and_the_references_levels(name: str) -> None:
    spec = pv.get(name)
    assert spec.category == "texture" and spec.extra["per_frame"] and spec.random
    assert "augmentation-corruption imagenet_c_bar/corrupt.py" in spec.deviation
    assert tuple(spec.params(s)["level"] for s in range(1, 6)) == LEVELS[name]


def test_reference_forms_give_lengths_in_pixels_of_the_side() -> None:
    d = draw_of("cocentric_sine_waves", {"offset": [[0.25, 0.5]], "freq": [3.0], "amplitude": [0.05],
                                         "ring_width": [0.08]}, 2)
    kw = reference_params("cocentric_sine_waves", d.drawn, d.params, 0, 200)
    assert kw["offset"].tolist() == [50.0, 100.0] and kw["freq"] == 3.0
    assert kw["amplitude"] == pytest.approx(10.0) and kw["ring_width"] == pytest.approx(16.0)
    assert kw["intensity"] == [64.0] * 3
    d = draw_of("plasma_noise", {"time": [1.0], "iterations": [5], "sharpness": [0.6], "scale": [0.1]}, 5)
    assert reference_params("plasma_noise", d.drawn, d.params, 0, 224) == {
        "time": 1.0, "iterations": 5, "sharpness": 0.6, "scale": pytest.approx(22.4), "intensity": 64.0}
    d = draw_of("perlin_noise", {"seed": [2 ** 32 - 1]}, 5)
    kw = reference_params("perlin_noise", d.drawn, d.params, 0, 112)
    assert kw.pop("m").tolist() == [[1 / 16, 0], [0, 1 / 16]]
    assert kw == {"turbulence": 16.0, "seed": 2 ** 32 - 1, "gain": 0.5, "bias": 0.5, "alpha": 0.44}
    for name, key, value in [("brownish_noise", "intensity", 32.0), ("blue_noise_sample", "threshold", -0.82)]:
        d = draw_of(name, {"seed": [17]}, 5)
        assert reference_params(name, d.drawn, d.params, 0, 64) == {"seed": 17, key: value}


@pytest.mark.parametrize("name,key,value", [
    ("single_frequency_greyscale", "intensity", -1.0),
    ("single_frequency_greyscale", "intensity", float("nan")),
    ("cocentric_sine_waves", "intensity", "strong"),
    ("plasma_noise", "intensity", 300.0),
    ("perlin_noise", "alpha", 1.5),
    ("brownish_noise", "intensity", float("inf")),
    ("blue_noise_sample", "threshold", None),
])
def test_bad_parameters_name_what_was_expected(name: str, key: str, value: float) -> None:
    params = dict(pv.get(name).params(3), **{key: value})
    with pytest.raises(ValueError, match=f"^{name}: expected {key} to be a finite number in "):
        perturb_clip(pv.get(name), grey(1, 4, 4), np.random.default_rng(0), params)


@pytest.mark.parametrize("name", NAMES)
def test_a_thousand_frames_one_draw_or_one_each(name: str) -> None:
    clip = np.random.default_rng(1).integers(0, 256, (1000, 2, 3, 3), dtype=np.uint8)
    for per_frame in (False, True):
        d = pv.draw(name, 4, 1000, seed=8, per_frame=per_frame)
        assert all(v.shape[0] == 1000 for v in d.drawn.values())
        out = d.render(clip)
        assert out.shape == clip.shape and out.dtype == np.uint8
        assert np.array_equal(d.render(clip[[999]], [999]), out[[999]])
