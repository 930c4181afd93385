"""ImageNet-C's spatial ops for video: gaussian_blur, glass_blur, elastic_transform.

Parameters follow imagecorruptions 1.1.2 (``corruptions.py``); each kernel takes every value
from its severity's ``params``. The random parts are drawn once per clip, so a video looks
through one pane of glass or one warped medium that stays put (the image suite draws anew for
every image): the draw is one 64-bit key, and the pixel moves or displacement field for a
frame size are generated from it on the host (cached), so numpy and torch render the same draw.
Pixelate is in :mod:`.imagenet_c_pixelate`, the colour ops in :mod:`.imagenet_c_colour`, the
torch twins of all of them in :mod:`.torch_imagenet_c`.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from .keyed_words import draw_key
from .opencv_frames import per_frame, per_frame_into
from .twins import numpy_kernel

# Gaussians reach truncate·sigma pixels, as scipy.ndimage's (the reference blurs with skimage).
BLUR_TRUNCATE = 4.0           # skimage.filters.gaussian's default
ELASTIC_TRUNCATE = 3.0        # the reference's smoothing of the displacement field
# Displacement field of elastic_transform, as fractions of the frame size (the reference's constants):
ELASTIC_SIGMA = 0.01          # smoothing sigma per axis: 0.01·H rows, 0.01·W columns
ELASTIC_MAX_SHIFT = 0.005     # uniform noise in ±0.005·H pixels before smoothing (H for both axes)


def positive(name: str, value: object, op: str, allow_zero: bool = False) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{op}: expected {name} to be a finite number {bound}; got {value!r}")
    return float(value)


def _count(name: str, value: object, op: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{op}: expected {name} to be an int >= {low}; got {value!r}")
    return int(value)


@lru_cache(maxsize=64)
def gaussian_taps(sigma: float, truncate: float = BLUR_TRUNCATE) -> np.ndarray:
    """scipy.ndimage's 1-D Gaussian: radius int(truncate·sigma + 0.5), normalised (float64, read-only)."""
    radius = int(truncate * sigma + 0.5)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    taps = np.exp(-0.5 * (x / sigma) ** 2)
    taps /= taps.sum()
    taps.setflags(write=False)
    return taps


def blur_levels(frame: np.ndarray, sigma: float, depth: int = cv2.CV_32F,
                dst: np.ndarray | None = None) -> np.ndarray:
    """A (uint8 or float32) frame blurred by a Gaussian of ``sigma`` px with replicated edges
    (skimage's 'nearest'), in float32 (or ``depth``: CV_8U rounds and saturates in the filter);
    into ``dst`` when given."""
    taps = gaussian_taps(sigma).astype(np.float32)
    return cv2.sepFilter2D(frame, depth, taps, taps, dst=dst, borderType=cv2.BORDER_REPLICATE)


# ------------------------------------------------------------------------------ gaussian_blur
def render_gaussian_blur(frames: np.ndarray, sigma: float) -> np.ndarray:
    """Every frame blurred by a Gaussian of ``sigma`` px (truncated at 4 sigma, replicated edges):
    the float32 filter of :func:`blur_levels`, rounded to levels by the filter itself."""
    sigma = positive("sigma", sigma, "gaussian_blur")
    return per_frame_into(frames, lambda frame, _, dst: blur_levels(frame, sigma, cv2.CV_8U, dst))


# --------------------------------------------------------------------------------- glass_blur
def _one_pass(height: int, width: int, max_delta: int, offsets: np.ndarray) -> np.ndarray:
    """Where each pixel comes from after one pass of the reference's moves, (H·W,) indices.

    A visited pixel p takes the value its target q holds when p's turn comes: q's own new value
    if q was visited before (q > p in the descending scan), else q's value before the pass.
    Those links only climb, so chains are resolved by pointer jumping (log of their length
    rounds of vectorised gathers) instead of a loop over pixels.
    """
    n = height * width
    rows, cols = np.arange(height - max_delta, max_delta, -1), np.arange(width - max_delta, max_delta, -1)
    here = (rows[:, None] * width + cols[None, :]).ravel()
    there = ((rows[:, None] + offsets[..., 1]) * width + cols[None, :] + offsets[..., 0]).ravel()
    visited = np.zeros(n, bool)
    visited[here] = True
    link = visited[there] & (there > here)
    step, source, done = np.arange(n), np.arange(n), np.ones(n, bool)
    step[here[link]], source[here[~link]], done[here[link]] = there[link], there[~link], False
    todo = here[link]
    while len(todo):
        nxt = step[todo]
        final = done[nxt]
        source[todo[final]] = source[nxt[final]]
        done[todo[final]] = True
        step[todo[~final]] = step[nxt[~final]]                    # jump: twice as far next round
        todo = todo[~final]
    return source


