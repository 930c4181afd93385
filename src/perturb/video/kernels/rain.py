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
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from .opencv_frames import run_parallel, scratch, threads
from .twins import numpy_kernel

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
    it (``drops`` sorted by y unless h + length covers the sheet): :func:`streak_canvas` of one frame."""
    (sh, _), (dy, dx) = sheet, shift
    pick, who = _near_rows(drops[:, 1], sh, np.array([dy]), -length, h + length)
    canvas = streak_canvas(drops[pick], who, sheet, np.array([[dy, dx]]), h, w, np.array([slant]), length, 0)
    return canvas[0].copy()


def _near_rows(ys: np.ndarray, sh: int, dys: np.ndarray, top: int, band: int) -> tuple[np.ndarray, np.ndarray]:
    """(drop indices, frame position of each): for every shift dy, the drops (``ys`` sorted) that
    land on frame rows top .. top + band - 1 once moved down by dy: a cyclic range of sheet rows,
    found by bisection (all drops when the band wraps fully). One call for a group of frames."""
    n = len(dys)
    if band >= sh:
        return np.tile(np.arange(len(ys)), n), np.repeat(np.arange(n), len(ys))
    start = (top - dys) % sh
    lo, hi = np.searchsorted(ys, start), np.searchsorted(ys, np.minimum(start + band, sh))
    wrap = np.searchsorted(ys, np.maximum(start + band - sh, 0))   # rows 0 .. past the bottom seam
    first = np.concatenate([lo, np.zeros_like(lo)])
    count = np.concatenate([hi - lo, wrap])
    owner = np.repeat(np.tile(np.arange(n), 2), count)
    return np.repeat(first - np.cumsum(count) + count, count) + np.arange(count.sum()), owner


@lru_cache(maxsize=64)
def streak_pixels(slant: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(dy, dx) of the pixels of OpenCV's 8-connected line (0, 0) -> (slant, length), drawn once:
    a line that no border clips is the same pattern wherever it starts (Bresenham on the deltas)."""
    pad = abs(slant) + 1
    canvas = np.zeros((length + 3, 2 * pad + 1), np.uint8)
    cv2.polylines(canvas, np.array([[[pad, 1], [pad + slant, length + 1]]], np.int32), False, 1, 1, cv2.LINE_8)
    dy, dx = np.nonzero(canvas)
    return dy - 1, dx - pad


def stamp(canvas: np.ndarray, starts: np.ndarray, slants: np.ndarray, length: int, value: int) -> None:
    """Sets ``value`` on the pixels of the streaks from flat positions ``starts`` of a contiguous 2-D
    ``canvas`` (no streak may cross its border), one numpy assignment per slant."""
    flat, width = canvas.reshape(-1), canvas.shape[1]
    for s in np.unique(slants):
        dy, dx = streak_pixels(int(s), length)
        at = starts if slants.min() == slants.max() else starts[slants == s]
        flat[(at[:, None] + (dy * width + dx)).ravel()] = value


