"""Cheap per-value randomness for the noise ops: 16-bit words instead of a float draw per value.

Noise on a uint8 clip needs a random draw for each of T·H·W·3 values, and numpy's float
samplers (ziggurat normals, Poisson) dominate the cost. Here every value costs one 16-bit word
from the Generator, turned into the draw through a small table:

- :func:`normal_table`: the standard normal's 65,536 quantiles at (j + 1/2)/65,536, so a
  uniform word picks a normal value. Probabilities are resolved to 2^-16 and the tails are cut
  at ±4.33σ; the variance is 0.99985 of the exact one. After scaling and rounding to uint8
  levels this is indistinguishable from a float normal for any measurement on a clip.
- :func:`sample_levels`: any per-value map whose output depends on the input level only (shot
  noise): 256 discrete distributions, one alias table each (top byte of the word picks a column,
  low byte decides between the column and its alias, so cell probabilities are resolved to
  2^-16).

- :func:`hit_words`: impulse noise from the same single word per value: below a threshold is a
  hit, and the lower half of the hits is pepper.

Words are the raw output of the bit generator (four per 64-bit draw). Every frame draws from its
own child Generator (SFC64, the fastest of numpy's bit generators), seeded by one draw per frame
from the caller's (:func:`frame_generators`), so a clip perturbed in consecutive chunks of frames
with one Generator gives exactly the whole-clip result (the dataset builder streams noise that way).
Frames run on the kernels' thread pool (:func:`._opencv_frames.run_parallel`; numpy releases the GIL
in these loops), so a worker held to one OpenCV thread (the dataset builder's) stays on one. The
result depends on the seed only, never on the number of threads.
"""
from __future__ import annotations

from functools import lru_cache
from statistics import NormalDist
from typing import Callable

import cv2
import numpy as np

from ._opencv_frames import run_parallel

WORDS = 1 << 16
CHUNK = 1 << 18                 # values per step: a 224² frame in one, big frames in pieces


def words(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform 16-bit words: the bit generator's raw 64-bit output cut in four."""
    return rng.bit_generator.random_raw((n + 3) // 4).view(np.uint16)[:n]


@lru_cache(maxsize=1)
def normal_table() -> np.ndarray:
    """The 65,536 standard normal quantiles at (j + 1/2) / 65,536 (float64, read-only)."""
    inv = NormalDist().inv_cdf
    table = np.array([inv((j + 0.5) / WORDS) for j in range(WORDS // 2)])
    table = np.concatenate([table, -table[::-1]])          # exactly symmetric
    table.setflags(write=False)
    return table


def frame_generators(rng: np.random.Generator, frames: int) -> list[np.random.Generator]:
    """One child Generator (SFC64) per frame, seeded by ``frames`` sequential draws from ``rng``.

    Sequential draws concatenate across calls, so a clip cut into consecutive chunks and
    passed chunk by chunk with the same ``rng`` gets the same children as in one call.
    """
    return [np.random.Generator(np.random.SFC64(int(s))) for s in rng.integers(0, 2**63, size=frames)]


def per_frame_draws(clip: np.ndarray, rng: np.random.Generator,
                    fn: Callable[[np.ndarray, np.ndarray, np.random.Generator], None]) -> np.ndarray:
    """A new uint8 clip filled by ``fn(frame, out_frame, generator)`` with each frame's own child.

    Frames run on the kernels' thread pool; the result depends on the seed only.
    """
    clip = np.ascontiguousarray(clip)
    out = np.empty_like(clip)
    gens = frame_generators(rng, len(clip))
    run_parallel(lambda t: fn(clip[t].reshape(-1), out[t].reshape(-1), gens[t]), range(len(clip)))
    return out


def map_chunks(clip: np.ndarray, rng: np.random.Generator,
               fn: Callable[[np.ndarray, np.random.Generator], np.ndarray]) -> np.ndarray:
    """A new uint8 clip whose values are ``fn(values, generator)``, CHUNK values at a time.

    Every frame draws from its own child Generator (:func:`frame_generators`), so applying
    this to consecutive chunks of frames with one ``rng`` equals one call on the whole clip.
    """
    def frame(x: np.ndarray, out: np.ndarray, gen: np.random.Generator) -> None:
        for start in range(0, x.size, CHUNK):
            sl = slice(start, start + CHUNK)
            out[sl] = fn(x[sl], gen)

    return per_frame_draws(clip, rng, frame)


def hit_words(x: np.ndarray, w: np.ndarray, amount: float) -> np.ndarray:
    """Impulse noise on values ``x`` from one uniform 16-bit word each (``w``, same shape).

    A word below 2·round(amount·2^15) is a hit (probability ``amount`` resolved to 2^-15); hits
    in the lower half of that range become 0, the rest 255, so salt and pepper are exactly even.
    """
    if not 0 <= amount <= 1:
        raise ValueError(f"expected an amount in [0, 1]; got {amount!r}")
    below = 2 * round(amount * WORDS / 2)
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


def sample_levels(clip: np.ndarray, rng: np.random.Generator,
                  tables: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Every uint8 value x replaced by a draw from row x of ``level_tables`` (a new array)."""
    keep, alias = tables

    def draw(x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        w = words(gen, x.size)
        column = w >> 8
        idx = x.astype(np.uint16)
        idx <<= 8
        idx |= column
        w &= 0xFF
        return np.where(w < np.take(keep, idx, mode="clip"), column, np.take(alias, idx, mode="clip"))

    return map_chunks(clip, rng, draw)