@lru_cache(maxsize=16)
def glass_sources(key: int, height: int, width: int, max_delta: int, iterations: int) -> np.ndarray:
    """Where each pixel of the blurred frame comes from after the reference's local "swaps".

    The reference visits rows H-d..d+1 and, in each, columns W-d..d+1 (descending), and runs
    ``x[h, w], x[h', w'] = x[h', w'], x[h, w]`` with (h', w') = (h + dy, w + dx), the offsets
    drawn uniformly from [-d, d) (``randint``'s half-open range); ``iterations`` passes. On
    numpy pixel views that statement copies the neighbour into (h, w) and leaves the neighbour
    as it was (the second assignment reads the already overwritten view): pixels are
    duplicated, not exchanged. The same moves are resolved here on pixel indices
    (:func:`_one_pass`; offsets drawn in one call per pass from the key's Generator), so a
    clip's frames share them and rendering is one gather. Flat (H·W,) int64 indices, read-only.
    """
    rng = np.random.default_rng(key)
    source = np.arange(height * width, dtype=np.int64)
    n_rows, n_cols = max(height - 2 * max_delta, 0), max(width - 2 * max_delta, 0)
    for _ in range(iterations if n_rows and n_cols else 0):
        offsets = rng.integers(-max_delta, max_delta, size=(n_rows, n_cols, 2))
        source = source[_one_pass(height, width, max_delta, offsets)]
    source.setflags(write=False)
    return source


def check_glass(sigma: float, max_delta: int, iterations: int) -> tuple[float, int, int]:
    return (positive("sigma", sigma, "glass_blur"), _count("max_delta", max_delta, "glass_blur", 1),
            _count("iterations", iterations, "glass_blur", 0))


def render_glass_blur(frames: np.ndarray, key: int, sigma: float, max_delta: int, iterations: int) -> np.ndarray:
    """Blur, move pixels by the clip's :func:`glass_sources`, blur again (frosted glass)."""
    sigma, max_delta, iterations = check_glass(sigma, max_delta, iterations)
    _, h, w, _ = frames.shape
    source = glass_sources(int(key), h, w, max_delta, iterations)

    def glass(frame: np.ndarray, _: int) -> np.ndarray:
        blurred = np.rint(blur_levels(frame, sigma)).reshape(h * w, 3)[source].reshape(h, w, 3)
        return cv2.convertScaleAbs(blur_levels(blurred, sigma))       # rounded, saturated

    return per_frame(frames, glass)


# -------------------------------------------------------------------------- elastic_transform
@lru_cache(maxsize=16)
def elastic_field(key: int, height: int, width: int) -> np.ndarray:
    """The clip's displacement field at alpha = 1: (2, H, W) float64 (dx, dy) in pixels, read-only.

    As the reference: uniform noise in ±0.005·H per axis, smoothed by a Gaussian of 0.01·H rows
    by 0.01·W columns truncated at 3 sigma with mirrored (half-sample) edges.
    """
    rng = np.random.default_rng(key)
    reach = ELASTIC_MAX_SHIFT * height
    noise = rng.uniform(-reach, reach, size=(2, height, width))
    ky, kx = (gaussian_taps(ELASTIC_SIGMA * n, ELASTIC_TRUNCATE) for n in (height, width))
    field = np.stack([cv2.sepFilter2D(n, cv2.CV_64F, kx, ky, borderType=cv2.BORDER_REFLECT) for n in noise])
    field.setflags(write=False)
    return field


def elastic_maps(key: int, height: int, width: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Absolute source positions (map_x, map_y), float32 (H, W), of the field scaled by alpha."""
    dx, dy = elastic_field(int(key), height, width) * alpha
    ys, xs = np.mgrid[0:height, 0:width]
    return (xs + dx).astype(np.float32), (ys + dy).astype(np.float32)


def render_elastic(frames: np.ndarray, key: int, alpha: float) -> np.ndarray:
    """Every frame resampled (bilinear, mirrored edges) at the clip's displaced positions."""
    alpha = positive("alpha", alpha, "elastic_transform", allow_zero=True)
    _, h, w, _ = frames.shape
    map_x, map_y = elastic_maps(key, h, w, alpha)
    return per_frame(frames, lambda frame, _: cv2.remap(
        frame, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT))


# ---------------------------------------------------------------------- draw / render split
def draw_clip_key(rng: np.random.Generator, n_frames: int, params) -> dict[str, int]:
    """One key per clip: the pixel moves or displacement field every frame of the clip shares."""
    return {"key": draw_key(rng)}


def draw_glass(rng: np.random.Generator, n_frames: int, params) -> dict[str, int]:
    check_glass(params["sigma"], params["max_delta"], params["iterations"])
    return draw_clip_key(rng, n_frames, params)


def draw_elastic(rng: np.random.Generator, n_frames: int, params) -> dict[str, int]:
    positive("alpha", params["alpha"], "elastic_transform", allow_zero=True)
    return draw_clip_key(rng, n_frames, params)


@numpy_kernel("gaussian_blur")
def gaussian_frames(frames, ids, drawn, params):
    return render_gaussian_blur(frames, **params)


@numpy_kernel("glass_blur")
def glass_frames(frames, ids, drawn, params):
    return render_glass_blur(frames, drawn["key"], **params)


@numpy_kernel("elastic_transform")
def elastic_frames(frames, ids, drawn, params):
    return render_elastic(frames, drawn["key"], **params)


SOURCE = "imagecorruptions 1.1.2 (Hendrycks & Dietterich's ImageNet-C), corruptions.py"
ROUNDING = ("Output is rounded to the nearest level; the reference's corrupt() truncates its float "
            "result to uint8 (half a level darker on average; that alone is about 51-52 dB of PSNR "
            "between the two).")

