"""Where perturbed clips and captions come from: the library on the fly (a built -P directory is
:mod:`.built`).

On the fly, a clip is decoded once and perturbed with the builder's seed rule
``perturb.rng.item_seed``; captions use ``apply_batch(captions, name, seed=seed)``, as
``perturb build`` does, so both routes agree. :meth:`OnTheFly.frames` gives only the frames a
model reads (its :class:`FrameSpec`), rendered from a :class:`CleanClip` decoded once per video.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from ...dataset.items import Item
from ...rng import item_seed
from ..adapters.frames import FrameSpec

CLEAN = "clean"


@dataclass
class CleanClip:
    """The decoded frames of one video that some configuration needs (``kept``: their indices)."""

    frames: Any                         # (len(kept), H, W, 3) uint8 numpy or torch, or the whole clip
    n_frames: int                       # T of the decoded video
    kept: np.ndarray | None = None      # sorted source indices of ``frames``; None: all T
    draws: dict[tuple[str, int | None], Any] = field(default_factory=dict)   # made while choosing kept
    fps: float | None = None            # the clip's frame rate, known when a FrameSpec samples by rate

    def take(self, indices: np.ndarray | None) -> np.ndarray:
        """Frames at these source indices (None: the whole clip, which must then be kept)."""
        if self.kept is None:
            return self.frames if indices is None else self.frames[indices]
        if indices is None:
            raise ValueError("this clean clip keeps only some frames; the whole clip was asked for")
        pos = np.searchsorted(self.kept, indices)
        if (pos >= len(self.kept)).any() or (self.kept[np.minimum(pos, len(self.kept) - 1)] != indices).any():
            raise ValueError(f"frames {sorted(set(np.asarray(indices).tolist()) - set(self.kept.tolist()))} "
                             "were not kept from the clean clip")
        return self.frames[pos]


@dataclass(frozen=True)
class Decoding:
    """How a source decodes an item's clean clip: short side, frame rate and frame cap (None: the
    video's own). Both sources decode so; in-memory clips (``item.meta["clip"]``) are taken as they are."""

    size: Any = None                    # short side in pixels; "model" until fitted to the model's input
    fps: float | None = None
    max_frames: int | None = None

    def read(self, item: Item) -> np.ndarray:
        """The whole clean clip of ``item`` (an image: a one-frame clip, its short side ``size``)."""
        if isinstance(item.meta.get("clip"), np.ndarray):        # in-memory datasets (tests, demo)
            return np.asarray(item.meta["clip"])
        if item.meta.get("media") == "image":
            return self.read_image(item)
        from ...video.io import read
        return read(item.video_path, fps=self.fps, size=self.size, start=item.start, end=item.end,
                    max_frames=self.max_frames)[0]

    def read_some(self, item: Item, pick: Any) -> tuple[np.ndarray, np.ndarray, int]:
        """Only the frames ``pick(T)`` names (decoded, but converted to RGB only where needed)."""
        if isinstance(item.meta.get("clip"), np.ndarray) or item.meta.get("media") == "image":
            clip = self.read(item)
            kept = np.unique(pick(len(clip)))
            return clip[kept], kept, len(clip)
        from ...video.io import read_frames
        return read_frames(item.video_path, pick, fps=self.fps, size=self.size, start=item.start,
                           end=item.end, max_frames=self.max_frames)

    def read_image(self, item: Item) -> np.ndarray:
        """An image item as a (1, H, W, 3) clip, resized as a video's frames are to ``size``."""
        from ...image.io import read_image
        from ...video.io.decode import output_size, resize_frame

        img = read_image(item.video_path)
        if isinstance(self.size, int):
            img = resize_frame(img, output_size(img.shape[1], img.shape[0], self.size))
        return img[None]

    def clip_fps(self, item: Item) -> float:
        """The frame rate of the item's clip as decoded: ``fps`` when given, else the video's own."""
        if item.meta.get("media") == "image":
            return self.fps or 1.0
        rate = self.fps or item.meta.get("fps")
        if not rate:
            from ...video.io.probe import probe
            rate = probe(item.video_path).fps
        return float(rate)


