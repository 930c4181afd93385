"""The torch path of :func:`perturb.video.apply`: a torch clip stays a torch clip on its device.

``apply`` sends a torch tensor here when its perturbation has a torch kernel. Pixel ops run on
a float (T, 3, H, W) copy holding the clip's 0..255 values (a float clip is quantised to
uint8 levels first, as on the numpy path) and are rounded back to those levels; temporal ops
only re-index frames, so they work on the tensor as it came. The result has the input's
layout, dtype and device.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..registry import Spec
from ._torch_kernels import KERNELS
from .clip import torch_layout
from .noise_kernels import KERNELS as NOISE_KERNELS
from .noise_kernels import NoiseKernels
from .temporal import INDEX_FUNCTIONS


def on_levels(kernels: NoiseKernels) -> Callable[..., Any]:
    """A noise op's torch renderer as a kernel(x, rng, **params) on float (T, 3, H, W) levels:
    one key from ``rng``, every frame rendered (bit-identical to the numpy path)."""
    import torch

    def kernel(x: Any, rng: np.random.Generator, **params: Any) -> Any:
        frames = x.permute(0, 2, 3, 1).to(torch.uint8)          # the levels are integers already
        out = kernels.render_torch(frames, np.arange(x.shape[0]), kernels.draw_key(rng), params)
        return out.permute(0, 3, 1, 2).to(x.dtype)

    return kernel


# name -> kernel(x, rng, **params) on float (T, 3, H, W) 0..255 values; temporal ones re-index.
TORCH_KERNELS: dict[str, Callable[..., Any]] = {
    **KERNELS, **{name: on_levels(k) for name, k in NOISE_KERNELS.items()}, **INDEX_FUNCTIONS}


def to_levels(clip: Any, layout: str) -> Any:
    """The clip as float32 (T, 3, H, W) holding integer levels 0..255."""
    import torch

    if layout == "THWC":
        return clip.permute(0, 3, 1, 2).to(torch.float32)
    return (clip.detach().to(torch.float32) * 255.0).round_().clamp_(0, 255)


def from_levels(x: Any, layout: str, dtype: Any) -> Any:
    """Round and clip float levels back to the input's layout and dtype."""
    import torch

    x = x.round().clamp_(0, 255)
    if layout == "THWC":
        return x.permute(0, 2, 3, 1).to(torch.uint8).contiguous()
    return (x / 255.0).to(dtype).contiguous()


def run_torch(spec: Spec, clip: Any, rng: np.random.Generator, params: dict[str, Any]) -> Any:
    """Apply ``spec`` to a torch clip with its torch kernel; same layout, dtype and device out."""
    import torch

    layout = torch_layout(clip)
    with torch.no_grad():
        if spec.name in INDEX_FUNCTIONS:
            idx = INDEX_FUNCTIONS[spec.name](clip.shape[0], rng=rng, **params)
            return clip.detach()[torch.as_tensor(idx, device=clip.device)]
        if spec.name in NOISE_KERNELS and layout == "THWC":     # uint8 frames: no float round trip
            noise = NOISE_KERNELS[spec.name]
            frames = clip.detach().contiguous()
            return noise.render_torch(frames, np.arange(clip.shape[0]), noise.draw_key(rng), params)
        out = TORCH_KERNELS[spec.name](to_levels(clip, layout), rng, **params)
        return from_levels(out, layout, clip.dtype)
