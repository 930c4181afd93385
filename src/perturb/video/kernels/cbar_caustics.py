"""ImageNet-C-bar's caustic_refraction: the picture seen through rippling water, with its caustic light.

A frame's layer is built on the host in float64 from its draw (the caustic pattern's time and
size) and the frame's size: the reference's caustic field (five iterations, softened by a
Gaussian of sigma 1), the refraction of a vertical ray through the surface whose normal comes
from the field's luma differences (eta 4, reach ``lens_scale`` x side, rounded to 1/1000 px),
and the lighting those differences add. The layer is where each pixel samples the picture (four
corners and their bilinear weights, zero outside the frame) and the light it gains; the numpy
kernel here and the torch twin in :mod:`.torch_cbar_overlays` apply it. The reference loops per
pixel in Python; this is the same maths vectorised.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

import cv2
import numpy as np

from .cbar_draws import by_draw_row, check_params, draw_count, row_of
from .imagenet_c import gaussian_taps
from .reference_forms import reference_form
from .twins import numpy_kernel

TIMES = (0.5, 2.0)              # the pattern's time, uniform
SIZES = (0.75, 1.25)            # the pattern's period as a fraction of side, uniform
ETA = 4.0                       # the water's refractive index ratio
SOFTENING = 1.0                 # the Gaussian's sigma, px
LUMA = (0.2126, 0.7152, 0.0722)
FLAT = 1.0 - 1e-3               # a normal this close to vertical does not bend the ray


def draw_caustics(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The reference's draw: the pattern's time in [0.5, 2) and its size as a fraction of side in [0.75, 1.25)."""
    check_params("caustic_refraction", params)
    k = draw_count(n_frames, params)
    return {"time": rng.uniform(*TIMES, k), "size": rng.uniform(*SIZES, k)}


def caustic_field(time: float, size: float, h: int, w: int) -> np.ndarray:
    """(h, w) float64 in [0, 1]: the reference's caustic noise at pixel (y, x), the point
    (y, x) / size wrapped to the unit square, five iterations, brightness |1.17 - c^1.4|^8."""
    p0 = np.remainder(np.arange(h, dtype=np.float64) / size, 1)[:, None] * 6.28318530718 - 250
    p1 = np.remainder(np.arange(w, dtype=np.float64) / size, 1)[None, :] * 6.28318530718 - 250
    p0, p1 = np.broadcast_arrays(p0, p1)
    i0, i1, c, inten = p0, p1, 1.0, 0.005
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # a zero sine: c -> inf, as there
        for n in range(5):
            t = time * (1.0 - (3.5 / (n + 1)))
            i0, i1 = (p0 + (np.cos(t - i0) + np.sin(t + i1)), p1 + (np.sin(t - i1) + np.cos(t + i0)))
            length = np.sqrt((p0 / (np.sin(i0 + t) / inten)) ** 2 + (p1 / (np.cos(i1 + t) / inten)) ** 2)
            c = c + 1.0 / length
        c = 1.17 - (c / 5.0) ** 1.4
        return np.clip(np.abs(c) ** 8.0, 0, 1)


def soften(field: np.ndarray, sigma: float = SOFTENING) -> np.ndarray:
    """scipy.ndimage.gaussian_filter of the field (radius 4·sigma, mirrored edges d c b a | a b c d:
    OpenCV's BORDER_REFLECT, as elastic_transform's field). The reference filters an (H, W, 3)
    stack, across the channels too; its three channels are equal, so that pass returns each
    channel unchanged and this 2-D filter is the whole of it."""
    taps = gaussian_taps(sigma)
    return cv2.sepFilter2D(field, cv2.CV_64F, taps, taps, borderType=cv2.BORDER_REFLECT)


