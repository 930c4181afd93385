"""Torch kernels of the weather ops (:mod:`.weather`): the host's layers, the same composite.

The layers come from :mod:`.weather_layers` on the host (one per clip, cached), so both backends
composite identical layers; the composite is :func:`.weather.composite` itself, evaluated on
tensors. Frames are uint8 (N, H, W, 3) in and out.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch

from . import weather


def _ops(device: torch.device) -> weather.ArrayOps:
    return weather.ArrayOps(torch.maximum, lambda a: a.amax(dim=(1, 2, 3), keepdim=True),
                            lambda v: torch.tensor(v, dtype=torch.float32, device=device))


def _render(op: str, x: torch.Tensor, ids: np.ndarray, drawn: Mapping[str, Any], params) -> torch.Tensor:
    _, h, w, _ = x.shape
    frames = x.to(torch.float32)
    layer = torch.from_numpy(weather.frame_layers(op, ids, drawn, params, h, w)).to(x.device)
    out = weather.composite(op, frames, layer, params, _ops(x.device))
    return out.round().to(torch.uint8)


def fog(x, ids, drawn, params):
    return _render("fog", x, ids, drawn, params)


def frost(x, ids, drawn, params):
    return _render("frost", x, ids, drawn, params)


def snow(x, ids, drawn, params):
    return _render("snow", x, ids, drawn, params)


def spatter(x, ids, drawn, params):
    return _render("spatter", x, ids, drawn, params)
