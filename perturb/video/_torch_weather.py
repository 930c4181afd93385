"""Torch kernels of the weather ops and rain, on float (N, 3, H, W) frames of 0..255 levels.

The layers come from the host (:func:`.weather.frame_layers`), the same arrays the numpy
kernels use; only the compositing runs on the device, in the numpy kernels' float32 order.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch
import torch.nn.functional as F

from ._torch_kernels import _border
from .rain import DROP_LEVEL, frame_masks, lift_table, pull_terms
from .weather import GRAY_WEIGHTS, frame_layers


def _layers(name: str, x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """The output frames' layers stacked on x's device, channels first."""
    _, _, h, w = x.shape
    stack = np.stack(frame_layers(name, drawn, params, ids, h, w))
    layers = torch.from_numpy(stack).to(x.device)
    return layers[:, None] if layers.ndim == 3 else layers.permute(0, 3, 1, 2)


def _levels(y: torch.Tensor) -> torch.Tensor:
    """[0, 1] values to rounded 0..255 levels, as :func:`._opencv_frames.to_uint8`."""
    return torch.round((y * 255).clamp_(0, 255))


def fog(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    """x·k + fog·255·s·k with k = max / (max + s), max the frame's brightest value on [0, 1]."""
    s = float(params["strength"])
    peak = x.amax(dim=(1, 2, 3), keepdim=True).double() / 255
    k = peak / (peak + s)
    fog = _layers("fog", x, ids, drawn, params)
    return torch.round((x * k.float() + fog * (255 * s * k).float()).clamp_(0, 255))


def frost(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    scale, amount = float(params["scale"]), float(params["frost"])
    return torch.round((scale * x + amount * _layers("frost", x, ids, drawn, params)).clamp_(0, 255))


def snow(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    v = x / 255
    b = float(np.float32(params["blend"]))
    weights = torch.from_numpy(GRAY_WEIGHTS).to(x.device)
    lifted = torch.einsum("nchw,c->nhw", v, weights)[:, None] * 1.5 + 0.5
    return _levels(b * v + (1 - b) * torch.maximum(v, lifted) + _layers("snow", x, ids, drawn, params))


def spatter(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    layer = _layers("spatter", x, ids, drawn, params)
    return torch.round((x * layer[:, :1] + layer[:, 1:]).clamp_(0, 255))


def _exact_sums(x: torch.Tensor, dims: tuple[int, ...], peak: float) -> np.ndarray:
    """Sums over ``dims`` (which end with the last axis) of integer values in 0..peak, exact,
    on the host as float64: rows in float32 where a row's sum stays below 2^24, then float64."""
    if x.shape[-1] * peak < 2**24:
        rows = x.sum(dim=-1)
        return rows.sum(dim=tuple(d for d in dims if d != x.ndim - 1), dtype=torch.float64).cpu().numpy()
    return x.sum(dim=dims, dtype=torch.float64).cpu().numpy()


def _box3(x: torch.Tensor) -> torch.Tensor:
    """3x3 box means with reflect-101 borders (OpenCV's cv2.blur default), from exact integer sums."""
    _, _, h, w = x.shape
    if h > 1 and w > 1:
        p = F.pad(x, (1, 1, 1, 1), mode="reflect")
    else:
        p = x[:, :, _border(h, 1, "reflect", x.device)][:, :, :, _border(w, 1, "reflect", x.device)]
    cols = p[:, :, :, :-2] + p[:, :, :, 1:-1]
    cols += p[:, :, :, 2:]
    box = cols[:, :, :-2] + cols[:, :, 1:-1]
    box += cols[:, :, 2:]
    return box.div_(9)


def rain(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    """The numpy kernel's steps on the device: the host computes the masks and, from per-frame
    sums read back, the lift tables and the final affine terms; the rest is elementwise, in
    place where it can be, with int32 table indices and exact sums."""
    n, c, h, w = x.shape
    mask = torch.from_numpy(frame_masks(drawn, params, ids, h, w)).to(x.device)[:, None].bool()
    sums = _exact_sums(x, (1, 2, 3), 255)
    lift = np.stack([lift_table(float(s), c * h * w) for s in sums]).astype(np.float32)
    lift = torch.from_numpy(lift).to(x.device).reshape(-1)
    offset = torch.arange(n, dtype=torch.int32, device=x.device).view(n, 1, 1, 1) * 256
    lifted = torch.add(x, torch.where(mask, lift.index_select(0, (x.int() + offset).reshape(-1)).view(x.shape), 0))
    box = _box3(lifted).round_()
    blended = torch.where(mask, box.sub_(x).mul_(DROP_LEVEL), 0).add_(x, alpha=255)
    a, b = pull_terms(_exact_sums(blended, (2, 3), 255 * 255), h * w, float(params["darken"]))
    b = torch.from_numpy(b).to(x.device)[:, :, None, None]
    return blended.mul_(torch.tensor(a, device=x.device)).add_(b).clamp_(0, 255).round_()
