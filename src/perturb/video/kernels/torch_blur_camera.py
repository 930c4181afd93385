"""Torch kernels of the visual perturbations, on float (N, 3, H, W) frames of 0..255 levels.

Each is registered on its perturbation's renderer (:mod:`.render`) as
``kernel(x, ids, drawn, params)``: ``x`` holds output frames ``ids`` of the clip, ``drawn``
the clip's draws (angles, offsets), made once on the host, so numpy and torch render the same
parameters. Device-agnostic and batched over frames (conv2d, grid_sample, indexing; no Python
loop over pixels). Warps sample at exact positions, as OpenCV (5.x) does for the 3-channel
frames the numpy kernels warp one by one, so the result matches within one level.
The noise ops' torch kernels live beside their numpy twins in :mod:`.noise`.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from .blur import disk_kernel, motion_weights, streak_offsets, zoom_factors
from .camera import rotation_matrix, static_angles
from .temporal_blur import check_c, window_positions
from .twins import torch_kernel

# ------------------------------------------------------------------------------------- levels
ROUNDER = 1.5 * 2**23        # y + ROUNDER rounds y in [0, 2^22) half to even, to an integer in the low bits
ROUNDER_BITS = 0x4B400000    # the int32 bits of float32 ROUNDER


def int_levels(levels: torch.Tensor) -> torch.Tensor:
    """Float32 integer levels as int32, in place: the same memory viewed through its bits."""
    return levels.add_(ROUNDER).view(torch.int32).sub_(ROUNDER_BITS)


# ------------------------------------------------------------------------------------ borders
def _border(n: int, pad: int, mode: str, device: torch.device, after: int | None = None) -> torch.Tensor:
    """Source indices of an axis padded by ``pad`` before and ``after`` (default ``pad``) after:
    reflect-101 or replicate, any pad (even past the frame)."""
    i = torch.arange(-pad, n + (pad if after is None else after), device=device)
    return _reflect101(i, n) if mode == "reflect" else i.clamp(0, n - 1)


def padded(x: torch.Tensor, left: int, right: int, top: int, bottom: int, mode: str) -> torch.Tensor:
    """(N, C, H, W) frames padded on each side, ``mode`` "reflect" (reflect-101, OpenCV's default
    border) or "replicate", by any amount: torch's own pad (a plain copy) where it allows, the
    indices folded by :func:`_border` where a reflection reaches past the frame."""
    h, w = x.shape[-2:]
    if mode == "replicate" or max(top, bottom) < h and max(left, right) < w:
        return F.pad(x, (left, right, top, bottom), mode=mode)
    rows, cols = _border(h, top, mode, x.device, bottom), _border(w, left, mode, x.device, right)
    return x[:, :, rows][:, :, :, cols]


def _reflect101(i: torch.Tensor, n: int) -> torch.Tensor:
    """Indices folded into 0..n-1 the reflect-101 way (...2 1 | 0 1 2 ... n-1 | n-2...)."""
    if n == 1:
        return torch.zeros_like(i)
    period = 2 * (n - 1)
    i = torch.remainder(i, period)
    return torch.where(i < n, i, period - i)


def exact_sums(x: torch.Tensor, dims: tuple[int, ...], peak: float) -> np.ndarray:
    """Sums over ``dims`` (which end with the last axis) of integer values in 0..peak, exact,
    on the host as float64: rows in float32 where a row's sum stays below 2^24, then float64."""
    if x.shape[-1] * peak < 2**24:
        rows = x.sum(dim=-1)
        return rows.sum(dim=tuple(d for d in dims if d != x.ndim - 1), dtype=torch.float64).cpu().numpy()
    return x.sum(dim=dims, dtype=torch.float64).cpu().numpy()


# --------------------------------------------------------------------------------------- blur
def _depthwise(x: torch.Tensor, kernels: torch.Tensor, pad: int, mode: str) -> torch.Tensor:
    """Correlate frame t's channels with kernels[t] ((T, k, k), k = 2·pad + 1), padded by ``mode``."""
    t, c, h, w = x.shape
    weight = kernels.to(x).repeat_interleave(c, dim=0)[:, None]          # (T·C, 1, k, k)
    frames = padded(x.reshape(1, t * c, h, w), pad, pad, pad, pad, mode)
    return F.conv2d(frames, weight, groups=t * c).reshape(t, c, h, w)


