"""The torch path of perturb.video.apply agrees with the numpy path (on CPU; on CUDA when present):
noise exactly, interpolating renders within one level."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.registry import REGISTRY  # noqa: E402
from perturb.video.api import apply  # noqa: E402
from perturb.video.kernels.twins import registered  # noqa: E402
from perturb.video.render import INDEX, renderer_of  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")

DETERMINISTIC = ["defocus_blur", "zoom_blur", "static_rotate", "sampling", "reverse_sampling"]
RANDOM_SHARED = ["motion_blur", "rotate"]                         # same draws, float rendering
EXACT = ["translate", "jumble", "box_jumble", "freeze", "sampling", "reverse_sampling"]
NOISE = ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"]
TORCH_OPS = ["defocus_blur", "motion_blur", "zoom_blur", "static_rotate", "rotate", "translate"]
TEMPORAL = ["jumble", "box_jumble", "sampling", "reverse_sampling", "freeze"]
# Ops that render a torch clip through their numpy kernel: the codecs run on the CPU by nature.
NUMPY_ONLY = {"jpeg", "mpeg1", "mpeg2", "h264_crf", "h264_abr", "h265_crf", "h265_abr", "bit_error", "packet_loss"}
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def small_clip(frames: int = 5) -> np.ndarray:
    """Real content, small enough for fast tests: a 40x56 crop of the sample clip."""
    return np.ascontiguousarray(sample_clip(frames)[:, 60:100, 80:136])


def level_diff(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


def test_every_listed_op_has_a_torch_kernel() -> None:
    for name in TORCH_OPS:
        assert "torch" in renderer_of(REGISTRY.get(name)).kernels, name
    for name in TEMPORAL:                               # a gather: the same on every array library
        assert renderer_of(REGISTRY.get(name)).reads == INDEX


def video_ops() -> list[str]:
    return [spec.name for spec in REGISTRY.select("video")]


def test_every_op_finds_its_kernels_where_they_are_registered() -> None:
    """Walks the whole registry: every op that computes pixels renders with the numpy kernel and
    the torch twin registered under its name beside their definitions (perturb.video.kernels
    modules), or is a codec (numpy only)."""
    without = set()
    for name in video_ops():
        renderer = renderer_of(REGISTRY.get(name))
        if renderer.reads == INDEX:
            continue                                    # a gather: the same on every array library
        assert renderer.kernels["numpy"] is registered("numpy")[name], name
        kernel = renderer.kernels.get("torch")
        if kernel is None:
            without.add(name)
            continue
        assert kernel is registered("torch")[name], name
        assert kernel.__module__.startswith("perturb.video.kernels."), (name, kernel.__module__)
    assert without == NUMPY_ONLY


@pytest.mark.parametrize("name", [n for n in video_ops() if n not in NUMPY_ONLY])
def test_every_torch_kernel_renders_like_numpy(name: str) -> None:
    """Each op's torch kernel, run on a tiny clip, gives numpy's frames within a level on average."""
    clip = np.ascontiguousarray(sample_clip(4)[:, 60:92, 80:112])
    ours = apply(torch.from_numpy(clip), name, 3, seed=7).numpy()
    ref = apply(clip, name, 3, seed=7)
    assert ours.shape == ref.shape and ours.dtype == np.uint8
    assert np.abs(ours.astype(np.int16) - ref.astype(np.int16)).mean() <= 1.0, name


@pytest.mark.parametrize("severity", [1, 3, 5])
@pytest.mark.parametrize("name", DETERMINISTIC + RANDOM_SHARED)
def test_within_one_level_of_numpy(name: str, severity: int) -> None:
    clip = small_clip()
    ours = apply(torch.from_numpy(clip), name, severity, seed=11).numpy()
    ref = apply(clip, name, severity, seed=11)
    assert ours.shape == ref.shape and ours.dtype == np.uint8
    assert level_diff(ours, ref) <= 1
    assert not np.array_equal(ours, clip)


@pytest.mark.parametrize("shape", [(1, 9, 13, 3), (2, 4, 6, 3)])
@pytest.mark.parametrize("name", ["defocus_blur", "motion_blur", "zoom_blur", "rotate", "translate"])
def test_tiny_frames_smaller_than_the_kernel(name: str, shape: tuple[int, ...]) -> None:
    clip = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    assert level_diff(apply(torch.from_numpy(clip), name, 5, seed=1).numpy(), apply(clip, name, 5, seed=1)) <= 1


@pytest.mark.parametrize("severity", [1, 3, 5])
@pytest.mark.parametrize("name", EXACT)
def test_geometric_and_temporal_draws_equal_numpy_exactly(name: str, severity: int) -> None:
    clip = small_clip(40) if name != "translate" else small_clip()
    for seed in (0, 1, 2):
        assert np.array_equal(apply(torch.from_numpy(clip), name, severity, seed=seed).numpy(),
                              apply(clip, name, severity, seed=seed))


def residual(out: np.ndarray, clip: np.ndarray) -> np.ndarray:
    return out.astype(np.float64) - clip.astype(np.float64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("severity", [1, 5])
@pytest.mark.parametrize("name", NOISE)
def test_noise_is_bit_identical_to_numpy(name: str, severity: int, device: str) -> None:
    clip = np.ascontiguousarray(sample_clip(8)[:, ::2, ::2])            # 8 x 112 x 112, real content
    for seed in (3, 4):
        t_out = apply(torch.from_numpy(clip).to(device), name, severity, seed=seed).cpu().numpy()
        n_out = apply(clip, name, severity, seed=seed)
        assert np.array_equal(t_out, n_out)
        assert residual(n_out, clip).std() > 1


@pytest.mark.parametrize("name", NOISE)
def test_noise_is_seeded_and_per_frame(name: str) -> None:
    clip = torch.from_numpy(np.full((3, 32, 32, 3), 128, np.uint8))
    a, b = apply(clip, name, 3, seed=5), apply(clip, name, 3, seed=5)
    assert torch.equal(a, b)
    assert not torch.equal(a, apply(clip, name, 3, seed=6))
    assert not torch.equal(a[0], a[1])                                 # a new draw every frame


def test_seed_flows_from_the_numpy_generator() -> None:
    clip = torch.from_numpy(small_clip())
    a = apply(clip, "gaussian_noise", 3, seed=np.random.default_rng(9))
    assert torch.equal(a, apply(clip, "gaussian_noise", 3, seed=np.random.default_rng(9)))
    torch.manual_seed(0)
    b = apply(clip, "gaussian_noise", 3, seed=np.random.default_rng(9))
    assert torch.equal(a, b)                                           # global torch state unused


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", ["zoom_blur", "rotate", "translate", "jumble", "gaussian_noise"])
def test_float_tchw_in_float_tchw_out(name: str, dtype, device: str) -> None:
    clip = small_clip()
    x = (torch.from_numpy(clip).permute(0, 3, 1, 2).to(dtype) / 255).to(device)
    before = x.clone()
    out = apply(x, name, 3, seed=4)
    assert out.dtype == dtype and out.device == x.device and out.shape == x.shape
    assert torch.equal(x, before), "the input was modified"
    assert 0 <= float(out.min()) and float(out.max()) <= 1
    ref = apply(clip, name, 3, seed=4)
    got = out.permute(0, 2, 3, 1).cpu().double().numpy() * 255
    assert np.abs(got - ref).max() <= (1e-4 if name == "gaussian_noise" else 1 + 1e-4)   # noise: exact


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["defocus_blur", "motion_blur", "freeze", "impulse_noise"])
def test_uint8_thwc_in_uint8_thwc_out(name: str, device: str) -> None:
    clip = torch.from_numpy(small_clip()).to(device)
    before = clip.clone()
    out = apply(clip, name, 4, seed=2)
    assert out.dtype == torch.uint8 and out.device == clip.device and out.shape == clip.shape
    assert out.is_contiguous()
    assert torch.equal(clip, before)


def test_ops_without_torch_kernel_still_return_torch() -> None:
    clip = torch.from_numpy(small_clip())
    out = apply(clip, "jpeg", 3, seed=0)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.uint8
    assert np.array_equal(out.numpy(), apply(small_clip(), "jpeg", 3, seed=0))


@pytest.mark.parametrize("bad", [torch.zeros((4, 8, 8), dtype=torch.uint8),
                                 torch.zeros((2, 8, 8, 4), dtype=torch.uint8),
                                 torch.full((2, 3, 8, 8), 2.0),
                                 torch.zeros((2, 8, 8, 3), dtype=torch.int32)])
def test_bad_torch_clips_are_rejected(bad) -> None:
    with pytest.raises(ValueError):
        apply(bad, "gaussian_noise", 3, seed=0)
