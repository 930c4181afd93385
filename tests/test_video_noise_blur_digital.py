"""Noise, blur and digital perturbations: contract, severity ordering and statistics."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from perturb.video import apply, get
from perturb.video.psnr import mean_psnr
from perturb.video.kernels.blur import motion_kernel, render_motion_blur, sample_motion_angles
from perturb.video.io.codec_stream import CODEC_GOP, decode, encode
from perturb.video.kernels.jpeg_mpeg import reencode
from perturb.video.sample import sample_clip
from perturb.video.severity_params import table

NOISE = ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"]
BLUR = ["defocus_blur", "motion_blur", "zoom_blur"]
DIGITAL = ["jpeg", "mpeg1", "mpeg2"]
NAMES = NOISE + BLUR + DIGITAL
SEVERITIES = [1, 2, 3, 4, 5]
FRAMES = 16


def clip16() -> np.ndarray:
    return sample_clip(FRAMES)


@lru_cache(maxsize=None)
def output(name: str, severity: int, seed: int) -> np.ndarray:
    out = apply(clip16(), name, severity, seed=seed)
    out.setflags(write=False)
    return out


def mid_gray(frames: int = 8, size: int = 64) -> np.ndarray:
    return np.full((frames, size, size, 3), 128, np.uint8)


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", NAMES)
def test_contract_on_sample_clip(name: str, severity: int) -> None:
    clip = clip16().copy()
    before = clip.copy()
    out = apply(clip, name, severity, seed=0)
    assert np.array_equal(clip, before), "the input was modified"
    assert out.shape == clip.shape and out.dtype == np.uint8
    assert not np.shares_memory(out, clip)
    assert not np.array_equal(out, clip), "the output equals the input"
    assert np.array_equal(out, output(name, severity, 0)), "same seed, different output"
    if get(name).random:
        assert not np.array_equal(out, output(name, severity, 1)), "another seed, same output"


@pytest.mark.parametrize("name", NAMES)
def test_mean_psnr_strictly_decreasing(name: str) -> None:
    psnrs = [mean_psnr(output(name, s, 0), clip16()) for s in SEVERITIES]
    assert all(np.isfinite(psnrs))
    assert all(a > b for a, b in zip(psnrs, psnrs[1:])), f"{name}: PSNR by severity {psnrs}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", [(1, 32, 32, 3), (4, 8, 8, 3), (3, 9, 13, 3)])
def test_single_frame_tiny_and_odd_clips(name: str, shape: tuple[int, ...]) -> None:
    clip = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    for severity in (1, 5):
        out = apply(clip, name, severity, seed=3)
        assert out.shape == clip.shape and out.dtype == np.uint8


@pytest.mark.parametrize("severity", SEVERITIES)
def test_gaussian_noise_residual_std(severity: int) -> None:
    sigma = table("gaussian_noise")[severity]["sigma"]
    clip = mid_gray()
    out = apply(clip, "gaussian_noise", severity, seed=severity)
    measured = (out.astype(np.float64) - 128).std()
    ref = np.clip(0.5 + np.random.default_rng(99).normal(0, sigma, 1_000_000), 0, 1) * 255
    assert abs(measured / ref.std() - 1) < 0.05


@pytest.mark.parametrize("severity", SEVERITIES)
def test_impulse_noise_changes_the_stated_fraction(severity: int) -> None:
    amount = table("impulse_noise")[severity]["amount"]
    clip = mid_gray()
    out = apply(clip, "impulse_noise", severity, seed=severity)
    changed = out != clip
    assert abs(changed.mean() / amount - 1) < 0.10
    assert set(np.unique(out[changed])) <= {0, 255}
    salt = (out == 255).sum() / changed.sum()
    assert 0.45 < salt < 0.55


@pytest.mark.parametrize("severity", SEVERITIES)
def test_shot_and_speckle_noise_variance(severity: int) -> None:
    x = 128 / 255
    photons = table("shot_noise")[severity]["photons"]
    shot = apply(mid_gray(), "shot_noise", severity, seed=1).astype(np.float64)
    assert abs(shot.std() / (255 * np.sqrt(x / photons)) - 1) < 0.05
    assert abs(shot.mean() - 128) < 1
    sigma = table("speckle_noise")[severity]["sigma"]
    speckle = apply(mid_gray(), "speckle_noise", severity, seed=1).astype(np.float64)
    assert abs(speckle.std() / (255 * x * sigma) - 1) < 0.05


def test_noise_is_drawn_independently_per_frame() -> None:
    out = apply(mid_gray(frames=4), "gaussian_noise", 3, seed=0).astype(np.int16)
    residual = out - 128
    for t in range(1, 4):
        assert abs(np.corrcoef(residual[0].ravel(), residual[t].ravel())[0, 1]) < 0.05


@pytest.mark.parametrize("name", ["defocus_blur", "zoom_blur", "motion_blur"])
def test_blur_keeps_a_flat_clip_flat(name: str) -> None:
    flat = np.full((3, 40, 40, 3), 77, np.uint8)
    assert np.array_equal(apply(flat, name, 5, seed=0), flat)


def test_motion_kernel_is_a_one_sided_gaussian_streak() -> None:
    kernel, anchor = motion_kernel(10, 3, 0.0)
    assert kernel.shape == (1, 21) and anchor == (0, 0)
    assert np.isclose(kernel.sum(), 1)
    assert np.all(np.diff(kernel[0]) <= 0)          # heaviest at the pixel itself, fading away
    diagonal, anchor = motion_kernel(10, 3, 45.0)
    assert diagonal.shape == (15, 15) and anchor == (0, 0)
    assert np.count_nonzero(diagonal - np.diag(np.diag(diagonal))) == 0


def test_motion_blur_angles_are_sampled_apart_from_rendering() -> None:
    clip = clip16()
    angles = sample_motion_angles(np.random.default_rng(5), len(clip))
    assert angles.min() >= -45 and angles.max() <= 45 and len(np.unique(angles)) == len(clip)
    params = table("motion_blur")[3]
    assert np.array_equal(render_motion_blur(clip, angles, **params),
                          apply(clip, "motion_blur", 3, seed=np.random.default_rng(5)))


def test_codec_levels_are_distinct_and_validated() -> None:
    for name in ("mpeg1", "mpeg2"):
        qs = [table(name)[s]["q"] for s in SEVERITIES]
        assert qs == sorted(set(qs)) and 1 <= qs[0] and qs[-1] <= 31
        assert get(name).paper is not None and "31" in get(name).deviation
    with pytest.raises(ValueError, match="1..31"):
        reencode(clip16(), "mpeg4", 40)


@pytest.mark.parametrize("codec", ["mpeg2video", "mpeg4"])
def test_mpeg_goes_through_the_one_codec_stream_and_repeats_exactly(codec: str) -> None:
    """The MPEG ops' round trip is the codec stream's encode and decode; its packets carry
    FFmpeg's zeroed padding, so the mpeg4 decoder (which reads ahead) gives the same frames on
    every run (it did not when packets pointed at bare bytes)."""
    clip = np.ascontiguousarray(sample_clip(24))
    options = {"qmin": "8", "qmax": "8", "g": str(CODEC_GOP), "bf": "0"}
    first = decode(encode(clip, codec, options))
    assert first.shape == clip.shape and mean_psnr(first, clip) > 25
    for _ in range(3):
        assert np.array_equal(reencode(clip, codec, 8), first)
    assert np.array_equal(reencode(clip, codec, 8, keep=np.array([0, 11, 23])), first[[0, 11, 23]])


def test_paper_display_names_resolve() -> None:
    for alias, name in [("Gaussian", "gaussian_noise"), ("Shot", "shot_noise"), ("Impulse", "impulse_noise"),
                        ("Speckle", "speckle_noise"), ("Defocus", "defocus_blur"), ("Motion", "motion_blur"),
                        ("Zoom", "zoom_blur"), ("JPEG", "jpeg"), ("Codec1", "mpeg1"), ("MPEG1", "mpeg1"),
                        ("Codec2", "mpeg2"), ("MPEG2", "mpeg2")]:
        assert get(alias).name == name
