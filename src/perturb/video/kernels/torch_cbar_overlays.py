"""Torch kernels of ImageNet-C-bar's overlays, on float (N, 3, H, W) frames of 0..255 levels.

The layers (cut-out masks, burst weights, refraction fields) come from the host, the same arrays
the numpy kernels use (:mod:`.cbar_overlays`, :mod:`.cbar_caustics`); only the compositing runs
on the device.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import torch

from .cbar_overlays import CUT_LEVEL, checkerboard_mask, groups
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
