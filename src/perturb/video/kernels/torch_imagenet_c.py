"""Torch kernels of the ImageNet-C ops (:mod:`.imagenet_c`, :mod:`.imagenet_c_pixelate`,
:mod:`.imagenet_c_colour`).

Registered as ``kernel(x, ids, drawn, params)``. Blurs, glass, elastic and pixelate take float
(N, 3, H, W) levels (pixelate also uint8 frames); the colour ops take uint8 (N, H, W, 3) frames. Whatever is
random (glass's pixel sources, displacement fields) and every lookup table is computed on the host by the
numpy module's own functions, so numpy and torch use the same draw. Pixelate is exact integer
work and the colour ops gathers from the same tables (the same pixels); the blurs and the
remap agree with OpenCV within one level.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F

from . import imagenet_c as ic
from . import imagenet_c_colour as colour
from . import imagenet_c_pixelate as pix
from .noise import device_copy, lookup
from ..layouts import float_levels
from .torch_blur_camera import exact_sums, int_levels
from .twins import torch_kernel


# ------------------------------------------------------------------------------------- blurs
@lru_cache(maxsize=16)
def _band(n: int, taps: bytes) -> np.ndarray:
    """(n, n) float32 M with (M·v)[i] = sum_k taps[k]·v[clamp(i + k - r, 0, n - 1)]: a 1-D
    correlation with replicated edges as one matrix (r = len(taps) // 2)."""
    k = np.frombuffer(taps, np.float64)
    src = np.clip(np.arange(n)[:, None] + np.arange(len(k))[None] - len(k) // 2, 0, n - 1)
    band = np.zeros((n, n))
    np.add.at(band, (np.repeat(np.arange(n), len(k)), src.ravel()), np.tile(k, n))
    band = band.astype(np.float32)
    band.setflags(write=False)
    return band


BAND_BLOCK = 32    # output rows/columns per product of a separable pass: only the band's own (block + 2r) inputs


def _band_blocks(n: int, radius: int) -> list[tuple[int, int, int, int]]:
    """(start, stop, first input, end input) of each block of outputs along an axis of ``n``."""
    return [(a, min(n, a + BAND_BLOCK), max(0, a - radius), min(n, a + BAND_BLOCK + radius))
            for a in range(0, n, BAND_BLOCK)]


def _separable(x: torch.Tensor, taps: np.ndarray) -> torch.Tensor:
    """Levels (N, C, H, W) correlated with ``taps`` along columns then rows, replicated edges.

    Each pass is a few matrix products with blocks of a banded matrix that holds the taps and the
    edges: a block of outputs reads only its own inputs and the radius around them (a GEMM beats a
    direct convolution of one channel on CPU; the full band costs the same at every sigma, the
    blocks 2-4x less, the same sums since the band is zero outside them).
    """
    n, c, h, w = x.shape
    radius = len(taps) // 2
    taps = np.ascontiguousarray(taps, np.float64).tobytes()
    cols, rows = device_copy(_band, (w, taps), x.device), device_copy(_band, (h, taps), x.device)
    flat, y = x.reshape(n * c * h, w), torch.empty((n * c, h, w), dtype=x.dtype, device=x.device)
    for a, b, lo, hi in _band_blocks(w, radius):
        y.view(n * c * h, w)[:, a:b] = torch.matmul(flat[:, lo:hi], cols[a:b, lo:hi].T)
    out = torch.empty_like(y)
    for a, b, lo, hi in _band_blocks(h, radius):
        torch.matmul(rows[a:b, lo:hi], y[:, lo:hi], out=out[:, a:b])
    return out.view(n, c, h, w)


@torch_kernel("gaussian_blur")
def gaussian_blur(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    return _separable(x, ic.gaussian_taps(ic.positive("sigma", params["sigma"], "gaussian_blur")))


@torch_kernel("glass_blur")
def glass_blur(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Blur, round, gather every frame through the clip's pixel sources, blur again."""
    sigma, delta, iterations = ic.check_glass(params["sigma"], params["max_delta"], params["iterations"])
    n, c, h, w = x.shape
    source = device_copy(ic.glass_sources, (int(drawn["key"]), h, w, delta, iterations), x.device)
    taps = ic.gaussian_taps(sigma)
    blurred = _separable(x, taps).round_().clamp_(0, 255).reshape(n, c, h * w)
    moved = torch.gather(blurred, 2, source.expand(n, c, -1))           # faster than index_select here
    return _separable(moved.reshape(n, c, h, w), taps)


@torch_kernel("elastic_transform")
def elastic_transform(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Bilinear samples at the clip's displaced positions (exact positions, as OpenCV 5's remap
    of float maps); grid_sample's reflection without corner alignment mirrors about the outer
    pixel edges, OpenCV's BORDER_REFLECT."""
    alpha = ic.positive("alpha", params["alpha"], "elastic_transform", allow_zero=True)
    n, _, h, w = x.shape
    grid = _elastic_grid(int(drawn["key"]), h, w, alpha, x.device)
    return F.grid_sample(x, grid.expand(n, -1, -1, -1), mode="bilinear", padding_mode="reflection",
                         align_corners=False)


@lru_cache(maxsize=4)
def _elastic_grid(key: int, h: int, w: int, alpha: float, device: torch.device) -> torch.Tensor:
    """The clip's grid_sample grid (1, H, W, 2) on ``device`` (read only), cached: a clip
    rendered a few frames at a time builds it once."""
    dtype = torch.float32 if device.type == "mps" else torch.float64
    maps = np.stack(ic.elastic_maps(key, h, w, alpha), axis=-1)                    # (H, W, 2): x, y
    src = torch.as_tensor(maps, device=device).to(dtype)
    size = torch.tensor([w, h], dtype=dtype, device=device)
    return ((2 * src + 1) / size - 1).to(torch.float32)[None]


# ---------------------------------------------------------------------------------- pixelate
@lru_cache(maxsize=32)
def _box_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_in, n_out) 0/1 float32 matrix: column i sums input pixels [start_i, stop_i) of
    :func:`pix.box_ranges` (read-only)."""
    start, stop, _ = pix.box_ranges(n_in, n_out)
    j = np.arange(n_in)[:, None]
    box = ((j >= start[None]) & (j < stop[None])).astype(np.float32)
    box.setflags(write=False)
    return box


@lru_cache(maxsize=32)
def _nearest_matrix(n_small: int, n_out: int) -> np.ndarray:
    """(n_small, n_out) 0/1 float32 matrix picking :func:`pix.nearest_sources` (read-only)."""
    pick = (np.arange(n_small)[:, None] == pix.nearest_sources(n_small, n_out)[None]).astype(np.float32)
    pick.setflags(write=False)
    return pick


def _box_mean(sums: torch.Tensor, weight: np.ndarray) -> torch.Tensor:
    """Box sums (exact integers in float32) times Pillow's fixed-point weights, rounded and
    clipped as Pillow does, in int32 (below 255·2^22 + n, as :func:`pix.rounded_mean`): float levels."""
    fixed = sums.to(torch.int32) * torch.from_numpy(np.array(weight, np.int32)).to(sums.device)
    fixed.add_(1 << (pix.PILLOW_BITS - 1)).bitwise_right_shift_(pix.PILLOW_BITS).clamp_(0, 255)
    return fixed.to(torch.float32)


@torch_kernel("pixelate")
def pixelate(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Pillow's BOX shrink (columns, then rows, each pass rounded in its fixed point) and its
    NEAREST enlargement. The box sums are products with 0/1 matrices: integers below 2^24
    (255 times at most 65,793 pixels a box), so float32 holds every partial sum exactly and
    the result is the numpy kernel's, pixel for pixel. uint8 (N, H, W, 3) frames are taken
    too, and given back in kind."""
    if x.dtype == torch.uint8:
        levels = pixelate(x.permute(0, 3, 1, 2).to(torch.float32), ids, drawn, params)
        return levels.to(torch.uint8).permute(0, 2, 3, 1).contiguous()
    scale = ic.positive("scale", params["scale"], "pixelate")
    if scale > 1:
        raise ValueError(f"pixelate: expected scale in (0, 1]; got {scale!r}")
    _, _, h, w = x.shape
    if max(h, w) * 255 >= 1 << 24:
        raise ValueError(f"pixelate: frames up to 65,792 pixels a side; got {h}x{w}")
    sh, sw = pix.pixelate_size(h, scale), pix.pixelate_size(w, scale)
    cols, rows = (device_copy(_box_matrix, (n, s), x.device) for n, s in ((w, sw), (h, sh)))
    small = _box_mean(x @ cols, pix.box_ranges(w, sw)[2])                           # (N, 3, H, sw)
    small = _box_mean(torch.matmul(rows.T, small), pix.box_ranges(h, sh)[2][:, None])  # (N, 3, sh, sw)
    near_rows = device_copy(pix.nearest_sources, (sh, h), x.device)
    near_cols = device_copy(_nearest_matrix, (sw, w), x.device)
    return (small @ near_cols).index_select(2, near_rows)      # columns: a product (exact), rows: whole-row copies


# ------------------------------------------------------------------------------------ colour
# Each colour op is a table on integer levels (and the pixel's channel max and min). Given the
# float clip itself, a kernel quantises it to int32 levels, indexes the table and gathers the
# output values straight from a table of level/255 in the clip's dtype: exact levels, so no
# requantising pass follows, and nothing is transposed. uint8 (N, H, W, 3) frames are taken too.
def _extremes(x: torch.Tensor, axis: int = -1) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-pixel max and min over the channels (on ``axis``, kept as size 1): elementwise over
    the three channel slices (a reduction over an axis of 3 is slow on CPU)."""
    r, g, b = (x.narrow(axis, i, 1) for i in range(3))
    return torch.maximum(torch.maximum(r, g), b), torch.minimum(torch.minimum(r, g), b)


@lru_cache(maxsize=16)
def _level_values(dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The 256 values level/255 in ``dtype``, computed as :func:`..layouts.from_uint8_frames` does."""
    return torch.arange(256, dtype=torch.float32, device=device).to(dtype).div_(255.0)


def _as_values(table: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A table of uint8 levels as the clip values they stand for."""
    return _level_values(dtype, table.device).index_select(0, table.reshape(-1).int()).view(table.shape)


@lru_cache(maxsize=8)
def _brightness_table(shift: float, device: torch.device, dtype: torch.dtype = torch.uint8) -> torch.Tensor:
    """The 256x256 table flat, as uint8 levels or as values of a float ``dtype`` (read only)."""
    table = torch.from_numpy(colour.brightness_table(shift).reshape(-1).copy()).to(device)
    return table if dtype == torch.uint8 else _as_values(table, dtype)


@torch_kernel("brightness")
def brightness(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """table[V·256 + c] for every channel c of a pixel whose max is V (int32 indices)."""
    if x.is_floating_point():                                  # (N, 3, H, W) in [0, 1]
        levels = int_levels(float_levels(x))
        v, _ = _extremes(levels, 1)
        return lookup(_brightness_table(params["shift"], x.device, x.dtype), levels.add_(v.bitwise_left_shift_(8)))
    lut = _brightness_table(params["shift"], x.device)
    r, g, b = x[..., 0:1], x[..., 1:2], x[..., 2:3]
    v = torch.maximum(torch.maximum(r, g), b)
    return lookup(lut, (v.int() << 8) + x)                      # uint8 + int32: int32


@torch_kernel("contrast")
def contrast(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """Frame n's channel c through its table: luts[(n·3 + c)·256 + level]."""
    if x.is_floating_point():                                  # (N, 3, H, W) in [0, 1]
        levels = float_levels(x)
        n, c, h, w = levels.shape
        sums = exact_sums(levels, (2, 3), 255)                                     # (N, 3)
        luts = torch.from_numpy(colour.contrast_tables(sums, h * w, params["factor"])).to(x.device)
        base = (torch.arange(n * 3, dtype=torch.int32, device=x.device) * 256).view(n, 3, 1, 1)
        return lookup(_as_values(luts, x.dtype).reshape(-1), int_levels(levels).add_(base))
    n, h, w, _ = x.shape
    sums = x.sum(dim=(1, 2), dtype=torch.int64).cpu().numpy()                  # exact, (N, 3)
    luts = torch.as_tensor(colour.contrast_tables(sums, h * w, params["factor"]), device=x.device)
    base = (torch.arange(n * 3, dtype=torch.int32, device=x.device) * 256).view(n, 1, 1, 3)
    return lookup(luts.reshape(-1), base + x)


@lru_cache(maxsize=8)
def _saturate_tables(factor: float, offset: float, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """The tables on ``device``, and whether the grey table moves any level (checked once, on the host)."""
    scale, grey = colour.saturate_tables(factor, offset)
    moves = bool((np.asarray(grey) != np.arange(256)).any())
    return torch.tensor(scale, device=device), torch.tensor(grey, device=device), moves


@torch_kernel("saturate")
def saturate(x: torch.Tensor, ids: np.ndarray, drawn, params) -> torch.Tensor:
    """The numpy path's table of S'/S and its float32 operations, in the same order."""
    scale, grey, grey_moves = _saturate_tables(params["factor"], params["offset"], x.device)
    if x.is_floating_point():                                  # (N, 3, H, W) in [0, 1]
        out = float_levels(x)
        vf, mf = _extremes(out, 1)
        gain = lookup(scale, int_levels(torch.add(mf, vf, alpha=256)))
        out = torch.sub(vf, out.sub_(vf).neg_().mul_(gain), out=out).round_()   # V - (V - c)·gain
        if grey_moves:
            tint = vf - lookup(grey, vf.int()).to(torch.float32)               # greys: (V, grey, grey)
            out[:, 1:] -= tint.mul_(vf == mf)
        return out.to(x.dtype).div_(255.0)
    v, m = _extremes(x)
    gain = lookup(scale, (v.int() << 8) + m)
    vf = v.to(torch.float32)
    d = torch.sub(vf, x, out=torch.empty(x.shape, dtype=torch.float32, device=x.device))
    out = torch.sub(vf, d.mul_(gain), out=d).round_().to(torch.uint8)
    out[..., 1:] = torch.where(v == m, lookup(grey, v.int()), out[..., 1:])
    return out
