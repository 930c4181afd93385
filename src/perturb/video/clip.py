"""The clip model: validation and conversion between the accepted clip types.

A clip is a numpy uint8 array (T, H, W, 3), RGB. Also accepted, and returned in kind: a torch
uint8 tensor (T, H, W, C) or a torch float tensor (T, C, H, W) in [0, 1], on any device.
Anything else is a ValueError naming what was expected — never a silent wrong answer. numpy
float arrays are refused rather than rounded to 8 bits behind the caller's back.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

EXPECTED = ("a clip: numpy uint8 (T, H, W, 3) RGB, torch uint8 (T, H, W, 3) "
            "or torch float (T, 3, H, W) in [0, 1]")


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "device")


@dataclass(frozen=True)
class ClipKind:
    """How a clip came in, so the result can be given back the same way."""

    backend: str          # "numpy" or "torch"
    dtype: Any
    layout: str           # "THWC" or "TCHW"
    device: Any = None


def _check_shape(shape: tuple[int, ...], channel_axis: int, layout: str, got: str) -> None:
    if len(shape) != 4:
        raise ValueError(f"expected {EXPECTED}; got {got} with {len(shape)} dimensions {tuple(shape)}"
                         " (a single frame needs a leading time axis: frame[None])")
    if shape[0] == 0:
        raise ValueError(f"expected a clip with at least one frame; got shape {tuple(shape)}")
    if shape[channel_axis] != 3:
        other = 1 if channel_axis == 3 else 3
        if shape[other] == 3:            # the channels sit on the other axis: say which layout is wanted
            want = "(T, H, W, 3) channels-last" if layout == "THWC" else "(T, 3, H, W) channels-first"
            fix = "transpose(0, 2, 3, 1)" if layout == "THWC" else "permute(0, 3, 1, 2)"
            raise ValueError(f"expected a {got} laid out {want}; got shape {tuple(shape)}, which has its "
                             f"channels on the other axis (use clip.{fix})")
        raise ValueError(f"expected 3 RGB channels in a {layout} clip; got {shape[channel_axis]} "
                         f"channels in shape {tuple(shape)} (convert grayscale/RGBA to RGB first)")
    h, w = (shape[1], shape[2]) if layout == "THWC" else (shape[2], shape[3])
    if h == 0 or w == 0:
        raise ValueError(f"expected frames of non-zero size; got shape {tuple(shape)}")


def _check_float_range(lo: float, hi: float, got: str) -> None:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"expected finite float values in [0, 1] in {got}; found NaN or inf")
    if lo < 0 or hi > 1:
        hint = " (it looks like [0, 255]: divide by 255 or pass uint8)" if hi > 1.5 else ""
        # repr, not a rounded format: 1 + 1 ulp must not print as 1
        raise ValueError(f"expected float values in [0, 1] in {got}; found range [{lo!r}, {hi!r}]{hint}")


def torch_layout(clip: Any) -> str:
    """Validate a torch clip; its layout: "THWC" for uint8, "TCHW" for float in [0, 1]."""
    import torch

    got = f"torch {clip.dtype} tensor"
    if clip.dtype == torch.uint8:
        _check_shape(tuple(clip.shape), 3, "THWC", got)
        return "THWC"
    if clip.is_floating_point():
        _check_shape(tuple(clip.shape), 1, "TCHW", got)
        lo, hi = torch.aminmax(_dense_view(clip.detach()))       # one pass for both ends
        _check_float_range(float(lo), float(hi), got)
        return "TCHW"
    raise ValueError(f"expected {EXPECTED}; got {got}")


def _dense_view(x: Any) -> Any:
    """``x`` with its axes reordered so that it is contiguous when its memory is dense in another
    order (channels last, a permuted view): a reduction reads it about 7x faster then, and the
    values are the same."""
    if x.is_contiguous():
        return x
    order = sorted(range(x.dim()), key=lambda d: -x.stride(d))
    view = x.permute(order)
    return view if view.is_contiguous() else x


def to_numpy(clip: Any) -> tuple[np.ndarray, ClipKind]:
    """Validate a clip and return it as uint8 (T, H, W, 3) numpy plus how it came in.

    The returned array may share memory with the input: kernels must never write to it.
    """
    if _is_torch(clip):
        import torch

        layout = torch_layout(clip)
        kind = ClipKind("torch", clip.dtype, layout, clip.device)
        if layout == "THWC":
            return np.ascontiguousarray(clip.detach().cpu().numpy()), kind
        arr = to_uint8_frames(clip, layout)
        return np.ascontiguousarray(arr.cpu().numpy()), kind
    if isinstance(clip, np.ndarray):
        got = f"numpy {clip.dtype} array"
        if clip.dtype == np.uint8:
            _check_shape(clip.shape, 3, "THWC", got)
            return np.ascontiguousarray(clip), ClipKind("numpy", clip.dtype, "THWC")
        if clip.dtype.kind == "f":
            raise ValueError(f"expected {EXPECTED}; got a {got}: numpy clips must be uint8 levels, "
                             "e.g. np.rint(clip * 255).astype(np.uint8) for values in [0, 1]")
        raise ValueError(f"expected {EXPECTED}; got {got}")
    raise ValueError(f"expected {EXPECTED}; got {type(clip).__name__}")


def from_numpy(arr: np.ndarray, kind: ClipKind) -> Any:
    """Give a uint8 (T, H, W, 3) result back in the type, layout, dtype and device it came in."""
    if kind.backend == "numpy":
        return arr
    import torch

    t = torch.from_numpy(np.ascontiguousarray(arr)).to(kind.device)
    if kind.layout == "THWC":
        return t
    return (t.permute(0, 3, 1, 2).to(kind.dtype) / 255.0).contiguous()


def to_levels(clip: Any, layout: str) -> Any:
    """A validated torch clip (:func:`torch_layout`) as float32 (T, 3, H, W) holding integer
    levels 0..255 (float clips quantised by :func:`float_levels`)."""
    import torch

    if layout == "THWC":                     # planar, so that kernels read contiguous frames
        return clip.detach().permute(0, 3, 1, 2).to(torch.float32, memory_format=torch.contiguous_format)
    return float_levels(clip.detach())


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
