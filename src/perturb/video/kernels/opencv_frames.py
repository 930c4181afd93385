"""numpy/OpenCV plumbing of the frame-wise kernels: a bounded thread pool, per-thread work
buffers, rounding to uint8, the centre-zoom matrix."""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Callable, Iterator, Sequence

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


_cap: ContextVar[int | None] = ContextVar("perturb_frame_threads", default=None)


def threads() -> int:
    """Threads for whole-clip kernels: OpenCV's thread count (1 in the builder's workers), capped
    (by :func:`at_most_threads` too)."""
    cap = _cap.get()
    return max(1, min(MAX_THREADS, cv2.getNumThreads(), MAX_THREADS if cap is None else cap))


@contextmanager
def at_most_threads(n: int) -> Iterator[None]:
    """Kernels called inside share frames over at most ``n`` threads (a torch clip on the CPU
    renders with torch's thread count: one in a DataLoader worker)."""
    token = _cap.set(max(1, int(n)))
    try:
        yield
    finally:
        _cap.reset(token)


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


_local = threading.local()


def scratch(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """This thread's work buffer ``name`` (contents undefined), kept from call to call.

    At 224² a fresh temporary can cost more in first-touch page faults (when the allocator has
    handed its pages back) than the arithmetic done in it; frame kernels reuse these instead.
    One buffer per name and thread, replaced when the shape or dtype changes.
    """
    bufs = _local.__dict__.setdefault("buffers", {})
    buf = bufs.get(name)
    if buf is None or buf.shape != tuple(shape) or buf.dtype != dtype:
        bufs[name] = buf = np.empty(shape, dtype)
    return buf


def frames_in_threads(n: int, fn: Callable[[int], Any]) -> None:
    """``fn(t)`` for frames t = 0..n-1, shared out over :func:`threads` threads (every k-th frame
    to one thread); ``fn`` must not depend on the order of calls."""
    k = threads()
    run_parallel(lambda part: [fn(t) for t in part], [range(i, n, k) for i in range(k)])


def per_frame_into(clip: np.ndarray, fn: Callable[[np.ndarray, int, np.ndarray], Any]) -> np.ndarray:
    """A new uint8 clip whose frame t ``fn(clip[t], t, out[t])`` writes in place.

    ``fn`` must be deterministic (draw any randomness before): frames are shared out over
    :func:`threads` threads (OpenCV releases the GIL), so the order of calls is not fixed.
    """
    out = np.empty_like(clip)
    frames_in_threads(len(clip), lambda t: fn(clip[t], t, out[t]))
    return out


def per_frame(clip: np.ndarray, fn: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    """Apply ``fn(frame, t)`` to every frame into a new uint8 clip (as :func:`per_frame_into`)."""
    def into(frame: np.ndarray, t: int, dst: np.ndarray) -> None:
        dst[...] = fn(frame, t)
    return per_frame_into(clip, into)


def centre_zoom_matrix(factor: float, width: int, height: int) -> np.ndarray:
    """2x3 affine map that magnifies an image by ``factor`` about its centre (same output size)."""
    cx, cy = (width - 1) / 2, (height - 1) / 2
    return np.array([[factor, 0, (1 - factor) * cx], [0, factor, (1 - factor) * cy]], dtype=np.float64)
