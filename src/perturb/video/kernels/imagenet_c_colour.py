"""ImageNet-C's colour ops for video: brightness, contrast, saturate (deterministic, per frame).

The reference (imagecorruptions 1.1.2) converts to HSV with scikit-image and back. With hue and
the other component held, that round trip has a closed form, used here:
- brightness adds ``shift`` to V = max(R, G, B) (clipped at 1): every channel scales by V'/V,
  and black becomes the grey V' = shift;
- saturate maps S = (V - min)/V to clip(S·factor + offset, 0, 1): every channel moves along
  c' = V - (V - c)·S'/S; a grey pixel (S = 0, hue 0 in scikit-image, i.e. red) becomes
  (V, V(1 - S'), V(1 - S')), so a positive offset tints greys red, as in the reference;
- contrast pulls each channel towards its frame mean: (c - mean)·factor + mean.
Brightness and contrast are lookup tables computed on the host in float64 (on the pixel's max
and the channel; per frame and channel), saturate a table of S'/S on the pixel's max and min
followed by the same float32 operations in numpy and torch: the same pixels everywhere.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from .opencv_frames import per_frame_into, scratch
from .twins import numpy_kernel


def _finite(name: str, value: object, op: str, low: float, high: float) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{op}: expected {name} to be a number in [{low}, {high}]; got {value!r}")
    return float(value)


# --------------------------------------------------------------------------------- brightness
@lru_cache(maxsize=16)
def brightness_table(shift: float) -> np.ndarray:
    """uint8 (256, 256) table: out = table[V, c] for a channel c of a pixel whose max is V."""
    shift = _finite("shift", shift, "brightness", -1.0, 1.0)
    v = np.arange(256, dtype=np.float64)[:, None]
    c = np.arange(256, dtype=np.float64)[None, :]
    lifted = np.clip(v + 255.0 * shift, 0, 255)
    out = np.rint(c * lifted / np.maximum(v, 1))
    out[0] = np.rint(lifted[0])                       # black: the grey V' (hue and S are 0)
    out = np.clip(out, 0, 255).astype(np.uint8)
    out.setflags(write=False)
    return out


def _fitted_gains(start: np.ndarray, target: np.ndarray, unused: np.ndarray) -> np.ndarray:
    """Per row V, a float32 gain g (searched ulp by ulp from ``start``) with OpenCV's
    rint(float32(c)·g) == target[V, c] for every used c; NaN where none fits."""
    levels = np.tile(np.arange(256, dtype=np.uint8), (256, 1))
    gains = np.full(256, np.nan, np.float32)
    for direction in (np.float32(np.inf), np.float32(-np.inf)):
        g = start.copy()
        for _ in range(8):
            out = cv2.multiply(levels, np.repeat(g[:, None], 256, axis=1), dtype=cv2.CV_8U)
            fits = ((out == target) | unused).all(axis=1) & np.isnan(gains)
            gains[fits] = g[fits]
            g = np.nextafter(g, direction)
    return gains


@lru_cache(maxsize=16)
def brightness_gains(shift: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The brightness table as float32 gains per max V: ``up`` rounds the table's exact ties
    (c·V'/V = k + 1/2) up, ``down`` rounds them down, both agree elsewhere; the table's rint
    takes the even one of the two. uint8 (256,) ``marks`` the V no gain pair reproduces
    (none found for any shift tried; black is handled apart): those pixels are read from the table."""
    table = brightness_table(shift)
    v = np.arange(256, dtype=np.float64)[:, None]
    c = np.arange(256, dtype=np.float64)[None, :]
    lifted = np.clip(v + 255.0 * float(shift), 0, 255)
    exact = c * lifted / np.maximum(v, 1)                           # the table's value before rint
    tie = exact - np.floor(exact) == 0.5
    unused = c > v                                                  # a channel never exceeds the max
    start = (lifted[:, 0] / np.maximum(v[:, 0], 1)).astype(np.float32)
    up = _fitted_gains(start, np.where(tie, np.floor(exact) + 1, table), unused)
    down = _fitted_gains(start, np.where(tie, np.floor(exact), table), unused)
    marks = np.isnan(up) | np.isnan(down)
    marks[0] = False                                                # black: every channel becomes V'
    up[marks] = down[marks] = 0
    marks = (marks * 255).astype(np.uint8)
    for a in (up, down, marks):
        a.setflags(write=False)
    return up, down, marks


def channel_max(channels: list[np.ndarray]) -> np.ndarray:
    """The per-pixel maximum of three OpenCV planes (HSV value)."""
    return cv2.max(cv2.max(channels[0], channels[1]), channels[2])


def channel_min(channels: list[np.ndarray]) -> np.ndarray:
    """The per-pixel minimum of three OpenCV planes."""
    return cv2.min(cv2.min(channels[0], channels[1]), channels[2])


