"""Torch clips rendered a few frames at a time on the CPU equal one pass over the whole clip, and
the shared torch plumbing (one padding function, tables cached per device) against plain references."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.registry import REGISTRY  # noqa: E402
from perturb.video import render  # noqa: E402
from perturb.video.kernels.torch_blur_camera import padded  # noqa: E402
from perturb.video.api import draw  # noqa: E402
from perturb.video.kernels.noise import device_copy, gaussian_table  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")

FRAME_OPS = [s.name for s in REGISTRY.select("video") if render.renderer_of(s).reads == render.FRAME
             and ("torch" in render.renderer_of(s).kernels or s.name == "jpeg")]   # jpeg: through numpy


def small_clip(frames: int = 7) -> np.ndarray:
    return np.ascontiguousarray(sample_clip(frames)[:, 40:72, 60:100])           # 32 x 40, real content


def test_the_frame_local_torch_ops_are_all_listed() -> None:
    assert {"brightness", "contrast", "saturate", "rain", "gaussian_noise", "zoom_blur", "snow",
            "translate", "rotate", "pixelate", "jpeg"} <= set(FRAME_OPS)


@pytest.mark.parametrize("name", FRAME_OPS)
def test_a_few_frames_per_pass_equals_one_pass(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    clip = small_clip()
    d = draw(name, 4, len(clip), seed=3)
    inputs = [torch.from_numpy(clip), torch.from_numpy(clip).permute(0, 3, 1, 2).double().div(255).contiguous()]
    frames = [6, 0, 3, 4, 1]                                            # unsorted: passes of 3, 2 and back
    for x in inputs:
        monkeypatch.setattr(render, "CPU_PASS_VALUES", 1 << 30)
        whole, part = d.render_clip(x), d.render_clip(x, frames)
        monkeypatch.setattr(render, "CPU_PASS_VALUES", 3 * 32 * 40 * 3)      # three frames a pass
        assert render.frames_per_pass(x) == 3
        got = d.render_clip(x)
        assert got.dtype == x.dtype and got.shape == x.shape and got.is_contiguous()
        assert torch.equal(got, whole)
        assert torch.equal(d.render_clip(x, frames), part)
        assert torch.equal(part, whole[frames])


def test_frames_per_pass_keeps_every_frame_in_one_pass_off_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "CPU_PASS_VALUES", 1000)
    assert render.frames_per_pass(torch.zeros(9, 3, 10, 10)) == 3
    assert render.frames_per_pass(torch.zeros(9, 3, 100, 100)) == 1                # at least one
    assert render.frames_per_pass(torch.zeros(9, 3, 10, 10, device="meta")) == 9


def fold(i: int, n: int, mode: str) -> int:
    """A padded index's source, one step at a time: mirrored (reflect-101) or clamped."""
    if mode == "replicate" or n == 1:
        return min(max(i, 0), n - 1)
    while not 0 <= i < n:
        i = -i if i < 0 else 2 * (n - 1) - i
    return i


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("pads", [(1, 1, 1, 1), (2, 0, 3, 1), (7, 12, 9, 5), (0, 0, 0, 0)])
@pytest.mark.parametrize("hw", [(4, 5), (1, 3), (6, 1)])
def test_padding_equals_index_folding_at_any_size(mode: str, pads: tuple[int, ...], hw: tuple[int, int]) -> None:
    left, right, top, bottom = pads
    h, w = hw
    x = torch.arange(2 * 3 * h * w, dtype=torch.float32).view(2, 3, h, w)
    got = padded(x, left, right, top, bottom, mode)
    rows = [fold(i, h, mode) for i in range(-top, h + bottom)]
    cols = [fold(j, w, mode) for j in range(-left, w + right)]
    assert torch.equal(got, x[:, :, rows][:, :, :, cols])


def test_tables_travel_to_a_device_once_and_keep_their_values() -> None:
    a = device_copy(gaussian_table, (0.08,), torch.device("cpu"), torch.float32)
    assert device_copy(gaussian_table, (0.08,), torch.device("cpu"), torch.float32) is a
    assert a.dtype == torch.float32 and np.array_equal(a.numpy(), gaussian_table(0.08).astype(np.float32))
    assert device_copy(gaussian_table, (0.09,), torch.device("cpu"), torch.float32) is not a
