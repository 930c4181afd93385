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


@dataclass(frozen=True)
class Form:
    """What an array is checked as, for the words of its errors: a clip (T, ...), or an
    array with another leading axis or none (an image, a batch of images: :mod:`perturb.image`)."""

    noun: str             # "clip", "image", "image batch"
    expected: str         # what is accepted, in a clause
    lead: str = "T"       # the leading axis before (H, W, 3) / (3, H, W): "T", "B" or ""
    hint: str = " (a single frame needs a leading time axis: frame[None])"   # after a wrong rank
    empty: str = "a clip with at least one frame"      # what a zero-length leading axis lacks
    plural: str = "clips"                               # what numpy ones must hold uint8 levels of

    def axes(self, frame: str) -> str:
        """The dimensions of ``frame`` ("HWC" or "CHW") under this form: "(T, H, W, 3)"."""
        return "(" + ", ".join("3" if a == "C" else a for a in self.lead + frame) + ")"

    def permutation(self, frame: str) -> str:
        """The axis order that lays the other frame layout out as ``frame``: "0, 2, 3, 1"."""
        have = self.lead + ("CHW" if frame == "HWC" else "HWC")
        return ", ".join(str(have.index(a)) for a in self.lead + frame)


CLIP = Form("clip", EXPECTED)


def _check_shape(shape: tuple[int, ...], layout: str, got: str, form: Form = CLIP) -> None:
    frame = layout.removeprefix("T")                     # "HWC" or "CHW"
    lead = len(form.lead)
    if len(shape) != lead + 3:
        raise ValueError(f"expected {form.expected}; got {got} with {len(shape)} dimensions {tuple(shape)}"
                         + form.hint)
    if lead and shape[0] == 0:
        raise ValueError(f"expected {form.empty}; got shape {tuple(shape)}")
    channel_axis = lead + frame.index("C")
    if shape[channel_axis] != 3:
        other = lead + (0 if frame == "HWC" else 2)       # where the other layout keeps its channels
        if shape[other] == 3:            # the channels sit on the other axis: say which layout is wanted
            kind = "channels-last" if frame == "HWC" else "channels-first"
            verb = "permute" if got.endswith("tensor") else "transpose"     # torch's transpose swaps two axes
            raise ValueError(f"expected a {got} laid out {form.axes(frame)} {kind}; got shape {tuple(shape)}, "
                             f"which has its channels on the other axis (use {form.noun.split()[-1]}."
                             f"{verb}({form.permutation(frame)}))")
        raise ValueError(f"expected 3 RGB channels in a {form.lead}{frame} {form.noun}; got {shape[channel_axis]} "
                         f"channels in shape {tuple(shape)} (convert grayscale/RGBA to RGB first)")
    h, w = (shape[lead], shape[lead + 1]) if frame == "HWC" else (shape[lead + 1], shape[lead + 2])
    if h == 0 or w == 0:
        raise ValueError(f"expected {'frames' if form.lead == 'T' else 'images'} of non-zero size; "
                         f"got shape {tuple(shape)}")


def _check_float_range(lo: float, hi: float, got: str) -> None:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"expected finite float values in [0, 1] in {got}; found NaN or inf")
    if lo < 0 or hi > 1:
        hint = " (it looks like [0, 255]: divide by 255 or pass uint8)" if hi > 1.5 else ""
        # repr, not a rounded format: 1 + 1 ulp must not print as 1
        raise ValueError(f"expected float values in [0, 1] in {got}; found range [{lo!r}, {hi!r}]{hint}")


def torch_layout(clip: Any, form: Form = CLIP) -> str:
    """Validate a torch clip (or what ``form`` says it is); its layout: "THWC" for uint8, "TCHW"
    for float in [0, 1] (the layout of the clip it makes, whatever its leading axis)."""
    import torch

    got = f"{clip.dtype} tensor"
    if clip.dtype == torch.uint8:
        _check_shape(tuple(clip.shape), "THWC", got, form)
        return "THWC"
    if clip.is_floating_point():
        _check_shape(tuple(clip.shape), "TCHW", got, form)
        lo, hi = torch.aminmax(_dense_view(clip.detach()))       # one pass for both ends
        _check_float_range(float(lo), float(hi), got)
        return "TCHW"
    raise ValueError(f"expected {form.expected}; got {got}")


def validate(x: Any, form: Form = CLIP) -> str | None:
    """Check ``x`` against the clip model (or ``form``) without converting it: its torch layout
    (:func:`torch_layout`), None for a numpy uint8 array."""
    if is_torch(x):
        return torch_layout(x, form)
    if isinstance(x, np.ndarray):
        got = f"numpy {x.dtype} array"
        if x.dtype == np.uint8:
            _check_shape(x.shape, "THWC", got, form)
            return None
        if x.dtype.kind == "f":
            noun = form.noun.split()[-1]
            raise ValueError(f"expected {form.expected}; got a {got}: numpy {form.plural} must be uint8 levels, "
                             f"e.g. np.rint({noun} * 255).astype(np.uint8) for values in [0, 1]")
        raise ValueError(f"expected {form.expected}; got {got}")
    raise ValueError(f"expected {form.expected}; got {type(x).__name__}")


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
    layout = validate(clip)
    if layout is not None:
        return host_frames(clip, layout), ClipKind("torch", clip.dtype, layout, clip.device)
    return np.ascontiguousarray(clip), ClipKind("numpy", clip.dtype, "THWC")
