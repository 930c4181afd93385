"""Visual perturbation: rain (Yi et al. 2021's Kinetics-C and SSv2-C), streaks over a flattened picture.

A frame's rain is a mask of one-pixel streaks (``length`` px long, slanted ``slant`` px over
that length, one per ``area`` px of frame). Under a streak the picture is lifted towards
a grey of level 220 (less on bright pixels and in bright frames), box-blurred 3x3 and blended
back (weight 220/255); then every channel is pulled towards its frame mean by ``darken``. The
steps and constants are the reference's; every step is exact integer or float32 arithmetic in
one fixed order, so the numpy and torch kernels give the same pixels.

For video the streaks are drawn once per clip on a torus (a sheet that wraps around) taller than
the frame, and fall along their slant at ``fall`` px/frame: frame t shows the sheet moved by
round(t·v). The sheet is tall enough that the rain repeats no sooner than every REPEAT frames.
A frame's mask depends only on (key, frame index, frame size), so any subset of frames renders
as in the whole clip and the draw (a key and a slant) is the same for a clip of any length.
``per_frame=True`` draws a new sheet of the frame's size, and a new slant, for every frame, as
the reference does for every image.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Mapping

import cv2
import numpy as np

from .opencv_frames import per_frame

DROP_LEVEL = 220            # the streaks' grey (the reference's drop colour (220, 220, 220))
SLANTS = (-10, 10)          # slant in px over a streak, an integer drawn in [-10, 10)
REPEAT = 128                # frames before a clip's falling rain can repeat
KEY_MAX = 2**63
POSITIVE_INT = ("area", "length")


def check_params(params: Mapping[str, Any]) -> None:
    """A ValueError naming the parameter when rain's parameters are out of range."""
    for key in POSITIVE_INT:
        value = params[key]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"rain: expected {key} to be an int >= 1; got {value!r}")
    for key, low, high in (("darken", 0.0, 1.0), ("fall", 0.0, 1e4)):
        value = params[key]
        ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
        if not ok or not np.isfinite(value) or not low <= value <= high:
            raise ValueError(f"rain: expected {key} to be a number in [{low:g}, {high:g}]; got {value!r}")
    per_frame = params.get("per_frame", False)
    if not isinstance(per_frame, (bool, np.bool_)):
        raise ValueError(f"per_frame must be True or False; got {per_frame!r}")


