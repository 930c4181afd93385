"""The rewritten CPU-fast torch kernels compute what they computed before: glass_blur's banded
products, pixelate's exact box products, temporal_blur's count product, static_rotate's one grid,
the weather composites and the torch clip conversions."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.video.kernels import torch_imagenet_c as tic  # noqa: E402
from perturb.video.kernels import imagenet_c as ic  # noqa: E402
from perturb.video.kernels.torch_blur_camera import _rotations, static_rotate  # noqa: E402
from perturb.video.api import apply, draw  # noqa: E402
from perturb.video.kernels.camera import static_angles  # noqa: E402
from perturb.video.layouts import from_levels, from_uint8_frames, to_levels, to_uint8_frames  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")

SEVERITIES = [1, 3, 5]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])     # benchmarks/gpu.py runs -k cuda


def small_clip(frames: int = 6) -> np.ndarray:
    return np.ascontiguousarray(sample_clip(frames)[:, 50:98, 70:130])          # 48 x 60, real content


def as_float(clip: np.ndarray, dtype=torch.float32):
    return (torch.from_numpy(clip).permute(0, 3, 1, 2).to(dtype) / 255).contiguous()


def levels_of(t) -> np.ndarray:
    return (t.permute(0, 2, 3, 1).double() * 255).round().numpy().astype(np.int16)


def agreement(ours: np.ndarray, ref: np.ndarray) -> tuple[int, float]:
    diff = np.abs(ours.astype(np.int16) - ref.astype(np.int16))
    return int(diff.max()), float(np.mean(diff > 0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", ["glass_blur", "fog", "frost", "snow", "spatter", "defocus_blur", "static_rotate"])
def test_within_one_level_of_numpy_on_few_values(name: str, severity: int, device: str) -> None:
    clip = small_clip()
    ref = apply(clip, name, severity, seed=3)
    for out in (levels_of(apply(as_float(clip).to(device), name, severity, seed=3).cpu()),
                apply(torch.from_numpy(clip).to(device), name, severity, seed=3).cpu().numpy()):
        worst, share = agreement(out, ref)
        assert worst <= 1 and share < 0.01, (worst, share)
    assert not np.array_equal(ref, clip)


@pytest.mark.parametrize("name", ["fog", "snow"])
def test_weather_per_frame_layers_agree_too(name: str) -> None:
    clip = small_clip(4)
    ref = apply(clip, name, 4, seed=8, per_frame=True)
    worst, share = agreement(apply(torch.from_numpy(clip), name, 4, seed=8, per_frame=True).numpy(), ref)
    assert worst <= 1 and share < 0.01


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [(48, 60), (37, 53), (5, 9), (1, 3)])
@pytest.mark.parametrize("severity", SEVERITIES)
def test_pixelate_equals_numpy_exactly_on_float_and_uint8_clips(size, severity, device: str) -> None:
    clip = np.ascontiguousarray(np.resize(small_clip(3), (3, *size, 3)))
    ref = apply(clip, "pixelate", severity)
    assert np.array_equal(levels_of(apply(as_float(clip).to(device), "pixelate", severity).cpu()), ref)
    assert np.array_equal(apply(torch.from_numpy(clip).to(device), "pixelate", severity).cpu().numpy(), ref)


def test_pixelate_kernel_gives_uint8_frames_back_in_kind() -> None:
    clip = small_clip(2)
    params = {"scale": 0.3}
    frames = tic.pixelate(torch.from_numpy(clip), None, {}, params)
    levels = tic.pixelate(to_levels(torch.from_numpy(clip), "THWC"), None, {}, params)
    assert frames.dtype == torch.uint8 and frames.shape == clip.shape
    assert levels.dtype == torch.float32 and levels.shape == (2, 3, *clip.shape[1:3])
    assert torch.equal(frames, levels.to(torch.uint8).permute(0, 2, 3, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("severity", SEVERITIES)
def test_temporal_blur_is_exact_and_subsets_render_as_the_whole(severity: int, device: str) -> None:
    clip = small_clip(12)
    ref = apply(clip, "temporal_blur", severity)
    assert np.array_equal(levels_of(apply(as_float(clip).to(device), "temporal_blur", severity).cpu()), ref)
    d = draw("temporal_blur", severity, len(clip))
    for frames in ([0], [11], [3, 4, 9], [10, 2, 2]):
        got = d.render_clip(torch.from_numpy(clip), frames).numpy()
        assert np.array_equal(got, ref[frames])
        src = torch.from_numpy(clip[d.source_indices(frames)])
        assert np.array_equal(d.render(src, frames).numpy(), ref[frames])


def test_static_rotate_one_grid_equals_a_grid_per_frame() -> None:
    x = to_levels(torch.from_numpy(small_clip(4)), "THWC")
    for degrees in (7.5, 45.0, 90.0):
        per_frame = _rotations(x, static_angles(len(x), degrees))
        assert torch.equal(static_rotate(x, np.arange(4), {}, {"degrees": degrees}), per_frame)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_clip_conversions_keep_their_values(dtype) -> None:
    clip = small_clip(2)
    u8 = torch.from_numpy(clip)
    assert torch.equal(from_uint8_frames(u8, "TCHW", dtype), (u8.permute(0, 3, 1, 2).to(dtype) / 255.0).contiguous())
    x = as_float(clip, dtype)
    levels = to_levels(x, "TCHW")
    assert torch.equal(levels, (x.float() * 255).round().clamp(0, 255))
    assert torch.equal(to_uint8_frames(x, "TCHW"), u8)
    noisy = levels + torch.linspace(-0.6, 0.6, levels.numel()).reshape(levels.shape)
    want = (noisy.round().clamp(0, 255).to(dtype) / 255.0).contiguous()
    got = from_levels(noisy, "TCHW", dtype)
    assert torch.equal(got, want) and got.is_contiguous() and got.dtype == dtype


@pytest.mark.parametrize("shape", [(2, 3, 40, 56), (1, 3, 9, 13), (2, 3, 4, 6)])
def test_defocus_padding_by_torch_equals_folded_indices(shape) -> None:
    from perturb.video.kernels.torch_blur_camera import _border, defocus_blur, disk_kernel

    x = torch.from_numpy(np.random.default_rng(0).integers(0, 256, shape).astype(np.float32))
    t, c, h, w = shape
    for radius in (3, 10):                            # pads of 4 and 12: inside, and past, small frames
        kernel = torch.from_numpy(disk_kernel(radius, 0.5)).float()
        pad = kernel.shape[0] // 2
        rows, cols = _border(h, pad, "reflect", x.device), _border(w, pad, "reflect", x.device)
        padded = x.reshape(1, t * c, h, w)[:, :, rows][:, :, :, cols]
        want = torch.nn.functional.conv2d(padded, kernel.expand(t * c, -1, -1)[:, None], groups=t * c)
        got = defocus_blur(x, np.arange(t), {}, {"radius": radius, "alias_blur": 0.5})
        assert torch.equal(got, want.reshape(t, c, h, w))


@pytest.mark.parametrize("size", [(224, 224), (37, 53), (1, 5)])
def test_zoom_grid_from_one_row_and_column_equals_the_affine_grid(size) -> None:
    from perturb.video.kernels.torch_blur_camera import _source_grid, _zoom_grid

    h, w = size
    cx, cy = (w - 1) / 2, (h - 1) / 2
    for z in (1.01, 1.17, 1.33):
        inverse = np.array([[1 / z, 0, cx - cx / z], [0, 1 / z, cy - cy / z]])
        want = _source_grid(inverse[None], h, w, torch.device("cpu"), "replicate")
        assert torch.equal(_zoom_grid(h, w, z, 3, torch.device("cpu")), want.expand(3, -1, -1, -1))


def test_zoom_blur_in_chunks_of_frames_equals_each_frame_alone() -> None:
    from perturb.video.kernels.torch_blur_camera import zoom_blur

    x = to_levels(torch.from_numpy(small_clip(9)), "THWC")         # 9 frames: chunks of 4, 4 and 1
    params = {"zooms": (1.0, 1.21, 0.02)}
    whole = zoom_blur(x, np.arange(9), {}, params)
    alone = torch.cat([zoom_blur(x[i:i + 1], np.arange(1), {}, params) for i in range(9)])
    assert torch.equal(whole, alone)


def test_snow_in_chunks_of_frames_equals_each_frame_alone() -> None:
    from perturb.video.kernels.torch_weather import snow

    clip = small_clip(6)                                             # chunks of 4 and 2
    d = draw("snow", 4, len(clip), seed=5)
    x = to_levels(torch.from_numpy(clip), "THWC")
    whole = snow(x, np.arange(6), d.drawn, d.params)
    alone = torch.cat([snow(x[i:i + 1], np.array([i]), d.drawn, d.params) for i in range(6)])
    assert torch.equal(whole, alone)