def _luma_steps(luma: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The luma one pixel away in the reference's four directions, 0 outside the frame: "north"
    and "south" are x - 1 and x + 1, "west" and "east" y - 1 and y + 1 (its [y, x] offsets)."""
    padded = np.pad(luma, 1)
    h, w = luma.shape
    return (padded[1:h + 1, 0:w], padded[1:h + 1, 2:w + 2], padded[0:h, 1:w + 1], padded[2:h + 2, 1:w + 1])


def refraction(field: np.ndarray, lens_scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dy, dx, light): the displacement (px, rounded to 3 decimals) of the ray through each
    pixel and the light it gains, from the softened field's luma. The surface normal is
    (east - west, south - north, 1) normalised; a vertical ray bends by Snell's law (eta 4) in
    the plane of the normal: the reference's rotation, in closed form. light = (north - south)·a
    and (east - west)·a, returned as a pair to add in the reference's order."""
    luma = field * LUMA[0] + field * LUMA[1] + field * LUMA[2]
    north, south, west, east = _luma_steps(luma)
    a, b = east - west, south - north
    norm = np.sqrt(a * a + b * b + 1.0)
    nx, ny, nz = a / norm, b / norm, 1.0 / norm
    sideways = np.sqrt(nx * nx + ny * ny)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.arcsin(sideways / ETA)
        along = np.where(nz >= FLAT, 0.0, np.cos(out) - np.sin(out) * nz / sideways) * lens_scale
    return np.round(nx * along, 3), np.round(ny * along, 3), np.stack([north - south, east - west])


@lru_cache(maxsize=8)
def caustic_layer(time: float, size: float, lens_scale: float, lighting: float, h: int, w: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(corners, weights, light) for h x w frames (read-only, cached per clip draw): each pixel's
    four bilinear corners as flat indices into the frame padded by one zero pixel (a corner
    outside the frame reads that zero), their weights, and the two light terms (2, h·w)."""
    side = min(h, w)
    dy, dx, light = refraction(soften(caustic_field(time, size * side, h, w)), lens_scale * side)
    py = np.arange(h, dtype=np.float64)[:, None] + dy
    px = np.arange(w, dtype=np.float64)[None, :] + dx
    top, left = np.floor(py), np.floor(px)
    fy, fx = (py - top).ravel(), (px - left).ravel()
    rows = [np.clip(top + k, -1, h).astype(np.int64).ravel() + 1 for k in (0, 1)]
    cols = [np.clip(left + k, -1, w).astype(np.int64).ravel() + 1 for k in (0, 1)]
    corners = np.stack([rows[i] * (w + 2) + cols[j] for i in (0, 1) for j in (0, 1)])
    weights = np.stack([(1 - fy) * (1 - fx), (1 - fy) * fx, fy * (1 - fx), fy * fx])
    layer = (corners, weights, light.reshape(2, -1) * lighting)
    for part in layer:
        part.setflags(write=False)
    return layer


def caustic_layer_of(drawn: Mapping[str, np.ndarray], params: Mapping[str, Any], row: int, h: int, w: int) -> tuple:
    """Draw row ``row``'s layer for h x w frames."""
    return caustic_layer(float(drawn["time"][row]), float(drawn["size"][row]), float(params["lens_scale"]),
                         float(params["lighting_amount"]), h, w)


def refract_frames(frames: np.ndarray, layer: tuple) -> np.ndarray:
    """uint8 (n, h, w, 3) frames seen through a layer: values v/255 (float32) sampled at the
    displaced points, plus the light, clipped to [0, 1], to the nearest level."""
    corners, weights, light = layer
    n, h, w, _ = frames.shape
    values = np.pad(frames.astype(np.float32) / np.float32(255), ((0, 0), (1, 1), (1, 1), (0, 0)))
    values = values.reshape(n, -1, 3)
    out = sum(values[:, corners[k]] * weights[k][:, None] for k in range(4))
    out += light[0][:, None]
    out += light[1][:, None]
    return np.rint(np.clip(out, 0, 1) * 255).astype(np.uint8).reshape(n, h, w, 3)


@numpy_kernel("caustic_refraction")
def caustic_frames(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, np.ndarray],
                   params: Mapping[str, Any]) -> np.ndarray:
    """The frames seen through the draw's water (one layer per draw row, built once)."""
    return by_draw_row(frames, ids, params, lambda row, h, w: caustic_layer_of(drawn, params, row, h, w),
                       refract_frames)


@reference_form("caustic_refraction")
def caustic_reference(drawn: Mapping[str, Any], params: Mapping[str, Any], t: int, side: int) -> dict[str, Any]:
    row = row_of(params, t)
    return {"time": float(drawn["time"][row]), "size": float(drawn["size"][row]) * side, "eta": ETA,
            "lens_scale": float(params["lens_scale"]) * side,
            "lighting_amount": float(params["lighting_amount"]), "softening": SOFTENING}
