"""Small in-memory benchmark data for tests and quick checks (clips from the bundled sample video)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from perturb.bench.pipeline.data import BenchData, make_data
from perturb.dataset.items import Item

WORDS = ("red", "green", "blue", "cat", "dog", "car", "tree", "moon", "boat", "sky", "road", "lamp")


def tiny_items(n: int = 6, frames: int = 8, size: int = 32, captions: int = 2) -> list[Item]:
    """``n`` items whose clips are shifted crops of the sample clip, with ``captions`` captions each."""
    import cv2

    from perturb.video.sample import sample_clip

    base = np.asarray(sample_clip(frames))
    items = []
    for i in range(n):
        crop = np.roll(base, 17 * i, axis=2)[:, : base.shape[1] // 2, : base.shape[2] // 2]
        clip = np.stack([cv2.resize(f, (size, size), interpolation=cv2.INTER_AREA) for f in crop])
        caps = tuple(f"a {WORDS[i % len(WORDS)]} {WORDS[(i + k + 3) % len(WORDS)]} scene number {i}"
                     for k in range(captions))
        items.append(Item(f"item{i:02d}", f"item{i:02d}", "", caps, meta={"clip": clip}))
    return items


def write_tiny_dataset(root: str | os.PathLike, n: int = 4, frames: int = 6, size: int = 32,
                       fps: float = 6.0) -> Path:
    """:func:`tiny_items` written as lossless videos plus a generic ``captions.jsonl`` under
    ``root``; returns the captions file (for ``perturb bench --dataset``)."""
    from perturb.fileio import write_jsonl
    from perturb.video.io import write

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for it in tiny_items(n, frames=frames, size=size):
        write(root / f"{it.item_id}.mkv", it.meta["clip"], fps=fps)
        rows += [{"video_id": it.item_id, "video_path": f"{it.item_id}.mkv", "caption": c} for c in it.captions]
    return write_jsonl(root / "captions.jsonl", rows)


def tiny_data(n: int = 6, seed: int = 0, **kwargs) -> BenchData:
    """A :class:`BenchData` over :func:`tiny_items`."""
    return make_data(tiny_items(n, **kwargs), "tiny", "memory", seed=seed)