def draw_rain(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """One sheet key and one slant per clip; with per_frame, a slant per frame."""
    check_params(params)
    key = np.array(int(rng.integers(0, KEY_MAX)), dtype=np.int64)
    slant = rng.integers(*SLANTS, size=n_frames if params.get("per_frame", False) else None)
    return {"key": key, "slant": np.asarray(slant, dtype=np.int64)}


def velocity(slant: int, params: Mapping[str, Any]) -> tuple[float, float]:
    """(vx, vy) px/frame: ``fall`` along the streak, which runs (slant, length)."""
    length = params["length"]
    norm = math.hypot(slant, length)
    return params["fall"] * slant / norm, params["fall"] * length / norm


def sheet_size(h: int, w: int, slant: int, params: Mapping[str, Any]) -> tuple[int, int]:
    """The clip's sheet: the frame plus REPEAT frames of travel on each axis."""
    vx, vy = velocity(slant, params)
    return h + math.ceil(abs(vy) * REPEAT), w + math.ceil(abs(vx) * REPEAT)


def sheet_drops(rng: np.random.Generator, sh: int, sw: int, area: int) -> np.ndarray:
    """(n, 2) int64 streak starts (x, y), uniform on an sh x sw sheet, n = (sh·sw) // area."""
    n = (sh * sw) // area
    return np.stack([rng.integers(0, sw, n), rng.integers(0, sh, n)], axis=1)


def draw_streaks(drops: np.ndarray, sheet: tuple[int, int], shift: tuple[int, int], h: int, w: int,
                 slant: int, length: int) -> np.ndarray:
    """(h, w) uint8, 1 on a streak: the frame's window of a torus sheet whose content is moved by
    ``shift`` (dy, dx), each streak (x, y) -> (x + slant, y + length) 8-connected as OpenCV draws
    it. Only the copies of streaks that reach the frame are drawn, on a canvas padded so that none
    is clipped."""
    (sh, sw), (dy, dx) = sheet, shift
    drops = _near_rows(drops, sh, dy, -length, h + length)
    y = (drops[:, 1] + dy) % sh
    direct, seam = y < h, y >= sh - length           # in the frame, or reaching it past the top seam
    x = (np.concatenate([drops[direct, 0], drops[seam, 0]]) + dx) % sw
    y = np.concatenate([y[direct], y[seam] - sh])
    x, y = (x[:, None] + np.array([-sw, 0, sw])[None]).ravel(), np.repeat(y, 3)   # across the side seam
    lo, hi = np.minimum(x, x + slant), np.maximum(x, x + slant)
    keep = (hi >= 0) & (lo < w)
    pad_x, pad_y = abs(slant) + 1, length + 1
    canvas = np.zeros((h + 2 * pad_y, w + 2 * pad_x), np.uint8)
    x, y = x[keep] + pad_x, y[keep] + pad_y
    if len(x):
        ends = np.stack([np.stack([x, y], -1), np.stack([x + slant, y + length], -1)], 1)
        cv2.polylines(canvas, list(ends.astype(np.int32)[:, :, None, :]), False, 1, 1, cv2.LINE_8)
    return canvas[pad_y:pad_y + h, pad_x:pad_x + w].copy()


def _near_rows(drops: np.ndarray, sh: int, dy: int, top: int, band: int) -> np.ndarray:
    """The drops (sorted by y) that land on frame rows top .. top + band - 1 once moved down by
    dy: a cyclic range of sheet rows, found by bisection (all drops when the band wraps fully)."""
    if band >= sh:
        return drops
    start = (top - dy) % sh
    lo, hi = np.searchsorted(drops[:, 1], [start, start + band])
    if start + band <= sh:
        return drops[lo:hi]
    return np.concatenate([drops[lo:], drops[:np.searchsorted(drops[:, 1], start + band - sh)]])


@lru_cache(maxsize=4)
def _clip_drops(key: int, sh: int, sw: int, area: int) -> np.ndarray:
    """The whole clip's streak starts (read-only), cached: rendering frames in groups draws them once."""
    drops = sheet_drops(np.random.default_rng([key]), sh, sw, area)
    drops = drops[np.argsort(drops[:, 1], kind="stable")]         # by row, for _near_rows
    drops.setflags(write=False)
    return drops


def frame_mask(drawn: Mapping[str, np.ndarray], params: Mapping[str, Any], t: int,
               h: int, w: int) -> np.ndarray:
    """(h, w) uint8, 1 on a streak: output frame t's streaks for a frame of h x w pixels."""
    key, area, length = int(drawn["key"]), int(params["area"]), int(params["length"])
    if params.get("per_frame", False):              # a sheet of the frame's size per frame, still
        drops = sheet_drops(np.random.default_rng([key, int(t)]), h, w, area)
        return draw_streaks(drops, (h, w), (0, 0), h, w, int(drawn["slant"][t]), length)
    slant = int(drawn["slant"])
    sheet = sheet_size(h, w, slant, params)
    vx, vy = velocity(slant, params)
    shift = (int(np.rint(t * vy)), int(np.rint(t * vx)))            # content moved by round(t·v)
    return draw_streaks(_clip_drops(key, *sheet, area), sheet, shift, h, w, slant, length)


def frame_masks(drawn: Mapping[str, np.ndarray], params: Mapping[str, Any], ids: np.ndarray,
                h: int, w: int) -> np.ndarray:
    """(N, h, w) uint8: :func:`frame_mask` of every output frame ``ids``."""
    return np.stack([frame_mask(drawn, params, int(t), h, w) for t in ids])


# ------------------------------------------------------------------------------ compositing
def lift_table(level_sum: float, n_values: int) -> np.ndarray:
    """uint8 (256,): what a streak adds to a level, truncated as the reference does:
    220·(1 - level/255)·(1 - frame mean/255), the frame mean over all its values."""
    levels = np.arange(256, dtype=np.float64)
    mean = level_sum / n_values
    return (DROP_LEVEL * (1 - levels / 255.0) * (1 - mean / 255.0)).astype(np.uint8)


def pull_terms(sums: np.ndarray, n_pixels: int, darken: float) -> tuple[np.float32, np.ndarray]:
    """The last step ``out = I·a + b`` on I = 255 x the blended level, per channel (float32):
    a = darken/255, b = 255·(1 - darken)·channel mean (``sums``: per-channel sums of I)."""
    mean = np.asarray(sums, np.float64) / (255.0 * 255.0 * n_pixels)
    return np.float32(darken / 255.0), (255.0 * (1.0 - darken) * mean).astype(np.float32)


def composite(frame: np.ndarray, mask: np.ndarray, darken: float) -> np.ndarray:
    """One frame (h, w, 3) uint8 under its streak mask (h, w), whole-frame OpenCV steps:
    lifted under the streaks, box-blurred, I = 35·x + 220·(blurred under a streak, else x)
    (= 255 x the reference's blended level, an integer), then rint(I·a + b) in float32."""
    h, w, _ = frame.shape
    m8 = mask.astype(np.uint8, copy=False)
    sums = np.array(cv2.sumElems(frame)[:3], np.int64)             # exact: integers below 2^53
    lift = cv2.LUT(frame, lift_table(float(sums.sum()), frame.size))
    lifted = frame.copy()
    cv2.add(frame, lift, dst=lifted, mask=m8)
    chosen = frame.copy()
    cv2.copyTo(cv2.blur(lifted, (3, 3)), m8, chosen)
    blend = cv2.addWeighted(frame, 255.0 - DROP_LEVEL, chosen, float(DROP_LEVEL), 0.0, dtype=cv2.CV_32F)
    a, b = pull_terms(np.array(cv2.sumElems(blend)[:3]), h * w, darken)
    np.multiply(blend, a, out=blend)                              # float32 products, then sums,
    cv2.add(blend, tuple(b.tolist()) + (0.0,), dst=blend)         # as torch computes them
    return cv2.convertScaleAbs(blend)              # rounded to nearest, saturated (values are >= 0)


def render_numpy(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, np.ndarray],
                 params: Mapping[str, Any]) -> np.ndarray:
    """Each frame composited under its streaks (frames shared out over OpenCV's threads)."""
    _, h, w, _ = frames.shape
    darken = float(params["darken"])
    return per_frame(frames, lambda f, i: composite(f, frame_mask(drawn, params, int(ids[i]), h, w), darken))
