"""The rewritten torch kernels against straightforward references on random inputs: the noise
words, the banded-matrix blur, the colour tables, motion blur, translate, the rotation grid and
rain; plus the clip conversions they go through (dtype, layout, contiguity)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.video.kernels import torch_imagenet_c as tic  # noqa: E402
from perturb.video.kernels import torch_blur_camera as tk  # noqa: E402
from perturb.video.kernels import imagenet_c as ic  # noqa: E402
from perturb.video.kernels import imagenet_c_colour as colour  # noqa: E402
from perturb.video.kernels.keyed_words import _mix_numpy, _mix_torch, frame_seeds, words_numpy, words_torch  # noqa: E402
from perturb.video.api import apply  # noqa: E402
from perturb.video.kernels.blur import motion_weights, streak_offsets  # noqa: E402
from perturb.video.layouts import from_levels, from_uint8_frames, to_levels  # noqa: E402
from perturb.video.kernels.noise import KERNELS  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def random_frames(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """uint8 frames with random levels, some greys (all channels equal) and some black pixels."""
    rng = np.random.default_rng(seed)
    frames = rng.integers(0, 256, shape, dtype=np.uint8)
    grey = rng.random(shape[:-1]) < 0.1
    frames[grey] = frames[grey][:, :1]
    frames[rng.random(shape[:-1]) < 0.02] = 0
    return frames


def levels(frames: np.ndarray, device: str = "cpu") -> torch.Tensor:
    """uint8 (N, H, W, 3) as the float (N, 3, H, W) levels the torch kernels take."""
    return torch.from_numpy(frames).permute(0, 3, 1, 2).float().to(device)


# ------------------------------------------------------------------------------------- words
@pytest.mark.parametrize("values", [1, 2, 7, 150, 4097])
def test_words_torch_equal_words_numpy(values: int) -> None:
    seeds = frame_seeds(0x0123456789ABCDEF, np.array([0, 3, 2**32 - 1]))
    got = words_torch(seeds, values, "cpu")
    assert got.dtype == torch.int32 and tuple(got.shape) == (3, values)
    ref = np.stack([words_numpy(int(s), values, 0, values) for s in seeds])
    assert np.array_equal(got.numpy(), ref)
    assert got.min() >= 0 and got.max() <= 0xFFFF


def test_mix_torch_equals_mix_numpy_on_extreme_words() -> None:
    x = np.array([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 0xDEADBEEF], np.uint32)
    got = _mix_torch(torch.from_numpy(x.astype(np.int64)))
    assert np.array_equal(got.numpy(), _mix_numpy(x.copy()).astype(np.int64))


@pytest.mark.parametrize("amount", [0.0, 0.5, 1.0])
def test_impulse_table_matches_numpy_at_the_ends(amount: float) -> None:
    frames = random_frames((2, 9, 11, 3))
    ref = KERNELS["impulse_noise"].render_numpy(frames, [4, 9], 77, {"amount": amount})
    got = KERNELS["impulse_noise"].render_torch(torch.from_numpy(frames), [4, 9], 77, {"amount": amount})
    assert np.array_equal(got.numpy(), ref)
    if amount == 0:
        assert np.array_equal(ref, frames)
    if amount == 1:
        assert np.isin(ref, (0, 255)).all() and 0.4 < (ref == 0).mean() < 0.6


# ----------------------------------------------------------------------------- gaussian blur
def correlate_replicate(x: np.ndarray, taps: np.ndarray, axis: int) -> np.ndarray:
    """Plain float64 correlation along ``axis`` with replicated edges."""
    r, n = len(taps) // 2, x.shape[axis]
    out = np.zeros(x.shape)
    for k, tap in enumerate(taps):
        src = np.clip(np.arange(n) + k - r, 0, n - 1)
        out += tap * np.take(x, src, axis=axis)
    return out


@pytest.mark.parametrize("sigma", [1, 3, 6])
@pytest.mark.parametrize("hw", [(17, 23), (3, 5)])                 # (3, 5): frames under the radius
def test_separable_blur_equals_a_direct_correlation(sigma: float, hw: tuple[int, int]) -> None:
    x = np.random.default_rng(sigma).integers(0, 256, (2, 3, *hw)).astype(np.float64)
    taps = ic.gaussian_taps(sigma)
    ref = correlate_replicate(correlate_replicate(x, taps, 3), taps, 2)
    got = tic._separable(torch.from_numpy(x).float(), taps)
    assert got.dtype == torch.float32 and tuple(got.shape) == x.shape
    assert np.abs(got.double().numpy() - ref).max() < 2e-3


# ------------------------------------------------------------------------------------ colour
@pytest.mark.parametrize("severity", [1, 3, 5])
@pytest.mark.parametrize("name", ["brightness", "contrast", "saturate"])
def test_colour_kernels_equal_numpy_on_random_frames(name: str, severity: int) -> None:
    from perturb.registry import REGISTRY

    frames = random_frames((3, 13, 17, 3), seed=severity)
    params = REGISTRY.get(name).params(severity)
    render = {"brightness": colour.render_brightness, "contrast": colour.render_contrast,
              "saturate": colour.render_saturate}[name]
    got = getattr(tic, name)(torch.from_numpy(frames), np.arange(3), {}, params)
    assert got.dtype == torch.uint8 and tuple(got.shape) == frames.shape
    assert np.array_equal(got.numpy(), render(frames, **params))


# ------------------------------------------------------------------------------- motion blur
def motion_reference(frames: np.ndarray, angles: np.ndarray, radius: float, sigma: float) -> np.ndarray:
    """out[t, y, x] = sum_k w_k · in[t, clamp(y + dy_tk), clamp(x + dx_tk)], float64."""
    weights = motion_weights(radius, sigma)
    dx, dy = streak_offsets(len(weights), angles)
    t, h, w, _ = frames.shape
    out = np.zeros(frames.shape)
    for i in range(t):
        for k, weight in enumerate(weights):
            rows = np.clip(np.arange(h) + dy[i, k], 0, h - 1)
            cols = np.clip(np.arange(w) + dx[i, k], 0, w - 1)
            out[i] += weight * frames[i][rows][:, cols]
    return out


@pytest.mark.parametrize("hw", [(19, 26), (4, 6)])                 # (4, 6): streaks past the frame
def test_motion_blur_equals_shifted_sums(hw: tuple[int, int]) -> None:
    frames = random_frames((4, *hw, 3))
    angles = np.array([-44.0, -3.0, 17.5, 45.0])
    got = tk.motion_blur(levels(frames), np.arange(4), {"angles": angles}, {"radius": 5, "sigma": 3})
    ref = motion_reference(frames, angles, 5, 3)
    assert np.abs(got.permute(0, 2, 3, 1).double().numpy() - ref).max() < 1e-3


def test_motion_blur_renders_subsets_as_the_whole() -> None:
    frames = random_frames((5, 12, 14, 3))
    angles = np.array([-30.0, 10.0, 40.0, 0.0, -45.0])
    params = {"radius": 4, "sigma": 2}
    whole = tk.motion_blur(levels(frames), np.arange(5), {"angles": angles}, params)
    part = tk.motion_blur(levels(frames[[1, 4]]), np.array([1, 4]), {"angles": angles}, params)
    assert torch.equal(part, whole[[1, 4]])


# --------------------------------------------------------------------------------- translate
def reflect101(i: np.ndarray, n: int) -> np.ndarray:
    period = 2 * (n - 1)
    i = np.mod(i, period) if n > 1 else np.zeros_like(i)
    return np.where(i < n, i, period - i)


@pytest.mark.parametrize("hw", [(20, 24), (5, 7)])                 # (5, 7): shifts past the frame fold
def test_translate_equals_a_mirrored_gather(hw: tuple[int, int]) -> None:
    h, w = hw
    frames = random_frames((3, h, w, 3))
    offsets = np.array([[3, -4], [-9, 6], [0, 0]])                     # (dx, dy) per frame
    got = tk.translate(levels(frames), np.arange(3), {"offsets": offsets}, {}).permute(0, 2, 3, 1)
    for i, (dx, dy) in enumerate(offsets):
        ref = frames[i][reflect101(np.arange(h) + dy, h)][:, reflect101(np.arange(w) + dx, w)]
        assert np.array_equal(got[i].numpy(), ref)


# ------------------------------------------------------------------------------- rotate grid
def reflect_positions(p: np.ndarray, n: int) -> np.ndarray:
    """Positions on an axis of n pixels folded into [0, n - 1] the reflect-101 way."""
    period = 2 * (n - 1)
    p = np.abs(p)
    p = p - period * np.floor(p / period)
    return np.where(p > n - 1, period - p, p)


@pytest.mark.parametrize("hw", [(31, 45), (223, 224), (32, 48)])
def test_rotation_grid_reads_back_opencvs_float32_positions(hw: tuple[int, int]) -> None:
    """grid_sample reads a grid value g back as (g + 1)·(side - 1)/2 in float32: on the canvas
    (side 2^k + 1) that is exactly OpenCV's position, the row term plus the column term in
    float64 rounded once to float32, folded into the frame the reflect-101 way; a 90° turn of a
    frame with one odd side reads half pixels exactly."""
    h, w = hw
    angles = (-29.3, 0.0, 7.7, 90.0)
    inverse = np.stack([tk.cv2.invertAffineTransform(tk.rotation_matrix(h, w, a)) for a in angles])
    ys, xs = np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64)
    got = tk._source_grid(inverse, h, w, torch.device("cpu")).numpy()
    assert got.dtype == np.float32 and got.shape == (len(angles), h, w, 2)
    for k, n in enumerate((w, h)):
        row = inverse[:, None, k, 1] * ys[None, :] + inverse[:, None, k, 2]            # (T, H)
        position = (row[:, :, None] + inverse[:, None, None, k, 0] * xs[None, None, :]).astype(np.float32)
        want = reflect_positions(position.astype(np.float64), n).astype(np.float32)
        half = np.float32((tk._canvas_side(n) - 1) / 2)
        read = (got[..., k] + np.float32(1)) * half
        upper = want >= half / 2                # g in [-0.5, 1]: every float32 position is held exactly
        assert np.array_equal(read[upper], want[upper])
        assert np.abs(read - want).max() <= half * 2.0**-25       # below: g's own float32 rounding
        assert set(np.unique(read[3] % 1)) == ({0.5} if (h - w) % 2 else {0.0})   # a quarter turn


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("hw", [(223, 224), (223, 400), (221, 300), (31, 48), (224, 224), (33, 33)])
def test_static_rotate_torch_equals_numpy_at_odd_and_even_sizes(hw: tuple[int, int], severity: int) -> None:
    """The torch kernel samples where cv2.warpAffine does: within 1 level on under 1% of values
    at any frame size, and the same levels for a 90° turn (every sample of a frame with one odd
    side halfway between pixels: 3.3-6.1% of its values were a level off, by an ulp's misread)."""
    frames = random_frames((2, *hw, 3), seed=severity)
    want = apply(frames, "static_rotate", severity)
    got = apply(torch.from_numpy(frames), "static_rotate", severity).numpy()
    diff = np.abs(got.astype(int) - want)
    assert diff.max() <= 1 and np.mean(diff > 0) < 0.01
    if severity == 5:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("name", ["rotate", "zoom_blur"])
@pytest.mark.parametrize("hw", [(223, 224), (221, 300), (31, 48)])
def test_other_warps_hold_the_tolerance_at_odd_sizes(hw: tuple[int, int], name: str) -> None:
    """rotate and zoom_blur through the same grids: within 1 level on under 1% of values."""
    frames = random_frames((2, *hw, 3), seed=3)
    diff = np.abs(apply(torch.from_numpy(frames), name, 5, seed=1).numpy().astype(int)
                  - apply(frames, name, 5, seed=1))
    assert diff.max() <= 1 and np.mean(diff > 0) < 0.01


# -------------------------------------------------------------------------------------- rain
@pytest.mark.parametrize("severity", [1, 5])
def test_rain_torch_equals_numpy_on_random_frames(severity: int) -> None:
    frames = random_frames((3, 40, 52, 3), seed=severity)
    assert np.array_equal(apply(torch.from_numpy(frames), "rain", severity, seed=2).numpy(),
                          apply(frames, "rain", severity, seed=2))


# ---------------------------------------------------------------- dtype, layout, device round trip
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("name", ["rain", "gaussian_blur", "brightness", "contrast", "saturate", "rotate",
                                  "gaussian_noise", "translate", "impulse_noise", "motion_blur"])
def test_float_clips_round_trip(name: str, dtype, device: str) -> None:
    clip = np.ascontiguousarray(sample_clip(3)[:, 40:72, 60:100])
    x = (torch.from_numpy(clip).permute(0, 3, 1, 2).to(dtype) / 255).to(device)
    before = x.clone()
    out = apply(x, name, 3, seed=6)
    assert out.dtype == dtype and out.device == x.device and out.shape == x.shape and out.is_contiguous()
    assert torch.equal(x, before)
    as_uint8 = apply(torch.from_numpy(clip).to(device), name, 3, seed=6).cpu()
    assert torch.equal(out, from_uint8_frames(as_uint8, "TCHW", dtype).to(device))


def test_level_conversions_keep_values_and_contiguity() -> None:
    x = torch.rand(2, 3, 5, 6, dtype=torch.float64)
    lv = to_levels(x, "TCHW")
    assert torch.equal(lv, (x.float() * 255).round()) and lv.min() >= 0 and lv.max() <= 255
    back = from_levels(lv.permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2), "TCHW", torch.float64)
    assert back.is_contiguous() and back.dtype == torch.float64
    assert torch.equal(back, lv.double() / 255)
    frames = torch.from_numpy(random_frames((2, 5, 6, 3)))
    out = from_uint8_frames(frames, "TCHW", torch.float32)
    assert out.is_contiguous() and torch.equal(out, frames.permute(0, 3, 1, 2).float() / 255)


def test_uint8_clips_become_planar_levels_and_come_back() -> None:
    frames = torch.from_numpy(random_frames((2, 5, 6, 3)))
    lv = to_levels(frames, "THWC")
    assert lv.is_contiguous() and lv.dtype == torch.float32 and tuple(lv.shape) == (2, 3, 5, 6)
    back = from_levels(lv + 0.3, "THWC", torch.uint8)
    assert back.is_contiguous() and back.dtype == torch.uint8 and torch.equal(back, frames)
