"""On-disk embedding cache, keyed by everything the numbers depend on.

A :class:`CacheKey` names a folder: model id and version (checkpoint fingerprint, hub revision,
``cache_version``...), dataset, modality, perturbation with its parameters and implementation
version, severity, seed and decoding options. Each encoded batch is one ``part-*.npz`` holding
ids, rows and each row's item fingerprint (video file identity or caption text), so an edited
caption or a replaced video re-encodes only itself; an interrupted run resumes at the last
finished batch and a subset reuses rows of a larger run. Rows come checked from the model
(:func:`~perturb.bench.adapters.protocol.check_rows`, and at the run's one width by
:mod:`perturb.bench.pipeline.widths`) and are checked again as they are read back; parts are written
atomically (fsync, rename); a damaged part is named and recomputed.
Rows that another run on the same cache stored meanwhile are not stored again, so two
concurrent runs share their rows instead of each keeping a copy.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time
import uuid
import warnings
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ...fileio import write_atomic, write_json
from .protocol import BadEmbeddingsError

KEY_FILE = "key.json"
STALE_TMP_S = 3600.0                 # a temporary older than this belongs to a dead writer


def _slug(text: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:48]
    return f"{clean}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class CacheKey:
    """Everything an embedding depends on (per-item video/caption identity lives with each row)."""

    model: str
    dataset: str
    modality: str              # "video", "text" or "cross"
    perturbation: str
    severity: int | None
    seed: int
    settings: str = ""         # e.g. decoding options
    model_version: str = ""    # checkpoint fingerprint, hub revision, cache_version, --cache-key
    recipe: str = ""           # perturbation parameters + implementation version
    dataset_name: str = field(default="", compare=False)   # for people (perturb cache ls), not the key

    def folder(self, root: Path) -> Path:
        sev = "none" if self.severity is None else str(self.severity)
        version = hashlib.sha256(self.model_version.encode()).hexdigest()[:12]
        tail = _slug(f"{self.settings}|{self.recipe}")
        return (root / _slug(self.model) / f"v-{version}" / self.dataset / self.modality
                / _slug(self.perturbation) / sev / f"seed{self.seed}-{tail}")


def read_part(part: Path) -> tuple[list[str], np.ndarray, list[str]]:
    """ids, rows and fingerprints of one part; ValueError when it is damaged or inconsistent."""
    try:
        with np.load(part, allow_pickle=False) as z:
            ids, rows = z["ids"].tolist(), np.asarray(z["rows"])
            fps = z["fps"].tolist() if "fps" in z.files else [""] * len(ids)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile) as e:
        raise ValueError(f"unreadable ({type(e).__name__}: {e})") from None
    if rows.ndim != 2 or len(ids) != len(rows) or len(fps) != len(ids) or rows.shape[1] == 0:
        raise ValueError(f"inconsistent ({len(ids)} ids, {len(fps)} fingerprints, rows {rows.shape})")
    if not np.isfinite(rows).all():
        raise ValueError("holds NaN or inf rows")
    return ids, rows, fps


def _discard(part: Path, why: str) -> None:
    warnings.warn(f"embedding cache: {part} is {why}; its rows will be recomputed", stacklevel=3)
    try:
        part.unlink()
    except OSError:
        pass


def clean_temporaries(folder: Path, older_than: float = STALE_TMP_S) -> int:
    """Remove temporaries of writers that died (older than ``older_than`` s); how many went."""
    gone, now = 0, time.time()
    for tmp in folder.glob(".*.tmp*") if folder.is_dir() else []:
        try:
            if now - tmp.stat().st_mtime > older_than:
                tmp.unlink()
                gone += 1
        except OSError:
            pass
    return gone


class EmbeddingCache:
    """Rows by id for one :class:`CacheKey`; ``root=None`` disables caching."""

    def __init__(self, root: str | os.PathLike | None) -> None:
        self.root = Path(root) if root is not None else None
        self._stored: dict[Path, tuple[set[str], set[tuple[str, str]]]] = {}  # folder -> parts read, (id, fp)

    def _stored_rows(self, folder: Path) -> set[tuple[str, str]]:
        """(id, fingerprint) of every row already in ``folder``'s parts, whoever wrote them; parts
        are read once (ids and fingerprints only), so each save reads only what is new."""
        seen, rows = self._stored.setdefault(folder, (set(), set()))
        for part in folder.glob("part-*.npz"):
            if part.name in seen:
                continue
            seen.add(part.name)
            try:
                with np.load(part, allow_pickle=False) as z:
                    ids = z["ids"].tolist()
                    fps = z["fps"].tolist() if "fps" in z.files else [""] * len(ids)
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                continue                              # damaged: load() names and removes it
            rows.update(zip(ids, fps))
        return rows

    def load(self, key: CacheKey, ids: Sequence[str], fingerprints: Mapping[str, str] | None = None,
             width: int | None = None) -> dict[str, np.ndarray]:
        """Cached rows for those of ``ids`` present with the same fingerprint (when given).

        A damaged part, or one whose width disagrees with ``width`` (the model's declared
        width; None: the width most rows have), is named in a warning, removed and its rows
        recomputed.
        """
        if self.root is None:
            return {}
        folder = key.folder(self.root)
        self._stored.pop(folder, None)              # re-read at the next save: parts may be discarded here
        if not folder.is_dir():
            return {}
        clean_temporaries(folder)
        wanted, found, widths = set(ids), {}, {}
        parts: list[tuple[Path, list[str], np.ndarray, list[str]]] = []
        for part in sorted(folder.glob("part-*.npz")):
            try:
                got_ids, rows, fps = read_part(part)
            except ValueError as e:
                _discard(part, str(e))
                continue
            parts.append((part, got_ids, rows, fps))
            widths[rows.shape[1]] = widths.get(rows.shape[1], 0) + len(rows)
        if width is None:
            width = max(widths, key=widths.get) if widths else None
        for part, got_ids, rows, fps in parts:
            if rows.shape[1] != width:
                _discard(part, f"inconsistent (width {rows.shape[1]}, expected {width})")
                continue
            for i, row, fp in zip(got_ids, rows, fps):
                if i in wanted and (fingerprints is None or fingerprints.get(i) == fp):
                    found[i] = row
        return found

    def save(self, key: CacheKey, ids: Sequence[str], rows: np.ndarray,
             fingerprints: Mapping[str, str] | None = None) -> None:
        """Store one batch of rows, as a checked model output gives them, atomically (fsynced, then
        renamed); a batch of another shape is refused."""
        if self.root is None or not len(ids):
            return
        arr = np.asarray(rows, dtype=np.float32)
        if arr.ndim != 2 or len(arr) != len(ids) or arr.shape[1] == 0:
            raise BadEmbeddingsError(f"{key.model}: expected {len(ids)} rows of width > 0 to cache; "
                                     f"got shape {arr.shape}")
        folder = key.folder(self.root)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / KEY_FILE).exists():
            write_json(folder / KEY_FILE, {**asdict(key), "created": time.time()})
        fps = [(fingerprints or {}).get(i, "") for i in ids]
        stored = self._stored_rows(folder)          # rows another run on this cache stored meanwhile
        new = [k for k, pair in enumerate(zip(ids, fps)) if pair not in stored]
        if not new:
            return
        buf = io.BytesIO()
        np.savez(buf, ids=np.asarray([ids[k] for k in new], dtype=str), rows=arr[new],
                 fps=np.asarray([fps[k] for k in new], dtype=str))
        name = f"part-{uuid.uuid4().hex}.npz"
        write_atomic(folder / name, buf.getvalue())
        self._stored[folder][0].add(name)
        stored.update((ids[k], fps[k]) for k in new)


def entries(root: str | os.PathLike) -> list[dict]:
    """Every cache entry under ``root``: its folder, key (from key.json), parts, rows and bytes."""
    out = []
    for key_file in sorted(Path(root).rglob(KEY_FILE)):
        folder = key_file.parent
        try:
            key = json.loads(key_file.read_text())
        except (OSError, ValueError):
            key = {}
        parts = sorted(folder.glob("part-*.npz"))
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        out.append({"folder": folder, "key": key, "parts": parts, "bytes": size})
    return out