def streak_canvas(drops: np.ndarray, who: np.ndarray, sheet: tuple[int, int], shifts: np.ndarray, h: int,
                  w: int, slants: np.ndarray, length: int, ground: int) -> np.ndarray:
    """(n, h, w) uint8 (this thread's buffer), ``ground`` off the streaks and 1 - ground on them:
    frame i shows the torus sheet moved by ``shifts[i]`` (dy, dx), streaks of slant ``slants[i]``;
    ``drops`` (x, y) are the candidate starts of frame ``who`` (a superset: only the copies that
    reach a frame are drawn). The frames are stacked on one canvas, padded and spaced so that no
    streak is clipped or reaches another frame, and every streak's pixels (:func:`streak_pixels`)
    are set in one numpy assignment per slant."""
    (sh, sw), n = sheet, len(slants)
    y = (drops[:, 1] + shifts[who, 0]) % sh
    x = (drops[:, 0] + shifts[who, 1]) % sw
    direct, seam = y < h, y >= sh - length             # in the frame, or reaching it past the top seam
    x, who = np.concatenate([x[direct], x[seam]]), np.concatenate([who[direct], who[seam]])
    y = np.concatenate([y[direct], y[seam] - sh])
    x, y, who = (x[:, None] + np.array([-sw, 0, sw])).ravel(), np.repeat(y, 3), np.repeat(who, 3)
    slant = slants[who]
    keep = (x + np.maximum(slant, 0) >= 0) & (x + np.minimum(slant, 0) < w)   # across the side seam
    pad_x, gap = int(np.abs(slants).max()) + 1, length + 1
    width = w + 2 * pad_x
    canvas = scratch("rain.canvas", (n * (h + gap) + gap, width), np.uint8)
    canvas.fill(ground)
    stamp(canvas, (y[keep] + gap + who[keep] * (h + gap)) * width + x[keep] + pad_x, slant[keep], length,
          1 - ground)
    masks = scratch("rain.masks", (n, h, w), np.uint8)
    np.copyto(masks, canvas[gap:].reshape(n, h + gap, width)[:, :h, pad_x:pad_x + w])
    return masks


@lru_cache(maxsize=4)
def _clip_drops(key: int, sh: int, sw: int, area: int) -> np.ndarray:
    """The whole clip's streak starts (read-only), cached: rendering frames in groups draws them once."""
    drops = sheet_drops(np.random.default_rng([key]), sh, sw, area)
    rows = drops[:, 1].astype(np.uint16) if sh <= 2**16 else drops[:, 1]    # a radix sort: 10x faster
    drops = drops[np.argsort(rows, kind="stable")]                # by row, for _near_rows
    drops.setflags(write=False)
    return drops


def streak_masks(drawn: Mapping[str, np.ndarray], params: Mapping[str, Any], ids: np.ndarray,
                 h: int, w: int, ground: int) -> np.ndarray | list[np.ndarray]:
    """N (h, w) uint8 masks in this thread's buffers, ``ground`` off the streaks: output frames
    ``ids``' streaks for frames of h x w pixels, all drawn at once: a clip's sheet once over the
    frames' windows (:func:`sheet_windows`) where it is the smaller drawing, else each frame's
    window on one stacked canvas (:func:`streak_canvas`)."""
    key, area, length, n = int(drawn["key"]), int(params["area"]), int(params["length"]), len(ids)
    if params.get("per_frame", False):              # a sheet of the frame's size per frame, still
        drops = [sheet_drops(np.random.default_rng([key, int(t)]), h, w, area) for t in ids]
        who = np.repeat(np.arange(n), [len(d) for d in drops])
        return streak_canvas(np.concatenate(drops), who, (h, w), np.zeros((n, 2), np.int64), h, w,
                             np.asarray(drawn["slant"])[ids], length, ground)
    slant = int(drawn["slant"])
    sheet = sheet_size(h, w, slant, params)
    vx, vy = velocity(slant, params)
    t = np.asarray(ids, np.int64)
    shifts = np.stack([np.rint(t * vy), np.rint(t * vx)], -1).astype(np.int64)   # content moved by round(t·v)
    drops = _clip_drops(key, *sheet, area)
    span = (np.ptp(shifts[:, 0]) + h + 2 * length + 2) * (np.ptp(shifts[:, 1]) + w + 2 * abs(slant) + 2)
    if length <= sheet[0] and sheet[1] >= w + abs(slant) and span <= n * h * w:
        return sheet_windows(drops, sheet, shifts, h, w, slant, length, ground)
    pick, who = _near_rows(drops[:, 1], sheet[0], shifts[:, 0], -length, h + length)
    return streak_canvas(drops[pick], who, sheet, shifts, h, w, np.full(n, slant), length, ground)


