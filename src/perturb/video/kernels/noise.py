"""The noise ops' kernels: a numpy and a torch renderer per op, bit-identical on numpy, torch-CPU and CUDA.

Each op draws one key per clip on the host (:func:`.keyed_words.draw_key`) and renders any
requested frames from it: ``render_numpy(frames, frame_indices, key, params)`` on a uint8
(F, H, W, 3) array and ``render_torch(...)`` on a uint8 (F, H, W, 3) tensor or a float (F, 3, H, W)
clip in [0, 1] on any device.
Frame t of the input is treated as frame ``frame_indices[t]`` of the clip, so rendering a subset
of frames equals the same frames of the whole clip. Both renderers read the same counter-based
words and the same host-built tables, and finish in exact arithmetic:

- gaussian: x + round(255σ·z), z a normal quantile, saturated (integers);
- speckle: round(x·f) saturated, f = 1 + σ·z rounded to a multiple of 2^-k chosen so that
  x·f is exact in float32 (k = 14 or finer at the listed severities); rounding is half to even
  on both (cvRound, torch.round);
- shot: the exact clipped, rounded Poisson of each input level through alias tables (integers);
- impulse: one word decides hit and colour (integer comparisons).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

import cv2
import numpy as np

from .fast_random import WORDS, hit_threshold, hit_words, normal_table, packed_levels, render_values
from .keyed_words import check_frame_indices, draw_key, frame_seeds, word_halves_torch, words_torch
from .noise_rows import shot_tables
from .twins import register_kernel

TORCH_GROUP = 1 << 22          # values per torch step: bounds the int64 word tensors' memory


# ------------------------------------------------------------------------------------ tables
def _param(params: Mapping[str, Any], name: str) -> float:
    """The single parameter ``name`` of ``params`` as a finite float, or a TypeError/ValueError."""
    if set(params) != {name}:
        raise TypeError(f"expected exactly the parameter {name!r}; got {sorted(params)}")
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    return float(value)


def _sigma(params: Mapping[str, Any]) -> float:
    sigma = _param(params, "sigma")
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0; got {sigma!r}")
    return sigma


@lru_cache(maxsize=32)
def gaussian_table(sigma: float) -> np.ndarray:
    """int16 noise levels per word: round(255·sigma·z) for the normal quantiles z, within ±256."""
    table = np.rint(normal_table() * (255 * sigma)).clip(-256, 256).astype(np.int16)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=32)
def speckle_table(sigma: float) -> np.ndarray:
    """float32 factors 1 + sigma·z per word, on the finest grid 2^-k where 255·|factor| < 2^24.

    On that grid x·factor (x a uint8 level) is exact in float32, so numpy and torch round the
    same product.
    """
    factor = 1 + normal_table() * sigma
    bits = math.floor(math.log2((2**24 - 1) / (255 * max(1.0, float(np.abs(factor).max())))))
    table = (np.rint(factor * 2.0**bits) * 2.0**-bits).astype(np.float32)
    table.setflags(write=False)
    return table


def _photons(params: Mapping[str, Any]) -> float:
    photons = _param(params, "photons")
    if not photons > 0:
        raise ValueError(f"photons must be > 0; got {photons!r}")
    return photons


@lru_cache(maxsize=16)
def shot_table(photons: float) -> np.ndarray:
    """Shot noise's alias tables (:func:`._noise_rows.shot_tables`) packed one uint16 per cell."""
    return packed_levels(shot_tables(photons))


def _amount(params: Mapping[str, Any]) -> float:
    return _param(params, "amount")


