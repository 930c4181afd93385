"""Torch kernels of the weather ops and rain, on float (N, 3, H, W) frames of 0..255 levels.

The layers come from the host (:func:`.weather.frame_layers`), the same arrays the numpy
kernels use; only the compositing runs on the device, in the numpy kernels' float32 order.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch

from .noise import lookup
from .torch_blur_camera import exact_sums, padded
from .rain import DROP_LEVEL, frame_masks, lift_table, pull_terms
from .weather import GRAY_WEIGHTS, frame_layers
from .twins import torch_kernel


def _layers(name: str, x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """The output frames' layers stacked on x's device, channels first and contiguous (one host
    copy, reordered as it is stacked), so the compositing below reads them in x's order."""
    _, _, h, w = x.shape
    windows = frame_layers(name, drawn, params, ids, h, w)
    stack = np.stack([win[None] if win.ndim == 2 else win.transpose(2, 0, 1) for win in windows])
    return torch.from_numpy(stack).to(x.device)


def _levels(y: torch.Tensor) -> torch.Tensor:
    """[0, 1] values to rounded 0..255 levels, as :func:`.opencv_frames.to_uint8` (in place)."""
    return _rounded(y.mul_(255))


def _rounded(y: torch.Tensor) -> torch.Tensor:
    """Levels clipped to 0..255 and rounded, in place."""
    return y.clamp_(0, 255).round_()


@torch_kernel("fog")
def fog(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    """x·k + fog·255·s·k with k = max / (max + s), max the frame's brightest value on [0, 1]."""
    s = float(params["strength"])
    peak = x.amax(dim=(1, 2, 3), keepdim=True).double() / 255
    k = peak / (peak + s)
    fog = _layers("fog", x, ids, drawn, params).mul_((255 * s * k).float())
    return _rounded((x * k.float()).add_(fog))


@torch_kernel("frost")
def frost(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    scale, amount = float(params["scale"]), float(params["frost"])
    return _rounded((scale * x).add_(_layers("frost", x, ids, drawn, params).mul_(amount)))


@torch_kernel("snow")
def snow(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    """b·v + (1-b)·max(v, 1.5·grey + 0.5) + flakes on [0, 1] values, in the numpy kernel's float32
    order (on the CPU the render passes a few frames at a time, so the intermediates stay in cache)."""
    b = float(np.float32(params["blend"]))
    wr, wg, wb = (float(c) for c in GRAY_WEIGHTS)
    v = x / 255
    grey = (v[:, 0:1] * wr).add_(v[:, 1:2] * wg).add_(v[:, 2:3] * wb)          # (n, 1, H, W)
    bright = torch.maximum(v, grey.mul_(1.5).add_(0.5)).mul_(1 - b)
    return _levels(v.mul_(b).add_(bright).add_(_layers("snow", x, ids, drawn, params)))


@torch_kernel("spatter")
def spatter(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    layer = _layers("spatter", x, ids, drawn, params)
    return _rounded((x * layer[:, :1]).add_(layer[:, 1:]))


def _box3_sums(x: torch.Tensor) -> torch.Tensor:
    """3x3 box sums with reflect-101 borders (OpenCV's cv2.blur default), exact on integers."""
    p = padded(x, 1, 1, 1, 1, "reflect")
    rows = torch.add(p[:, :, :, :-2], p[:, :, :, 1:-1]).add_(p[:, :, :, 2:])
    return torch.add(rows[:, :, :-2], rows[:, :, 1:-1]).add_(rows[:, :, 2:])


@torch_kernel("rain")
def rain(x: torch.Tensor, ids: np.ndarray, drawn, params: Mapping[str, Any]) -> torch.Tensor:
    """The numpy kernel's steps on the device: the host computes the masks and, from per-frame
    sums read back, the lift tables and the final affine terms; the rest is elementwise and in
    place where it can be, with int32 table indices and exact sums:
    I = 255·x + 220·mask·(round(box3(x + mask·lift[x]) / 9) - x), out = rint(I·a + b)."""
    n, c, h, w = x.shape
    mask = torch.from_numpy(frame_masks(drawn, params, ids, h, w)).to(x.device)[:, None]    # uint8
    sums = exact_sums(x, (2, 3), 255)                                                   # (N, C)
    lift = lift_table(sums.sum(axis=1), c * h * w).astype(np.float32)                # (N, 256)
    offset = torch.arange(n, dtype=torch.int32, device=x.device).view(n, 1, 1, 1) * 256
    lifted = lookup(torch.from_numpy(lift).to(x.device).reshape(-1), x.int().add_(offset))
    blended = _box3_sums(lifted.mul_(mask).add_(x)).div_(9).round_()
    blended.sub_(x).mul_(mask.mul_(DROP_LEVEL)).add_(x, alpha=255)                   # exact integers
    a, b = pull_terms(exact_sums(blended, (2, 3), 255 * 255), h * w, float(params["darken"]))
    b = torch.from_numpy(b).to(x.device)[:, :, None, None]
    return blended.mul_(torch.tensor(a, device=x.device)).add_(b).clamp_(0, 255).round_()
