"""Cheap per-value randomness for the noise ops: one 16-bit word per value, turned into a draw by a table.

Noise on a uint8 clip needs a random draw for each of T·H·W·3 values. Every value costs one
16-bit counter-based word (:mod:`.keyed_words`: a function of the clip's key, the frame index
and the value's position), turned into the draw through a small table that numpy and torch share:

- :func:`normal_table`: the standard normal's 65,536 quantiles at (j + 1/2)/65,536, so a
  uniform word picks a normal value. Probabilities are resolved to 2^-16 and the tails are cut
  at ±4.33σ; the variance is 0.99985 of the exact one. After scaling and rounding to uint8
  levels this is indistinguishable from a float normal for any measurement on a clip.
- :func:`level_tables`: any per-value map whose output depends on the input level only (shot
  noise): 256 discrete distributions, one alias table each (top byte of the word picks a column,
  low byte decides between the column and its alias, so cell probabilities are resolved to
  2^-16).
- :func:`hit_threshold`: impulse noise from the same single word per value: below a threshold
  is a hit, and the lower half of the hits is pepper.

:func:`render_values` runs a numpy sampler over requested frames, CHUNK values at a time, with
frames on the kernels' thread pool (:func:`.opencv_frames.run_parallel`; numpy releases the GIL in
these loops), so a worker held to one OpenCV thread (the dataset builder's) stays on one. The
result depends on the key and frame indices only, never on the number of threads or the chunking.
"""
from __future__ import annotations

from functools import lru_cache
from statistics import NormalDist
from typing import Callable

import cv2
import numpy as np

from .opencv_frames import run_parallel
from .keyed_words import check_frame_indices, frame_seeds, words_numpy

WORDS = 1 << 16
CHUNK = 1 << 18                 # values per step (even): a 224² frame in one, big frames in pieces
MIN_VALUES = 8                  # OpenCV reads an array of 4 values or fewer as a scalar: pad to this


def check_frames(frames: np.ndarray) -> np.ndarray:
    """``frames`` as a contiguous uint8 (F, H, W, 3) array, or a ValueError."""
    if not isinstance(frames, np.ndarray) or frames.dtype != np.uint8 or frames.ndim != 4 \
            or frames.shape[3] != 3:
        got = f"{frames.dtype} {frames.shape}" if isinstance(frames, np.ndarray) else type(frames).__name__
        raise ValueError(f"expected uint8 frames of shape (F, H, W, 3); got {got}")
    return np.ascontiguousarray(frames)


def render_values(frames: np.ndarray, frame_indices: np.ndarray, key: int,
                  sample: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """A new uint8 array: each frame's values ``x`` become ``sample(x, words)`` (1-D, same length).

    Frame t draws the words of frame index ``frame_indices[t]`` under ``key``, so rendering a
    subset of a clip's frames gives exactly those frames of the whole clip.
    """
    frames = check_frames(frames)
    seeds = frame_seeds(key, check_frame_indices(frame_indices, len(frames)))
    out = np.empty_like(frames)
    n = frames[0].size if len(frames) else 0

    def frame(t: int) -> None:
        x, o = frames[t].reshape(-1), out[t].reshape(-1)
        for start in range(0, n, CHUNK):
            stop = min(start + CHUNK, n)
            w = words_numpy(int(seeds[t]), n, start, stop)
            if stop - start < MIN_VALUES:
                pad = MIN_VALUES - (stop - start)
                o[start:stop] = sample(np.pad(x[start:stop], (0, pad)), np.pad(w, (0, pad)))[:stop - start]
            else:
                o[start:stop] = sample(x[start:stop], w)

    run_parallel(frame, range(len(frames)))
    return out


@lru_cache(maxsize=1)
def normal_table() -> np.ndarray:
    """The 65,536 standard normal quantiles at (j + 1/2) / 65,536 (float64, read-only)."""
    inv = NormalDist().inv_cdf
    table = np.array([inv((j + 0.5) / WORDS) for j in range(WORDS // 2)])
    table = np.concatenate([table, -table[::-1]])          # exactly symmetric
    table.setflags(write=False)
    return table


def hit_threshold(amount: float) -> int:
    """Words below this are impulse hits: 2·round(amount·2^15), split evenly into pepper and salt."""
    if not 0 <= amount <= 1:
        raise ValueError(f"expected an amount in [0, 1]; got {amount!r}")
    return 2 * round(amount * WORDS / 2)


def hit_words(x: np.ndarray, w: np.ndarray, amount: float) -> np.ndarray:
    """Impulse noise on values ``x`` from one uniform 16-bit word each (``w``, same shape, > 4 values).

    A word below :func:`hit_threshold` is a hit (probability ``amount`` resolved to 2^-15); hits
    in the lower half of that range become 0, the rest 255, so salt and pepper are exactly even.
    """
    below = hit_threshold(amount)
    if below >= WORDS:                                   # every value is hit
        return np.where(w < WORDS // 2, np.uint8(0), np.uint8(255))
    salt = cv2.compare(w, below, cv2.CMP_LT)            # 255 at hits
    keep = cv2.compare(w, below // 2, cv2.CMP_GE)       # 0 at pepper
    return cv2.min(cv2.max(x, salt), keep).reshape(x.shape)


# ------------------------------------------------------------------------ per-level sampling
def alias_row(pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table of a 256-outcome pmf: keep thresholds in 0..256 and alias outcomes."""
    n = len(pmf)
    scaled = pmf / pmf.sum() * n
    keep = np.ones(n)
    alias = np.arange(n)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        keep[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    return np.rint(keep * 256).astype(np.uint16), alias.astype(np.uint8)


def level_tables(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flat (level · 256 + column) thresholds and aliases from a (256, 256) table of pmfs."""
    if rows.shape != (256, 256) or not np.all(rows >= 0):
        raise ValueError(f"expected a (256, 256) table of non-negative probabilities; got {rows.shape}")
    pairs = [alias_row(r) for r in rows]
    keep = np.concatenate([p[0] for p in pairs])
    alias = np.concatenate([p[1] for p in pairs])
    keep.setflags(write=False)
    alias.setflags(write=False)
    return keep, alias


def packed_levels(tables: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """:func:`level_tables` in one uint16 per cell: threshold (0..255) | alias << 8.

    A threshold of 256 (always the column) becomes 255 with the column itself as alias, which
    draws the same: one gather per value instead of two.
    """
    keep, alias = tables
    column = np.tile(np.arange(256, dtype=np.uint16), len(keep) // 256)
    full = keep >= 256
    threshold = np.where(full, 255, keep).astype(np.uint16)
    packed = threshold | (np.where(full, column, alias).astype(np.uint16) << 8)
    packed.setflags(write=False)
    return packed
