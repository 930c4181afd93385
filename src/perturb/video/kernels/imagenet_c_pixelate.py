"""ImageNet-C's pixelate for video: Pillow's BOX shrink and NEAREST enlargement, in exact integers.

imagecorruptions 1.1.2 shrinks each image to int(side·scale) with Pillow's BOX filter and
enlarges it back with NEAREST. Both are re-stated here with Pillow's own pixel boxes, fixed-point
weights and rounding (columns first, then rows, each pass rounded to levels) and its nearest
map, with whole-row copies (the column pass on the transposed frame): the output equals Pillow's
columns-then-rows resize (Pillow's only order before its change 9549; Pillow 13.0 takes rows first
on some frames taller than wide and differs there by a level), deterministic and the same on
numpy and torch alike (the torch kernel does the same integer work).
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from .opencv_frames import per_frame_into, scratch
from .imagenet_c import positive
from .twins import numpy_kernel


def pixelate_size(n: int, scale: float) -> int:
    """The reference's small side int(n·scale), at least one pixel."""
    return max(1, int(n * scale))


# Pillow's fixed-point resampling: weights in units of 2^-22 (PRECISION_BITS = 32 - 8 - 2).
PILLOW_BITS = 22


@lru_cache(maxsize=64)
def box_ranges(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pillow's BOX reduction of n_in pixels to n_out: output pixel i averages input pixels
    [start_i, stop_i), with the weight 1/n in Pillow's fixed point (int, units of 2^-22).

    The box is computed with Pillow's own float operations (centre (i + 0.5)·scale, a window
    rounded from centre ± scale/2, then its box filter, 1 on (-0.5, 0.5]), so pixels whose
    centre falls on a box edge go where Pillow puts them.
    """
    scale = n_in / n_out
    filterscale = max(scale, 1.0)
    support, ss = 0.5 * filterscale, 1.0 / filterscale
    centre = (np.arange(n_out) + 0.5) * scale
    first = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    last = np.minimum((centre + support + 0.5).astype(np.int64), n_in)
    j = first[:, None] + np.arange(int((last - first).max()))[None, :]
    v = (j - centre[:, None] + 0.5) * ss
    inside = (j < last[:, None]) & (v > -0.5) & (v <= 0.5)
    start = np.where(inside.any(axis=1), j[np.arange(n_out), inside.argmax(axis=1)], first)
    count = np.maximum(inside.sum(axis=1), 1)
    weight = np.floor(0.5 + (1.0 / count) * (1 << PILLOW_BITS)).astype(np.int64)
    for a in (start, count, weight):
        a.setflags(write=False)
    return start, start + count, weight


@lru_cache(maxsize=64)
def nearest_sources(n_small: int, n_out: int) -> np.ndarray:
    """Which small pixel each of n_out pixels shows when enlarged by OpenCV's nearest-exact
    (Pillow's NEAREST: the same map for every size up to 1100 and at 1280, 1920, 2160, 3840)."""
    row = np.arange(n_small, dtype=np.float32)[None, :]
    return cv2.resize(row, (n_out, 1), interpolation=cv2.INTER_NEAREST_EXACT)[0].astype(np.int64)


def rounded_mean(sums: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """A box sum times its fixed-point weight, rounded and clipped as Pillow does: uint8 (the
    integer statement that :func:`box_reduce`'s float64 gains reproduce; the torch path's too).

    The weight is about 2^22/n for a box of n levels summing to at most 255·n, so the product
    stays below 255·2^22 + n and int32 holds it exactly.
    """
    fixed = sums.astype(np.int32, copy=False) * weight.astype(np.int32) + np.int32(1 << (PILLOW_BITS - 1))
    return np.clip(fixed >> PILLOW_BITS, 0, 255).astype(np.uint8)


@lru_cache(maxsize=16)
def box_pass_plan(n_in: int, n_out: int, n_across: int) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """One pass of Pillow's BOX reduction of the rows of an image (n_in rows of ``n_across``
    pixels; the column pass runs on the transposed frame): per k, the row that is every box's
    k-th (n_in, a zero row below the image, where the box is shorter; whole rows are copied,
    far cheaper than OpenCV remaps), and a gain per box: float32 where :func:`box_gain32` finds
    one for every box length, else float64 Pillow's weight/2^22 + 2^-40. In double, sum·gain
    is exact to far below 2^-40, every product whose fixed-point value is not a tie lies at
    least 2^-22 from one, and the 2^-40 turns ties (boxes of 2^k pixels) upwards: OpenCV's rint
    of sum·gain equals Pillow's (sum·weight + 2^21) >> 22.
    """
    start, stop, weight = box_ranges(n_in, n_out)
    rows = [np.where(start + k < stop, start + k, n_in) for k in range(int((stop - start).max()))]
    depth = sum_depth(len(rows))
    gain32 = [box_gain32(int(c), int(wt), depth) for c, wt in zip((stop - start).tolist(), weight.tolist())]
    if all(g is not None for g in gain32):
        gain = np.array(gain32, np.float32)
    else:                                                    # float64: exact for every box length
        gain = weight / float(1 << PILLOW_BITS) + 2.0 ** -40
    gains = np.ascontiguousarray(np.broadcast_to(gain[:, None, None], (n_out, n_across, 3)))
    for m in rows + [gains]:
        m.setflags(write=False)
    return tuple(rows), gains


def sum_depth(terms: int) -> int:
    """The OpenCV depth box sums of ``terms`` levels are added in: both are exact for them."""
    return cv2.CV_16U if terms * 255 < 2 ** 16 else cv2.CV_32F


SUM_DTYPES = {cv2.CV_16U: np.uint16, cv2.CV_32F: np.float32}   # numpy's adds of uint8 into these: faster than OpenCV's

GAIN32_MAX_COUNT = 256        # longest box whose float32 gain is searched (the check costs 255·count values)


@lru_cache(maxsize=256)
def box_gain32(count: int, weight: int, depth: int) -> np.float32 | None:
    """A float32 gain g with which OpenCV's rounded product of every box sum s of ``count``
    levels (0 .. 255·count, held in ``depth``; uint8 for one level) equals Pillow's
    (s·weight + 2^21) >> 22, or None. Searched ulp by ulp from weight/2^22 and checked on every
    s with the multiply :func:`box_reduce` makes; half the bytes of float64 gains. Boxes
    longer than GAIN32_MAX_COUNT are not searched (None)."""
    if count > GAIN32_MAX_COUNT:
        return None
    sums = np.arange(255 * count + 1, dtype=np.int64)
    want = rounded_mean(sums, np.int32(weight))[:, None]
    held = sums.astype(np.uint8 if count == 1 else np.uint16 if depth == cv2.CV_16U else np.float32)[:, None]
    start = np.float32(weight / float(1 << PILLOW_BITS))
    for direction in (np.float32(np.inf), np.float32(-np.inf)):
        gain = start
        for _ in range(64):
            if np.array_equal(cv2.multiply(held, np.full(held.shape, gain, np.float32), dtype=cv2.CV_8U), want):
                return gain
            gain = np.nextafter(gain, direction)
    return None


def with_zero_row(image: np.ndarray, name: str, transpose: bool = False) -> np.ndarray:
    """This thread's buffer ``name`` holding ``image`` (or its transpose) and a zero row below:
    what :func:`box_sums` picks rows from."""
    h, w = image.shape[:2]
    rows, across = (w, h) if transpose else (h, w)
    padded = scratch(name, (rows + 1, across) + image.shape[2:], image.dtype)
    padded[rows] = 0
    if transpose:
        cv2.transpose(image, dst=padded[:rows])
    else:
        padded[:rows] = image
    return padded


def box_sums(padded: np.ndarray, rows: tuple[np.ndarray, ...]) -> np.ndarray:
    """The box sums of a pass (:func:`box_pass_plan`'s rows) over an image with a zero row below
    (:func:`with_zero_row`): one uint8 row copy per box position, added by numpy (faster than
    OpenCV's mixed-depth add) in the depth :func:`sum_depth` gives."""
    picked = [padded.take(r, axis=0, mode="clip") for r in rows]
    sums = picked[0] if len(picked) == 1 else np.add(picked[0], picked[1], dtype=SUM_DTYPES[sum_depth(len(rows))])
    for more in picked[2:]:
        np.add(sums, more, out=sums)
    return sums


def box_reduce(padded: np.ndarray, plan: tuple[tuple[np.ndarray, ...], np.ndarray],
               out: np.ndarray | None = None) -> np.ndarray:
    """One pass of Pillow's BOX reduction of the rows of a uint8 (H, W, 3) image with a zero row
    below (see :func:`box_pass_plan`), rounded to levels, into ``out`` if given."""
    rows, gains = plan
    return cv2.multiply(box_sums(padded, rows), gains, dst=out, dtype=cv2.CV_8U)


def render_pixelate(frames: np.ndarray, scale: float) -> np.ndarray:
    """Shrink each frame by ``scale`` (box average) and enlarge it back (nearest): coarse blocks.

    The two passes of Pillow's BOX resize (columns, then rows, each rounded to a level) are box
    sums of whole rows (the column pass on the transposed frame) rounded exactly as Pillow's
    fixed point rounds them; the enlargement is OpenCV's nearest-exact (Pillow's map) along
    columns, then row copies into the output frame. The output equals Pillow's columns-then-rows
    resize, and numpy and torch give the same pixels.
    """
    scale = positive("scale", scale, "pixelate")
    if scale > 1:
        raise ValueError(f"pixelate: expected scale in (0, 1]; got {scale!r}")
    _, h, w, _ = frames.shape
    sh, sw = pixelate_size(h, scale), pixelate_size(w, scale)
    columns, rows = box_pass_plan(w, sw, h), box_pass_plan(h, sh, sw)      # columns: rows of the transpose
    near_rows = nearest_sources(sh, h)

    def pixelate(frame: np.ndarray, _: int, dst: np.ndarray) -> None:
        turned = box_reduce(with_zero_row(frame, "pixelate.frame", transpose=True), columns)   # (sw, h, 3)
        small = box_reduce(with_zero_row(turned, "pixelate.columns", transpose=True), rows)    # (sh, sw, 3)
        wide = scratch("pixelate.wide", (sh, w, 3), np.uint8)                # nearest: columns, then rows
        cv2.resize(small, (w, sh), dst=wide, interpolation=cv2.INTER_NEAREST_EXACT)
        wide.take(near_rows, axis=0, out=dst, mode="clip")

    return per_frame_into(frames, pixelate)


@numpy_kernel("pixelate")
def pixelate_frames(frames, ids, drawn, params):
    return render_pixelate(frames, **params)
