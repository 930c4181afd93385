"""The temporal ops' index maps (jumble, box_jumble, sampling, reverse_sampling, freeze, frame_rate),
and the input frames a window of neighbours reads (:func:`window_sources`: temporal_blur's).

Each op is split in two: a pure ``*_indices(T, ..., rng)`` function that returns the source
frame index for every output position (an int array of length T), and :func:`take_frames`,
which applies it (``clip[idx]``). The index map is the op's draw (:mod:`..render`, :func:`index_draw`): rendering
any output frames is a gather, identical on numpy and torch, and severity is measurable as the mean
displacement ``|idx - position|`` (:func:`mean_displacement`). The output always has the input's
T frames.

Short clips: a segment longer than the clip is cut to the clip (jumble shuffles the whole
clip; box_jumble returns a clip that falls inside one segment unchanged, there being nothing
to reorder); a sampling rate of T or more shows frame 0 throughout; freeze keeps at least
frame 0. So on clips shorter than the largest parameter neighbouring severities can coincide;
on a 64-frame clip every severity of jumble, sampling and freeze is strictly more displaced
than the one below it. A single-frame clip comes back unchanged by every temporal op.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np

from .twins import Drawer


def _check_length(n_frames: int) -> int:
    if isinstance(n_frames, bool) or not isinstance(n_frames, (int, np.integer)) or n_frames < 1:
        raise ValueError(f"expected a frame count T >= 1; got {n_frames!r}")
    return int(n_frames)


def _check_positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"expected {name} to be an int >= 1; got {value!r}")
    return int(value)


def take_frames(clip: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The clip re-timed by a source-index array: output frame t is ``clip[idx[t]]`` (a copy)."""
    idx = np.asarray(idx)
    if idx.shape != (clip.shape[0],):
        raise ValueError(f"expected {clip.shape[0]} source indices; got shape {idx.shape}")
    return clip[idx]


def mean_displacement(idx: np.ndarray) -> float:
    """Mean |source index - position| over the output frames: 0 for an untouched clip."""
    idx = np.asarray(idx)
    return float(np.abs(idx - np.arange(idx.size)).mean()) if idx.size else 0.0


