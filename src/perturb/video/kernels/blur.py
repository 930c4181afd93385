"""Visual perturbations: blur (defocus, motion, zoom), rendered with OpenCV.

Defocus and motion kernels are sparse once written the right way (a disk as two taps per
column of a prefix sum, a streak as its 2·radius+1 taps), and run through OpenCV's direct
filter in small groups (:mod:`.sparse_filter`) instead of the DFT it picks for their size.

Motion blur separates what is random (one streak angle per frame, :func:`sample_motion_angles`)
from the rendering (:func:`render_motion_blur`); its renderer (:mod:`..render`) draws the angles
once per clip and renders any frames on numpy or torch with them.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from .opencv_frames import centre_zoom_matrix, per_frame, per_frame_into, scratch
from .sparse_filter import SparseKernel, correlate, sparse_kernel
from .twins import numpy_kernel

# Motion blur angles are drawn uniformly in this range (degrees), one per frame.
MOTION_ANGLE_RANGE = (-45.0, 45.0)


# ------------------------------------------------------------------------------------ defocus
def disk_mask(radius: float) -> np.ndarray:
    """The pixels within ``radius`` of the centre: a (2R+1)² boolean disk, R = floor(radius)."""
    half = int(np.floor(radius))
    yy, xx = np.mgrid[-half:half + 1, -half:half + 1]
    return xx ** 2 + yy ** 2 <= radius ** 2


def alias_weights(radius: float, alias_blur: float) -> np.ndarray:
    """The 1-D Gaussian (3 taps, 5 beyond radius 8) that softens the disk's staircase edge."""
    return cv2.getGaussianKernel(3 if radius <= 8 else 5, alias_blur).ravel()


@lru_cache(maxsize=32)
def disk_kernel(radius: float, alias_blur: float) -> np.ndarray:
    """Normalised disk of ``radius`` px convolved with the alias Gaussian (full support, float32)."""
    mask = disk_mask(radius).astype(np.float64)
    g = alias_weights(radius, alias_blur)
    pad = len(g) // 2
    full = cv2.sepFilter2D(np.pad(mask, pad), -1, g, g, borderType=cv2.BORDER_CONSTANT)
    while len(full) > 3 and full[[0, -1]].sum() + full[:, [0, -1]].sum() < 1e-9 * full.sum():
        full = full[1:-1, 1:-1]             # drop rings the Gaussian leaves empty
    return (full / full.sum()).astype(np.float32)     # unit gain: a flat frame stays flat


@lru_cache(maxsize=32)
def disk_columns(radius: float) -> SparseKernel:
    """The disk as two taps per column on a column prefix sum S (S[i] = sum of rows above i):
    column dx covers rows -b..b, i.e. S[y + b + 1] - S[y - b]. Top and bottom taps are grouped
    apart so each group's box stays small enough for OpenCV's direct filter."""
    mask = disk_mask(radius)
    half = len(mask) // 2
    b = mask.sum(axis=0) // 2
    top = [(-int(b[j]), j - half, -1.0) for j in range(len(b))]
    bottom = [(int(b[j]) + 1, j - half, 1.0) for j in range(len(b))]
    return sparse_kernel(top + bottom)


# Largest sum a float32 prefix keeps exact.
EXACT_FLOAT32 = 1 << 24


def column_prefix(padded: np.ndarray) -> np.ndarray:
    """S[i, x] = sum of padded[:i, x] (float32, one extra leading row of zeros), exactly."""
    h, w = padded.shape[:2]
    if (h + 1) * (w + 1) * 255 < EXACT_FLOAT32:
        table = cv2.integral(padded, sdepth=cv2.CV_32F)      # every entry exact below 2^24
        return cv2.subtract(table[:, 1:], table[:, :-1])     # cv2: fast on strided views
    table = cv2.integral(padded, sdepth=cv2.CV_64F)          # big frames: exact in float64
    return np.subtract(table[:, 1:], table[:, :-1]).astype(np.float32)


def defocus_blur(clip: np.ndarray, radius: float, alias_blur: float) -> np.ndarray:
    """Convolve every frame with an (anti-aliased) disk: an out-of-focus lens.

    The disk sum is exact (integer column runs over a prefix sum, :func:`disk_columns`); the
    alias Gaussian and the 1/area scale follow as one small separable filter. Reflect-101
    borders, applied once: both factors are symmetric, so the result is the dense kernel's.
    """
    columns = disk_columns(radius)
    half = int(np.floor(radius))
    g = alias_weights(radius, alias_blur).astype(np.float32)
    g_scaled = g / np.float32(disk_mask(radius).sum())

    def blur(frame: np.ndarray, _: int) -> np.ndarray:
        h, w = frame.shape[:2]
        padded = cv2.copyMakeBorder(frame, half, half, half, half, cv2.BORDER_REFLECT_101)
        disk = correlate(column_prefix(padded), columns, (half, half), (h, w))
        out = cv2.sepFilter2D(disk, -1, g_scaled, g, borderType=cv2.BORDER_REFLECT_101)
        return cv2.convertScaleAbs(out)            # round and saturate to uint8

    return per_frame(clip, blur)


# ------------------------------------------------------------------------------------- motion
def motion_weights(radius: float, sigma: float) -> np.ndarray:
    """One-sided Gaussian weights along the streak: width 2·radius+1 taps, normalised."""
    width = 2 * int(np.ceil(radius)) + 1
    w = np.exp(-np.arange(width, dtype=np.float64) ** 2 / (2.0 * sigma ** 2))
    return w / w.sum()


