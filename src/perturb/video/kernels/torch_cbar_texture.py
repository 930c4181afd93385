"""Torch kernels of ImageNet-C-bar's texture ops, on float (N, 3, H, W) frames of 0..255 levels.

The layers come from the host (:func:`.cbar_texture.frame_layers`), the same float32 arrays the
numpy kernels use, each sent to the frames' device once per render call; only the compositing
runs there, in the numpy kernel's float32 order (x·scale, then + add, clipped, rounded).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch

from .cbar_texture import LAYERS, Layer, frame_layers
from .twins import register_kernel


def _on(a: np.ndarray | None, device: torch.device) -> torch.Tensor | None:
    """A host (h, w, c) or 0-d layer array as a (c, h, w) or 0-d tensor on ``device``."""
    if a is None:
        return None
    t = torch.tensor(a, device=device)               # a copy: the host layer is cached read-only
    return t.permute(2, 0, 1) if t.ndim == 3 else t


def composite(x: torch.Tensor, layer: Layer) -> torch.Tensor:
    """x·scale + add on float levels (in place), clipped to 0..255 and rounded."""
    scale, add = (_on(a, x.device) for a in layer)
    if scale is not None:
        x.mul_(scale)
    if add is not None:
        x.add_(add)
    return x.clamp_(0, 255).round_()


def texture_frames(name: str):
    """The torch kernel of op ``name``: each frame composited with its layer."""
    def kernel(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
        _, _, h, w = x.shape
        groups = frame_layers(name, drawn, params, ids, h, w)
        if len(groups) == 1:
            return composite(x.clone(), groups[0][0])
        out = torch.empty_like(x)
        for layer, pos in groups:
            index = torch.from_numpy(pos).to(x.device)
            out[index] = composite(x.index_select(0, index), layer)
        return out
    kernel.__name__ = f"{name}_frames"
    return kernel


for _name in LAYERS:
    register_kernel(_name, "torch", texture_frames(_name))
