"""Every layout conversion of a clip, in one place: torch uint8 (T, H, W, 3) and float (T, 3, H, W)
in [0, 1] clips to uint8 (T, H, W, 3) frames or float32 levels 0..255 and back.

On any device torch converts (:func:`to_levels`, :func:`from_levels`, :func:`to_uint8_frames`,
:func:`from_uint8_frames`); a CPU clip going to or from the numpy kernels converts with OpenCV,
frame by frame (:func:`host_frames`, :func:`from_host_frames`). Every route quantises a float
clip as :func:`float_levels` does and divides levels by 255 in the clip's dtype, so all give the
same values.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from .kernels.opencv_frames import frames_in_threads


# ------------------------------------------------------------------------------ torch, any device
def float_levels(x: Any) -> Any:
    """A float clip in [0, 1] as float32 levels rint(value·255), rounded half to even (a new,
    contiguous tensor, whatever the clip's strides). The product is float64 for a float64 clip
    (as ``np.rint(v * 255)`` reads it) and float32 otherwise (exact for float16 and bfloat16):
    float32 would read nextafter(0.5/255, 1) in float64 as level 0. Values in [0, 1] need no
    clipping. The one quantiser of float clips: every route reads the same levels."""
    import torch

    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    out = torch.empty(x.shape, dtype=work, device=x.device)
    levels = torch.mul(x, 255.0, out=out).round_() if x.dtype == work else \
        out.copy_(x).mul_(255.0).round_()
    return levels if work == torch.float32 else levels.to(torch.float32)


def to_levels(clip: Any, layout: str) -> Any:
    """A validated torch clip (:func:`.clip.torch_layout`) as float32 (T, 3, H, W) holding integer
    levels 0..255 (float clips quantised by :func:`float_levels`)."""
    import torch

    if layout == "THWC":                     # planar, so that kernels read contiguous frames
        return clip.detach().permute(0, 3, 1, 2).to(torch.float32, memory_format=torch.contiguous_format)
    return float_levels(clip.detach())


def from_levels(x: Any, layout: str, dtype: Any, out: Any = None) -> Any:
    """Float levels rounded and clipped back to a torch clip of ``layout`` and ``dtype`` (written
    into ``out`` when given); ``x`` (a kernel's output, never the caller's clip) is rounded and
    clipped in place."""
    import torch

    x = x.round_().clamp_(0, 255)
    if layout == "THWC":
        t, c, h, w = x.shape
        out = torch.empty((t, h, w, c), dtype=torch.uint8, device=x.device) if out is None else out
        return out.copy_(x.permute(0, 2, 3, 1))
    if out is None:
        return x.to(dtype, memory_format=torch.contiguous_format).div_(255.0)
    return torch.div(x, 255.0, out=out) if dtype == torch.float32 else out.copy_(x).div_(255.0)


def to_uint8_frames(clip: Any, layout: str, out: Any = None) -> Any:
    """A torch clip as contiguous uint8 (T, H, W, 3) frames (float clips quantised as to_levels),
    written into ``out`` when given."""
    import torch

    if layout == "THWC":
        return clip.detach().contiguous() if out is None else out.copy_(clip)
    t, c, h, w = clip.shape
    out = torch.empty((t, h, w, c), dtype=torch.uint8, device=clip.device) if out is None else out
    return out.copy_(to_levels(clip, layout).permute(0, 2, 3, 1))      # cast and transpose in one pass


def from_uint8_frames(frames: Any, layout: str, dtype: Any, out: Any = None) -> Any:
    """uint8 (T, H, W, 3) frames back to a torch clip of ``layout`` and ``dtype``, written into
    ``out`` when given."""
    import torch

    if layout == "THWC":
        return frames if out is None else out.copy_(frames)
    if out is None:
        return frames.permute(0, 3, 1, 2).to(dtype, memory_format=torch.contiguous_format).div_(255.0)
    return out.copy_(frames.permute(0, 3, 1, 2)).div_(255.0)


# --------------------------------------------------------------------------- numpy, the host
def host_frames(clip: Any, layout: str) -> np.ndarray:
    """A validated torch clip as uint8 (T, H, W, 3) numpy: the numpy kernels' input. A uint8 CPU
    clip shares its memory (kernels never write to their input); a float CPU clip is quantised as
    :func:`float_levels` does: by OpenCV in float32, by torch in float64 for a float64 clip. A clip
    on another device is converted there and copied to the host."""
    import torch

    if clip.device.type != "cpu":
        return to_uint8_frames(clip, layout).cpu().numpy()
    if layout == "THWC":
        return np.ascontiguousarray(clip.detach().numpy())
    if clip.dtype == torch.float64:
        return to_uint8_frames(clip, layout).numpy()
    return float_planes_to_frames(clip.detach().to(torch.float32).contiguous().numpy())


def from_host_frames(frames: np.ndarray, layout: str, dtype: Any, device: Any = "cpu") -> Any:
    """uint8 (T, H, W, 3) frames as a torch clip of ``layout`` and ``dtype`` on ``device`` (values
    level/255 as :func:`from_uint8_frames` computes them)."""
    import torch

    frames = torch.from_numpy(np.ascontiguousarray(frames))
    if torch.device(device).type != "cpu":
        return from_uint8_frames(frames.to(device), layout, dtype)
    if layout == "THWC" or dtype not in (torch.float32, torch.float64):
        return from_uint8_frames(frames, layout, dtype)
    t, h, w, _ = frames.shape
    out = torch.empty((t, 3, h, w), dtype=dtype)
    frames_to_float_planes(frames.numpy(), out.numpy())
    return out


def float_planes_to_frames(planes: np.ndarray) -> np.ndarray:
    """float32 (T, 3, H, W) values in [0, 1] as uint8 (T, H, W, 3) levels rint(value·255), the
    float32 product rounded half to even as torch's round does (OpenCV, frame by frame)."""
    if planes.dtype != np.float32 or planes.ndim != 4 or planes.shape[1] != 3:
        raise ValueError(f"expected float32 (T, 3, H, W) planes; got {planes.dtype} {planes.shape}")
    t, _, h, w = planes.shape
    out = np.empty((t, h, w, 3), np.uint8)
    frames_in_threads(t, lambda i: cv2.merge([cv2.convertScaleAbs(p, alpha=255.0) for p in planes[i]], dst=out[i]))
    return out


@lru_cache(maxsize=4)
def _level_values(dtype: str) -> np.ndarray:
    """(1, 256) table of level/255 in ``dtype`` (the division correctly rounded, as torch's)."""
    table = (np.arange(256, dtype=dtype) / np.array(255, dtype)).reshape(1, 256)
    table.setflags(write=False)
    return table


def frames_to_float_planes(frames: np.ndarray, out: np.ndarray) -> np.ndarray:
    """uint8 (T, H, W, 3) levels written into float32 or float64 (T, 3, H, W) ``out`` as level/255."""
    if out.dtype not in (np.float32, np.float64) or out.shape != (frames.shape[0], 3, *frames.shape[1:3]):
        raise ValueError(f"expected float32/float64 (T, 3, H, W) planes for {frames.shape} frames; "
                         f"got {out.dtype} {out.shape}")
    table = _level_values(out.dtype.name)

    def convert(i: int) -> None:
        for c, plane in enumerate(cv2.split(frames[i])):
            cv2.LUT(plane, table, dst=out[i, c])

    frames_in_threads(len(frames), convert)
    return out
