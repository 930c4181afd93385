"""Noise ops: the same seed gives the same pixels on numpy, torch-CPU and CUDA; any frame size works;
the drawn noise has the documented strength."""
from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from perturb.registry import REGISTRY
from perturb.video.kernels.noise_rows import shot_rows
from perturb.video.api import apply
from perturb.video.kernels.noise import KERNELS
from perturb.video.render import perturb_clip
from perturb.video.sample import sample_clip
from perturb.video.severity_params import table

torch = pytest.importorskip("torch")

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")

NOISE_OPS = ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"]
SEVERITIES = [1, 2, 3, 4, 5]
KEY = 0xDEADBEEF12345678


def _cuda_or_skip() -> None:
    if not torch.cuda.is_available():
        reason = "CUDA not available (torch.cuda.is_available() is False): CUDA bit-identity not checked here"
        print(reason)
        pytest.skip(reason)


DEVICES = ["cpu", "cuda"]


def odd_clip(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", NOISE_OPS)
def test_numpy_and_torch_are_bit_identical(name: str, severity: int, device: str) -> None:
    if device == "cuda":
        _cuda_or_skip()
    kernels, params = KERNELS[name], REGISTRY.get(name).params(severity)
    for shape in [(3, 7, 11, 3), (2, 1, 1, 3), (1, 2, 3, 3), (2, 33, 17, 3)]:
        clip = odd_clip(shape)
        idx = np.array([5, 0, 2**32 - 1][:shape[0]])
        ref = kernels.render_numpy(clip, idx, KEY, params)
        frames, on_device = torch.from_numpy(clip).to(device), torch.from_numpy(idx).to(device)
        got = kernels.render_torch(frames, on_device, KEY, params)
        assert got.dtype == torch.uint8 and got.device.type == device and tuple(got.shape) == shape
        assert np.array_equal(got.cpu().numpy(), ref), (shape, int((got.cpu().numpy() != ref).sum()))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NOISE_OPS)
def test_apply_on_tensors_equals_apply_on_arrays(name: str, device: str) -> None:
    if device == "cuda":
        _cuda_or_skip()
    clip = np.ascontiguousarray(sample_clip(4)[:, 10:71, 20:103])          # 61 x 83, real content
    for severity in SEVERITIES:
        ref = apply(clip, name, severity, seed=13)
        got = apply(torch.from_numpy(clip).to(device), name, severity, seed=13)
        assert np.array_equal(got.cpu().numpy(), ref)
        tchw = torch.from_numpy(clip).to(device).permute(0, 3, 1, 2).float() / 255   # float (T, 3, H, W)
        as_float = apply(tchw, name, severity, seed=13).permute(0, 2, 3, 1).cpu().numpy()
        assert np.array_equal(np.rint(as_float * 255).astype(np.uint8), ref)


def test_torch_renders_frames_in_groups_as_in_one(monkeypatch) -> None:
    from perturb.video.kernels import noise as noise_kernels

    clip = torch.from_numpy(odd_clip((5, 9, 10, 3)))
    params = {"sigma": 0.2}
    whole = noise_kernels.speckle_torch(clip, np.arange(5), KEY, params)
    monkeypatch.setattr(noise_kernels, "TORCH_GROUP", 300)                  # one frame per group
    assert torch.equal(noise_kernels.speckle_torch(clip, np.arange(5), KEY, params), whole)


@pytest.mark.parametrize("hw", [(1, 1), (481, 545), (2, 3)])
@pytest.mark.parametrize("name", NOISE_OPS)
def test_every_frame_size_works(name: str, hw: tuple[int, int]) -> None:
    """Frames whose value count leaves 1-3 values past a chunk once failed in OpenCV."""
    clip = odd_clip((2, *hw, 3), seed=1)
    out = apply(clip, name, 5, seed=0)
    assert out.shape == clip.shape and out.dtype == np.uint8
    assert np.array_equal(out, apply(torch.from_numpy(clip), name, 5, seed=0).numpy())
    if hw == (481, 545):
        assert (out != clip).mean() > 0.2


def clipped_rounded_std(mean_level: float, scale: float) -> float:
    """Exact std of clip(round(mean_level + scale·Z), 0, 255) for Z standard normal."""
    cdf = NormalDist().cdf
    edges = [(k + 0.5 - mean_level) / scale for k in range(255)]
    probs = np.diff([0.0] + [cdf(e) for e in edges] + [1.0])
    levels = np.arange(256)
    mean = probs @ levels
    return float(np.sqrt(probs @ (levels - mean) ** 2))


