"""What the builder hands an engine: one input video or image with its outputs, or one caption set."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..registry import Spec
from .items import Item, LabelledItem


@dataclass(frozen=True)
class Preprocess:
    """Optional resampling before perturbing: short side in pixels and frame rate."""

    short_side: int | None = None
    fps: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"short_side": self.short_side, "fps": self.fps}


@dataclass(frozen=True)
class Output:
    """One planned output file of a video task."""

    spec: Spec
    severity: int
    seed: int
    path: str           # relative to the output directory

    @property
    def params(self) -> dict[str, Any]:
        return self.spec.params(self.severity)


@dataclass(frozen=True)
class VideoTask:
    """An input video and the outputs still to make from it."""

    item: Item
    outputs: tuple[Output, ...]
    out_dir: str
    format: str
    preprocess: Preprocess = field(default_factory=Preprocess)

    @property
    def size(self) -> int:
        return len(self.outputs)


@dataclass(frozen=True)
class TextTask:
    """One text perturbation over every caption of the dataset."""

    spec: Spec
    items: tuple[Item, ...]
    seed: int
    out_dir: str
    path: str

    @property
    def size(self) -> int:
        return 1


@dataclass(frozen=True)
class ImageTask:
    """An input image made by a named recipe (:data:`perturb.image.RECIPES`) into the outputs still
    to make: its clean copy (``clean``: the path, None when already complete) and its corruptions."""

    item: LabelledItem
    outputs: tuple[Output, ...]
    out_dir: str
    recipe: str
    clean: str | None = None

    @property
    def size(self) -> int:
        return len(self.outputs) + (self.clean is not None)
