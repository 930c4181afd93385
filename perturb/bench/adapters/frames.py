"""What a model reads of a clip: which frames, and at what size.

An adapter that sets ``frame_spec`` (a :class:`FrameSpec`) tells the runner it only looks at
those frames, so the runner decodes and perturbs only them. Adapters that declare nothing get
whole clips.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def frame_indices(n_frames: int, count: int) -> np.ndarray:
    """``count`` frame indices spread uniformly over a clip of ``n_frames`` (centre of each segment)."""
    if n_frames < 1:
        raise ValueError(f"a clip needs at least one frame; got n_frames={n_frames}")
    return np.minimum(((np.arange(count) + 0.5) * n_frames / count).astype(int), n_frames - 1)


@dataclass(frozen=True)
class FrameSpec:
    """``num_frames`` uniformly spread frames (None: every frame), resized to ``size`` on the short side.

    ``size`` is a hint for decoding (None: native resolution); the adapter still resizes itself,
    so a source that ignores the hint gives the same embeddings up to resampling.
    """

    num_frames: int | None
    size: int | None = None

    def __post_init__(self) -> None:
        for field_name in ("num_frames", "size"):
            value = getattr(self, field_name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"FrameSpec.{field_name} must be a positive int or None; got {value!r}")

    def indices(self, n_frames: int) -> np.ndarray:
        """The frame indices read from a clip of ``n_frames`` frames, in reading order."""
        if self.num_frames is None:
            return np.arange(n_frames)
        return frame_indices(n_frames, self.num_frames)


def frame_spec_of(impl: Any) -> FrameSpec | None:
    """The adapter's declared :class:`FrameSpec`, or None when it reads whole clips."""
    spec = getattr(impl, "frame_spec", None)
    if spec is None:
        return None
    if not isinstance(spec, FrameSpec):
        raise TypeError(f"{type(impl).__name__}.frame_spec must be a perturb FrameSpec; got {spec!r}")
    return spec
