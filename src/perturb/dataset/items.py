"""The item stream every dataset reader yields."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Item:
    """One (video, captions) entry of a dataset; ``start``/``end`` in seconds for segments."""

    item_id: str                    # unique in the dataset (video_id, or video_id + segment)
    video_id: str
    video_path: str
    captions: tuple[str, ...]
    start: float | None = None
    end: float | None = None
    group: str | None = None        # e.g. movie or recipe, for grouped MC negatives
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def path(self) -> str:
        """The item's file, under the name labelled items give it."""
        return self.video_path


@dataclass(frozen=True)
class LabelledItem:
    """One (image or video, class) entry of a labelled dataset; ``start``/``end`` in seconds
    for a segment of a video, None for the whole file."""

    item_id: str                    # unique in the dataset (relative path, or clip name)
    path: str
    label: str                      # the class name as the dataset writes it
    kind: str                       # "image" or "video", from the file suffix
    start: float | None = None
    end: float | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