class ClipMemo:
    """Clean clips by item id, kept while they fit a memory budget; empty again when pickled."""

    def __init__(self, memory_mb: int = 1024) -> None:
        self.memory_mb, self._clips, self._bytes, self._lock = memory_mb, {}, 0, threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:          # picklable for process / Dask workers
        return ClipMemo, (self.memory_mb,)

    def get(self, item: Item, read: Callable[[Item], np.ndarray]) -> np.ndarray:
        """The read-only clip of ``item``: kept from an earlier call, or ``read`` now."""
        with self._lock:
            hit = self._clips.get(item.item_id)
        if hit is not None:
            return hit
        clip = read(item)
        clip.setflags(write=False)
        with self._lock:
            if self._bytes + clip.nbytes <= self.memory_mb * 2**20:
                self._clips[item.item_id] = clip
                self._bytes += clip.nbytes
        return clip


class OnTheFly:
    """Decode with :func:`perturb.video.io.read`, perturb with :func:`perturb.video.apply`."""

    def __init__(self, seed: int = 0, size: int | str | None = None, fps: float | None = None,
                 max_frames: int | None = None, memory_mb: int = 1024, device: str | None = None,
                 per_frame: bool = False) -> None:
        self.seed, self.decoding, self.memo = seed, Decoding(size, fps, max_frames), ClipMemo(memory_mb)
        self.per_frame = per_frame      # a new weather layer every frame, for the ops that take it
        self.device = device            # perturb on torch here ("cpu", "cuda"); None: numpy
        self._lock = threading.Lock()
        self._docs: dict[tuple[str, tuple[str, ...]], list[Any]] = {}     # parses, by pipeline

    def __getstate__(self) -> dict[str, Any]:          # picklable for process / Dask workers
        return {**self.__dict__, "_lock": None, "_docs": {}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def settings(self) -> str:
        """Decoding options that change pixels (part of the cache key)."""
        d = self.decoding
        device = ":torch" if self.device is not None else ""     # torch kernels off the CPU: +-1 level
        return f"fly:size={d.size}:fps={d.fps}:max={d.max_frames}{device}" + (
            ":per_frame" if self.per_frame else "")

    def fit_to(self, spec: FrameSpec | None) -> None:
        """Resolve ``size="model"``: decode straight to the short side the model reads (native
        resolution when the adapter declares none)."""
        if self.decoding.size == "model":
            self.decoding = replace(self.decoding, size=spec.size if spec is not None else None)

    def describe(self) -> dict[str, Any]:
        """How clips were decoded and perturbed, for results.json."""
        d = self.decoding
        return {"source": "on the fly", "short_side": d.size, "fps": d.fps,
                "model_input_changed_by_size": d.size is not None,     # a resize before the model's own
                "max_frames": d.max_frames, "perturb_device": self.device or "numpy",
                "per_frame": self.per_frame}

    def decode(self, item: Item) -> np.ndarray:
        """The clean clip of an item (memoised within the memory budget)."""
        return self.memo.get(item, self.decoding.read)

    def draw(self, name: str, severity: int | None, n_frames: int, seed: int) -> Any:
        """The perturbation's parameters drawn for a clip of ``n_frames`` frames (:func:`perturb.video.draw`),
        ``per_frame`` on the ops that take it (:meth:`perturb.registry.Spec.with_per_frame` says which)."""
        from ... import video
        from ...registry import REGISTRY
        per_frame = REGISTRY.get(name, "video").with_per_frame(self.per_frame).per_frame
        return video.draw(name, severity, n_frames, seed=seed, **({"per_frame": True} if per_frame else {}))

    def render(self, clean: CleanClip, item: Item, name: str, severity: int | None,
               frames: np.ndarray | None) -> np.ndarray:
        """Output frames ``frames`` (None: all) of ``name`` at ``severity`` on a clean clip: the one
        place where the runner turns (perturbation, clip, seed) into pixels, as ``apply`` does."""
        draw = clean.draws.get((name, severity)) or self.draw(name, severity, clean.n_frames,
                                                              self.seed_of(item, name, severity))
        out_idx = np.arange(clean.n_frames) if frames is None else np.asarray(frames)
        if clean.kept is None:                       # the whole clip: no gather of its source frames
            return draw.render_clip(clean.frames, out_idx)
        return draw.render(clean.take(draw.source_indices(frames)), out_idx)

    def clip(self, item: Item, perturbation: str, severity: int | None) -> np.ndarray:
        """The clip of ``item`` under (perturbation, severity); ``"clean"`` for none."""
        clean = self.decode(item)
        if perturbation == CLEAN:
            return clean
        return self.render(CleanClip(clean, len(clean)), item, perturbation, severity, None)

    def seed_of(self, item: Item, perturbation: str, severity: int | None) -> int:
        """The builder's per-output seed."""
        return item_seed(self.seed, item.item_id, perturbation, severity)

    def clean(self, item: Item, configs: Sequence[tuple[str, int | None]],
              spec: FrameSpec | None) -> CleanClip:
        """The clean clip of ``item`` decoded once (not memoised), keeping only the frames that
        ``configs`` render for ``spec`` when the library can say which (else the whole clip)."""
        if spec is None:
            clip = self._on_device(self.decoding.read(item))
            return CleanClip(clip, len(clip))

        draws: dict[tuple[str, int | None], Any] = {}
        rate = self.decoding.clip_fps(item) if spec.by_rate else None

        def needed(n: int) -> np.ndarray:
            out_idx = spec.indices(n, rate)
            for p, s in configs:
                if p != CLEAN:
                    draws[p, s] = self.draw(p, s, n, self.seed_of(item, p, s))
            return np.concatenate([out_idx] + [np.asarray(d.source_indices(out_idx)) for d in draws.values()])

        frames, kept, n = self.decoding.read_some(item, needed)
        return CleanClip(self._on_device(frames), n, kept, draws, rate)

    def _on_device(self, clip: np.ndarray) -> Any:
        """The clip as uint8 on the perturbation device (numpy when there is none)."""
        if self.device is None:
            return clip
        import torch
        return torch.from_numpy(np.ascontiguousarray(clip)).to(self.device)

    def frames(self, item: Item, clean: CleanClip, perturbation: str, severity: int | None,
               spec: FrameSpec | None) -> np.ndarray:
        """The frames the model reads (``spec``; None: all) of ``item`` under one configuration."""
        idx = None if spec is None else spec.indices(clean.n_frames, clean.fps)
        if perturbation == CLEAN:
            return clean.take(idx)
        return self.render(clean, item, perturbation, severity, idx)

    def identity(self, item: Item, perturbation: str, severity: int | None) -> str:
        """What a perturbed clip is read from beyond the item's video ("" when made here)."""
        return ""

    def captions(self, ids: Sequence[str], texts: Sequence[str], perturbation: str) -> list[str]:
        """Captions under a text perturbation (unchanged where it does not apply)."""
        if perturbation == "clean":
            return list(texts)
        from ...text.api import apply_batch, get, parse_batch, pipeline_key
        spec, docs = get(perturbation), None
        if spec.needs_parse:                  # one parse per caption and pipeline, for all perturbations
            key = (pipeline_key(spec), tuple(texts))
            with self._lock:
                docs = self._docs.get(key)
            if docs is None:
                docs = parse_batch(list(texts), key[0])
                with self._lock:
                    self._docs = {k: v for k, v in self._docs.items() if k[0] != key[0]}
                    self._docs[key] = docs
        return [str(t) for t in apply_batch(list(texts), perturbation, seed=self.seed, docs=docs)]
