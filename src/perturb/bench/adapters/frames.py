"""What a model reads of a clip: which frames (and how they are picked), and at what size.

An adapter that sets ``frame_spec`` (a :class:`FrameSpec`) tells the runner it only looks at
those frames, so the runner decodes and perturbs only them. Adapters that declare nothing get
whole clips. Sampling rules, by the pipeline that uses them:

- ``centre``: the centre of each of ``count`` equal segments (TSN-style test sampling);
- ``start``: the start of each segment, ``i * n // count`` (transformers' ``sample_frames``,
  the LLaVA-NeXT-Video and Video-LLaVA cards, Qwen2-VL's ``num_frames`` path);
- ``linspace``: ``count`` points from the first to the last frame inclusive (CLIP4Clip);
- ``fps:N``: N frames per second of video, so the count follows the clip's length.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

SAMPLINGS = ("centre", "start", "linspace")


def check_sampling(sampling: str) -> str:
    """``sampling`` when it names a rule (``centre``, ``start``, ``linspace`` or ``fps:N`` with N > 0)."""
    if sampling in SAMPLINGS:
        return sampling
    if isinstance(sampling, str) and sampling.startswith("fps:"):
        try:
            rate = float(sampling[4:])
        except ValueError:
            rate = -1.0
        if rate > 0 and math.isfinite(rate):
            return sampling
    raise ValueError(f"frame sampling must be one of {', '.join(SAMPLINGS)} or fps:N (N > 0); got {sampling!r}")


def frame_indices(n_frames: int, count: int, sampling: str = "centre") -> np.ndarray:
    """``count`` frame indices of a clip of ``n_frames`` frames under a fixed-count ``sampling`` rule."""
    if n_frames < 1:
        raise ValueError(f"a clip needs at least one frame; got n_frames={n_frames}")
    if sampling == "start":
        return np.minimum(np.arange(count) * n_frames // count, n_frames - 1)
    if sampling == "linspace":
        return np.linspace(0, n_frames - 1, count).round().astype(int)
    if sampling != "centre":
        raise ValueError(f"fixed-count frame sampling must be one of {', '.join(SAMPLINGS)}; got {sampling!r}")
    return np.minimum(((np.arange(count) + 0.5) * n_frames / count).astype(int), n_frames - 1)


def fps_count(n_frames: int, clip_fps: float, rate: float, multiple: int = 1) -> int:
    """Frames sampled at ``rate`` per second from ``n_frames`` frames at ``clip_fps``: at least
    one, at most the clip, rounded down to a multiple of ``multiple`` as Qwen2-VL's processor does
    (and never below one group)."""
    count = min(max(n_frames / clip_fps * rate, 1), n_frames)
    return max(multiple, math.floor(count / multiple) * multiple)


@dataclass(frozen=True)
class FrameSpec:
    """``num_frames`` frames picked by ``sampling`` (None: every frame), resized to ``size`` on the short side.

    ``size`` is a hint for decoding (None: native resolution, the default, so the model's own
    resize is the only one). ``multiple``: the count is rounded to a multiple of it (Qwen2-VL's
    ``temporal_patch_size``). Under ``fps:N`` the count follows the clip's length and frame rate.
    """

    num_frames: int | None
    size: int | None = None
    sampling: str = "centre"
    multiple: int = 1

    def __post_init__(self) -> None:
        for field_name in ("num_frames", "size"):
            value = getattr(self, field_name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"FrameSpec.{field_name} must be a positive int or None; got {value!r}")
        check_sampling(self.sampling)
        if isinstance(self.multiple, bool) or not isinstance(self.multiple, int) or self.multiple < 1:
            raise ValueError(f"FrameSpec.multiple must be a positive int; got {self.multiple!r}")

    @property
    def by_rate(self) -> bool:
        """Whether the count follows the clip's length and frame rate (``fps:N``)."""
        return self.sampling.startswith("fps:")

    @property
    def key(self) -> str:
        """What the embedding cache keys the frame choice by."""
        return f"frames={self.num_frames}:{self.sampling}:x{self.multiple}"

    def count(self, n_frames: int, fps: float | None = None) -> int:
        """How many frames are read from a clip of ``n_frames`` frames at ``fps`` frames per second."""
        if self.sampling.startswith("fps:"):
            if not fps:
                raise ValueError(f"frame sampling {self.sampling} needs the clip's frame rate; decode with "
                                 "--fps, or pick centre, start or linspace")
            return fps_count(n_frames, fps, float(self.sampling[4:]), self.multiple)
        if self.num_frames is None:
            return n_frames
        return self.num_frames

    def indices(self, n_frames: int, fps: float | None = None) -> np.ndarray:
        """The frame indices read from a clip of ``n_frames`` frames (at ``fps``), in reading order."""
        if n_frames < 1:
            raise ValueError(f"a clip needs at least one frame; got n_frames={n_frames}")
        if self.sampling.startswith("fps:"):
            return frame_indices(n_frames, self.count(n_frames, fps), "start")
        if self.num_frames is None:
            return np.arange(n_frames)
        return frame_indices(n_frames, self.num_frames, self.sampling)


def frame_spec_of(impl: Any) -> FrameSpec | None:
    """The adapter's declared :class:`FrameSpec`, or None when it reads whole clips."""
    spec = getattr(impl, "frame_spec", None)
    if spec is None:
        return None
    if not isinstance(spec, FrameSpec):
        raise TypeError(f"{type(impl).__name__}.frame_spec must be a perturb FrameSpec; got {spec!r}")
    return spec
