"""A corrupted tree read as the runner's source: ``<tree>/<corruption>/<severity>/<class>/<file>``
as (1, H, W, 3) clips (images) or decoded videos, clean ones from ``<tree>/clean`` or a given folder,
so a published ImageNet-C copy and a ``perturb build --recipe`` tree are scored the same way.

``tree_source(path, clean=None)`` gives (items, source); ``read_tree`` lists what a tree holds.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...dataset.items import LabelledItem
from ...registry import REGISTRY
from ..adapters.frames import FrameSpec
from .built import BuiltOutputError
from .sources import CLEAN, CleanClip, ClipMemo
from .tree_layout import TreeLayout, read_layout


def read_tree(path: str | os.PathLike, clean: str | os.PathLike | None = None
              ) -> tuple[list[LabelledItem], list[str], list[int]]:
    """A tree's labelled items (one per clean file, ``<class>/<file>`` ids), the corruptions it
    holds (named under its recipe's suite) and the severities; a one-line ValueError for a folder
    that is not such a tree."""
    layout = read_layout(path, clean)
    return layout.items, layout.perturbations(), sorted({s for v in layout.severities.values() for s in v})


def tree_source(path: str | os.PathLike, clean: str | os.PathLike | None = None,
                memory_mb: int = 1024) -> tuple[list[LabelledItem], "Tree"]:
    """The items of the tree at ``path`` and the source that reads their clips."""
    source = Tree(read_layout(path, clean), memory_mb=memory_mb)
    return source.layout.items, source


class Tree:
    """Clips of a corrupted tree: the saved file of (item, corruption, severity), the clean file of
    the item for ``"clean"``. ``recipe``: the recipe in the tree's dataset.json, or the layout's
    (``imagenet-c`` for images, ``kinetics-c`` for videos) for a published copy without one."""

    def __init__(self, layout: TreeLayout, *, seed: int = 0, memory_mb: int = 1024) -> None:
        self.layout, self.root, self.recipe = layout, layout.root, layout.recipe
        self.seed = seed                 # nothing is drawn: the files are made
        self.memo = ClipMemo(memory_mb)
        self.device = None

    @property
    def settings(self) -> str:           # what the clips are read from (part of the cache key)
        return f"tree:{self.root.resolve()}|clean:{self.layout.clean.resolve()}"

    def fit_to(self, spec: FrameSpec | None) -> None:
        """Nothing to fit: the files are read as they were saved."""

    def describe(self) -> dict[str, Any]:
        """Where clips were read from, for results.json."""
        return {"source": "tree", "tree": str(self.root), "clean": str(self.layout.clean),
                "recipe": self.recipe, "media": self.layout.media,
                "clean_resized": self.layout.raw_clean and self.layout.media == "image"}

    def selection(self) -> tuple[list[str], list[str], list[int]]:
        """The corruptions and severities the tree holds (no text perturbations)."""
        ops, sevs = self.layout.perturbations(), \
            sorted({s for v in self.layout.severities.values() for s in v})
        return ops, [], sevs

    def path(self, item: LabelledItem, perturbation: str, severity: int | None) -> Path | None:
        """The saved file of ``item`` under (perturbation, severity): the clean file's name, or
        the same stem with another suffix (a recipe may save PNGs as JPEGs); None when absent."""
        folder = self.layout.folders.get(REGISTRY.get(perturbation, "video").name)
        if folder is None:
            return None
        cls, name = item.item_id.rsplit("/", 1) if "/" in item.item_id else (item.label, item.item_id)
        where = self.root / folder / str(severity) / cls
        exact = where / name
        if exact.is_file():
            return exact
        stem = Path(name).stem
        others = sorted(where.glob(f"{stem}.*")) if where.is_dir() else []
        return others[0] if others else None

    def missing(self, items: Sequence[LabelledItem], videos: Sequence[tuple[str, int | None]],
                texts: Sequence[str]) -> list[str]:
        """The requested files this tree does not hold."""
        return [f"{name}@{sev} of {it.item_id}" for name, sev in dict.fromkeys(videos) if name != CLEAN
                for it in items if self.path(it, name, sev) is None]

    def read_clean(self, item: LabelledItem) -> np.ndarray:
        """The clean clip: the clean file, through the recipe's resize and crop when it is an
        original from a given folder (as the source's clean evaluation reads it)."""
        if self.layout.media == "image":
            from ...image import RECIPES, read_image
            img = read_image(item.path)
            recipe = RECIPES.get(self.recipe)
            return (recipe.clean(img) if self.layout.raw_clean and recipe else img)[None]
        from ...video.io import read
        return read(item.path, start=item.start, end=item.end)[0]

    def clip(self, item: LabelledItem, perturbation: str, severity: int | None) -> np.ndarray:
        """The saved clip of ``item`` under (perturbation, severity); the clean one for ``"clean"``."""
        if perturbation == CLEAN:
            return self.memo.get(item, self.read_clean)
        path = self.path(item, perturbation, severity)
        if path is None:
            raise BuiltOutputError(f"{self.root}: no file for {item.item_id!r} under {perturbation} "
                                   f"severity {severity}")
        if self.layout.media == "image":
            from ...image import read_image
            return read_image(path)[None]
        from ...dataset.encode import load
        return load(path)

    def identity(self, item: LabelledItem, perturbation: str, severity: int | None) -> str:
        """The file's identity, so a replaced file is encoded again."""
        from ...fingerprint import file_identity
        path = Path(item.path) if perturbation == CLEAN else self.path(item, perturbation, severity)
        try:
            return file_identity(path) if path is not None else ""
        except OSError:
            return ""

    def clean(self, item: LabelledItem, configs: Sequence[tuple[str, int | None]],
              spec: FrameSpec | None) -> CleanClip:
        """The clean clip of ``item`` when ``configs`` ask for it (else none: saved files are read)."""
        if all(p != CLEAN for p, _ in configs):
            return CleanClip(np.zeros((0, 1, 1, 3), np.uint8), 0, np.zeros(0, int))
        clip = self.clip(item, CLEAN, None)
        return CleanClip(clip, len(clip))

    def frames(self, item: LabelledItem, clean: CleanClip, perturbation: str, severity: int | None,
               spec: FrameSpec | None) -> np.ndarray:
        """The frames the model reads (``spec``; None: all) of ``item`` under one configuration."""
        clip = clean.take(None) if perturbation == CLEAN else self.clip(item, perturbation, severity)
        if spec is None:
            return clip
        fps = None
        if spec.by_rate and self.layout.media == "video":      # a video's own rate, from its file
            from ...video.io.probe import probe
            path = Path(item.path) if perturbation == CLEAN else self.path(item, perturbation, severity)
            fps = probe(str(path)).fps
        return clip[spec.indices(len(clip), fps)]

    def captions(self, ids: Sequence[str], texts: Sequence[str], perturbation: str) -> list[str]:
        """A tree holds no captions: the clean texts, and a one-line error for a text perturbation."""
        if perturbation == CLEAN:
            return list(texts)
        raise ValueError(f"{self.root} is a corrupted tree of {self.layout.media}s; it holds no captions "
                         f"for the text perturbation {perturbation!r}")
