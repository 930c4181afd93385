"""The OpenCV restatements of brightness, contrast, saturate, pixelate and zoom_blur equal
straightforward references (the 256x256 tables, plain numpy float32, Pillow, one warp per factor)."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image

from perturb.video.kernels import imagenet_c_colour as colour
from perturb.video.kernels.blur import zoom_blur
from perturb.video.kernels.imagenet_c import blur_levels, render_gaussian_blur
from perturb.video.kernels.imagenet_c_pixelate import (box_pass_plan, box_ranges, box_reduce, pixelate_size, render_pixelate,
                                               rounded_mean)
from perturb.video.kernels.opencv_frames import centre_zoom_matrix, to_uint8
from perturb.video.kernels.weather import composite_spatter
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


def test_pixelate_boxes_too_long_for_16_bit_sums_are_summed_in_float() -> None:
    frames = np.random.default_rng(4).integers(200, 256, (1, 3, 700, 3), dtype=np.uint8)
    assert len(box_pass_plan(700, 1, 3, 1)[0]) * 255 >= 2 ** 16             # a 700-pixel box
    np.testing.assert_array_equal(render_pixelate(frames, 0.0015), pillow_pixelate(frames, 0.0015))


def test_pixelate_refuses_frames_beyond_remap_coordinates() -> None:
    with pytest.raises(ValueError, match="under 32768 pixels"):
        render_pixelate(np.zeros((1, 1, 2 ** 15, 3), np.uint8), 0.5)


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
        np.testing.assert_array_equal(zoom_blur(frames, None, zooms), zoom_reference(frames, zooms))


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
    np.testing.assert_array_equal(zoom_blur(frames, None, (1.0, 1.11, 0.01)), zoom_reference(frames, (1.0, 1.11, 0.01)))


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
        np.testing.assert_array_equal(box_reduce(image, box_pass_plan(224, n_out, 5, 1)), want)
