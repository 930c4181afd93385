"""Counter-based random words for the noise ops: the same 16-bit words from numpy and torch, on any device.

A clip's noise is a pure function of one 64-bit key, drawn once from the clip's Generator
(:func:`draw_key`), the frame's index in the clip and the value's position in the frame. Any
subset or window of frames therefore renders exactly as the same frames of the whole clip, and
numpy, torch on CPU and torch on CUDA compute the same integers.

The mixer is a two-round 32-bit xorshift-multiply hash (a bijection on 32-bit integers). Both
multipliers are below 2^31, so torch runs it exactly in int64 (products stay below 2^63, masked
back to 32 bits) on every device; numpy runs it in wrapping uint32 arithmetic.

- frame seed: ``s = mix(mix(f ^ key_lo) ^ key_hi)`` for frame index f (on the host, for both);
- value pair i of a frame: ``h = mix(mix(i) ^ s)``; value 2i takes h's low 16 bits, 2i + 1 its
  high 16 bits (the little-endian view of the uint32 array).
"""
from __future__ import annotations

import sys
from functools import lru_cache
from typing import Any

import numpy as np

MASK = 0xFFFFFFFF
M1, M2 = 0x21F0AAAD, 0x735A2D97          # odd and below 2^31: exact in torch int64 products
SHIFTS = (16, 15, 15)
KEY_MAX = 2**64

if sys.byteorder != "little":            # words are the uint32 hashes viewed as uint16 pairs
    raise ImportError("perturb's noise words assume a little-endian machine")


def draw_key(rng: np.random.Generator) -> int:
    """The clip's noise key: one 64-bit draw from its Generator (the only draw a noise op makes)."""
    return int(rng.integers(0, KEY_MAX, dtype=np.uint64))


def _mix_numpy(x: np.ndarray) -> np.ndarray:
    """The mixer applied in place to a uint32 array (returned)."""
    tmp = np.empty_like(x)
    for shift, mult in zip(SHIFTS, (M1, M2, None)):
        np.right_shift(x, shift, out=tmp)
        x ^= tmp
        if mult is not None:
            x *= np.uint32(mult)
    return x


def _mix_torch(x: Any) -> Any:
    """The mixer applied in place to a tensor (returned): int64 holding values in 0..2^32-1, or
    int32 holding the uint32 bits. int32 is the fast form (half the bytes, and a vector
    multiply where int64 has none): products wrap modulo 2^32 as two's complement integers do
    on every device, and each shift is made logical by masking the sign's copies off."""
    import torch

    wide = x.dtype == torch.int64
    tmp = torch.empty_like(x)                      # one scratch tensor for the three shifts
    for shift, mult in zip(SHIFTS, (M1, M2, None)):
        torch.bitwise_right_shift(x, shift, out=tmp)
        if not wide:
            tmp.bitwise_and_((1 << (32 - shift)) - 1)
        x ^= tmp
        if mult is not None:
            x.mul_(mult)
            if wide:
                x.bitwise_and_(MASK)
    return x


def check_key(key: int) -> int:
    """``key`` as a Python int in 0..2^64-1, or a ValueError."""
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)) or not 0 <= key < KEY_MAX:
        raise ValueError(f"expected a noise key: an int in [0, 2**64); got {key!r}")
    return int(key)


def check_frame_indices(frame_indices: Any, frames: int) -> np.ndarray:
    """``frame_indices`` (host integers, or a torch tensor on any device) as an int64 array of
    ``frames`` indices in 0..2^32-1, or a ValueError."""
    if hasattr(frame_indices, "detach"):                   # a torch tensor, maybe on the GPU
        frame_indices = frame_indices.detach().cpu().numpy()
    idx = np.asarray(frame_indices)
    if idx.ndim != 1 or len(idx) != frames or (len(idx) and idx.dtype.kind not in "iu"):
        raise ValueError(f"expected {frames} integer frame indices, one per frame; got "
                         f"{idx.dtype} array of shape {idx.shape}")
    if len(idx) and (idx.min() < 0 or idx.max() > MASK):
        raise ValueError(f"frame indices must lie in [0, 2**32); got {idx.min()}..{idx.max()}")
    return idx.astype(np.int64)


