"""ImageNet-C's spatial and colour ops: severity order, backends, per-clip draws, the reference's semantics."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import torch
from PIL import Image
from scipy import ndimage
from skimage import color

import perturb.video as pv
from perturb.registry import REGISTRY
from perturb.video.kernels.imagenet_c import elastic_field, glass_sources
from perturb.video.kernels.imagenet_c_pixelate import box_ranges
from perturb.video.psnr import mean_psnr
from perturb.video.render import perturb_clip
from perturb.video.sample import sample_clip
from perturb.video.severity_params import PAPER_PARAMS, table

OPS = ["gaussian_blur", "glass_blur", "pixelate", "elastic_transform", "brightness", "contrast", "saturate"]
INTERPOLATING = {"gaussian_blur", "glass_blur", "elastic_transform"}
SEVERITIES = [1, 2, 3, 4, 5]


@lru_cache(maxsize=None)
def output(name: str, severity: int, frames: int = 16) -> np.ndarray:
    out = pv.apply(sample_clip(frames), name, severity, seed=0)
    out.setflags(write=False)
    return out


def texture(shape=(3, 37, 53, 3), seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def level_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.astype(np.int16) - b.astype(np.int16))


@pytest.mark.parametrize("name", OPS)
def test_registered_with_category_and_source(name: str) -> None:
    spec = REGISTRY.get(name, "video")
    assert spec.category == ("blur" if name.endswith("_blur") else "digital")
    assert "imagecorruptions 1.1.2" in spec.deviation
    assert spec.random == (name in ("glass_blur", "elastic_transform"))


@pytest.mark.parametrize("name", OPS)
def test_mean_psnr_falls_strictly_with_severity(name: str) -> None:
    psnrs = [mean_psnr(output(name, s), sample_clip(16)) for s in SEVERITIES]
    assert all(a > b for a, b in zip(psnrs, psnrs[1:])), psnrs


@pytest.mark.parametrize("name", ["glass_blur", "saturate"])
def test_reordered_levels_hold_on_the_whole_sample_clip_and_are_the_sources(name: str) -> None:
    clip = sample_clip()
    psnrs = [mean_psnr(output(name, s, len(clip)), clip) for s in SEVERITIES]
    assert all(a > b for a, b in zip(psnrs, psnrs[1:])), psnrs
    ours, paper = table(name), PAPER_PARAMS[name]
    keys = sorted(paper)
    assert sorted(tuple(ours[s][k] for k in keys) for s in SEVERITIES) == sorted(zip(*(paper[k] for k in keys)))
    assert REGISTRY.get(name).paper is not None and "reordered" in REGISTRY.get(name).deviation


@pytest.mark.parametrize("severity", [1, 3, 5])
@pytest.mark.parametrize("name", OPS)
def test_numpy_and_torch_cpu_agree_on_the_sample_clip_and_a_texture(name: str, severity: int) -> None:
    for clip in (np.ascontiguousarray(sample_clip(6)), texture()):
        ref = pv.apply(clip, name, severity, seed=4)
        got = pv.apply(torch.from_numpy(clip.copy()), name, severity, seed=4).numpy()
        diff = level_diff(got, ref)
        if name in INTERPOLATING:
            assert diff.max() <= 1 and (diff > 0).mean() <= 0.01, (diff.max(), (diff > 0).mean())
        else:
            assert diff.max() == 0


@pytest.mark.parametrize("name", OPS)
def test_a_single_frame_renders_as_in_the_whole_clip(name: str) -> None:
    clip = texture((5, 20, 24, 3), seed=2)
    draw = pv.draw(name, 4, len(clip), seed=11)
    whole = draw.render_clip(clip)
    for t in range(len(clip)):
        assert np.array_equal(draw.render(clip[[t]], [t]), whole[[t]])


@pytest.mark.parametrize("name", ["glass_blur", "elastic_transform"])
def test_random_parts_are_drawn_once_per_clip(name: str) -> None:
    """A still scene stays still: every frame goes through the same swaps or field."""
    still = np.repeat(texture((1, 30, 40, 3), seed=5), 4, axis=0)
    out = pv.apply(still, name, 5, seed=1)
    assert all(np.array_equal(out[0], frame) for frame in out[1:])
    assert not np.array_equal(out, pv.apply(still, name, 5, seed=2))
    assert len(pv.draw(name, 5, 1000, seed=1).drawn) == 1                 # one key, whatever T


def reference_swaps(height: int, width: int, delta: int, iterations: int, offsets: list[np.ndarray]) -> np.ndarray:
    """imagecorruptions' loop, its statement verbatim, on a frame of pixel indices (one channel, so
    x[h, w] is a view as on RGB frames), with its randint draws replaced by ``offsets``."""
    x = np.arange(height * width).reshape(height, width, 1)
    for i in range(iterations):
        k = 0
        for h in range(height - delta, delta, -1):
            for w in range(width - delta, delta, -1):
                dx, dy = offsets[i].reshape(-1, 2)[k]
                k += 1
                hp, wp = h + dy, w + dx
                x[h, w], x[hp, wp] = x[hp, wp], x[h, w]
    return x.ravel()


@pytest.mark.parametrize("h,w,delta,iterations", [(17, 23, 1, 2), (17, 23, 2, 3), (17, 23, 4, 2),
                                                  (64, 48, 2, 4), (9, 80, 3, 3)])
def test_glass_moves_replay_the_reference_loop(h: int, w: int, delta: int, iterations: int) -> None:
    key = 99
    rng = np.random.default_rng(key)
    n_rows, n_cols = len(range(h - delta, delta, -1)), len(range(w - delta, delta, -1))
    offsets = [rng.integers(-delta, delta, size=(n_rows, n_cols, 2)) for _ in range(iterations)]
    assert np.array_equal(glass_sources(key, h, w, delta, iterations),
                          reference_swaps(h, w, delta, iterations, offsets))
    assert all(o.min() >= -delta and o.max() <= delta - 1 for o in offsets)   # randint's [-d, d)


def test_the_reference_statement_copies_rather_than_swaps() -> None:
    sources = glass_sources(3, 30, 30, 2, 3)
    assert len(np.unique(sources)) < len(sources)                       # duplicated pixels


def test_glass_on_frames_too_small_to_swap_is_a_double_blur() -> None:
    assert np.array_equal(glass_sources(1, 2, 9, 1, 2), np.arange(18))      # rows 2-1..1+1: none


@pytest.mark.parametrize("size,scale", [((224, 224), 0.6), ((224, 224), 0.4), ((37, 53), 0.3), ((5, 9), 0.25),
                                        ((7, 10), 0.4), ((11, 14), 0.6), ((1, 3), 0.5)])
def test_pixelate_equals_pillow_box_then_nearest(size, scale) -> None:
    from perturb.video.kernels.torch_imagenet_c import pixelate as pixelate_torch

    frame = texture((1, *size, 3), seed=3)[0]
    h, w = size
    small = Image.fromarray(frame).resize((max(1, int(w * scale)), max(1, int(h * scale))), Image.BOX)
    want = np.asarray(small.resize((w, h), Image.NEAREST))
    got = perturb_clip(pv.get("pixelate"), frame[None], None, {"scale": scale})
    assert np.array_equal(got[0], want)
    assert np.array_equal(pixelate_torch(torch.from_numpy(frame[None]), None, {}, {"scale": scale}).numpy(), got)


def test_pixelate_equals_pillow_at_every_small_size() -> None:
    for n in range(1, 70):
        frame = texture((1, n, n + 5, 3), seed=n)
        for severity in SEVERITIES:
            scale = table("pixelate")[severity]["scale"]
            small = Image.fromarray(frame[0]).resize((max(1, int((n + 5) * scale)), max(1, int(n * scale))), Image.BOX)
            want = np.asarray(small.resize((n + 5, n), Image.NEAREST))
            assert np.array_equal(pv.apply(frame, "pixelate", severity)[0], want), (n, scale)


def test_pixelate_wide_boxes_average_whole_rows() -> None:
    from perturb.video.kernels.torch_imagenet_c import pixelate as pixelate_torch

    frame = texture((1, 3, 600, 3), seed=4)
    out = perturb_clip(pv.get("pixelate"), frame, None, {"scale": 0.001})  # one box of 600 columns
    rows = np.floor(frame.astype(np.int64).sum(axis=2) / 600 + 0.5)       # each row's mean, rounded
    want = np.floor(rows.sum(axis=1) / 3 + 0.5)                           # then the rows' mean
    assert np.abs(out.astype(np.int64) - want[:, None, None, :]).max() <= 1
    assert np.array_equal(pixelate_torch(torch.from_numpy(frame), None, {}, {"scale": 0.001}).numpy(), out)


def test_box_ranges_partition_the_input() -> None:
    start, stop, weight = box_ranges(224, 89)
    assert start[0] == 0 and stop[-1] == 224 and np.all(stop > start) and np.array_equal(start[1:], stop[:-1])
    start, stop, weight = box_ranges(8, 4)
    assert start.tolist() == [0, 2, 4, 6] and stop.tolist() == [2, 4, 6, 8] and weight.tolist() == [1 << 21] * 4
    start, stop, _ = box_ranges(11, 6)                  # pixel 5's centre is on an edge: Pillow puts it right
    assert start.tolist() == [0, 2, 4, 5, 7, 9] and stop.tolist() == [2, 4, 5, 7, 9, 11]


def skimage_hsv(frame: np.ndarray, channel: int, fn) -> np.ndarray:
    hsv = color.rgb2hsv(frame / 255.0)
    hsv[..., channel] = fn(hsv[..., channel])
    return np.clip(color.hsv2rgb(hsv), 0, 1) * 255


@pytest.mark.parametrize("severity", SEVERITIES)
def test_brightness_and_saturate_are_the_hsv_round_trip(severity: int) -> None:
    frame = np.concatenate([texture((1, 40, 50, 3), seed=severity)[0],
                            np.repeat(np.arange(0, 250, 5, dtype=np.uint8)[None, :, None], 3, axis=2)])
    shift = table("brightness")[severity]["shift"]
    want = skimage_hsv(frame, 2, lambda v: np.clip(v + shift, 0, 1))
    got = pv.apply(frame[None], "brightness", severity)[0]
    assert np.abs(got - want).max() <= 0.5 + 1e-6
    factor, offset = table("saturate")[severity]["factor"], table("saturate")[severity]["offset"]
    want = skimage_hsv(frame, 1, lambda s: np.clip(s * factor + offset, 0, 1))
    got = pv.apply(frame[None], "saturate", severity)[0]
    assert np.abs(got - want).max() <= 0.5 + 1e-3                      # greys tinted as the reference


def test_contrast_pulls_each_channel_to_its_own_mean() -> None:
    frame = np.zeros((1, 2, 2, 3), np.uint8)
    frame[0, :, :, 0] = [[0, 100], [200, 100]]                          # red mean 100
    frame[0, :, :, 1] = 40                                              # flat green stays
    out = pv.apply(frame, "contrast", 1)                                # factor 0.4
    assert out[0, :, :, 0].tolist() == [[60, 100], [140, 100]]
    assert np.all(out[0, :, :, 1] == 40) and np.all(out[0, :, :, 2] == 0)


@pytest.mark.parametrize("severity", [1, 5])
def test_gaussian_blur_is_scipys_filter(severity: int) -> None:
    frame = texture((1, 41, 47, 3), seed=7)[0]
    sigma = table("gaussian_blur")[severity]["sigma"]
    want = ndimage.gaussian_filter(frame.astype(np.float64), (sigma, sigma, 0), mode="nearest", truncate=4.0)
    diff = np.abs(pv.apply(frame[None], "gaussian_blur", severity)[0] - want)
    assert diff.max() <= 0.5 + 1e-3


def test_elastic_field_has_the_reference_scale() -> None:
    """Uniform ±0.005·H smoothed by 0.01·H: its std is known in closed form (truncation aside)."""
    h = w = 224
    field = elastic_field(7, h, w)
    sigma, reach = 0.01 * h, 0.005 * h
    taps = np.exp(-0.5 * (np.arange(-7, 8) / sigma) ** 2)
    taps /= taps.sum()
    expected = reach / np.sqrt(3) * np.sum(taps ** 2)                    # 2-D: (Σw²)^(1/2) per axis, squared
    assert abs(field.std() / expected - 1) < 0.05
    assert abs(np.corrcoef(field[0].ravel(), field[1].ravel())[0, 1]) < 0.05
    zero = perturb_clip(pv.get("elastic_transform"), texture(), np.random.default_rng(0), {"alpha": 0.0})
    assert np.array_equal(zero, texture())


BAD = [("gaussian_blur", {"sigma": 0}, "sigma"), ("gaussian_blur", {"sigma": float("nan")}, "sigma"),
       ("glass_blur", {"sigma": 1, "max_delta": 0, "iterations": 1}, "max_delta"),
       ("glass_blur", {"sigma": 1, "max_delta": 2, "iterations": 1.5}, "iterations"),
       ("pixelate", {"scale": 1.5}, "scale"), ("pixelate", {"scale": -0.1}, "scale"),
       ("elastic_transform", {"alpha": -1}, "alpha"), ("brightness", {"shift": 2}, "shift"),
       ("contrast", {"factor": -0.5}, "factor"), ("saturate", {"factor": 1, "offset": "x"}, "offset")]


@pytest.mark.parametrize("name,params,word", BAD)
def test_bad_parameters_are_refused_by_name(name: str, params: dict, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        perturb_clip(pv.get(name), texture(), np.random.default_rng(0), params)


def test_gallery_has_a_row_per_op() -> None:
    from perturb.video.gallery import gallery

    clip = np.ascontiguousarray(sample_clip(3))
    one = gallery(clip, ["gaussian_noise"], max_size=32)
    two = gallery(clip, ["gaussian_noise", "shot_noise"], max_size=32)
    rows = gallery(clip, ["gaussian_noise", *OPS], max_size=32)
    per_row = two.shape[0] - one.shape[0]
    assert per_row >= 32 and rows.shape[0] == one.shape[0] + len(OPS) * per_row    # one row each
