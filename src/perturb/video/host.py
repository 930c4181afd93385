"""Torch clips on the CPU render with the numpy kernels.

On the CPU, OpenCV's frame kernels outrun torch's on almost every pixel-computing op
(benchmarks/README.md, "The CPU route"), so a CPU tensor is read as uint8 levels (a view of a
uint8 clip; a float clip quantised as :func:`.clip.float_levels` does), rendered by the op's numpy
kernel on at most torch's thread count (one in a DataLoader worker) and given back in kind: the
pixels are the numpy path's, bit for bit. An op whose torch kernel is the faster one on float
clips says so (``Renderer.cpu_kernel = "torch"``: brightness, static_rotate, elastic_transform,
translate). The torch kernels render clips on other devices, and on the CPU inside
:func:`torch_kernels_on_cpu`: how tests and the GPU script's CPU pass run the code a GPU runs.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from .clip import from_uint8_frames, to_uint8_frames
from .kernels.opencv_frames import at_most_threads, float_planes_to_frames, frames_to_float_planes

_torch_on_cpu: ContextVar[bool] = ContextVar("perturb_torch_kernels_on_cpu", default=False)


@contextmanager
def torch_kernels_on_cpu(on: bool = True) -> Iterator[None]:
    """Inside, torch clips on the CPU render with the torch kernels, as on a GPU."""
    token = _torch_on_cpu.set(bool(on))
    try:
        yield
    finally:
        _torch_on_cpu.reset(token)


def renders_on_host(clip: Any, layout: str, cpu_kernel: str = "numpy") -> bool:
    """Whether a validated torch clip renders through the numpy kernel: on the CPU, unless
    :func:`torch_kernels_on_cpu` asks for the torch ones; a float clip only where the op's
    ``cpu_kernel`` is "numpy" (a uint8 clip is the numpy kernel's input as it is)."""
    if clip.device.type != "cpu" or _torch_on_cpu.get():
        return False
    return layout == "THWC" or cpu_kernel == "numpy"


def host_frames(clip: Any, layout: str) -> np.ndarray:
    """A validated CPU torch clip as uint8 (T, H, W, 3) numpy (shares a uint8 clip's memory:
    kernels never write to their input). A float clip is quantised as :func:`.clip.float_levels`
    does: by OpenCV in float32, by torch in float64 for a float64 clip."""
    import torch

    if layout == "THWC":
        return np.ascontiguousarray(clip.detach().numpy())
    if clip.dtype == torch.float64:
        return to_uint8_frames(clip, layout).numpy()
    return float_planes_to_frames(clip.detach().to(torch.float32).contiguous().numpy())


def from_host_frames(frames: np.ndarray, layout: str, dtype: Any) -> Any:
    """uint8 (T, H, W, 3) frames as a CPU torch clip of ``layout`` and ``dtype`` (values level/255
    as :func:`.clip.from_uint8_frames` computes them)."""
    import torch

    frames = torch.from_numpy(np.ascontiguousarray(frames))
    if layout == "THWC" or dtype not in (torch.float32, torch.float64):
        return from_uint8_frames(frames, layout, dtype)
    t, h, w, _ = frames.shape
    out = torch.empty((t, 3, h, w), dtype=dtype)
    frames_to_float_planes(frames.numpy(), out.numpy())
    return out


def render_on_host(kernel: Callable[..., np.ndarray], clip: Any, layout: str, ids: np.ndarray,
                   drawn: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    """Output frames ``ids`` of a CPU torch clip through a numpy ``kernel``, given back in kind."""
    import torch

    with at_most_threads(torch.get_num_threads()):
        return from_host_frames(kernel(host_frames(clip, layout), ids, drawn, params), layout, clip.dtype)