def render_brightness(frames: np.ndarray, shift: float) -> np.ndarray:
    """Every pixel's HSV value raised by ``shift`` (clipped at full scale), hue and saturation kept.

    Per frame: the channel max V, float32 gains per V (:func:`brightness_gains`), OpenCV
    multiplies; where the two roundings of a tie differ the even one is kept, as the table's
    rint does. Black pixels become the grey V'; pixels whose V has no exact gain are read
    from the 256x256 table."""
    table = brightness_table(shift)
    up, down, marks = brightness_gains(shift)
    black = np.zeros(256, np.uint8)
    black[0] = table[0, 0]                        # V = 0: every channel becomes the grey V' (else 0)
    any_black, any_tie, any_marked = bool(black[0]), bool((up != down).any()), bool(marks.any())

    def lift(frame: np.ndarray, _: int, dst: np.ndarray) -> None:
        channels = cv2.split(frame)
        v = channel_max(channels)
        greys = cv2.LUT(v, black) if any_black else None

        def scaled(gains: np.ndarray, name: str, out: np.ndarray | None = None) -> np.ndarray:
            g = cv2.LUT(v, gains, dst=scratch(f"brightness.{name}.gain", v.shape, np.float32))
            planes = [cv2.multiply(c, g, dtype=cv2.CV_8U) for c in channels]
            if greys is not None:                 # a black pixel's channels are 0: the max gives V'
                planes = [cv2.max(p, greys, dst=p) for p in planes]
            return cv2.merge(planes, dst=scratch(f"brightness.{name}", frame.shape, np.uint8) if out is None else out)

        if any_tie:
            out, low = scaled(up, "up"), scaled(down, "down")
            cv2.subtract(out, cv2.bitwise_and(cv2.subtract(out, low), out), dst=dst)   # odd and tied: down
        else:
            scaled(up, "up", dst)
        if any_marked:
            ys, xs = np.nonzero(cv2.LUT(v, marks))
            if len(ys):
                dst[ys, xs] = table[v[ys, xs][:, None], frame[ys, xs]]

    return per_frame_into(frames, lift)


# ----------------------------------------------------------------------------------- contrast
def contrast_tables(sums: np.ndarray, n_pixels: int, factor: float) -> np.ndarray:
    """uint8 (N, 3, 256) tables from each frame's exact per-channel level sums (N, 3)."""
    factor = _finite("factor", factor, "contrast", 0.0, np.inf)
    mean = np.asarray(sums, dtype=np.float64)[..., None] / n_pixels
    levels = np.arange(256, dtype=np.float64)
    return np.clip(np.rint((levels - mean) * factor + mean), 0, 255).astype(np.uint8)


def render_contrast(frames: np.ndarray, factor: float) -> np.ndarray:
    """Every channel pulled towards its frame mean: (c - mean)·factor + mean.

    The frames' exact channel sums first, all tables in one call, then one OpenCV LUT per frame."""
    n, h, w, _ = frames.shape
    contrast_tables(np.zeros((1, 3)), 1, factor)                  # refuse a bad factor up front
    sums = np.array([cv2.sumElems(frame)[:3] for frame in frames]).reshape(n, 3)   # exact below 2^53
    luts = np.ascontiguousarray(contrast_tables(sums, h * w, factor).transpose(0, 2, 1))  # (N, 256, 3)
    return per_frame_into(frames, lambda frame, t, dst: cv2.LUT(frame, luts[t].reshape(256, 1, 3), dst=dst))


# ----------------------------------------------------------------------------------- saturate
@lru_cache(maxsize=8)
def saturate_tables(factor: float, offset: float) -> tuple[np.ndarray, np.ndarray]:
    """The saturation change as tables: float32 (256·256,) the scale S'/S by [max·256 + min] (0 for
    greys), and uint8 (256,) the green and blue of a grey pixel by its level (its red keeps it).
    A channel c of a pixel with max V becomes rint(V - (V - c)·scale) in float32."""
    factor = _finite("factor", factor, "saturate", 0.0, np.inf)
    offset = _finite("offset", offset, "saturate", -1.0, 1.0)
    levels = np.arange(256, dtype=np.float64)
    v, m = levels[:, None], levels[None, :]
    delta = v - m
    s = np.divide(delta, v, out=np.zeros((256, 256)), where=v > 0)
    s_new = np.clip(s * factor + offset, 0, 1)
    scale = np.divide(s_new, s, out=np.zeros_like(s), where=delta > 0).astype(np.float32).ravel()
    grey = np.clip(np.rint(levels * (1 - np.clip(offset, 0, 1))), 0, 255).astype(np.uint8)
    scale.setflags(write=False)
    grey.setflags(write=False)
    return scale, grey


def render_saturate(frames: np.ndarray, factor: float, offset: float) -> np.ndarray:
    """Every pixel's HSV saturation mapped to clip(S·factor + offset, 0, 1), hue and value kept.

    Per frame on planes: V and min, the gain S'/S from the table, then rint(V - (V - c)·gain)
    as OpenCV float32 subtract, multiply and a rounding subtract (the same float32 operations
    as numpy and torch do); greys take their green and blue from the grey table."""
    scale, grey = saturate_tables(factor, offset)
    tint = bool((grey != np.arange(256)).any())                      # greys change only when offset > 0

    def saturate(frame: np.ndarray, _: int, dst: np.ndarray) -> None:
        channels = cv2.split(frame)
        v, m = channel_max(channels), channel_min(channels)
        gain = scale.take((v.astype(np.uint16) << 8) | m)
        vf = v.astype(np.float32)
        out = [cv2.subtract(vf, cv2.multiply(cv2.subtract(vf, c, dtype=cv2.CV_32F), gain), dtype=cv2.CV_8U)
               for c in channels]
        if tint:                                                     # (V, V(1 - S'), V(1 - S'))
            greys, tinted = cv2.compare(v, m, cv2.CMP_EQ), cv2.LUT(v, grey)
            for c in out[1:]:
                cv2.copyTo(tinted, greys, c)
        cv2.merge(out, dst=dst)

    return per_frame_into(frames, saturate)


# ---------------------------------------------------------------------- draw / render split
@numpy_kernel("brightness")
def brightness_frames(frames, ids, drawn, params):
    return render_brightness(frames, **params)


@numpy_kernel("contrast")
def contrast_frames(frames, ids, drawn, params):
    return render_contrast(frames, **params)


@numpy_kernel("saturate")
def saturate_frames(frames, ids, drawn, params):
    return render_saturate(frames, **params)
