"""Where perturbed clips and captions come from: the library on the fly, or a built -P directory.

On the fly, a clip is decoded once (kept in memory up to a budget) and perturbed with the
builder's seed rule ``perturb.rng.item_seed``; captions use
``apply_batch(captions, name, seed=seed)``, as ``perturb build`` does, so both routes agree.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..dataset.items import Item
from ..fileio import read_jsonl
from ..rng import item_seed


class OnTheFly:
    """Decode with :func:`perturb.video.io.read`, perturb with :func:`perturb.video.apply`."""

    def __init__(self, seed: int = 0, size: int | None = None, fps: float | None = None,
                 max_frames: int | None = None, memory_mb: int = 1024) -> None:
        self.seed, self.size, self.fps, self.max_frames = seed, size, fps, max_frames
        self.budget = memory_mb * 2**20
        self._clips: dict[str, np.ndarray] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:          # picklable for process / Dask workers
        return {**self.__dict__, "_lock": None, "_clips": {}, "_bytes": 0}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def settings(self) -> str:
        """Decoding options that change pixels (part of the cache key)."""
        return f"fly:size={self.size}:fps={self.fps}:max={self.max_frames}"

    def decode(self, item: Item) -> np.ndarray:
        """The clean clip of an item (memoised within the memory budget)."""
        with self._lock:
            hit = self._clips.get(item.item_id)
        if hit is not None:
            return hit
        clip = self._read(item)
        clip.setflags(write=False)
        with self._lock:
            if self._bytes + clip.nbytes <= self.budget:
                self._clips[item.item_id] = clip
                self._bytes += clip.nbytes
        return clip

    def _read(self, item: Item) -> np.ndarray:
        if isinstance(item.meta.get("clip"), np.ndarray):        # in-memory datasets (tests, demo)
            return np.asarray(item.meta["clip"])
        from ..video.io import read
        return read(item.video_path, fps=self.fps, size=self.size, start=item.start, end=item.end,
                    max_frames=self.max_frames)[0]

    def clip(self, item: Item, perturbation: str, severity: int | None) -> np.ndarray:
        """The clip of ``item`` under (perturbation, severity); ``"clean"`` for none."""
        clean = self.decode(item)
        if perturbation == "clean":
            return clean
        from ..video.api import apply
        return apply(clean, perturbation, severity,
                     seed=item_seed(self.seed, item.item_id, perturbation, severity))

    def identity(self, item: Item, perturbation: str, severity: int | None) -> str:
        """What a perturbed clip is read from beyond the item's video ("" when made here)."""
        return ""

    def captions(self, ids: Sequence[str], texts: Sequence[str], perturbation: str) -> list[str]:
        """Captions under a text perturbation (unchanged where it does not apply)."""
        if perturbation == "clean":
            return list(texts)
        from ..text.api import apply_batch
        return [str(t) for t in apply_batch(list(texts), perturbation, seed=self.seed)]


class Built(OnTheFly):
    """Perturbed clips and captions read from a ``perturb build`` output directory."""

    def __init__(self, root: str | Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = Path(root)
        info_path = self.root / "dataset.json"
        if not info_path.exists():
            raise FileNotFoundError(f"--built {self.root}: expected a perturb build output with dataset.json")
        self.info = json.loads(info_path.read_text())
        self.seed = int(self.info.get("seed", self.seed))
        pre = self.info.get("preprocess") or {}          # clean clips decoded as the build did
        self.size, self.fps = pre.get("short_side"), pre.get("fps")
        self._paths: dict[tuple[str, str, int | None], Path] = {}
        from ..dataset.manifest import latest, read_rows
        for row in latest(read_rows(self.root / "manifest.jsonl")).values():
            if row.get("status") == "ok" and row.get("kind", "video") != "text":
                self._paths[(row["item_id"], row["perturbation"], row["severity"])] = self.root / row["path"]
        self._captions: dict[str, dict[str, str]] = {}

    @property
    def settings(self) -> str:
        return f"built:{self.root.resolve()}"

    def clip(self, item: Item, perturbation: str, severity: int | None) -> np.ndarray:
        if perturbation == "clean":
            return self.decode(item)
        path = self._paths.get((item.item_id, perturbation, severity))
        if path is None:
            raise FileNotFoundError(f"--built {self.root}: no finished output for {item.item_id!r} "
                                    f"{perturbation} severity {severity} (see manifest.jsonl)")
        from ..dataset.encode import load
        return load(path)

    def identity(self, item: Item, perturbation: str, severity: int | None) -> str:
        """The built output file's identity, so a rebuilt clip is encoded again."""
        path = self._paths.get((item.item_id, perturbation, severity))
        if perturbation == "clean" or path is None:
            return ""
        from .fingerprint import file_identity
        try:
            return file_identity(path)
        except OSError:
            return ""

    def captions(self, ids: Sequence[str], texts: Sequence[str], perturbation: str) -> list[str]:
        if perturbation == "clean":
            return list(texts)
        if perturbation not in self._captions:
            path = self.root / "captions" / f"{perturbation}.jsonl"
            if not path.exists():
                raise FileNotFoundError(f"--built {self.root}: missing {path}")
            rows = read_jsonl(path)
            self._captions[perturbation] = {f"{r['item_id']}#{r['caption_index']}": r["text"] for r in rows}
        table = self._captions[perturbation]
        missing = [i for i in ids if i not in table]
        if missing:
            raise KeyError(f"--built {self.root}: captions/{perturbation}.jsonl lacks {missing[:3]}")
        return [table[i] for i in ids]