def normal_weights(kernel: np.ndarray) -> np.ndarray:
    """``kernel`` with its subnormal float32 weights (below 1.2e-38, the alias Gaussian's far
    corners) set to 0: a product with a subnormal runs about 10x slower on the CPU, and the
    weights change the sums by less than 1e-35 of a level."""
    return np.where(np.abs(kernel) < np.finfo(np.float32).tiny, np.float32(0), kernel)


@torch_kernel("defocus_blur")
def defocus_blur(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Every frame correlated with the numpy path's disk kernel (reflect-101 borders)."""
    kernel = torch.from_numpy(normal_weights(disk_kernel(params["radius"], params["alias_blur"]))).to(x.device)
    pad = kernel.shape[0] // 2
    return _depthwise(x, kernel.expand(x.shape[0], -1, -1), pad, "reflect")   # OpenCV's reflect-101


@torch_kernel("motion_blur")
def motion_blur(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Frame t blurred along its drawn angle: a weighted sum of 2·radius+1 shifted copies (the
    streak kernel's taps, replicated edges). The clip is padded once; every tap of a frame is a
    window of it, added in place (no gathers)."""
    t, c, h, w = x.shape
    weights = motion_weights(params["radius"], params["sigma"]).tolist()
    dx, dy = streak_offsets(len(weights), drawn["angles"][ids])               # (N, taps) each
    top, left = max(0, -int(dy.min())), max(0, -int(dx.min()))               # rows/cols before 0
    bottom, right = max(0, int(dy.max())), max(0, int(dx.max()))
    clip = padded(x, left, right, top, bottom, "replicate")
    out = torch.empty_like(x)
    for i in range(t):                                  # one in-place add per tap and frame
        frame, acc = clip[i], out[i]
        for k, weight in enumerate(weights):
            y0, x0 = top + int(dy[i, k]), left + int(dx[i, k])
            window = frame[:, y0:y0 + h, x0:x0 + w]
            if k == 0:
                torch.mul(window, weight, out=acc)
            else:
                acc.add_(window, alpha=weight)
    return out


def _canvas_side(n: int) -> int:
    """The side of the canvas that a frame side of n pixels is sampled on: 2^k + 1 >= n (n itself
    when n <= 2). grid_sample reads a grid value g back as the position (g + 1)·(side - 1)/2 in
    float32; with side - 1 a power of two that product is exact, so every position a float32
    grid value can hold (every half pixel among them) is read back as it was written."""
    return n if n <= 2 else (1 << (n - 2).bit_length()) + 1


def _fold(position: torch.Tensor, n: int, border: str) -> torch.Tensor:
    """Positions on an axis of n pixels brought into [0, n - 1] as OpenCV's border reads them:
    "reflect" folds them the reflect-101 way (bilinear weights mirror with the neighbours, so the
    sample is the same), "replicate" clamps them. Exact in floating point: every step subtracts
    from a position a whole number no larger than it."""
    if n == 1:
        return torch.zeros_like(position)
    if border == "replicate":
        return position.clamp(0, n - 1)
    period = 2 * (n - 1)
    position = position.abs()
    position = position - period * torch.floor(position / period)
    return torch.where(position > n - 1, period - position, position)


def _source_grid(inverse: np.ndarray, h: int, w: int, device: torch.device, border: str = "reflect") -> torch.Tensor:
    """grid_sample grid (align_corners=True, on the :func:`_canvas_side` canvas) of per-frame
    pixel maps dst (x, y) -> src = A·(x, y, 1), read by OpenCV's ``border``.

    Built on the device, in float64 where the device has it: each position a row term plus a
    column term, rounded once to float32 as OpenCV's warpAffine holds it, folded into the frame
    (:func:`_fold`), then scaled to the canvas exactly. So grid_sample samples where OpenCV does
    (positions below a quarter of the canvas to within 2^-25 of its half side): a half-pixel
    position, all a 90° turn of a frame with one odd side has, stays a half pixel, and a value
    halfway between two levels is exactly that and rounds half to even as OpenCV's does. Scaled
    to the frame itself, the read-back missed half pixels by an ulp and rounded 3-6% of such a
    turn's values the other way. (grid_sample still sums the four weighted neighbours in its
    own order, not OpenCV's two interpolations: a value a hair from a half can round apart, on
    about 0.01-0.07% of values at other angles.)
    """
    dtype = torch.float32 if device.type == "mps" else torch.float64
    mats = torch.tensor(np.asarray(inverse), dtype=dtype, device=device)       # (N, 2, 3)
    xs = torch.arange(w, dtype=dtype, device=device)
    ys = torch.arange(h, dtype=dtype, device=device)
    col = mats[:, None, :, 0] * xs[None, :, None]                            # (N, W, 2)
    row = mats[:, None, :, 1] * ys[None, :, None] + mats[:, None, :, 2]      # (N, H, 2)
    grid = torch.empty((len(mats), h, w, 2), dtype=torch.float32, device=device)
    for k, n in enumerate((w, h)):       # per coordinate: whole rows of W per step, in dtype; stored as float32
        position = torch.add(row[:, :, None, k], col[:, None, :, k]).to(torch.float32).to(dtype)
        scale = 2.0 / max(_canvas_side(n) - 1, 1)
        grid[..., k] = _fold(position, n, border).mul_(scale).sub_(1)
    return grid


def _on_canvas(x: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) frames on their :func:`_canvas_side` canvas: zeros past the frame, which the
    folded positions read with weight 0 at most."""
    h, w = x.shape[-2:]
    return F.pad(x, (0, _canvas_side(w) - w, 0, _canvas_side(h) - h))


def _sample(x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """Frames sampled bilinearly at a :func:`_source_grid` grid (one per frame, or one expanded)."""
    return F.grid_sample(_on_canvas(x), grid.expand(len(x), -1, -1, -1), mode="bilinear",
                         padding_mode="border", align_corners=True)


def warp(x: torch.Tensor, inverse: np.ndarray, border: str = "reflect") -> torch.Tensor:
    """Frame t sampled bilinearly at inverse[t]·(x, y, 1) (pixel coordinates), as cv2.warpAffine would.

    ``inverse`` is (T, 2, 3), or (1, 2, 3) for one map shared by every frame. ``border="reflect"``
    is OpenCV's reflect-101, ``"replicate"`` its replicate.
    """
    _, _, h, w = x.shape
    return _sample(x, _source_grid(inverse, h, w, x.device, border))


def _zoom_grid(h: int, w: int, z: float, n: int, device: torch.device) -> torch.Tensor:
    """:func:`_source_grid` of the centre zoom by z, one grid shared by n frames: (n, H, W, 2)."""
    return _centre_zoom_grid(h, w, z, torch.device(device)).expand(n, -1, -1, -1)


@lru_cache(maxsize=64)
def _centre_zoom_grid(h: int, w: int, z: float, device: torch.device) -> torch.Tensor:
    """The centre zoom's grid (1, H, W, 2), cached per device (read only)."""
    cx, cy = (w - 1) / 2, (h - 1) / 2
    inverse = np.array([[[1 / z, 0, cx - cx / z], [0, 1 / z, cy - cy / z]]])
    return _source_grid(inverse, h, w, device, "replicate")


@torch_kernel("zoom_blur")
def zoom_blur(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Rounded mean of the frame and its centre zooms, each zoom rounded like the uint8 path
    (on the CPU the render passes a few frames at a time, so the running sum stays in cache)."""
    n_frames, _, h, w = x.shape
    factors = zoom_factors(params["zooms"])
    n = len(factors) + 1
    acc = x.clone()
    canvas = _on_canvas(x)
    for z in factors:                                   # one batched warp per zoom factor
        acc += F.grid_sample(canvas, _zoom_grid(h, w, float(z), n_frames, x.device), mode="bilinear",
                             padding_mode="border", align_corners=True).round_()
    return torch.floor(acc.add_(n // 2).div_(n))


# ------------------------------------------------------------------------------------- camera
def _rotation_inverses(h: int, w: int, angles: np.ndarray) -> np.ndarray:
    """(T, 2, 3) maps from output to input pixels of turns by ``angles`` degrees about the centre."""
    return np.stack([cv2.invertAffineTransform(rotation_matrix(h, w, a)) for a in angles])


def _rotations(x: torch.Tensor, angles: np.ndarray) -> torch.Tensor:
    """Frame t turned by angles[t] degrees about its centre."""
    return warp(x, _rotation_inverses(*x.shape[2:], angles))


@lru_cache(maxsize=16)
def _static_grid(h: int, w: int, degrees: float, device: torch.device) -> torch.Tensor:
    """static_rotate's one grid (1, H, W, 2), cached per device (read only)."""
    return _source_grid(_rotation_inverses(h, w, static_angles(1, degrees)), h, w, device)


@torch_kernel("static_rotate")
def static_rotate(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Every frame turned by the same angle (bilinear, mirrored borders): one sampling grid for the clip."""
    return _sample(x, _static_grid(*x.shape[2:], float(params["degrees"]), x.device))


@torch_kernel("rotate")
def rotate(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Frame t turned by its drawn angle."""
    return _rotations(x, drawn["angles"][ids])


@torch_kernel("translate")
def translate(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Output (y, x) of frame t = input (y + dy_t, x + dx_t), mirrored past the edge; exact.

    Every output value is a copy of an input value, so the clip is moved as it comes (its
    renderer takes the clip itself): float (N, 3, H, W) values in any dtype, not quantised, or
    uint8 (N, H, W, 3) frames, moved through a channels-first view and given back in kind. The
    frames are mirrored once by the largest shift (reflect-101, :func:`padded`) and each
    frame copies its window."""
    if x.dtype == torch.uint8:
        n, h, w, c = x.shape
        out = torch.empty((n, h, w, c), dtype=x.dtype, device=x.device)
        _translate_into(out.permute(0, 3, 1, 2), x.permute(0, 3, 1, 2), ids, drawn)
        return out
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return _translate_into(out, x, ids, drawn)


def _translate_into(out: torch.Tensor, x: torch.Tensor, ids: np.ndarray, drawn) -> torch.Tensor:
    h, w = x.shape[-2:]
    offsets = np.asarray(drawn["offsets"][ids], dtype=np.int64)                 # (T, 2): dx, dy
    pad_x, pad_y = (int(np.abs(offsets[:, i]).max()) for i in (0, 1))
    clip = padded(x, pad_x, pad_x, pad_y, pad_y, "reflect")
    for i, (dx, dy) in enumerate(offsets.tolist()):
        out[i] = clip[i, :, pad_y + dy:pad_y + dy + h, pad_x + dx:pad_x + dx + w]
    return out


# ------------------------------------------------------------------------------ temporal blur
@torch_kernel("temporal_blur")
def temporal_blur(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Window means as the numpy kernel: exact integer sums of 2c gathered frames, then
    floor((s + c) / 2c) (the division is a quarter step clear of every integer).

    The sums are one matrix product of per-window frame counts with the frames: every partial
    sum is an integer below 2^24, so float32 adds them exactly, in any order."""
    c = check_c(params["c"])
    if 2 * c * 255 >= 1 << 24:
        raise ValueError(f"temporal_blur: c = {c} is too large for exact float32 sums")
    pos = window_positions(ids, drawn)                                     # (N, 2c)
    counts = np.zeros((len(ids), x.shape[0]), np.float32)
    np.add.at(counts, (np.repeat(np.arange(len(ids)), pos.shape[1]), pos.ravel()), 1)
    acc = torch.from_numpy(counts).to(x) @ x.reshape(x.shape[0], -1)
    return torch.floor((acc.add_(c)).div_(2 * c)).reshape(len(ids), *x.shape[1:])
