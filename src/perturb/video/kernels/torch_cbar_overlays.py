"""Torch kernels of ImageNet-C-bar's overlays, on float (N, 3, H, W) frames of 0..255 levels.

The layers (cut-out masks, burst weights, refraction fields) come from the host, the same arrays
the numpy kernels use (:mod:`.cbar_overlays`, :mod:`.cbar_caustics`); only the compositing runs
on the device.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import torch

from .cbar_caustics import caustic_layer_of
from .cbar_draws import groups
from .cbar_overlays import CUT_LEVEL, checkerboard_mask, sparkle_weights
from .twins import torch_kernel


def _stacked(x: torch.Tensor, ids: np.ndarray, params: Mapping[str, Any],
             layer: Callable[[int], np.ndarray]) -> torch.Tensor:
    """The output frames' layers on x's device, (1, ...) when every frame shares one, else (N, ...)."""
    made = [layer(row) for row, _ in groups(ids, params)]
    return torch.from_numpy(np.stack(made)).to(x.device)


@torch_kernel("checkerboard_cutout")
def checkerboard_cutout(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    _, _, h, w = x.shape
    cut = _stacked(x, ids, params, lambda row: checkerboard_mask(drawn, params, row, h, w))
    return x.masked_fill(cut[:, None], float(CUT_LEVEL))


def _bursts(name: str) -> Callable[..., torch.Tensor]:
    def kernel(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
        """The frames blended towards white by each burst in turn, v + w·(255 - v): float32 values
        into every burst, float64 arithmetic, as the numpy kernel (the same pixels)."""
        _, _, h, w = x.shape
        out = torch.empty_like(x)
        for row, at in groups(ids, params):
            weights = torch.tensor(sparkle_weights(name, drawn, params, row, h, w), device=x.device)
            y = x[at].double()
            for k, weight in enumerate(weights):
                y = y + (255 - y).mul_(weight)          # two roundings, as numpy (no fused multiply-add)
                if k < len(weights) - 1:
                    y = y.float().double()
            out[at] = y.round_().clamp_(0, 255)
        return out
    kernel.__qualname__ = kernel.__name__ = name
    return kernel


torch_kernel("sparkles")(_bursts("sparkles"))
torch_kernel("inverse_sparkles")(_bursts("inverse_sparkles"))


@torch_kernel("caustic_refraction")
def caustic_refraction(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    """The frames seen through the draw's water: values v/255 (float32) gathered at the four
    corners of each displaced point and weighted, plus the light, in float64 as the numpy kernel."""
    n, c, h, w = x.shape
    values = torch.nn.functional.pad(x / 255, (1, 1, 1, 1)).reshape(n, c, -1)
    out = torch.empty_like(x)
    for row, at in groups(ids, params):
        corners, weights, light = (torch.tensor(part, device=x.device)     # copies of the cached layer
                                   for part in caustic_layer_of(drawn, params, row, h, w))
        part = values[at]
        y = part.index_select(2, corners[0]).double().mul_(weights[0])
        for k in (1, 2, 3):
            y.add_(part.index_select(2, corners[k]).double().mul_(weights[k]))
        y.add_(light[0]).add_(light[1])
        out[at] = y.clamp_(0, 1).mul_(255).round_().reshape(-1, c, h, w)
    return out
