"""numpy/OpenCV plumbing of the frame-wise kernels: a bounded thread pool, rounding to uint8,
the centre-zoom matrix."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, Callable, Sequence

import cv2
import numpy as np

# Most threads a kernel uses (fewer when OpenCV is held to fewer, as in the builder's workers).
MAX_THREADS = min(4, os.cpu_count() or 1)


def to_uint8(x: np.ndarray, scale: float = 255.0) -> np.ndarray:
    """Float values (times ``scale``) clipped to [0, 255] and rounded to uint8; may reuse ``x``."""
    if scale != 1:
        y = np.multiply(x, np.float32(scale), dtype=np.float32)
    else:
        y = x if x.dtype == np.float32 else x.astype(np.float32)      # rounded in place
    np.clip(y, 0, 255, out=y)
    return np.rint(y, out=y).astype(np.uint8)


def threads() -> int:
    """Threads for whole-clip kernels: OpenCV's thread count (1 in the builder's workers), capped."""
    return max(1, min(MAX_THREADS, cv2.getNumThreads()))


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="perturb")


# A forked child (a DataLoader worker) inherits the pool object but none of its threads, so
# work handed to it would wait forever: the child starts a pool of its own on first use.
os.register_at_fork(after_in_child=_pool.cache_clear)


def run_parallel(fn: Callable[[Any], None], items: Sequence[Any]) -> None:
    """``fn(item)`` for every item, on the thread pool when :func:`threads` allows (never nested)."""
    if threads() <= 1 or len(items) <= 1:
        for item in items:
            fn(item)
    else:
        list(_pool().map(fn, items))


def per_frame(clip: np.ndarray, fn: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    """Apply ``fn(frame, t)`` to every frame into a new uint8 clip.

    ``fn`` must be deterministic (draw any randomness before): frames are shared out over
    :func:`threads` threads (OpenCV releases the GIL), so the order of calls is not fixed.
    """
    out = np.empty_like(clip)
    n = threads()

    def run(frames: range) -> None:
        for t in frames:
            out[t] = fn(clip[t], t)

    run_parallel(run, [range(i, len(clip), n) for i in range(n)])
    return out


def centre_zoom_matrix(factor: float, width: int, height: int) -> np.ndarray:
    """2x3 affine map that magnifies an image by ``factor`` about its centre (same output size)."""
    cx, cy = (width - 1) / 2, (height - 1) / 2
    return np.array([[factor, 0, (1 - factor) * cx], [0, factor, (1 - factor) * cy]], dtype=np.float64)
