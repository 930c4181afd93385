"""A tiny deterministic dual encoder (colour layout + hashed words) for smoke tests, no weights."""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from .frames import FrameSpec, frame_indices

TOY_FRAMES = 4


class ToyEncoder:
    """Videos: a fixed projection of a 4x4 colour grid; texts: hashed bag of words. Not a real model."""

    def __init__(self, dim: int = 32) -> None:
        self.dim = dim
        self.cache_version = f"toy-1:{dim}"      # fixed code: the dimension is all that varies
        self.frame_spec = FrameSpec(TOY_FRAMES)          # the runner hands over only these frames
        self.projection = np.random.default_rng(dim).standard_normal((4 * 4 * 3, dim)).astype(np.float32)

    def encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        feats = []
        for clip in clips:
            clip = np.asarray(clip, dtype=np.float32)[frame_indices(len(clip), TOY_FRAMES)].mean(axis=0) / 255.0
            h, w = clip.shape[:2]
            grid = clip[: h - h % 4, : w - w % 4].reshape(4, (h - h % 4) // 4, 4, (w - w % 4) // 4, 3)
            feats.append(grid.mean(axis=(1, 3)).ravel())
        return np.stack(feats) @ self.projection

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                h = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little")
                out[i, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        return out