def _move_fixed_segments(idx: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Roll by one every segment of 2+ frames that a shuffle happened to leave in order.

    A random permutation can be the identity; this makes every shuffled segment really move.
    """
    pos = np.arange(idx.size)
    moved = np.bincount(seg, weights=(idx != pos)) > 0
    size = np.bincount(seg)
    bad = ~moved & (size > 1)
    if not bad.any():
        return idx
    start = np.concatenate(([0], np.cumsum(size)[:-1]))
    hit = bad[seg]
    s, n = start[seg[hit]], size[seg[hit]]
    out = idx.copy()
    out[hit] = s + (pos[hit] - s + 1) % n
    return out


def jumble_indices(n_frames: int, segment: int, rng: np.random.Generator) -> np.ndarray:
    """Shuffle frames inside consecutive segments of ``segment`` frames (last one may be short)."""
    n = _check_length(n_frames)
    seg = np.arange(n) // _check_positive("segment", segment)
    idx = np.lexsort((rng.random(n), seg))      # by segment, then by random key
    return _move_fixed_segments(idx, seg)


def box_jumble_indices(n_frames: int, segment: int, rng: np.random.Generator) -> np.ndarray:
    """Cut the clip into consecutive segments of ``segment`` frames and shuffle their order.

    The cuts start at a random phase (the first segment has ``segment - phase`` frames, phase
    uniform in [0, segment)), so a clip of about two segments has more than one possible result.
    """
    n = _check_length(n_frames)
    size = _check_positive("segment", segment)
    seg = (np.arange(n) + rng.integers(0, size)) // size
    seg -= seg[0]
    n_seg = int(seg[-1]) + 1
    order = rng.permutation(n_seg)
    if n_seg > 1 and np.array_equal(order, np.arange(n_seg)):
        order = np.roll(order, -1)              # a shuffle that moved nothing: move every segment
    rank = np.empty(n_seg, dtype=np.int64)
    rank[order] = np.arange(n_seg)              # new place of every segment
    return np.lexsort((np.arange(n), rank[seg]))


def sampling_indices(n_frames: int, rate: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """Keep every ``rate``-th frame and hold it ``rate`` times: ``idx[t] = (t // rate) * rate``."""
    n = _check_length(n_frames)
    r = _check_positive("rate", rate)
    return (np.arange(n) // r) * r


def reverse_sampling_indices(n_frames: int, rate: int,
                             rng: np.random.Generator | None = None) -> np.ndarray:
    """Sampling, then reversed in time: ``idx[t] = ((T - 1 - t) // rate) * rate``."""
    return sampling_indices(n_frames, rate)[::-1].copy()


def freeze_count(n_frames: int, keep: float) -> int:
    """How many distinct frames freeze keeps: ``round(keep * T)``, at least 1 (frame 0)."""
    n = _check_length(n_frames)
    if not 0 < keep <= 1:
        raise ValueError(f"expected keep to be a fraction in (0, 1]; got {keep!r}")
    return int(min(n, max(1, round(keep * n))))


def freeze_indices(n_frames: int, keep: float, rng: np.random.Generator) -> np.ndarray:
    """Keep frame 0 plus random others (``freeze_count`` in all); hold each until the next kept one.

    The kept frames are a prefix of one random order of frames 1..T-1, so with the same seed
    the frames kept at a higher severity are a subset of those kept at a lower one: fewer
    kept frames always means strictly more displacement.
    """
    n = _check_length(n_frames)
    k = freeze_count(n, keep)
    kept = np.zeros(n, dtype=bool)
    kept[0] = True
    kept[1 + rng.permutation(n - 1)[:k - 1]] = True
    return np.maximum.accumulate(np.where(kept, np.arange(n), 0))


def _rate(name: str, value: Any) -> Fraction:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value <= 0:
        raise ValueError(f"frame_rate: expected {name} to be a finite number of frames/s > 0; got {value!r}")
    return Fraction(float(value)).limit_denominator(1000)


def _ceil_div(a: np.ndarray, b: int) -> np.ndarray:
    return -((-a) // b)


def frame_rate_indices(n_frames: int, fps: float, clip_fps: float = 30.0,
                       rng: np.random.Generator | None = None) -> np.ndarray:
    """The clip converted to ``fps`` and back to ``clip_fps``, as ffmpeg's ``fps`` filter does it.

    Down: sample k takes the last frame whose time rounds (half up) to slot k,
    ``ceil((k + 1/2)·F/r) - 1``. Up: output frame t holds the last sample whose slot rounds to t or
    before, ``k = ceil((t + 1/2)·r/F) - 1``. Exact rational arithmetic (rates to 1/1000); frames
    past the clip's end are its last frame. ``fps >= clip_fps`` leaves the clip unchanged.
    """
    n = _check_length(n_frames)
    r, f = _rate("fps", fps), _rate("clip_fps", clip_fps)
    t = np.arange(n, dtype=np.int64)
    k = _ceil_div((2 * t + 1) * (r.numerator * f.denominator), 2 * r.denominator * f.numerator) - 1
    src = _ceil_div((2 * k + 1) * (f.numerator * r.denominator), 2 * f.denominator * r.numerator) - 1
    return np.minimum(src, n - 1)


# name -> index function
INDEX_FUNCTIONS = {"jumble": jumble_indices, "box_jumble": box_jumble_indices,
                   "sampling": sampling_indices, "reverse_sampling": reverse_sampling_indices,
                   "freeze": freeze_indices, "frame_rate": frame_rate_indices}


def window_sources(ids: np.ndarray, window: np.ndarray, n_frames: int) -> np.ndarray:
    """(N, b + a + 1) input frames read by output frames ``ids`` under ``window = (b, a)``:
    t - b .. t + a, clamped to 0..T-1 (the clip's end frames stand in for frames past its ends)."""
    before, after = (int(v) for v in np.asarray(window))
    return np.clip(np.asarray(ids)[:, None] + np.arange(-before, after + 1)[None], 0, n_frames - 1)


def index_draw(index_fn: Callable[..., np.ndarray]) -> Drawer:
    """The draw of a temporal op: its index map (rendering it is a gather)."""
    def draw(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
        return {"index": index_fn(n_frames, rng=rng, **params)}
    return draw