@lru_cache(maxsize=16)
def impulse_codes(below: int) -> np.ndarray:
    """uint8 code per word for the words below ``below`` hit: 0 pepper, 255 salt, 1 untouched."""
    codes = np.ones(WORDS, np.uint8)
    codes[:min(below, WORDS)] = 255
    codes[:min(below, WORDS) // 2] = 0
    codes.setflags(write=False)
    return codes


# ------------------------------------------------------------------------------ numpy kernels
def gaussian_numpy(frames: np.ndarray, frame_indices: Sequence[int], key: int,
                   params: Mapping[str, Any]) -> np.ndarray:
    """x + N(0, 255σ) per value, saturated to uint8 (``params``: sigma)."""
    table = gaussian_table(_sigma(params))

    def add(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        noise = np.take(table, w, mode="clip")                    # "clip": no bounds check
        return cv2.add(x, noise, dtype=cv2.CV_8U).reshape(-1)      # saturates to 0..255

    return render_values(frames, frame_indices, key, add)


def speckle_numpy(frames: np.ndarray, frame_indices: Sequence[int], key: int,
                  params: Mapping[str, Any]) -> np.ndarray:
    """x·(1 + N(0, σ)) per value, rounded half to even and saturated (``params``: sigma)."""
    table = speckle_table(_sigma(params))

    def scale(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return cv2.multiply(x, np.take(table, w, mode="clip"), dtype=cv2.CV_8U).reshape(-1)

    return render_values(frames, frame_indices, key, scale)


def shot_numpy(frames: np.ndarray, frame_indices: Sequence[int], key: int,
               params: Mapping[str, Any]) -> np.ndarray:
    """Each level replaced by a draw of its clipped, rounded Poisson (``params``: photons)."""
    table = shot_table(_photons(params))

    def draw(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        column = w >> 8
        idx = x.astype(np.uint16)
        idx <<= 8
        idx |= column
        cell = np.take(table, idx, mode="clip")            # threshold | alias << 8
        w &= 0xFF
        keep = cell & 0xFF
        cell >>= 8
        return np.where(w < keep, column, cell)

    return render_values(frames, frame_indices, key, draw)


def impulse_numpy(frames: np.ndarray, frame_indices: Sequence[int], key: int,
                  params: Mapping[str, Any]) -> np.ndarray:
    """A fraction ``amount`` of values set to 0 (half) or 255 (half) (``params``: amount)."""
    amount = _amount(params)
    hit_threshold(amount)                                          # checks the amount up front
    return render_values(frames, frame_indices, key, lambda x, w: hit_words(x, w, amount))


# ------------------------------------------------------------------------------ torch kernels
def render_values_torch(frames: Any, frame_indices: Sequence[int], key: int,
                        sample: Callable[[Any, Any], Any]) -> Any:
    """A new tensor of the frames' kind: each frame's levels x become ``sample(x, words)``.

    The torch twin of :func:`.fast_random.render_values`: same words, frames in groups of
    about TORCH_GROUP values. uint8 (F, H, W, 3) frames go as they are (x uint8 (G, n)); a
    float (F, 3, H, W) clip in [0, 1] goes as float32 levels (G, 3, H, W) with the words read
    through a channels-first view, and comes back as level/255 in its dtype, exactly as the
    uint8 result converted (no uint8 frames, no transposed copies of the clip).
    """
    import torch

    floating = isinstance(frames, torch.Tensor) and frames.is_floating_point() and frames.ndim == 4 \
        and frames.shape[1] == 3
    if not floating and (not isinstance(frames, torch.Tensor) or frames.dtype != torch.uint8
                         or frames.ndim != 4 or frames.shape[3] != 3):
        got = (f"{frames.dtype} {tuple(frames.shape)}" if isinstance(frames, torch.Tensor)
               else type(frames).__name__)
        raise ValueError(f"expected a tensor of frames: uint8 (F, H, W, 3) or float (F, 3, H, W); got {got}")
    seeds = frame_seeds(key, check_frame_indices(frame_indices, frames.shape[0]))
    values = frames[0].numel()
    group = max(1, TORCH_GROUP // max(values, 1))
    out = torch.empty(frames.shape, dtype=frames.dtype, device=frames.device)
    if floating:
        from ..layouts import float_levels
    for a in range(0, len(seeds), group):
        if floating:
            part = frames[a:a + group]
            n, c, h, wd = part.shape
            halves = word_halves_torch(seeds[a:a + group], values, frames.device).view(n, h, wd, c)
            w = torch.empty(part.shape, dtype=torch.int32, device=frames.device)
            w.copy_(halves.permute(0, 3, 1, 2)).bitwise_and_(0xFFFF)        # converted and reordered in one pass
            out[a:a + group] = sample(float_levels(part), w).to(frames.dtype).div_(255.0)
        else:
            w = words_torch(seeds[a:a + group], values, frames.device)
            out[a:a + group] = sample(frames[a:a + group].reshape(len(w), -1), w).view(-1, *frames.shape[1:])
    return out


@lru_cache(maxsize=64)
def device_copy(make: Callable[..., np.ndarray], args: tuple, device: Any, dtype: Any = None) -> Any:
    """``make(*args)``, a host table of a cached function, as a tensor on ``device`` (in ``dtype``):
    cached per device, so each table travels to a device once. Read only: never written."""
    import torch

    return torch.from_numpy(np.array(make(*args))).to(device=device, dtype=dtype)


def lookup(table: Any, index: Any) -> Any:
    """table[index] for an int32 index of any shape (index_select: the fast gather on every device)."""
    return table.index_select(0, index.reshape(-1)).view(index.shape)


def gaussian_torch(frames: Any, frame_indices: Sequence[int], key: int, params: Mapping[str, Any]) -> Any:
    """The torch twin of :func:`gaussian_numpy` (bit-identical)."""
    import torch

    # integers well inside float32's exact range, and float is the fast path of torch on CPU
    table = device_copy(gaussian_table, (_sigma(params),), frames.device, torch.float32)
    return render_values_torch(frames, frame_indices, key,
                               lambda x, w: lookup(table, w).add_(x).clamp_(0, 255))


def speckle_torch(frames: Any, frame_indices: Sequence[int], key: int, params: Mapping[str, Any]) -> Any:
    """The torch twin of :func:`speckle_numpy` (bit-identical: the products are exact)."""
    import torch

    table = device_copy(speckle_table, (_sigma(params),), frames.device, torch.float32)
    return render_values_torch(frames, frame_indices, key,
                               lambda x, w: lookup(table, w).mul_(x).round_().clamp_(0, 255))


def shot_torch(frames: Any, frame_indices: Sequence[int], key: int, params: Mapping[str, Any]) -> Any:
    """The torch twin of :func:`shot_numpy` (bit-identical)."""
    import torch

    table = device_copy(shot_table, (_photons(params),), frames.device, torch.int32)

    def draw(x: Any, w: Any) -> Any:
        column = w >> 8
        cell = lookup(table, (x.int() << 8) | column)
        return torch.where((w & 0xFF) < (cell & 0xFF), column, cell >> 8)

    return render_values_torch(frames, frame_indices, key, draw)


def impulse_torch(frames: Any, frame_indices: Sequence[int], key: int, params: Mapping[str, Any]) -> Any:
    """The torch twin of :func:`impulse_numpy` (bit-identical): one uint8 code per word from a
    table (0 pepper, 255 salt, 1 untouched), then the untouched values copied from ``x``."""
    import torch

    table = device_copy(impulse_codes, (hit_threshold(_amount(params)),), frames.device)

    def hit(x: Any, w: Any) -> Any:
        code = lookup(table, w)
        return torch.where(code == 1, x, code)

    return render_values_torch(frames, frame_indices, key, hit)


# ---------------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class NoiseKernels:
    """One noise op: the host-side key draw and its two renderers (numpy, torch)."""

    draw_key: Callable[[np.random.Generator], int]
    render_numpy: Callable[[np.ndarray, Sequence[int], int, Mapping[str, Any]], np.ndarray]
    render_torch: Callable[[Any, Sequence[int], int, Mapping[str, Any]], Any]


KERNELS: dict[str, NoiseKernels] = {
    "gaussian_noise": NoiseKernels(draw_key, gaussian_numpy, gaussian_torch),
    "shot_noise": NoiseKernels(draw_key, shot_numpy, shot_torch),
    "impulse_noise": NoiseKernels(draw_key, impulse_numpy, impulse_torch),
    "speckle_noise": NoiseKernels(draw_key, speckle_numpy, speckle_torch),
}
for _op, _kernels in KERNELS.items():         # both twins take the clip's key alone (drawn["key"])
    register_kernel(_op, "numpy", _kernels.render_numpy, key="key")
    register_kernel(_op, "torch", _kernels.render_torch, key="key")


def draw_clip_key(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, Any]:
    """A noise op's draw: one key per clip, every frame rendered from (key, frame index)."""
    return {"key": int(draw_key(rng))}
