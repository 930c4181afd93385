"""The random layers of the weather ops (fog, frost, snow, spatter), generated on the host.

A layer is a float32 array computed from a numpy Generator and the layer's size only, so the
numpy and torch kernels composite the very same layer (bit-identical draws on every device).
Each generator restates the imagecorruptions 1.1.2 recipe with its constants taken from
``params`` (the severity table's row); frost's texture is grown procedurally instead of
read from photographs.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import cv2
import numpy as np

from .blur import motion_weights, streak_offsets

# Pale turquoise water and mud brown, RGB levels (imagecorruptions' spatter colours).
WATER_RGB = (175.0, 238.0, 238.0)
MUD_RGB = (63.0, 42.0, 20.0)
# Frost texture: tint of the ice (RGB, 0..1), and crystal seeds per pixel of frame.
FROST_TINT = (0.80, 0.93, 1.0)
FROST_SEEDS_PER_PIXEL = 1 / 300


def next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


# --------------------------------------------------------------------------------------- fog
def plasma_fractal(rng: np.random.Generator, mapsize: int, decay: float, wibble: float) -> np.ndarray:
    """Diamond-square fractal on a (mapsize, mapsize) torus, scaled to [0, 1] (float32).

    The reference's algorithm, draw order and float64 grid; its global RNG replaced by ``rng``
    (a ``numpy.random.RandomState`` seeded as the reference's global state gives its field).
    """
    if mapsize & (mapsize - 1):
        raise ValueError(f"plasma map size must be a power of two; got {mapsize}")
    grid = np.zeros((mapsize, mapsize), dtype=np.float64)
    step = mapsize

    def wibbled_mean(total: np.ndarray) -> np.ndarray:
        return total / 4 + wibble * rng.uniform(-wibble, wibble, total.shape)

    while step >= 2:
        half = step // 2
        corners = grid[0::step, 0::step]
        squares = corners + np.roll(corners, -1, axis=0)
        squares += np.roll(squares, -1, axis=1)
        grid[half::step, half::step] = wibbled_mean(squares)
        centres, corners = grid[half::step, half::step], grid[0::step, 0::step]
        left = centres + np.roll(centres, 1, axis=0) + corners + np.roll(corners, -1, axis=1)
        grid[0::step, half::step] = wibbled_mean(left)
        top = centres + np.roll(centres, 1, axis=1) + corners + np.roll(corners, -1, axis=0)
        grid[half::step, 0::step] = wibbled_mean(top)
        step //= 2
        wibble /= decay
    grid -= grid.min()
    peak = grid.max()
    return (grid / peak if peak > 0 else grid).astype(np.float32)


def fog_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any], angle: float) -> np.ndarray:
    """The plasma field (h, w) in [0, 1]: the top-left crop of a power-of-two map."""
    side = next_power_of_2(max(h, w))
    return plasma_fractal(rng, side, params["decay"], params["wibble"])[:h, :w]


# ------------------------------------------------------------------------------------- frost
def frost_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any], angle: float) -> np.ndarray:
    """A procedural frost texture (h, w, 3) in 0..255 levels: uneven icing (a soft plasma field)
    under ice needles grown from random seeds, each with side branches at ±60°, bluish white."""
    icing = plasma_fractal(rng, next_power_of_2(max(h, w)), 2.0, 100.0)[:h, :w]
    needles = np.zeros((h, w), np.float32)
    seeds = max(1, int(h * w * FROST_SEEDS_PER_PIXEL))
    xs, ys = rng.uniform(0, w, seeds), rng.uniform(0, h, seeds)
    lengths, thetas = rng.uniform(6, 30, seeds), rng.uniform(0, 2 * np.pi, seeds)
    brightness = rng.uniform(0.3, 1.0, seeds)
    branch_at = rng.uniform(0.2, 0.9, (seeds, 3))
    for x, y, length, theta, v, at in zip(xs, ys, lengths, thetas, brightness, branch_at):
        _needle(needles, x, y, length, theta, v)
        for k, a in enumerate(at):
            bx, by = x + a * length * math.cos(theta), y + a * length * math.sin(theta)
            side = math.pi / 3 if k % 2 == 0 else -math.pi / 3
            _needle(needles, bx, by, length * (1 - a) * 0.6, theta + side, v * 0.8)
    needles = cv2.GaussianBlur(needles, (0, 0), 0.6)
    value = np.clip(0.38 + 0.4 * icing + needles, 0, 1)
    return (value[..., None] * (255 * np.asarray(FROST_TINT, np.float32))).astype(np.float32)


def _needle(canvas: np.ndarray, x: float, y: float, length: float, theta: float, value: float) -> None:
    """An anti-aliased line of ``value`` from (x, y) along ``theta``, at 1/16 px precision."""
    shift = 4
    end = (x + length * math.cos(theta), y + length * math.sin(theta))
    p0 = (int(round(x * 16)), int(round(y * 16)))
    p1 = (int(round(end[0] * 16)), int(round(end[1] * 16)))
    cv2.line(canvas, p0, p1, float(value), 1, cv2.LINE_AA, shift)


# -------------------------------------------------------------------------------------- snow
def streak_blur(layer: np.ndarray, radius: float, sigma: float, angle: float) -> np.ndarray:
    """A one-channel layer smeared along ``angle`` (degrees): one-sided Gaussian taps at
    distances 0..2·radius, replicated edges (the motion blur kernel of :mod:`.blur`)."""
    weights = motion_weights(radius, sigma)
    dxs, dys = streak_offsets(len(weights), angle)
    reach = len(weights)
    padded = cv2.copyMakeBorder(layer, reach, reach, reach, reach, cv2.BORDER_REPLICATE)
    h, w = layer.shape
    out = np.zeros_like(layer)
    for weight, dx, dy in zip(weights, dxs.tolist(), dys.tolist()):
        out += np.float32(weight) * padded[reach + dy:reach + dy + h, reach + dx:reach + dx + w]
    return out


def snow_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any], angle: float) -> np.ndarray:
    """Flakes (h, w) in 0..2: normal noise zoomed up, thresholded, streaked along ``angle``,
    rounded to 1/255, plus the same layer turned by 180° (the reference's two flake sheets)."""
    zoom = params["zoom"]
    small = rng.normal(params["mean"], params["std"],
                       (math.ceil(h / zoom), math.ceil(w / zoom))).astype(np.float32)
    flakes = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    flakes[flakes < params["threshold"]] = 0
    np.clip(flakes, 0, 1, out=flakes)
    flakes = streak_blur(flakes, params["radius"], params["sigma"], angle)
    flakes = np.rint(flakes * 255) / np.float32(255)
    return (flakes + flakes[::-1, ::-1]).astype(np.float32)


# ----------------------------------------------------------------------------------- spatter
def gaussian_nearest(layer: np.ndarray, sigma: float) -> np.ndarray:
    """scikit-image's ``gaussian`` (truncated at 4σ, nearest-edge borders) with OpenCV."""
    size = 2 * int(math.ceil(4 * sigma)) + 1
    return cv2.GaussianBlur(layer, (size, size), sigma, borderType=cv2.BORDER_REPLICATE)


def spatter_layer(rng: np.random.Generator, h: int, w: int, params: Mapping[str, Any], angle: float) -> np.ndarray:
    """(h, w, 4): a keep factor and the RGB levels added, ``out = x·keep + add`` (water or mud)."""
    liquid = rng.normal(params["mean"], params["std"], (h, w)).astype(np.float32)
    liquid = gaussian_nearest(liquid, params["sigma"])
    liquid[liquid < params["threshold"]] = 0
    out = np.empty((h, w, 4), np.float32)
    if params["mud"]:
        mask = gaussian_nearest((liquid > params["threshold"]).astype(np.float32), params["smear"])
        mask[mask < 0.8] = 0
        out[..., 0] = 1 - mask
        out[..., 1:] = mask[..., None] * np.asarray(MUD_RGB, np.float32)
        return out
    levels = np.clip(liquid * 255, 0, 255).astype(np.uint8)
    dist = cv2.distanceTransform(255 - cv2.Canny(levels, 50, 150), cv2.DIST_L2, 5)
    _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
    dist = cv2.equalizeHist(cv2.blur(dist, (3, 3)).astype(np.uint8))
    ridge = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]], np.float32)
    dist = cv2.blur(cv2.filter2D(dist, cv2.CV_8U, ridge), (3, 3)).astype(np.float32)
    water = liquid * dist
    peak = water.max()
    water = water / peak * params["smear"] if peak > 0 else water
    out[..., 0] = 1
    out[..., 1:] = water[..., None] * np.asarray(WATER_RGB, np.float32)
    return out
