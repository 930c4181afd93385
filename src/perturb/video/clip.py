"""The clip model: what a clip is, and its validation (conversions: :mod:`.layouts`).

A clip is a numpy uint8 array (T, H, W, 3), RGB. Also accepted, and returned in kind: a torch
uint8 tensor (T, H, W, C) or a torch float tensor (T, C, H, W) in [0, 1], on any device.
Anything else is a ValueError naming what was expected — never a silent wrong answer. numpy
float arrays are refused rather than rounded to 8 bits behind the caller's back.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .layouts import host_frames

EXPECTED = ("a clip: numpy uint8 (T, H, W, 3) RGB, torch uint8 (T, H, W, 3) "
            "or torch float (T, 3, H, W) in [0, 1]")


def is_torch(x: Any) -> bool:
    """Whether ``x`` is a torch tensor (checked without importing torch)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "device")


@dataclass(frozen=True)
class ClipKind:
    """How a clip came in, so the result can be given back the same way."""

    library: str          # the array library: "numpy" or "torch"
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
    if is_torch(clip):
        layout = torch_layout(clip)
        return host_frames(clip, layout), ClipKind("torch", clip.dtype, layout, clip.device)
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
