"""Models for the gate's end-to-end tests: the demo model, and a copy that lost its noise robustness.

``callable:gate_models:noise_sensitive`` adds Gaussian noise to the demo model's video embeddings,
scaled by how far the clip's pixel-noise level exceeds that of clean renders: clean and blurred
clips are untouched, noisy clips are swamped. Noise is
seeded by the clip's bytes, so reruns give identical embeddings.
"""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

EMBEDDING_NOISE = 80.0     # embedding noise norm per unit of pixel-noise level above the floor
NOISE_FLOOR = 0.03         # clean demo clips measure 0.00-0.03 here; gaussian_noise 0.04-0.17


def pixel_noise_level(clip: np.ndarray) -> float:
    """Median absolute difference between horizontally adjacent pixels, in [0, 1]."""
    frames = np.asarray(clip, dtype=np.float32)[:: max(1, len(clip) // 4)].mean(axis=-1)
    return float(np.median(np.abs(np.diff(frames, axis=2)))) / 255.0


class NoiseSensitive:
    """Wraps a dual encoder; video embeddings get noise that grows with the clip's excess pixel noise."""

    def __init__(self, base, scale: float = EMBEDDING_NOISE) -> None:
        self.base, self.scale = base, scale

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self.base.encode_texts(texts)

    def encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        emb = np.asarray(self.base.encode_videos(clips), dtype=np.float32)
        for i, clip in enumerate(clips):
            seed = int.from_bytes(hashlib.sha256(np.ascontiguousarray(clip).tobytes()).digest()[:8], "little")
            noise = np.random.default_rng(seed).standard_normal(emb.shape[1]).astype(np.float32)
            excess = max(0.0, pixel_noise_level(clip) - NOISE_FLOOR)
            emb[i] += self.scale * excess * noise / np.sqrt(emb.shape[1])
        return emb / np.linalg.norm(emb, axis=1, keepdims=True)


def demo() -> object:
    """The bench demo model (trained once per process)."""
    from perturb.demo.model import demo_model
    return demo_model()


def noise_sensitive() -> NoiseSensitive:
    """The demo model, degraded: video embeddings swamped by noise on noisy clips."""
    return NoiseSensitive(demo())
