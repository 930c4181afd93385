"""Torch clips on the CPU render through the numpy kernels (perturb.video.host): the numpy path's
pixels bit for bit, given back in kind (layout, dtype, device), on torch's thread count; the torch
kernels still render inside torch_kernels_on_cpu and where an op asks for them."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.registry import REGISTRY  # noqa: E402
from perturb.video import host, layouts, render  # noqa: E402
from perturb.video.api import apply  # noqa: E402
from perturb.video.kernels import opencv_frames  # noqa: E402
from perturb.video.render import renderer_of  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

NAMES = [s.name for s in REGISTRY.select("video")]
TORCH_ON_FLOAT = sorted(n for n in NAMES if renderer_of(REGISTRY.get(n)).cpu_kernel == "torch")


def small_clip(frames: int = 4) -> np.ndarray:
    return np.ascontiguousarray(sample_clip(frames)[:, 50:82, 70:118])          # 32x48, real content


def as_float(clip: np.ndarray, dtype=torch.float32) -> torch.Tensor:
    return torch.from_numpy(clip).permute(0, 3, 1, 2).to(dtype).div(255).contiguous()


def as_levels(x: torch.Tensor) -> np.ndarray:
    return x.to(torch.float64).mul(255).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("name", [n for n in NAMES if renderer_of(REGISTRY.get(n)).reads != render.INDEX])
def test_a_float_cpu_clip_takes_the_kernel_its_entry_names(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry property, for every op that computes pixels: one whose entry keeps its torch
    kernel for float CPU clips (cpu_kernel="torch") has a torch twin registered and renders such a
    clip with it; every other op, and a uint8 clip of any op, goes through the numpy kernel."""
    renderer = renderer_of(REGISTRY.get(name))
    if renderer.cpu_kernel == "torch":
        assert "torch" in renderer.kernels
    calls: list[str] = []
    real = render.render_on_host
    monkeypatch.setattr(render, "render_on_host", lambda kernel, clip, *a: calls.append(str(clip.dtype)) or real(kernel, clip, *a))
    clip = small_clip(2)
    apply(as_float(clip), name, 2, seed=3)
    apply(torch.from_numpy(clip), name, 2, seed=3)
    host_float = [] if renderer.cpu_kernel == "torch" else ["torch.float32"]
    assert calls == host_float + ["torch.uint8"]


@pytest.mark.parametrize("name", NAMES)
def test_cpu_tensors_render_the_numpy_pixels(name: str) -> None:
    """uint8 and float32 CPU clips: exactly the numpy output (float: level/255 in float32), for
    every op whose float clips take the numpy kernel; the input is left as it was."""
    clip = small_clip()
    ref = apply(clip, name, 3, seed=7)
    u8 = torch.from_numpy(clip.copy())
    got = apply(u8, name, 3, seed=7)
    assert got.dtype == torch.uint8 and np.array_equal(got.numpy(), ref)
    assert np.array_equal(u8.numpy(), clip)
    x = as_float(clip)
    before = x.clone()
    out = apply(x, name, 3, seed=7)
    assert out.dtype == torch.float32 and out.shape == x.shape and out.is_contiguous()
    assert torch.equal(x, before)
    if name in TORCH_ON_FLOAT:
        assert np.abs(as_levels(out).astype(int) - ref).max() <= 1
    else:
        expected = torch.from_numpy(ref).permute(0, 3, 1, 2).to(torch.float32).div(255)
        assert torch.equal(out, expected)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_other_float_dtypes_come_back_in_kind(dtype: torch.dtype) -> None:
    clip = small_clip(3)
    ref = apply(clip, "defocus_blur", 2)
    out = apply(as_float(clip, dtype), "defocus_blur", 2)
    assert out.dtype == dtype
    expected = torch.from_numpy(ref).permute(0, 3, 1, 2).to(dtype).div_(255.0)
    assert torch.equal(out, expected)


def test_strided_and_grad_tracking_clips_render_alike() -> None:
    clip = small_clip(3)
    ref = apply(as_float(clip), "gaussian_noise", 4, seed=1)
    channels_last = as_float(clip).to(memory_format=torch.channels_last)
    wide = torch.zeros(3, 3, 32, 60)
    wide[..., 5:53] = as_float(clip)
    view = wide[..., 5:53]                                            # not contiguous
    needs_grad = as_float(clip).requires_grad_()
    for x in (channels_last, view, needs_grad):
        assert torch.equal(apply(x, "gaussian_noise", 4, seed=1), ref)


