"""The one route of a torch clip through the numpy kernels.

On the CPU, OpenCV's frame kernels outrun torch's on almost every pixel-computing op
(benchmarks/README.md, "The CPU route"), so a CPU tensor is read as uint8 levels (a view of a
uint8 clip; a float clip quantised as :func:`.layouts.float_levels` does), rendered by the op's
numpy kernel on at most torch's thread count (one in a DataLoader worker) and given back in kind:
the pixels are the numpy path's, bit for bit. An op whose torch kernel is the faster one on float
clips says so (``Renderer.cpu_kernel = "torch"``: brightness, static_rotate, elastic_transform,
translate). An op with no torch kernel (the codecs) takes this route on every device. The torch
kernels render clips on other devices, and on the CPU inside :func:`torch_kernels_on_cpu`: how
tests and the GPU script's CPU pass run the code a GPU runs.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from .kernels.opencv_frames import at_most_threads
from .layouts import from_host_frames, host_frames

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
    """Whether a validated torch clip of an op with a torch kernel renders through the numpy one
    instead: on the CPU, unless :func:`torch_kernels_on_cpu` asks for the torch ones; a float clip
    only where the op's ``cpu_kernel`` is "numpy" (a uint8 clip is the numpy kernel's input as it is)."""
    if clip.device.type != "cpu" or _torch_on_cpu.get():
        return False
    return layout == "THWC" or cpu_kernel == "numpy"


def render_on_host(kernel: Callable[..., np.ndarray], clip: Any, layout: str, ids: np.ndarray,
                   drawn: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    """Output frames ``ids`` of a torch clip through a numpy ``kernel``, given back in kind (the
    clip's layout, dtype and device)."""
    import torch

    with at_most_threads(torch.get_num_threads()):
        out = kernel(host_frames(clip, layout), ids, drawn, params)
        return from_host_frames(out, layout, clip.dtype, clip.device)
