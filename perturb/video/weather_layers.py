"""The weather ops' layers (fog's plasma, frost's ice, snow's flakes, spatter's drops), made on the host.

Each layer is a float32 (H, W, C) map generated from one 64-bit key and the frame size, so the
numpy and torch kernels of :mod:`.weather` composite the very same layer. Layers that move
over a clip (fog, snow) are periodic: a frame's layer is the map rolled by that frame's integer
shift, so motion never reveals a seam and a subset of frames sees exactly what the whole clip does.
The constants follow imagecorruptions 1.1.2's ``corruptions.py``; frost's texture is procedural
(the reference ships photographs) with the reference textures' mean and spread per channel.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

import cv2
import numpy as np

from .blur import motion_kernel

# Fog: the reference's diamond-square map starts each level's random offsets at +-100 (x100).
PLASMA_WIBBLE = 100.0
# Frost: per-channel mean and standard deviation (RGB levels) of the five textures the reference
# draws from (measured on its frost1-5 images; the sixth is never drawn).
FROST_MEAN = (145.9, 167.2, 179.0)
FROST_STD = 28.5
FROST_NEEDLES_PER_PIXEL = 1 / 40        # ice needles drawn per pixel of the frame
FROST_NEEDLE_LENGTH = (4, 28)           # px, uniform
# Spatter's colours (RGB, 0..1): water is pale turquoise, mud is brown (the reference's).
WATER_RGB = (175 / 255, 238 / 255, 238 / 255)
MUD_RGB = (63 / 255, 42 / 255, 20 / 255)
BLUR_TRUNCATE = 4.0                     # skimage.filters.gaussian's default, as the reference


def frame_rng(key: int, frame: int | None) -> np.random.Generator:
    """The Generator of a clip's layer (frame None) or of one frame's own layer (per_frame)."""
    return np.random.default_rng(int(key) if frame is None else [int(key), int(frame)])


def _gaussian(layer: np.ndarray, sigma: float, border: int) -> np.ndarray:
    """A 2-D float map blurred by a Gaussian of ``sigma`` px truncated at 4 sigma."""
    radius = int(BLUR_TRUNCATE * sigma + 0.5)
    return cv2.GaussianBlur(layer, (2 * radius + 1, 2 * radius + 1), sigma, borderType=border)


def _wrap_filter(layer: np.ndarray, kernel: np.ndarray, anchor: tuple[int, int]) -> np.ndarray:
    """cv2.filter2D with periodic edges (OpenCV has no wrap border for filters)."""
    kh, kw = kernel.shape
    pad = max(kh, kw)
    padded = np.pad(layer, pad, mode="wrap")
    out = cv2.filter2D(padded, -1, kernel, anchor=anchor, borderType=cv2.BORDER_CONSTANT)
    return out[pad:-pad, pad:-pad]


def next_power_of_2(n: int) -> int:
    return 1 << (int(n) - 1).bit_length()


# ------------------------------------------------------------------------------------------ fog
def plasma(rng: np.random.Generator, size: int, decay: float) -> np.ndarray:
    """A periodic (size, size) diamond-square height map in [0, 1] (size a power of two).

    The reference's plasma_fractal: each level fills square centres, then diamond centres, with
    the mean of their neighbours (wrapping around) plus uniform noise whose range shrinks by
    ``decay`` per level.
    """
    grid = np.zeros((size, size), np.float64)
    step, wibble = size, PLASMA_WIBBLE
    while step >= 2:
        half = step // 2
        corners = grid[0::step, 0::step]
        square = corners + np.roll(corners, -1, axis=0)
        square = square + np.roll(square, -1, axis=1)
        grid[half::step, half::step] = square / 4 + wibble * rng.uniform(-wibble, wibble, square.shape)
        centres = grid[half::step, half::step]
        corners = grid[0::step, 0::step]
        across = centres + np.roll(centres, 1, axis=0) + corners + np.roll(corners, -1, axis=1)
        grid[0::step, half::step] = across / 4 + wibble * rng.uniform(-wibble, wibble, across.shape)
        down = centres + np.roll(centres, 1, axis=1) + corners + np.roll(corners, -1, axis=0)
        grid[half::step, 0::step] = down / 4 + wibble * rng.uniform(-wibble, wibble, down.shape)
        step, wibble = half, wibble / decay
    grid -= grid.min()
    return (grid / grid.max()).astype(np.float32)


def fog_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any]) -> np.ndarray:
    """Fog's map: periodic plasma of the next power of two >= the longer side, (S, S, 1)."""
    return plasma(rng, next_power_of_2(max(h, w)), float(params["decay"]))[..., None]


