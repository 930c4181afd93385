"""The torch kernels that take the float clip itself (colour ops, noise, translate), the int32
noise words and the dense rain composite, against plain references: the numpy kernels on the
same levels, index gathers, the int64 mixer."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.registry import REGISTRY  # noqa: E402
from perturb.video.kernels import torch_imagenet_c as tic  # noqa: E402
from perturb.video.kernels import imagenet_c_colour as colour  # noqa: E402
from perturb.video.kernels.keyed_words import _mix_numpy, _mix_torch  # noqa: E402
from perturb.video.kernels.torch_blur_camera import int_levels, translate  # noqa: E402
from perturb.video.api import apply, draw  # noqa: E402
from perturb.video.layouts import float_levels, to_levels  # noqa: E402
from perturb.video.kernels.noise import KERNELS  # noqa: E402
from test_torch_kernel_references import random_frames  # noqa: E402  (greys and blacks included)

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")


def as_clip(frames: np.ndarray, dtype=torch.float32, channels_last: bool = False) -> torch.Tensor:
    """uint8 frames as a float (N, 3, H, W) clip in [0, 1]: contiguous, or a channels-last view."""
    x = torch.from_numpy(frames).permute(0, 3, 1, 2).to(dtype) / 255
    return x if channels_last else x.contiguous()


def values_of(frames: np.ndarray, dtype) -> torch.Tensor:
    """What a uint8 result is as a float clip: level/255 in ``dtype``."""
    return torch.from_numpy(frames).permute(0, 3, 1, 2).to(dtype).div_(255.0)


def test_levels_round_half_to_even_as_to_levels() -> None:
    ties = (torch.arange(256, dtype=torch.float64) + 0.5) / 255            # x·255 lands on or near .5
    x = torch.cat([ties, torch.rand(1000, dtype=torch.float64), torch.tensor([0.0, 1.0])]).view(1, 1, 1, -1)
    for dtype in (torch.float16, torch.float32, torch.float64):
        got = int_levels(float_levels(x.to(dtype)))
        assert got.dtype == torch.int32
        assert torch.equal(got, to_levels(x.to(dtype), "TCHW").to(torch.int32))


@pytest.mark.parametrize("severity", [1, 3, 5])
@pytest.mark.parametrize("name", ["brightness", "contrast", "saturate"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_colour_kernels_on_float_clips_equal_numpy(name: str, severity: int, dtype) -> None:
    frames = random_frames((3, 13, 17, 3), seed=severity)
    params = REGISTRY.get(name).params(severity)
    render = {"brightness": colour.render_brightness, "contrast": colour.render_contrast,
              "saturate": colour.render_saturate}[name]
    want = values_of(render(frames, **params), dtype)
    for channels_last in (False, True):
        got = getattr(tic, name)(as_clip(frames, dtype, channels_last), np.arange(3), {}, params)
        assert got.dtype == dtype and got.is_contiguous()
        assert torch.equal(got, want)


@pytest.mark.parametrize("name", ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"])
def test_noise_on_float_clips_equals_numpy_on_their_levels(name: str) -> None:
    frames = random_frames((3, 9, 11, 3), seed=4)
    params = REGISTRY.get(name).params(5)
    ids = [7, 2, 40]                                                      # any frame indices of the clip
    want = KERNELS[name].render_numpy(frames, ids, 99, params)
    for dtype in (torch.float32, torch.float64):
        got = KERNELS[name].render_torch(as_clip(frames, dtype, channels_last=True), ids, 99, params)
        assert got.dtype == dtype and got.shape == (3, 3, 9, 11)
        assert torch.equal(got, values_of(want, dtype))


def test_the_int32_mixer_equals_the_int64_one_and_numpy() -> None:
    x = np.array([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 0xDEADBEEF, 0x80000001], np.uint32)
    x = np.concatenate([x, np.random.default_rng(1).integers(0, 2**32, 5000, dtype=np.uint32)])
    want = _mix_numpy(x.copy())
    narrow = _mix_torch(torch.from_numpy(x.view(np.int32).copy()))
    assert narrow.dtype == torch.int32 and np.array_equal(narrow.numpy().view(np.uint32), want)
    assert np.array_equal(_mix_torch(torch.from_numpy(x.astype(np.int64))).numpy(), want.astype(np.int64))


def mirrored(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """out[t, :, y, x] = in[t, :, fold(y + dy_t), fold(x + dx_t)], fold reflect-101, plainly."""
    def fold(i: int, n: int) -> int:
        while not 0 <= i < n:
            i = -i if i < 0 else 2 * (n - 1) - i
        return i
    t, _, h, w = x.shape
    out = np.empty_like(x)
    for f, (dx, dy) in enumerate(offsets):
        rows = [fold(y + dy, h) for y in range(h)]
        cols = [fold(c + dx, w) for c in range(w)]
        out[f] = x[f][:, rows][:, :, cols]
    return out


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_translate_moves_float_values_as_they_are(dtype) -> None:
    x = torch.rand(3, 3, 6, 9, dtype=torch.float64).to(dtype)                 # off the level grid
    drawn = {"offsets": np.array([[2, -1], [-8, 3], [0, 11]])}               # past the frame too
    got = translate(x, np.arange(3), drawn, {})
    assert got.dtype == dtype and got.is_contiguous()
    assert np.array_equal(got.numpy(), mirrored(x.numpy(), drawn["offsets"]))
    frames = random_frames((3, 6, 9, 3))
    moved = translate(torch.from_numpy(frames), np.arange(3), drawn, {})
    assert moved.dtype == torch.uint8 and moved.is_contiguous() and moved.shape == frames.shape
    want = mirrored(frames.transpose(0, 3, 1, 2), drawn["offsets"]).transpose(0, 2, 3, 1)
    assert np.array_equal(moved.numpy(), want)


@pytest.mark.parametrize("shape", [(2, 1, 7, 3), (2, 2, 5, 3), (1, 30, 1, 3)])
def test_rain_on_frames_thinner_than_its_box_equals_numpy(shape: tuple[int, ...]) -> None:
    frames = random_frames(shape, seed=2)
    d = draw("rain", 5, shape[0], seed=4)
    want = d.render_clip(frames)
    assert np.array_equal(d.render_clip(torch.from_numpy(frames)).numpy(), want)
    assert torch.equal(apply(as_clip(frames), "rain", 5, seed=4), values_of(want, torch.float32))
