"""Embeddings computed elsewhere, read from ``.npy`` / ``.pt`` files per (perturbation, severity).

Layout (see docs/benchmark.md)::

    DIR/video_ids.json                  order of the rows of every video file (item ids)
    DIR/text_ids.json                   order of the rows of every text file (query ids)
    DIR/videos/clean.npy                DIR/videos/<perturbation>/<severity>.npy
    DIR/texts/clean.npy                 DIR/texts/<perturbation>.npy
    DIR/labels.json                     a classifier's logits instead: its class names in logit
                                        order (the video files then hold (N, classes) logits)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np


class PrecomputedAdapter:
    """A dual encoder whose embeddings are looked up by id instead of computed."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"precomputed embeddings: expected a directory, got {self.root}")

    def _ids(self, modality: str) -> list[str]:
        path = self.root / f"{modality}_ids.json"
        if not path.exists():
            raise FileNotFoundError(f"precomputed embeddings: missing {path} (a JSON list of ids, "
                                    f"one per row of the {modality} embedding files)")
        return [str(i) for i in json.loads(path.read_text())]

    def _file(self, modality: str, perturbation: str, severity: int | None) -> Path:
        folder = self.root / f"{modality}s"
        stem = folder / "clean" if perturbation == "clean" else folder / perturbation
        if severity is not None:
            stem = stem / str(severity)
        for ext in (".npy", ".pt"):
            if stem.with_suffix(ext).exists():
                return stem.with_suffix(ext)
        raise FileNotFoundError(f"precomputed embeddings: no {stem}.npy or {stem}.pt for "
                                f"{modality} perturbation {perturbation!r} severity {severity}")

    def load_embeddings(self, modality: str, perturbation: str, severity: int | None,
                        ids: Sequence[str]) -> np.ndarray:
        """Rows for ``ids`` of the file for (modality, perturbation, severity)."""
        path = self._file(modality, perturbation, severity)
        if path.suffix == ".pt":
            import torch
            arr = torch.load(path, map_location="cpu").float().numpy()
        else:
            arr = np.load(path)
        known = self._ids(modality)
        if len(known) != len(arr):
            raise ValueError(f"{path} has {len(arr)} rows but {modality}_ids.json lists {len(known)} ids")
        index = {k: i for i, k in enumerate(known)}
        missing = [i for i in ids if i not in index]
        if missing:
            raise KeyError(f"{path}: no embeddings for ids {missing[:5]}")
        return np.asarray(arr[[index[i] for i in ids]], dtype=np.float32)

    def encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        raise RuntimeError("precomputed embeddings are looked up by id; the runner never encodes clips")

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("precomputed embeddings are looked up by id; the runner never encodes texts")


class PrecomputedLogits(PrecomputedAdapter):
    """A classifier whose logits are looked up by id: the video files hold (N, classes) logits,
    ``labels.json`` the class names in their column order."""

    def __init__(self, root: str | Path) -> None:
        super().__init__(root)
        path = self.root / "labels.json"
        labels = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
            raise ValueError(f"{path}: expected a JSON list of class names, one per logit column")
        self.labels = labels

    def classify(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        raise RuntimeError("precomputed logits are looked up by id; the runner never classifies clips")


def precomputed(root: str | Path) -> PrecomputedAdapter:
    """Precomputed logits where ``root`` holds ``labels.json``, else precomputed embeddings."""
    return PrecomputedLogits(root) if (Path(root) / "labels.json").is_file() else PrecomputedAdapter(root)