# ---------------------------------------------------------------------------------------- frost
def frost_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any]) -> np.ndarray:
    """A procedural frost texture (H, W, 3) in levels: hazy plasma plus antialiased ice needles,
    with sub-needles branching at +-60 degrees, blue-white like the reference's photographs; in [0, 1]."""
    haze = plasma(rng, next_power_of_2(max(h, w)), 1.6)[:h, :w]
    needles = np.zeros((h, w), np.float32)
    count = max(1, int(h * w * FROST_NEEDLES_PER_PIXEL))
    starts = rng.uniform((0, 0), (w, h), size=(count, 2))
    angles = rng.uniform(0, np.pi, size=count)
    lengths = rng.uniform(*FROST_NEEDLE_LENGTH, size=count)
    bright = rng.uniform(0.3, 1.0, size=count)      # quantised to eighths when drawn
    # a needle and two shorter branches at +-60 degrees from its start, one polyline each, drawn
    # in one call per brightness step (to 1/16 px, antialiased)
    turns = np.array([0.0, np.pi / 3, -np.pi / 3])
    reach = np.array([1.0, 0.4, 0.4])
    ends = starts[:, None, :] + (reach * lengths[:, None])[..., None] * np.stack(
        [np.cos(angles[:, None] + turns), np.sin(angles[:, None] + turns)], axis=-1)
    segments = np.stack([np.broadcast_to(starts[:, None, :], ends.shape), ends], axis=2)   # (n, 3, 2, 2)
    steps = np.minimum((bright * 8).astype(int), 7)
    for step in np.unique(steps):
        lines = np.rint(segments[steps == step].reshape(-1, 2, 2) * 16).astype(np.int32)
        cv2.polylines(needles, list(lines), False, float((step + 1) / 8), 1, cv2.LINE_AA, 4)
    needles = cv2.GaussianBlur(needles, (3, 3), 0.6)
    pattern = 0.5 * haze + np.minimum(needles, 1.0)
    pattern = (pattern - pattern.mean()) / max(float(pattern.std()), 1e-6)
    rgb = np.asarray(FROST_MEAN, np.float32) + FROST_STD * pattern[..., None]
    return (np.clip(rgb, 0, 255) / 255).astype(np.float32)


# ----------------------------------------------------------------------------------------- snow
def snow_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any],
               angle: float | None = None) -> np.ndarray:
    """Snow's map (H, W, 1), periodic: the reference's zoomed normal noise, thresholded,
    streaked along ``angle`` (drawn here when None, as the reference draws it), rounded to
    levels, plus its own half-turn (the reference adds both)."""
    zoom = float(params["zoom"])
    gh, gw = max(1, round(h / zoom)), max(1, round(w / zoom))
    small = rng.normal(float(params["loc"]), float(params["scale"]), size=(gh, gw)).astype(np.float32)
    ys = ((np.arange(h, dtype=np.float32) + 0.5) * gh / h - 0.5)
    xs = ((np.arange(w, dtype=np.float32) + 0.5) * gw / w - 0.5)
    map_x, map_y = np.meshgrid(xs, ys)
    layer = cv2.remap(small, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    layer[layer < float(params["threshold"])] = 0
    layer = np.clip(layer, 0, 1)
    if angle is None:
        angle = float(rng.uniform(-135, -45))
    kernel, anchor = motion_kernel(float(params["radius"]), float(params["sigma"]), angle)
    layer = np.rint(_wrap_filter(layer, kernel, anchor) * 255) / 255
    return (layer + layer[::-1, ::-1]).astype(np.float32)[..., None]


# -------------------------------------------------------------------------------------- spatter
def spatter_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any]) -> np.ndarray:
    """Spatter's drop mask (H, W, 1) in [0, 1+]: water's lit rims (mud 0) or mud's blobs (mud 1),
    by the reference's OpenCV pipeline."""
    liquid = rng.normal(float(params["loc"]), float(params["scale"]), size=(h, w)).astype(np.float32)
    liquid = _gaussian(liquid, float(params["sigma"]), cv2.BORDER_REPLICATE)
    threshold = float(params["threshold"])
    if int(params["mud"]) == 0:
        liquid[liquid < threshold] = 0
        levels = (liquid * 255).astype(np.uint8)
        dist = cv2.distanceTransform(255 - cv2.Canny(levels, 50, 150), cv2.DIST_L2, 5)
        _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
        dist = cv2.equalizeHist(cv2.blur(dist, (3, 3)).astype(np.uint8))
        dist = cv2.filter2D(dist, cv2.CV_8U, np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]]))
        dist = cv2.blur(dist, (3, 3)).astype(np.float32)
        mask = levels * dist
        peak = float(mask.max())
        mask = mask / peak if peak > 0 else mask
        return (mask * float(params["intensity"])).astype(np.float32)[..., None]
    mask = _gaussian((liquid > threshold).astype(np.float32), float(params["intensity"]), cv2.BORDER_REPLICATE)
    mask[mask < 0.8] = 0
    return mask.astype(np.float32)[..., None]


LAYERS = {"fog": fog_layer, "frost": frost_layer, "snow": snow_layer, "spatter": spatter_layer}


@lru_cache(maxsize=64)
def _cached_layer(op: str, key: int, frame: int | None, h: int, w: int,
                  items: tuple[tuple[str, Any], ...], angle: float | None) -> np.ndarray:
    params = dict(items)
    rng = frame_rng(key, frame)
    layer = snow_layer(rng, h, w, params, angle) if op == "snow" else LAYERS[op](rng, h, w, params)
    layer.setflags(write=False)
    return layer


def base_layer(op: str, drawn: Mapping[str, Any], params: Mapping[str, Any], t: int,
               h: int, w: int) -> np.ndarray:
    """Output frame t's unshifted layer: the clip's (cached), or frame t's own under per_frame."""
    per_frame = bool(params.get("per_frame", False))
    items = tuple(sorted((k, v) for k, v in params.items() if k != "per_frame"))
    angle = None if per_frame or op != "snow" else float(drawn["angle"])
    return _cached_layer(op, int(drawn["key"]), int(t) if per_frame else None, h, w, items, angle)