def mid_grey(frames: int = 16, size: int = 224) -> np.ndarray:
    return np.full((frames, size, size, 3), 128, np.uint8)


@pytest.mark.parametrize("severity", SEVERITIES)
def test_gaussian_std_is_sigma_times_255(severity: int) -> None:
    sigma = table("gaussian_noise")[severity]["sigma"]
    measured = apply(mid_grey(), "gaussian_noise", severity, seed=severity).astype(np.float64).std()
    assert abs(measured / clipped_rounded_std(128, 255 * sigma) - 1) < 0.005
    if severity == 1:                                  # no clipping at 6σ: the plain 255σ
        assert abs(measured / (255 * sigma) - 1) < 0.005


@pytest.mark.parametrize("severity", SEVERITIES)
def test_speckle_std_is_sigma_times_the_level(severity: int) -> None:
    sigma = table("speckle_noise")[severity]["sigma"]
    measured = apply(mid_grey(), "speckle_noise", severity, seed=severity).astype(np.float64).std()
    assert abs(measured / clipped_rounded_std(128, 128 * sigma) - 1) < 0.005


@pytest.mark.parametrize("severity", SEVERITIES)
def test_shot_noise_has_the_poisson_moments(severity: int) -> None:
    photons = table("shot_noise")[severity]["photons"]
    out = apply(mid_grey(), "shot_noise", severity, seed=severity).astype(np.float64)
    row, levels = shot_rows(float(photons))[128], np.arange(256)
    exact_mean = row @ levels
    exact_std = np.sqrt(row @ (levels - exact_mean) ** 2)                # of the rounded output
    assert abs(out.mean() - exact_mean) < 4 * exact_std / np.sqrt(out.size) and abs(exact_mean - 128) < 0.5
    assert abs(out.std() / exact_std - 1) < 0.005
    assert abs(out.std() / (255 * np.sqrt(128 / 255 / photons)) - 1) < 0.03   # Poisson's sqrt(rate)


@pytest.mark.parametrize("severity", SEVERITIES)
def test_impulse_hits_the_stated_fraction(severity: int) -> None:
    amount = table("impulse_noise")[severity]["amount"]
    out = apply(mid_grey(), "impulse_noise", severity, seed=severity)
    n = out.size
    hit = out != 128
    assert abs(hit.mean() - amount) < 4 * np.sqrt(amount * (1 - amount) / n)
    assert abs((out[hit] == 255).mean() - 0.5) < 4 * np.sqrt(0.25 / hit.sum())


@pytest.mark.parametrize("name", NOISE_OPS)
def test_strength_grows_strictly_with_severity(name: str) -> None:
    clip = np.ascontiguousarray(sample_clip(4)[:, ::2, ::2])
    errors = [np.abs(apply(clip, name, s, seed=2).astype(np.int16) - clip).mean() for s in SEVERITIES]
    assert all(a < b for a, b in zip(errors, errors[1:])), errors


def test_opencv_and_torch_round_exact_products_alike() -> None:
    """Speckle's last step: ties (x·f ending in .5) go to even on both backends."""
    import cv2

    x = np.array([1, 3, 5, 7, 1, 3, 255, 2, 9, 11], np.uint8)
    f = np.array([2.5, 0.5, 0.5, 0.5, 0.5, 1.5, 1.0, -0.25, 0.05556, 30.0], np.float32)
    ours = cv2.multiply(x, f, dtype=cv2.CV_8U).reshape(-1)
    ref = (torch.from_numpy(x).float() * torch.from_numpy(f)).round().clamp(0, 255).to(torch.uint8)
    assert ours.tolist() == ref.tolist() == [2, 2, 2, 4, 0, 4, 255, 0, 1, 255]


@pytest.mark.parametrize("name", NOISE_OPS)
def test_the_whole_clip_call_draws_one_key_and_nothing_else(name: str) -> None:
    spec = REGISTRY.get(name)
    rng, ref = np.random.default_rng(8), np.random.default_rng(8)
    clip = odd_clip((3, 5, 6, 3))
    out = perturb_clip(spec, clip, rng, spec.params(2))
    key = KERNELS[name].draw_key(ref)
    assert rng.bit_generator.state == ref.bit_generator.state
    assert np.array_equal(out, KERNELS[name].render_numpy(clip, [0, 1, 2], key, spec.params(2)))
