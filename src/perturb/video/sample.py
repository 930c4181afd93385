"""The bundled sample clip: a camera pan over photographs with a moving object (224x224, 64 frames).

Built by ``scripts/make_sample_clip.py`` from images that ship with scikit-image; decoded once
per process and cached read-only; each call returns its own writable copy, so callers cannot
corrupt the cache and ``torch.from_numpy`` takes it without a warning.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from .io.decode import read

SAMPLE_PATH = Path(__file__).resolve().parents[1] / "assets" / "sample" / "sample.mp4"


@lru_cache(maxsize=1)
def _decoded() -> tuple[np.ndarray, float]:
    if not SAMPLE_PATH.exists():
        raise FileNotFoundError(f"the bundled sample clip is missing at {SAMPLE_PATH}; "
                                "rebuild it with `python scripts/make_sample_clip.py`")
    clip, fps = read(SAMPLE_PATH)
    clip.setflags(write=False)
    return clip, fps


def sample_clip(frames: int | None = None) -> np.ndarray:
    """The sample clip as a fresh writable uint8 (T, 224, 224, 3) RGB array; the first ``frames`` frames."""
    clip = _decoded()[0]
    if frames is None:
        return clip.copy()
    if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or not 1 <= frames <= len(clip):
        raise ValueError(f"frames must be an int in 1..{len(clip)} or None; got {frames!r}")
    return clip[:frames].copy()


def sample_fps() -> float:
    """Frame rate of the sample clip."""
    return _decoded()[1]
