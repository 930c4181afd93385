"""The video-major schedule: decode each video once, render every configuration from it.

Items are taken in blocks of one batch. A block's clean clips are decoded once (in the worker
threads, only the frames some configuration needs), then each configuration renders the frames
the model reads for every item of the block, and those form one model batch. Rendering runs
``workers`` threads ahead of the model, so codec configurations (PyAV, which releases the GIL)
overlap with encoding. At most about two blocks of clean clips are alive at any time, so memory
is bounded by the clips in flight, not by the dataset.
"""
from __future__ import annotations

import threading
from itertools import groupby
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ...dataset.items import Item
from ..adapters.frames import FrameSpec
from .prefetch import prefetch
from .sources import CleanClip

Config = tuple[str, "int | None"]          # (perturbation or "clean", severity)


class _CleanClips:
    """Clean clips by item position, decoded on first use and dropped after their last render."""

    def __init__(self, decode: Callable[[int], CleanClip], uses: dict[int, int]) -> None:
        self.decode, self.uses = decode, dict(uses)
        self.entries: dict[int, list[Any]] = {}          # position -> [lock, clip or None]
        self.lock = threading.Lock()

    def get(self, k: int) -> CleanClip:
        with self.lock:
            entry = self.entries.setdefault(k, [threading.Lock(), None])
        with entry[0]:
            if entry[1] is None:
                entry[1] = self.decode(k)
            return entry[1]

    def release(self, k: int) -> None:
        with self.lock:
            self.uses[k] -= 1
            if self.uses[k] == 0:
                self.entries.pop(k, None)


def video_batches(source: Any, items: Sequence[Item], configs: Sequence[Config],
                  todo: dict[Config, set[int]], spec: FrameSpec | None, batch_size: int,
                  workers: int) -> Iterator[tuple[Config, list[int], list[np.ndarray]]]:
    """``(config, item positions, frames)`` batches covering every (config, position) in ``todo``.

    ``source`` is an :class:`~perturb.bench.pipeline.sources.OnTheFly` or a :class:`~.built.Built`; ``frames`` are what
    the model reads (``spec``). Batches come in block order, then configuration order.
    """
    if batch_size < 1:
        raise ValueError(f"batch size must be >= 1; got {batch_size}")
    wanted = sorted(set().union(*todo.values())) if todo else []
    blocks = [wanted[i:i + batch_size] for i in range(0, len(wanted), batch_size)]
    tasks = [(b, cfg, k) for b, block in enumerate(blocks) for cfg in configs
             for k in block if k in todo.get(cfg, ())]
    uses: dict[int, int] = {}
    for _, _, k in tasks:
        uses[k] = uses.get(k, 0) + 1
    needed = {k: [cfg for cfg in configs if k in todo.get(cfg, ())] for k in uses}
    clips = _CleanClips(lambda k: source.clean(items[k], needed[k], spec), uses)

    def render(task: tuple[int, Config, int]) -> np.ndarray:
        _, (perturbation, severity), k = task
        try:
            return source.frames(items[k], clips.get(k), perturbation, severity, spec)
        finally:
            clips.release(k)

    window = batch_size + 2 * max(workers, 1)
    rendered = prefetch(render, tasks, workers, window)
    for (_, cfg), group in groupby(tasks, key=lambda t: (t[0], t[1])):
        positions = [k for _, _, k in group]      # a batch is handed over as soon as it is complete
        frames = [next(rendered) for _ in positions]
        yield cfg, positions, frames
