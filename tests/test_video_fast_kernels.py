"""The OpenCV restatements of brightness, contrast, saturate, pixelate, zoom_blur, snow, rain and jpeg
equal straightforward references (the 256x256 tables, plain numpy float32, Pillow, one warp per
factor, the composites step by step)."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image

from perturb.video.kernels import imagenet_c_colour as colour
from perturb.video.kernels import imagenet_c_pixelate as pixelate_module
from perturb.video.kernels import jpeg_mpeg
from perturb.video.kernels.blur import rounded_mean_levels, zoom_blur
from perturb.video.kernels.imagenet_c import blur_levels, render_gaussian_blur
from perturb.video.kernels.imagenet_c_pixelate import (box_gain32, box_pass_plan, box_ranges, box_reduce,
                                                       pixelate_size, render_pixelate, rounded_mean, sum_depth,
                                                       with_zero_row)
from perturb.video.kernels.opencv_frames import centre_zoom_matrix, per_frame_into, scratch, to_uint8
from perturb.video.kernels.rain import composite as rain_composite
from perturb.video.kernels.rain import composite_frames, lift_table, lifted_table, pull_terms
from perturb.video.kernels.weather import GRAY_WEIGHTS, composite_snow, composite_spatter
from perturb.video.sample import sample_clip


def textures() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    dark = rng.integers(0, 4, (2, 16, 16, 3), dtype=np.uint8)                   # black and near-black pixels
    greys = np.repeat(rng.integers(0, 256, (2, 9, 11, 1), dtype=np.uint8), 3, axis=3)
    return [sample_clip(2), rng.integers(0, 256, (3, 37, 53, 3), dtype=np.uint8), dark, greys]


def every_max_and_channel() -> np.ndarray:
    """One frame holding every (max V, channel c <= V) pair: red is V, green and blue are c and c/2."""
    v, c = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    c = np.minimum(c, v)
    return np.stack([v, c, c // 2], axis=-1).astype(np.uint8)[None]


# ----------------------------------------------------------------------------------- brightness
def brightness_reference(frames: np.ndarray, shift: float) -> np.ndarray:
    table = colour.brightness_table(shift)
    return table[frames.max(axis=3, keepdims=True), frames]


@pytest.mark.parametrize("shift", [0.1, 0.2, 0.3, 0.4, 0.5, 0.123, -0.3, 1.0, 0.0])
def test_brightness_equals_its_table_on_every_pair_and_on_textures(shift: float) -> None:
    for frames in [every_max_and_channel(), *textures()]:
        np.testing.assert_array_equal(colour.render_brightness(frames, shift), brightness_reference(frames, shift))


def test_brightness_gains_round_the_tables_ties_both_ways_and_leave_no_misfit() -> None:
    up, down, marks = colour.brightness_gains(0.1)
    assert (up != down).sum() > 100                  # c·V'/V = k + 1/2 happens: both roundings are needed
    assert not marks.any()
    assert colour.brightness_table(0.1)[0, 0] == 26  # black becomes the grey rint(25.5) = 26
    black = np.zeros((1, 2, 2, 3), np.uint8)
    assert (colour.render_brightness(black, 0.1) == 26).all()


# ----------------------------------------------------------------------------------- saturate
def saturate_reference(frames: np.ndarray, factor: float, offset: float) -> np.ndarray:
    scale, grey = colour.saturate_tables(factor, offset)
    v, m = frames.max(axis=3, keepdims=True), frames.min(axis=3, keepdims=True)
    gain = scale[v.astype(np.int64) * 256 + m]
    vf = v.astype(np.float32)
    out = np.rint(vf - (vf - frames) * gain).astype(np.uint8)
    greys = (v == m)[..., 0]
    out[greys, 1:] = grey[v[greys]]
    return out


@pytest.mark.parametrize("factor, offset", [(2, 0), (0.3, 0), (0.1, 0), (5, 0.1), (20, 0.2), (1, 0), (3, -0.5)])
def test_saturate_equals_plain_float32_numpy(factor: float, offset: float) -> None:
    for frames in [every_max_and_channel(), *textures()]:
        np.testing.assert_array_equal(colour.render_saturate(frames, factor, offset),
                                      saturate_reference(frames, factor, offset))


def test_saturate_with_an_offset_tints_greys_red() -> None:
    grey = np.full((1, 1, 1, 3), 200, np.uint8)
    assert colour.render_saturate(grey, 5, 0.1)[0, 0, 0].tolist() == [200, 180, 180]


# ----------------------------------------------------------------------------------- contrast
@pytest.mark.parametrize("factor", [0.4, 0.05, 2.0, 0.0])
def test_contrast_equals_a_lookup_per_frame_and_channel(factor: float) -> None:
    for frames in textures():
        n, h, w, _ = frames.shape
        tables = colour.contrast_tables(frames.reshape(n, -1, 3).sum(axis=1), h * w, factor)
        want = np.stack([tables[t, c][frames[t, ..., c]] for t in range(n) for c in range(3)], axis=-1)
        want = want.reshape(h, w, n, 3).transpose(2, 0, 1, 3)
        np.testing.assert_array_equal(colour.render_contrast(frames, factor), want)


# ----------------------------------------------------------------------------------- pixelate
def pillow_pixelate(frames: np.ndarray, scale: float) -> np.ndarray:
    h, w = frames.shape[1:3]
    small = (pixelate_size(w, scale), pixelate_size(h, scale))
    return np.stack([np.asarray(Image.fromarray(f).resize(small, Image.BOX).resize((w, h), Image.NEAREST))
                     for f in frames])


@pytest.mark.parametrize("scale", [0.6, 0.5, 0.4, 0.3, 0.25, 0.1, 1.0])
def test_pixelate_equals_pillow(scale: float) -> None:
    rng = np.random.default_rng(3)
    for frames in [sample_clip(2), rng.integers(0, 256, (2, 37, 53, 3), dtype=np.uint8),
                   rng.integers(0, 256, (1, 64, 48, 3), dtype=np.uint8)]:
        np.testing.assert_array_equal(render_pixelate(frames, scale), pillow_pixelate(frames, scale))


def test_pixelate_is_pillows_column_pass_then_row_pass_on_tall_frames() -> None:
    """On frames whose height shrinks more than their width, newer Pillow (13) resizes rows first
    and differs by a level; ours stays the reference's columns-then-rows, every Pillow version's
    result of two one-axis BOX resizes."""
    rng = np.random.default_rng(5)
    for h, w, scale in [(249, 9, 0.5), (300, 94, 0.5)]:
        frames = rng.integers(0, 256, (1, h, w, 3), dtype=np.uint8)
        sh, sw = pixelate_size(h, scale), pixelate_size(w, scale)
        columns = Image.fromarray(frames[0]).resize((sw, h), Image.BOX)
        want = np.asarray(columns.resize((sw, sh), Image.BOX).resize((w, h), Image.NEAREST))
        np.testing.assert_array_equal(render_pixelate(frames, scale)[0], want)


def test_pixelate_boxes_too_long_for_16_bit_sums_are_summed_in_float() -> None:
    frames = np.random.default_rng(4).integers(200, 256, (1, 3, 700, 3), dtype=np.uint8)
    assert len(box_pass_plan(700, 1, 3)[0]) * 255 >= 2 ** 16             # a 700-pixel box
    np.testing.assert_array_equal(render_pixelate(frames, 0.0015), pillow_pixelate(frames, 0.0015))


def test_pixelate_takes_frames_wider_than_16_bit_coordinates() -> None:
    frames = np.random.default_rng(6).integers(0, 256, (1, 1, 2 ** 15 + 3, 3), dtype=np.uint8)
    np.testing.assert_array_equal(render_pixelate(frames, 0.5), pillow_pixelate(frames, 0.5))


# ----------------------------------------------------------------------------------- zoom_blur
def zoom_reference(frames: np.ndarray, zooms: tuple[float, float, float]) -> np.ndarray:
    factors = np.arange(*zooms)
    _, h, w, _ = frames.shape
    n = len(factors) + 1
    out = []
    for frame in frames:
        acc = frame.astype(np.uint16)
        for z in factors:
            acc += cv2.warpAffine(frame, centre_zoom_matrix(float(z), w, h), (w, h), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE)
        out.append(((acc + n // 2) // n).astype(np.uint8))
    return np.stack(out)


@pytest.mark.parametrize("zooms", [(1.0, 1.11, 0.01), (1.0, 1.31, 0.03), (1.05, 1.2, 0.05)])
def test_zoom_blur_equals_one_warp_per_factor(zooms: tuple[float, float, float]) -> None:
    rng = np.random.default_rng(5)
    for frames in [sample_clip(2), rng.integers(0, 256, (2, 37, 53, 3), dtype=np.uint8),
                   rng.integers(0, 256, (1, 1, 1, 3), dtype=np.uint8)]:
        np.testing.assert_array_equal(zoom_blur(frames, zooms), zoom_reference(frames, zooms))


# ----------------------------------------------------------------------------------- spatter
@pytest.mark.parametrize("mud", [0, 1])
def test_spatter_composite_equals_float32_numpy_even_at_ties(mud: int) -> None:
    rng = np.random.default_rng(6)
    frame = rng.integers(0, 256, (24, 24, 3), dtype=np.uint8)
    layer = np.empty((24, 24, 4), np.float32)
    layer[..., 0] = rng.uniform(0, 1, (24, 24)) if mud else 1.0
    layer[..., 1:] = rng.uniform(-20, 300, (24, 24, 3))
    layer[:4, :, 1:] = np.float32(0.50000006)            # x + add is a tie in float32, not in double
    want = to_uint8(frame.astype(np.float32) * layer[..., :1] + layer[..., 1:], 1.0)
    np.testing.assert_array_equal(composite_spatter(frame, layer, {"mud": mud}), want)


@pytest.mark.parametrize("shape", [(1, 1, 1, 3), (2, 1, 2, 3), (1, 3, 1, 3)])
def test_tiny_frames_render_as_the_references(shape: tuple[int, ...]) -> None:
    frames = np.random.default_rng(8).integers(0, 256, shape, dtype=np.uint8)
    frames[0, 0, 0] = 0                                                       # a black pixel
    np.testing.assert_array_equal(colour.render_brightness(frames, 0.1), brightness_reference(frames, 0.1))
    np.testing.assert_array_equal(colour.render_saturate(frames, 5, 0.1), saturate_reference(frames, 5, 0.1))
    np.testing.assert_array_equal(render_pixelate(frames, 0.5), pillow_pixelate(frames, 0.5))
    level = np.rint(frames.reshape(len(frames), -1, 3).mean(axis=1))      # one pixel a frame: the mean itself
    if shape[1] * shape[2] == 1:
        assert (colour.render_contrast(frames, 0.4) == level[:, None, None, :]).all()
    np.testing.assert_array_equal(zoom_blur(frames, (1.0, 1.11, 0.01)), zoom_reference(frames, (1.0, 1.11, 0.01)))


# ------------------------------------------------------------------------------ gaussian_blur
@pytest.mark.parametrize("sigma", [0.5, 1, 1.7, 3, 6])
def test_gaussian_blur_rounds_the_float32_filter(sigma: float) -> None:
    rng = np.random.default_rng(9)
    for frames in [sample_clip(2), rng.integers(0, 256, (2, 37, 53, 3), dtype=np.uint8),
                   rng.integers(0, 256, (1, 3, 90, 3), dtype=np.uint8)]:
        want = np.stack([cv2.convertScaleAbs(blur_levels(f, sigma)) for f in frames])
        np.testing.assert_array_equal(render_gaussian_blur(frames, sigma), want)


def test_one_box_pass_equals_box_sums_rounded_in_pillows_fixed_point() -> None:
    image = np.random.default_rng(10).integers(0, 256, (5, 224, 3), dtype=np.uint8)
    for n_out in (134, 112, 89, 56, 17):
        start, stop, weight = box_ranges(224, n_out)
        sums = np.add.reduceat(image.astype(np.int64), start, axis=1)          # boxes partition the row
        want = rounded_mean(sums, weight[None, :, None])
        turned = box_reduce(with_zero_row(image, "test.columns", transpose=True), box_pass_plan(224, n_out, 5))
        np.testing.assert_array_equal(turned.transpose(1, 0, 2), want)


def test_row_box_pass_picks_whole_rows_of_the_image_with_a_zero_row_below() -> None:
    image = np.random.default_rng(11).integers(0, 256, (224, 5, 3), dtype=np.uint8)
    padded = np.concatenate([image, np.zeros((1, 5, 3), np.uint8)])
    for n_out in (134, 89, 17, 1):
        start, _, weight = box_ranges(224, n_out)
        sums = np.add.reduceat(image.astype(np.int64), start, axis=0)
        out = np.full((n_out, 5, 3), 7, np.uint8)
        box_reduce(padded, box_pass_plan(224, n_out, 5), out)               # written into ``out``
        np.testing.assert_array_equal(out, rounded_mean(sums, weight[:, None, None]))


# ------------------------------------------------------------------------------------- snow
def snow_reference(frame: np.ndarray, layer: np.ndarray, blend: float) -> np.ndarray:
    """The greyed-bright blend and the flakes in plain numpy float32, rounded to nearest."""
    x = frame.astype(np.float32) / np.float32(255)
    b = np.float32(blend)
    lifted = (x @ GRAY_WEIGHTS)[..., None] * np.float32(1.5) + np.float32(0.5)
    return to_uint8(b * x + (1 - b) * np.maximum(x, lifted) + layer[..., None])


@pytest.mark.parametrize("blend", [0.7, 0.8, 0.55])
def test_snow_composite_equals_float32_numpy_in_windows_of_a_layer(blend: float) -> None:
    rng = np.random.default_rng(11)
    big = rng.integers(0, 511, (70, 90)).astype(np.float32) / np.float32(255)     # flakes: k/255, up to 2
    big[:5] = 0                                                                     # no flakes
    for frame in [sample_clip(1)[0, :48, :64], rng.integers(0, 256, (48, 64, 3), dtype=np.uint8),
                  np.full((48, 64, 3), 255, np.uint8), np.zeros((48, 64, 3), np.uint8)]:
        for y, x in [(0, 0), (7, 19), (22, 26)]:                                   # non-contiguous windows
            layer = big[y:y + 48, x:x + 64]
            want = snow_reference(frame, layer, blend)
            np.testing.assert_array_equal(composite_snow(frame, layer, {"blend": blend}), want)
            dst = np.zeros_like(frame)
            assert composite_snow(frame, layer, {"blend": blend}, dst) is dst
            np.testing.assert_array_equal(dst, want)


# ------------------------------------------------------------------------------------- rain
def rain_reference(frame: np.ndarray, mask: np.ndarray, darken: float) -> np.ndarray:
    """Rain's composite step by step in numpy: the lift under the streaks, the 3x3 box blur, the
    integer blend I = 35·x + 220·chosen, then I·a + b in float32, rounded to nearest."""
    x = frame.astype(np.int64)
    on = mask.astype(bool)[..., None]
    lift = lift_table(float(x.sum()), x.size)[frame]
    lifted = np.where(on, np.minimum(x + lift, 255), x).astype(np.uint8)
    chosen = np.where(on, cv2.blur(lifted, (3, 3)), x)
    blend = (35 * x + 220 * chosen).astype(np.float32)
    a, b = pull_terms(blend.reshape(-1, 3).sum(axis=0, dtype=np.float64), mask.size, darken)
    return to_uint8(blend * a + b, 1.0)


@pytest.mark.parametrize("darken", [0.8, 0.7, 0.5])
def test_rain_composite_equals_the_steps_in_numpy(darken: float) -> None:
    rng = np.random.default_rng(12)
    for frame in [sample_clip(1)[0, :40, :56], rng.integers(0, 256, (40, 56, 3), dtype=np.uint8),
                  np.full((40, 56, 3), 255, np.uint8)]:
        for density in (0.0, 0.1, 0.5):
            mask = (rng.random((40, 56)) < density).astype(np.uint8)
            want = rain_reference(frame, mask, darken)
            np.testing.assert_array_equal(rain_composite(frame, mask, darken), want)
            dst = np.zeros_like(frame)
            assert rain_composite(frame, mask, darken, dst) is dst
            np.testing.assert_array_equal(dst, want)


def test_rain_composite_edge_cases_equal_the_steps_in_numpy() -> None:
    """No streaks, all streaks, 1x1 and odd-sized frames, a dark frame (lift near 220) and a white one."""
    rng = np.random.default_rng(3)
    frames = [rng.integers(0, 256, (1, 1, 3), dtype=np.uint8), rng.integers(0, 256, (37, 53, 3), dtype=np.uint8),
              rng.integers(0, 256, (2, 3, 3), dtype=np.uint8), np.zeros((5, 7, 3), np.uint8),
              np.full((6, 4, 3), 255, np.uint8)]
    for frame in frames:
        h, w, _ = frame.shape
        for mask in (np.zeros((h, w), np.uint8), np.ones((h, w), np.uint8), rng.random((h, w)) < 0.3):
            np.testing.assert_array_equal(rain_composite(frame, mask, 0.6), rain_reference(frame, mask, 0.6))


def test_rain_frames_composited_together_equal_each_alone() -> None:
    """composite_frames (per-frame tables and terms computed for the group) against composite."""
    rng = np.random.default_rng(4)
    frames = np.concatenate([sample_clip(3)[:, :40, :56], rng.integers(0, 256, (2, 40, 56, 3), dtype=np.uint8)])
    masks = rng.random(frames.shape[:3]) < np.array([0.0, 0.05, 0.3, 1.0, 0.5])[:, None, None]
    out = np.zeros_like(frames)
    composite_frames(frames, [np.equal(m, 0).view(np.uint8) for m in masks], 0.7, out)
    for frame, mask, got in zip(frames, masks, out):
        np.testing.assert_array_equal(got, rain_reference(frame, mask, 0.7))


def test_rain_tables_for_many_frames_equal_the_tables_one_by_one() -> None:
    sums = np.array([0, 1234567, 255 * 150528, 99])
    np.testing.assert_array_equal(lift_table(sums, 150528), np.stack([lift_table(float(s), 150528) for s in sums]))
    plus = lifted_table(sums, 150528)
    np.testing.assert_array_equal(plus, np.minimum(np.arange(256) + lift_table(sums, 150528).astype(int), 255))
    assert lifted_table(0.0, 3).shape == (256,) and lifted_table(0.0, 3)[0] == 220


# ------------------------------------------------------------------------------------- jpeg
@pytest.mark.parametrize("rgb_decode", [True, False])
def test_jpeg_equals_an_opencv_round_trip_in_bgr(rgb_decode: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not rgb_decode:
        monkeypatch.setattr(jpeg_mpeg, "DECODE_RGB", None)          # OpenCV without IMREAD_COLOR_RGB
    elif jpeg_mpeg.DECODE_RGB is None:
        pytest.skip("this OpenCV has no IMREAD_COLOR_RGB")
    frames = np.concatenate([sample_clip(2)[:, :40, :48],
                             np.random.default_rng(13).integers(0, 256, (1, 40, 48, 3), dtype=np.uint8)])
    for quality in (10, 60):
        want = np.stack([cv2.cvtColor(cv2.imdecode(cv2.imencode(".jpg", cv2.cvtColor(f, cv2.COLOR_RGB2BGR),
                                                                [int(cv2.IMWRITE_JPEG_QUALITY), quality])[1],
                                                   cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB) for f in frames])
        np.testing.assert_array_equal(jpeg_mpeg.jpeg(frames, quality), want)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 10, 37])
def test_pixelate_float32_gains_round_every_box_sum_as_pillows_fixed_point(count: int) -> None:
    _, _, weight = box_ranges(count * 7, 7)                           # boxes of `count` pixels
    gain = box_gain32(count, int(weight[0]), sum_depth(count))
    assert gain is not None and gain.dtype == np.float32
    sums = np.arange(255 * count + 1)
    held = sums.astype(np.uint8 if count == 1 else np.uint16)[:, None]
    got = cv2.multiply(held, np.full(held.shape, gain, np.float32), dtype=cv2.CV_8U)[:, 0]
    np.testing.assert_array_equal(got, rounded_mean(sums, weight[:1]))


def test_pixelate_without_float32_gains_still_equals_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pixelate_module, "box_gain32", lambda *args: None)       # the float64 gains
    box_pass_plan.cache_clear()
    try:
        frames = np.random.default_rng(14).integers(0, 256, (2, 37, 53, 3), dtype=np.uint8)
        for scale in (0.6, 0.4, 0.25):
            assert box_pass_plan(53, pixelate_size(53, scale), 37)[1].dtype == np.float64
            np.testing.assert_array_equal(render_pixelate(frames, scale), pillow_pixelate(frames, scale))
    finally:
        monkeypatch.undo()
        box_pass_plan.cache_clear()                                          # plans with float32 gains again
    assert box_pass_plan(224, 134, 224)[1].dtype == np.float32


def test_zoom_blur_rounded_mean_equals_integer_division_on_every_sum() -> None:
    for n in range(1, 258):
        sums = np.arange(255 * n + 1, dtype=np.uint16)[:, None]
        want = ((sums.astype(np.int64) + n // 2) // n).astype(np.uint8)
        np.testing.assert_array_equal(rounded_mean_levels(sums, n), want)


# ------------------------------------------------------------------------------ plumbing
def test_scratch_buffers_are_kept_per_name_shape_and_thread() -> None:
    from concurrent.futures import ThreadPoolExecutor

    a = scratch("test.a", (4, 5), np.float32)
    assert scratch("test.a", (4, 5), np.float32) is a
    assert scratch("test.b", (4, 5), np.float32) is not a
    b = scratch("test.a", (4, 6), np.float32)
    assert b.shape == (4, 6) and b is not a and scratch("test.a", (4, 6), np.uint8).dtype == np.uint8
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(scratch, "test.a", (4, 6), np.uint8).result()
    assert other is not scratch("test.a", (4, 6), np.uint8)


def test_per_frame_into_fills_every_frame_in_place() -> None:
    clip = np.random.default_rng(15).integers(0, 256, (7, 5, 6, 3), dtype=np.uint8)

    def invert(frame: np.ndarray, t: int, dst: np.ndarray) -> None:
        np.subtract(255 - t, frame, out=dst, casting="unsafe")

    want = np.stack([(255 - t - clip[t].astype(int)) % 256 for t in range(7)]).astype(np.uint8)
    np.testing.assert_array_equal(per_frame_into(clip, invert), want)