def _copies(v: np.ndarray, low: np.ndarray | int, high: np.ndarray | int, period: int) -> tuple[np.ndarray, np.ndarray]:
    """(index into v, v + k·period) for every integer k with low <= v + k·period < high."""
    first = -((v - low) // period)                                  # ceil((low - v) / period)
    count = np.maximum((high - 1 - v) // period - first + 1, 0)
    index = np.repeat(np.arange(len(v)), count)
    k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count) + first[index]
    return index, v[index] + k * period


def sheet_windows(drops: np.ndarray, sheet: tuple[int, int], shifts: np.ndarray, h: int, w: int,
                  slant: int, length: int, ground: int) -> list[np.ndarray]:
    """(h, w) uint8 views, ``ground`` off the streaks, of frames showing one torus sheet moved by
    ``shifts`` (dy, dx): the sheet is drawn once over the union of the frames' windows, with every
    copy (across both seams) of a streak that meets it, and each frame is its window. Where the
    streaks are no longer than the sheet and its width exceeds the frame's by the slant, these are
    the copies that :func:`draw_streaks` draws for each frame, so the pixels are the same."""
    (sh, sw), top, left = sheet, -shifts[:, 0].max(), -shifts[:, 1].max()
    rows, cols = np.ptp(shifts[:, 0]) + h, np.ptp(shifts[:, 1]) + w
    rows_of, y = _copies(drops[:, 1], top - length, top + rows, sh)
    cols_of, x = _copies(drops[rows_of, 0], left - max(slant, 0), left + cols - min(slant, 0), sw)
    pad_x, gap = abs(slant) + 1, length + 1
    canvas = scratch("rain.sheet", (rows + 2 * gap, cols + 2 * pad_x), np.uint8)
    canvas.fill(ground)
    stamp(canvas, (y[cols_of] - top + gap) * canvas.shape[1] + x - left + pad_x, np.array([slant]), length,
          1 - ground)
    return [canvas[gap - top - dy:gap - top - dy + h, pad_x - left - dx:pad_x - left - dx + w]
            for dy, dx in shifts.tolist()]


def frame_masks(drawn: Mapping[str, np.ndarray], params: Mapping[str, Any], ids: np.ndarray,
                h: int, w: int) -> np.ndarray:
    """(N, h, w) uint8, 1 on a streak: output frames ``ids``' streaks for frames of h x w pixels."""
    return np.array(streak_masks(drawn, params, ids, h, w, 0))          # a copy: the buffers are reused


# ------------------------------------------------------------------------------ compositing
def lift_table(level_sum: float | np.ndarray, n_values: int) -> np.ndarray:
    """uint8 (256,): what a streak adds to a level, truncated as the reference does:
    220·(1 - level/255)·(1 - frame mean/255), the frame mean over all its values; (N, 256) for
    N frames' sums."""
    levels = np.arange(256, dtype=np.float64)
    mean = np.asarray(level_sum, np.float64) / n_values
    return (DROP_LEVEL * (1 - levels / 255.0) * (1 - mean[..., None] / 255.0)).astype(np.uint8)


def lifted_table(level_sum: float | np.ndarray, n_values: int) -> np.ndarray:
    """uint8 (256,) or (N, 256): a level plus its lift, saturated (a streak's level before the blur)."""
    return np.minimum(np.arange(256) + lift_table(level_sum, n_values), 255).astype(np.uint8)


def pull_terms(sums: np.ndarray, n_pixels: int, darken: float) -> tuple[np.float32, np.ndarray]:
    """The last step ``out = I·a + b`` on I = 255 x the blended level, per channel (float32):
    a = darken/255, b = 255·(1 - darken)·channel mean (``sums``: per-channel sums of I)."""
    mean = np.asarray(sums, np.float64) / (255.0 * 255.0 * n_pixels)
    return np.float32(darken / 255.0), (255.0 * (1.0 - darken) * mean).astype(np.float32)


def composite_frames(frames: np.ndarray, offs: Sequence[np.ndarray], darken: float, out: np.ndarray) -> None:
    """:func:`composite` of n frames (n, h, w, 3) uint8 into ``out``, given their masks ``offs``
    (h, w) uint8, nonzero OFF the streaks: 8 whole-frame OpenCV passes a frame, the per-frame
    tables and terms computed for all n at once. On a streak the lifted level is blurred;
    elsewhere the level is copied back: I = 35·x + 220·chosen, whose channel sums are
    35·(x's sums) + 220·(chosen's sums), exact integers; rint(I·a + b) is a float32 product, then
    a float32 sum rounded half to even and saturated (cv2.add into uint8), as torch computes it."""
    n, h, w, _ = frames.shape
    sums = np.array([cv2.sumElems(frame)[:3] for frame in frames], np.int64)    # exact: below 2^53
    lifted = lifted_table(sums.sum(axis=1), h * w * 3)
    work = scratch("rain.lifted", (h, w, 3), np.uint8)
    chosen = scratch("rain.chosen", (n, h, w, 3), np.uint8)
    for frame, off, table, dst in zip(frames, offs, lifted, chosen):
        cv2.copyTo(frame, off, cv2.LUT(frame, table, dst=work))           # lifted on the streaks only
        cv2.copyTo(frame, off, cv2.blur(work, (3, 3), dst=dst))           # blurred on the streaks only
    chosen_sums = np.array([cv2.sumElems(c)[:3] for c in chosen], np.int64)
    a, b = pull_terms((255 - DROP_LEVEL) * sums + DROP_LEVEL * chosen_sums, h * w, darken)
    blend = scratch("rain.blend", (h, w, 3), np.float32)
    for frame, c, terms, dst in zip(frames, chosen, b.tolist(), out):
        cv2.addWeighted(frame, 255.0 - DROP_LEVEL, c, float(DROP_LEVEL), 0.0, dtype=cv2.CV_32F, dst=blend)
        np.multiply(blend, a, out=blend)
        cv2.add(blend, tuple(terms) + (0.0,), dst=dst, dtype=cv2.CV_8U)


def composite(frame: np.ndarray, mask: np.ndarray, darken: float, dst: np.ndarray | None = None) -> np.ndarray:
    """One frame (h, w, 3) uint8 under its streak mask (h, w), nonzero on the streaks: lifted
    under the streaks, box-blurred, I = 35·x + 220·(blurred under a streak, else x) (= 255 x
    the reference's blended level, an integer), then rint(I·a + b) in float32; into ``dst``
    when given. Temporaries are the thread's own buffers (:func:`scratch`)."""
    out = np.empty_like(frame) if dst is None else dst
    composite_frames(frame[None], [np.equal(mask, 0).view(np.uint8)], darken, out[None])
    return out


# Frames composited together, and frames whose streaks are drawn together: at most these many
# pixels of frames, of padded canvases (8 frames of 224², about 40; one large frame), so the
# buffers stay in cache or small.
GROUP_PIXELS, DRAWN_PIXELS = 8 * 224 * 224, 64 * 224 * 224


@numpy_kernel("rain")
def rain_frames(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, np.ndarray],
                params: Mapping[str, Any]) -> np.ndarray:
    """Each frame composited under its streaks, consecutive frames shared out over OpenCV's
    threads; each thread draws the streaks of several frames at once, composites a few at a time
    and reuses its buffers (:data:`GROUP_PIXELS`, :data:`DRAWN_PIXELS`)."""
    n, h, w, _ = frames.shape
    darken, out = float(params["darken"]), np.empty_like(frames)
    group = max(1, GROUP_PIXELS // (h * w))
    drawn_at_once = max(1, DRAWN_PIXELS // ((h + int(params["length"]) + 1) * (w + 2 * max(map(abs, SLANTS)) + 2)))

    def render_part(part: range) -> None:
        for first in range(part.start, part.stop, drawn_at_once):
            last = min(first + drawn_at_once, part.stop)
            offs = streak_masks(drawn, params, ids[first:last], h, w, 1)
            for start in range(first, last, group):
                end = min(start + group, last)
                composite_frames(frames[start:end], offs[start - first:end - first], darken, out[start:end])

    k = threads()
    run_parallel(render_part, [p for p in (range(i * n // k, (i + 1) * n // k) for i in range(k)) if len(p)])
    return out