def streak_offsets(taps: int, angles: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer (dx, dy) of taps 0..taps-1 along each angle (degrees); shape angles.shape + (taps,)."""
    theta = np.deg2rad(np.asarray(angles, dtype=np.float64))[..., None]
    i = np.arange(taps)
    return np.rint(i * np.cos(theta)).astype(np.int64), np.rint(i * np.sin(theta)).astype(np.int64)


def motion_kernel(radius: float, sigma: float, angle: float) -> tuple[np.ndarray, tuple[int, int]]:
    """A streak kernel and its anchor for cv2.filter2D: each output pixel averages the pixels at
    distances 0..2·radius along ``angle`` (degrees) with one-sided Gaussian weights.
    """
    weights = motion_weights(radius, sigma)
    dx, dy = streak_offsets(len(weights), angle)
    x0, y0 = dx.min(), dy.min()
    kernel = np.zeros((dy.max() - y0 + 1, dx.max() - x0 + 1), np.float32)
    np.add.at(kernel, (dy - y0, dx - x0), weights)
    return kernel, (int(-x0), int(-y0))


def sample_motion_angles(rng: np.random.Generator, frames: int) -> np.ndarray:
    """One streak angle (degrees) per frame, uniform in MOTION_ANGLE_RANGE."""
    return rng.uniform(*MOTION_ANGLE_RANGE, size=frames)


def render_motion_blur(clip: np.ndarray, angles: np.ndarray, radius: float, sigma: float) -> np.ndarray:
    """Blur frame t along angles[t] (deterministic given the angles); edges are replicated."""
    if len(angles) != len(clip):
        raise ValueError(f"expected one angle per frame ({len(clip)}); got {len(angles)}")

    weights = motion_weights(radius, sigma).tolist()
    dxs, dys = streak_offsets(len(weights), angles)                # (T, taps) each

    def blur(frame: np.ndarray, t: int) -> np.ndarray:
        streak = sparse_kernel(zip(dys[t].tolist(), dxs[t].tolist(), weights))   # taps in order
        top, bottom, left, right = streak.reach
        padded = cv2.copyMakeBorder(frame, top, bottom, left, right, cv2.BORDER_REPLICATE)
        out = correlate(padded.astype(np.float32), streak, (top, left), frame.shape[:2])
        return cv2.convertScaleAbs(out)

    return per_frame(clip, blur)


# --------------------------------------------------------------------------------------- zoom
def zoom_factors(zooms: tuple[float, float, float]) -> np.ndarray:
    """The zoom factors np.arange(start, stop, step) of a severity row."""
    return np.arange(*zooms)


def zoom_blur(clip: np.ndarray, zooms: tuple[float, float, float]) -> np.ndarray:
    """Mean of each frame and its centre zooms by every factor: a blur radiating from the centre.

    Each frame is warped on its own as a 3-channel image: OpenCV samples those at exact
    positions, while images of more than 4 channels (frames stacked along the channel axis) go
    through a fixed-point path that rounds positions to 1/32 pixel and differs by up to 5
    levels. Warping frame by frame keeps any subset of frames, one frame included, equal to
    those frames of the whole clip, and is also faster than stacking (measured 2x at 224 px).
    """
    factors = zoom_factors(zooms)
    if len(factors) > 256:
        raise ValueError(f"zoom_blur takes at most 256 zoom factors; got {len(factors)} from {zooms}")
    _, h, w, _ = clip.shape
    identities = int(np.count_nonzero(factors == 1.0))  # a warp by 1 returns the frame exactly
    matrices = [centre_zoom_matrix(float(z), w, h) for z in factors if z != 1.0]
    n = len(factors) + 1

    def blur(frame: np.ndarray, _: int, dst: np.ndarray) -> None:
        acc = scratch("zoom.acc", frame.shape, np.uint16)   # exact integer sum of up to 257 uint8 images
        np.multiply(frame, np.uint16(1 + identities), out=acc)
        warped = scratch("zoom.warped", frame.shape, np.uint8)
        for m in matrices:
            cv2.warpAffine(frame, m, (w, h), dst=warped, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            np.add(acc, warped, out=acc)
        rounded_mean_levels(acc, n, dst)

    return per_frame_into(clip, blur)


def rounded_mean_levels(sums: np.ndarray, n: int, dst: np.ndarray | None = None) -> np.ndarray:
    """uint8 (sums + n//2) // n of uint16 sums of n levels, as OpenCV's rint(sums/n + beta): beta
    puts every value less than half a step off the half-way points, and float32 errors (at
    most 255·2^-23) stay far below the 1/(2n) left (tests: every sum, n up to 257)."""
    return cv2.convertScaleAbs(sums, dst=dst, alpha=1.0 / n, beta=(n // 2 - (n - 1) / 2) / n)


# ---------------------------------------------------------------------- draw / render split
def draw_motion_angles(rng: np.random.Generator, n_frames: int, params) -> dict[str, np.ndarray]:
    return {"angles": sample_motion_angles(rng, n_frames)}


@numpy_kernel("defocus_blur")
def defocus_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return defocus_blur(frames, **params)


@numpy_kernel("motion_blur")
def motion_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return render_motion_blur(frames, drawn["angles"][ids], **params)


@numpy_kernel("zoom_blur")
def zoom_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return zoom_blur(frames, **params)