def test_quantising_rounds_as_torch_does_near_every_tie() -> None:
    """value·255 in float32, rounded half to even: OpenCV's conversion equals torch's on the
    200 float32 neighbours either side of every (k + 1/2)/255."""
    centres = ((np.arange(255) + 0.5) / 255).astype(np.float32)
    values, up, down = [centres], centres.copy(), centres.copy()
    for _ in range(200):
        up, down = np.nextafter(up, np.float32(1)), np.nextafter(down, np.float32(0))
        values += [up, down]
    v = np.clip(np.concatenate(values), 0, 1)
    v = np.resize(v, (-(-len(v) // (3 * 64)) * 3 * 64,)).reshape(-1, 3, 8, 8)
    want = torch.from_numpy(v).mul(255.0).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()
    assert np.array_equal(layouts.float_planes_to_frames(v), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_levels_come_back_as_torch_divides_them(dtype) -> None:
    frames = np.random.default_rng(0).integers(0, 256, (2, 5, 7, 3), dtype=np.uint8)
    out = layouts.frames_to_float_planes(frames, np.empty((2, 3, 5, 7), dtype))
    want = torch.from_numpy(frames).permute(0, 3, 1, 2).to(getattr(torch, np.dtype(dtype).name)).div(255.0)
    assert np.array_equal(out, want.numpy())


def test_conversions_refuse_the_wrong_arrays() -> None:
    with pytest.raises(ValueError, match="float32 \\(T, 3, H, W\\)"):
        layouts.float_planes_to_frames(np.zeros((1, 4, 2, 2), np.float32))
    with pytest.raises(ValueError, match="float32/float64"):
        layouts.frames_to_float_planes(np.zeros((1, 2, 2, 3), np.uint8), np.zeros((1, 3, 2, 2), np.float16))


def test_the_switch_chooses_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host route runs for CPU clips, not inside torch_kernels_on_cpu, and not for a float
    clip of an op that keeps its torch kernel (a uint8 clip of it still takes the numpy one)."""
    calls: list[str] = []
    real = render.render_on_host
    monkeypatch.setattr(render, "render_on_host", lambda kernel, clip, *a: calls.append(str(clip.dtype)) or real(kernel, clip, *a))
    clip = small_clip(2)
    apply(as_float(clip), "motion_blur", 1, seed=0)
    with host.torch_kernels_on_cpu():
        apply(as_float(clip), "motion_blur", 1, seed=0)
        apply(torch.from_numpy(clip), "motion_blur", 1, seed=0)
    apply(as_float(clip), "brightness", 1)
    apply(torch.from_numpy(clip), "brightness", 1)
    assert calls == ["torch.float32", "torch.uint8"]
    with pytest.raises(ValueError, match="cpu_kernel must be one of"):
        render.Renderer(kernels={"numpy": lambda *a: a[0]}, cpu_kernel="gpu")


def test_kernels_share_frames_over_torchs_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = opencv_frames.frames_in_threads
    monkeypatch.setattr(opencv_frames, "frames_in_threads", lambda n, fn: seen.append(opencv_frames.threads()) or real(n, fn))
    monkeypatch.setattr(opencv_frames, "MAX_THREADS", 4)
    monkeypatch.setattr(opencv_frames.cv2, "getNumThreads", lambda: 4)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        apply(as_float(small_clip(2)), "contrast", 2)
    finally:
        torch.set_num_threads(old)
    assert seen and set(seen) == {1}
    assert opencv_frames.threads() == 4                                  # the cap ends with the call
    with opencv_frames.at_most_threads(2):
        assert opencv_frames.threads() == 2
        with opencv_frames.at_most_threads(0):
            assert opencv_frames.threads() == 1
        assert opencv_frames.threads() == 2


@pytest.mark.parametrize("bad", [float("nan"), -0.01, 1.01, float("inf")])
def test_a_strided_float_clip_is_range_checked_like_a_contiguous_one(bad: float) -> None:
    """The range check reads a channels-last or permuted clip in its memory order: same verdicts."""
    clip = small_clip(2)
    channels_last = as_float(clip).to(memory_format=torch.channels_last)
    permuted = torch.from_numpy(clip).to(torch.float32).div(255).permute(0, 3, 1, 2)
    for x in (channels_last, permuted):
        assert not x.is_contiguous()
        assert torch.equal(apply(x, "contrast", 2), apply(as_float(clip), "contrast", 2))
        x = x.clone(memory_format=torch.preserve_format)
        x[1, 2, 5, 7] = bad
        with pytest.raises(ValueError, match=r"\[0, 1\]|NaN or inf"):
            apply(x, "contrast", 2)


def float64_near_ties() -> tuple[torch.Tensor, np.ndarray]:
    """A float64 clip (T, 3, 8, 8) of the values at and 1..20 float64 steps either side of every
    (k + 1/2)/255 (nextafter(0.5/255, 1) among them), and its levels rint(value·255) in float64."""
    centres = (np.arange(255) + 0.5) / 255
    values, up, down = [centres], centres.copy(), centres.copy()
    for _ in range(20):
        up, down = np.nextafter(up, 1.0), np.nextafter(down, 0.0)
        values += [up, down]
    v = np.resize(np.concatenate(values), (-(-len(values) * 255 // 192) * 192,)).reshape(-1, 3, 8, 8)
    levels = np.rint(v * 255).astype(np.uint8).transpose(0, 2, 3, 1)
    return torch.from_numpy(v), np.ascontiguousarray(levels)


@pytest.mark.parametrize("route", ["numpy kernel", "torch kernel"])
@pytest.mark.parametrize("name", ["pixelate", "brightness", "gaussian_noise"])
def test_float64_clips_are_quantised_in_float64(name: str, route: str) -> None:
    """A float64 clip renders as the uint8 clip rint(value·255) (in float64, not float32: there
    nextafter(0.5/255, 1) is level 0, not 1), through the numpy kernels and the torch ones."""
    from perturb.video.clip import to_numpy
    from perturb.video.layouts import to_levels

    x, levels = float64_near_ties()
    assert to_numpy(torch.from_numpy(np.nextafter([[[[0.5 / 255]]]], 1.0)).expand(1, 3, 1, 1))[0].max() == 1
    assert np.array_equal(to_numpy(x)[0], levels)
    assert np.array_equal(to_levels(x, "TCHW").permute(0, 2, 3, 1).numpy(), levels)
    with host.torch_kernels_on_cpu(route == "torch kernel"):
        out = apply(x, name, 3, seed=4)
    assert out.dtype == torch.float64
    assert np.array_equal(as_levels(out), apply(levels, name, 3, seed=4))


@pytest.mark.parametrize("hw", [(223, 224), (223, 400), (221, 300), (31, 48), (224, 224)])
def test_static_rotate_float_clips_keep_the_documented_tolerance_at_any_size(hw: tuple[int, int]) -> None:
    """static_rotate renders a float CPU clip with its torch kernel, a uint8 one with OpenCV
    (docs/transforms.md): within 1 level on under 1% of values at odd frame sizes too, every
    severity, through apply and RandomPerturbation; the same levels for its 90° turn (3.7-4.3%
    of them were a level off at 223 x 224, 223 x 400, 221 x 300)."""
    from perturb.transforms import RandomPerturbation

    src = sample_clip(2)
    rows, cols = np.resize(np.arange(src.shape[1]), hw[0]), np.resize(np.arange(src.shape[2]), hw[1])
    clip = np.ascontiguousarray(src[:, rows][:, :, cols])
    for severity in range(1, 6):
        want = apply(clip, "static_rotate", severity)
        diff = np.abs(as_levels(apply(as_float(clip), "static_rotate", severity)).astype(int) - want)
        assert diff.max() <= 1 and np.mean(diff > 0) < 0.01
    assert not diff.any()                                     # severity 5: 90°
    t = RandomPerturbation("static_rotate", severity=5)
    u8 = t(torch.from_numpy(clip[None].copy()), keys=[0])[0].numpy()
    assert np.array_equal(as_levels(t(as_float(clip)[None], keys=[0])[0]), u8)