def frame_seeds(key: int, frame_indices: np.ndarray) -> np.ndarray:
    """The uint32 seed of each frame index under ``key`` (computed on the host for numpy and torch alike)."""
    key = check_key(key)
    x = np.asarray(frame_indices, dtype=np.int64).astype(np.uint32)
    x ^= np.uint32(key & MASK)
    _mix_numpy(x)
    x ^= np.uint32(key >> 32)
    return _mix_numpy(x)


CACHED_PAIRS = 1 << 21          # frames up to 4 M values keep their first round cached (8 MB)


@lru_cache(maxsize=8)
def _pair_bases(pairs: int) -> np.ndarray:
    """mix(i) for the value pairs i of a frame (read-only, cached per frame size)."""
    base = _mix_numpy(np.arange(pairs, dtype=np.uint32))
    base.setflags(write=False)
    return base


def words_numpy(seed: int, values: int, start: int, stop: int) -> np.ndarray:
    """The uint16 words of values ``start:stop`` of a frame of ``values`` values (``start`` even)."""
    if start % 2 or not 0 <= start <= stop <= values:
        raise ValueError(f"expected an even start and 0 <= start <= stop <= {values}; got {start}:{stop}")
    pairs = (values + 1) // 2
    first, last = start // 2, (stop + 1) // 2
    if pairs <= CACHED_PAIRS:
        h = _pair_bases(pairs)[first:last] ^ np.uint32(seed)
    else:                                                  # big frames: first round per chunk
        h = _mix_numpy(np.arange(first, last, dtype=np.uint32))
        h ^= np.uint32(seed)
    return _mix_numpy(h).view(np.uint16)[:stop - start]


def _pair_bases_torch(pairs: int, device: Any) -> Any:
    """mix(i) for the value pairs i of a frame, the uint32 bits in int32 on ``device``; cached
    per frame size and device up to CACHED_PAIRS pairs. Never written: :func:`words_torch`
    mixes a new tensor."""
    if pairs <= CACHED_PAIRS:
        return _cached_bases_torch(pairs, str(device))
    return _bases_torch(pairs, device)


@lru_cache(maxsize=4)
def _cached_bases_torch(pairs: int, device: str) -> Any:
    return _bases_torch(pairs, device)


def _bases_torch(pairs: int, device: Any) -> Any:
    import torch

    return torch.from_numpy(_mix_numpy(np.arange(pairs, dtype=np.uint32)).view(np.int32)).to(device)


def words_torch(seeds: np.ndarray, values: int, device: Any) -> Any:
    """The words (int32, 0..65535) of ``values`` values per frame, one row per seed, on ``device``."""
    import torch

    return word_halves_torch(seeds, values, device).to(torch.int32).bitwise_and_(0xFFFF)


def word_halves_torch(seeds: np.ndarray, values: int, device: Any) -> Any:
    """The words of :func:`words_torch` as int16 (their bits: add 2^16 to the negative ones), a
    (seeds, values) view. The hashes are mixed in int32 (:func:`_mix_torch`) and read as
    little-endian uint16 pairs (low half first), as :func:`words_numpy` views its uint32 array;
    a caller converts them once, in whatever layout it reads them."""
    import torch

    pairs = (values + 1) // 2
    base = _pair_bases_torch(pairs, device)
    s = torch.from_numpy(np.asarray(seeds, dtype=np.uint32).view(np.int32)).to(base.device)[:, None]
    h = _mix_torch(base[None] ^ s)                     # a new tensor, mixed in place
    return h.view(torch.int16)[:, :values]             # (seeds, 2·pairs): low, high half of each hash
