"""Perturbed clips and captions read from a ``perturb build`` output directory, as the builder
wrote them; clean clips decoded with the build's preprocessing. What it shares with the on-the-fly
source (decoding, the clip memo) it holds, not inherits."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence, Union

import numpy as np

from ...dataset.items import Item
from ...errors import PerturbError
from ...fileio import read_jsonl
from ..adapters.frames import FrameSpec
from .sources import CLEAN, CleanClip, ClipMemo, Decoding, OnTheFly


class BuiltOutputError(PerturbError, FileNotFoundError):
    """A ``perturb build`` output the benchmark needs is not in the built directory."""


class Built:
    """Perturbed clips and captions read from a ``perturb build`` output directory; clean clips
    decoded as the build decoded them (its preprocessing)."""

    def __init__(self, root: str | Path, *, seed: int = 0, max_frames: int | None = None,
                 memory_mb: int = 1024, device: str | None = None) -> None:
        self.root = Path(root)
        info_path = self.root / "dataset.json"
        if not info_path.exists():
            raise FileNotFoundError(f"--built {self.root}: expected a perturb build output with dataset.json")
        self.info = json.loads(info_path.read_text())
        self.seed = int(self.info.get("seed", seed))
        pre = self.info.get("preprocess") or {}
        self.decoding, self.memo = Decoding(pre.get("short_side"), pre.get("fps"), max_frames), ClipMemo(memory_mb)
        self.device = device            # where a replica perturbs: nothing here (the clips are built)
        self._paths: dict[tuple[str, str, int | None], Path] = {}
        from ...dataset.manifest import latest, read_rows
        for row in latest(read_rows(self.root / "manifest.jsonl")).values():
            if row.get("status") == "ok" and row.get("kind", "video") != "text":
                self._paths[(row["item_id"], row["perturbation"], row["severity"])] = self.root / row["path"]
        self._captions: dict[str, dict[str, str]] = {}

    @property
    def settings(self) -> str:                  # what the clips are read from (part of the cache key)
        return f"built:{self.root.resolve()}"

    def fit_to(self, spec: FrameSpec | None) -> None:
        """Nothing to fit: the clips are decoded as the build decoded them."""

    def describe(self) -> dict[str, Any]:
        """Where clips were read from and how, for results.json."""
        d = self.decoding
        return {"source": "built", "built": str(self.root), "short_side": d.size, "fps": d.fps,
                "max_frames": d.max_frames, "per_frame": bool(self.info.get("per_frame", False))}

    def selection(self) -> tuple[list[str], list[str], list[int]]:
        """The video perturbations, text perturbations and severities the build was asked for."""
        return ([v["name"] for v in self.info.get("video_perturbations", [])],
                [t["name"] for t in self.info.get("text_perturbations", [])],
                [int(s) for s in self.info.get("severities", [])])

    def missing(self, items: Sequence[Item], videos: Sequence[tuple[str, int | None]],
                texts: Sequence[str]) -> list[str]:
        """The requested outputs this directory does not hold finished (clips, caption files)."""
        out = [f"{name}@{sev} of {it.item_id}" if sev is not None else f"{name} of {it.item_id}"
               for name, sev in dict.fromkeys(videos) if name != CLEAN for it in items
               if (it.item_id, name, sev) not in self._paths]
        return out + [f"captions/{t}.jsonl" for t in dict.fromkeys(texts)
                      if t != CLEAN and not (self.root / "captions" / f"{t}.jsonl").exists()]

    def clip(self, item: Item, perturbation: str, severity: int | None) -> np.ndarray:
        """The built clip of ``item`` under (perturbation, severity); the clean one for ``"clean"``."""
        if perturbation == CLEAN:
            return self.memo.get(item, self.decoding.read)
        path = self._paths.get((item.item_id, perturbation, severity))
        if path is None:
            raise BuiltOutputError(f"--built {self.root}: no finished output for {item.item_id!r} "
                                   f"{perturbation} severity {severity} (see manifest.jsonl)")
        from ...dataset.encode import load
        return load(path)

    def identity(self, item: Item, perturbation: str, severity: int | None) -> str:
        """The built output file's identity, so a rebuilt clip is encoded again."""
        path = self._paths.get((item.item_id, perturbation, severity))
        if perturbation == "clean" or path is None:
            return ""
        from ...fingerprint import file_identity
        try:
            return file_identity(path)
        except OSError:
            return ""

    def clean(self, item: Item, configs: Sequence[tuple[str, int | None]],
              spec: FrameSpec | None) -> CleanClip:
        """The clean clip of ``item`` when ``configs`` ask for it (else none: built files are read)."""
        if all(p != CLEAN for p, _ in configs):
            return CleanClip(np.zeros((0, 1, 1, 3), np.uint8), 0, np.zeros(0, int))
        clip = self.decoding.read(item)
        by_rate = spec is not None and spec.by_rate
        return CleanClip(clip, len(clip), fps=self.decoding.clip_fps(item) if by_rate else None)

    def frames(self, item: Item, clean: CleanClip, perturbation: str, severity: int | None,
               spec: FrameSpec | None) -> np.ndarray:
        """The frames the model reads (``spec``; None: all) of ``item`` under one configuration."""
        clip = clean.take(None) if perturbation == CLEAN else self.clip(item, perturbation, severity)
        if spec is None:
            return clip
        return clip[spec.indices(len(clip), self.decoding.clip_fps(item) if spec.by_rate else None)]

    def captions(self, ids: Sequence[str], texts: Sequence[str], perturbation: str) -> list[str]:
        """The built captions of ``ids`` under a text perturbation (``texts`` for ``"clean"``)."""
        if perturbation == CLEAN:
            return list(texts)
        if perturbation not in self._captions:
            path = self.root / "captions" / f"{perturbation}.jsonl"
            if not path.exists():
                raise BuiltOutputError(f"--built {self.root}: missing {path}")
            rows = read_jsonl(path)
            self._captions[perturbation] = {f"{r['item_id']}#{r['caption_index']}": r["text"] for r in rows}
        table = self._captions[perturbation]
        missing = [i for i in ids if i not in table]
        if missing:
            raise BuiltOutputError(f"--built {self.root}: captions/{perturbation}.jsonl lacks {missing[:3]}")
        return [table[i] for i in ids]


Source = Union[OnTheFly, Built]     # what the runner reads its clips and captions from
