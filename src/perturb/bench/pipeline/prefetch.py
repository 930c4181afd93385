"""Ordered prefetching: workers decode and perturb the next clips while the model encodes."""
from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def prefetch(fn: Callable[[T], R], items: Iterable[T], workers: int = 2, window: int = 8) -> Iterator[R]:
    """``map(fn, items)`` in order, computed by ``workers`` threads up to ``window`` items ahead.

    Decoding (PyAV), OpenCV and NumPy kernels release the GIL, so threads overlap with encoding.
    """
    if workers <= 0:
        yield from map(fn, items)
        return
    it = iter(items)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="perturb-prefetch") as pool:
        pending = deque(pool.submit(fn, x) for x in islice(it, max(window, workers)))
        try:
            while pending:
                done = pending.popleft()
                for x in islice(it, 1):
                    pending.append(pool.submit(fn, x))
                yield done.result()
        finally:
            for f in pending:
                f.cancel()


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of at most ``size`` items."""
    if size < 1:
        raise ValueError(f"batch size must be >= 1; got {size}")
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk
