"""On-disk embedding cache, keyed by model, dataset, modality, perturbation, severity and seed.

Each encoded batch is written as its own ``part-*.npz`` (ids + rows, atomically), so an
interrupted run resumes at the last finished batch and a subset reuses rows of a larger run.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..fileio import write_atomic


def _slug(text: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:48]
    return f"{clean}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class CacheKey:
    """Everything an embedding depends on."""

    model: str
    dataset: str
    modality: str              # "video", "text" or "cross"
    perturbation: str
    severity: int | None
    seed: int
    settings: str = ""         # e.g. decoding options

    def folder(self, root: Path) -> Path:
        sev = "none" if self.severity is None else str(self.severity)
        return (root / _slug(self.model) / self.dataset / self.modality / _slug(self.perturbation)
                / sev / f"seed{self.seed}-{_slug(self.settings)}")


class EmbeddingCache:
    """Rows by id for one :class:`CacheKey`; ``root=None`` disables caching."""

    def __init__(self, root: str | os.PathLike | None) -> None:
        self.root = Path(root) if root is not None else None

    def load(self, key: CacheKey, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached rows for those of ``ids`` that are present."""
        if self.root is None:
            return {}
        folder = key.folder(self.root)
        wanted, found = set(ids), {}
        for part in sorted(folder.glob("part-*.npz")) if folder.is_dir() else []:
            try:
                with np.load(part, allow_pickle=False) as z:
                    for i, row in zip(z["ids"].tolist(), z["rows"]):
                        if i in wanted:
                            found[i] = row
            except (OSError, ValueError, KeyError):
                continue                  # a damaged part is recomputed
        return found

    def save(self, key: CacheKey, ids: Sequence[str], rows: np.ndarray) -> None:
        """Store one batch of rows atomically."""
        if self.root is None or not len(ids):
            return
        folder = key.folder(self.root)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"part-{uuid.uuid4().hex}"
        buf = io.BytesIO()
        np.savez(buf, ids=np.asarray(list(ids), dtype=str), rows=np.asarray(rows))
        write_atomic(folder / f"{name}.npz", buf.getvalue())
