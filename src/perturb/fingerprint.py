"""Cheap fingerprints of what embeddings depend on: checkpoints, hub revisions, videos, captions, perturbations.

A fingerprint changes whenever the numbers could: a checkpoint's files (size, mtime, its configs,
safetensors headers and a sample of blocks spread over every weight file), a video file (size and
its bytes; for a file past 16 MiB, a sample of blocks spread over it and its mtime), a caption's
text, a perturbation's parameters and implementation version. A video rewritten with the same
bytes keeps its identity, so its cached embeddings are read, not computed again.

Content is always read, never trusted from a timestamp: a file restored with ``touch -r`` has the
old size and mtime. Sampling bounds the cost: at most WEIGHT_SAMPLES x BLOCK (4 MiB) per weight
file and VIDEO_SAMPLES x VIDEO_BLOCK (16 MiB) per video, whatever their size; smaller files (most
clips of MSR-VTT-sized datasets) are hashed whole. A retrained checkpoint changes every block; an
edit of a few bytes between sampled blocks of a larger file is the one change this does not see.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

BLOCK = 1 << 16                          # bytes of each sampled block of a weight file
WEIGHT_SAMPLES = 64                      # blocks sampled per weight file (first and last included)
VIDEO_BLOCK = 1 << 14                    # bytes of each sampled block of a video file
VIDEO_SAMPLES = 1024                     # blocks sampled per video file: up to 16 MiB is hashed whole
WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx")


def digest(*parts: Any) -> str:
    """A short hex digest of the JSON form of ``parts``."""
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _safetensors_header(path: Path) -> bytes:
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            return head
        (n,) = struct.unpack("<Q", head)
        return f.read(min(n, 1 << 26))


def _content(path: Path) -> str:
    """Hash of a config/index file's bytes, or of a weight file's safetensors header and samples."""
    if path.suffix == ".json":
        data = path.read_bytes()
    else:
        header = _safetensors_header(path) if path.suffix == ".safetensors" else b""
        data = header + sampled_blocks(path, WEIGHT_SAMPLES, BLOCK)
    return hashlib.sha256(data).hexdigest()[:16]


def sampled_blocks(path: str | os.PathLike, samples: int, block: int) -> bytes:
    """``samples`` blocks of ``block`` bytes at evenly spread offsets, first and last included;
    the whole file when it is no larger than that."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if size <= samples * block:
            return f.read()
        chunks = []
        for offset in np.linspace(0, size - block, samples).astype(np.int64).tolist():
            f.seek(offset)
            chunks.append(f.read(block))
        return b"".join(chunks)


def checkpoint_fingerprint(path: str | os.PathLike) -> str:
    """Fingerprint of a local checkpoint directory (or file): its weight and config files.

    Names, sizes and mtimes of every file, plus a hash of each config / index JSON and of each
    weight file's safetensors header and sampled blocks (see the module's note on cost). Read on
    every call: a same-size file restored with its old mtime still changes the fingerprint.
    """
    root = Path(path)
    files = [root] if root.is_file() else sorted(
        p for p in root.iterdir() if p.is_file()
        and (p.suffix in WEIGHTS or p.suffix == ".json" or p.suffix == ".model" or p.suffix == ".txt"))
    stats = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    return digest(stats, [_content(p) for p in files if p.suffix in WEIGHTS or p.suffix == ".json"])


def hub_revision(name: str) -> str | None:
    """The commit a hub name resolves to in the local Hugging Face cache (None when not cached)."""
    try:
        from huggingface_hub import constants
    except ImportError:
        return None
    refs = Path(constants.HF_HUB_CACHE) / f"models--{name.replace('/', '--')}" / "refs" / "main"
    try:
        return refs.read_text().strip() or None
    except OSError:
        return None


def model_version(name_or_path: str) -> str:
    """Version of a model named by a local path or hub name: fingerprint, else revision, else the name."""
    if os.path.exists(name_or_path):
        return f"ckpt:{checkpoint_fingerprint(name_or_path)}"
    revision = hub_revision(name_or_path)
    return f"rev:{revision}" if revision else f"name:{name_or_path}"


_FILE_MEMO: dict[tuple[str, int, int, int, int], str] = {}


def file_identity(path: str | os.PathLike) -> str:
    """Size and a hash of the file's bytes: the same bytes give the same identity, however often
    the file is rewritten or copied. A file larger than is hashed whole (VIDEO_SAMPLES x VIDEO_BLOCK)
    is hashed in blocks sampled over it, and its mtime is added for the edits between the blocks.
    Memoised within a process on its stat (ctime and inode included, which a rewrite changes)."""
    st = os.stat(path)
    memo = (os.fspath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if memo not in _FILE_MEMO:
        sample = hashlib.sha256(sampled_blocks(path, VIDEO_SAMPLES, VIDEO_BLOCK)).hexdigest()
        sampled = st.st_size > VIDEO_SAMPLES * VIDEO_BLOCK
        _FILE_MEMO[memo] = digest(st.st_size, st.st_mtime_ns, sample) if sampled else digest(st.st_size, sample)
    return _FILE_MEMO[memo]


def item_fingerprint(item: Any) -> str:
    """Identity of one item's video: its in-memory clip bytes, or its file, plus the segment bounds."""
    clip = item.meta.get("clip") if isinstance(getattr(item, "meta", None), dict) else None
    if isinstance(clip, np.ndarray):
        video = hashlib.sha256(np.ascontiguousarray(clip).tobytes()).hexdigest()[:16] + str(clip.shape)
    else:
        try:
            video = file_identity(item.video_path)
        except OSError:
            video = f"missing:{item.video_path}"          # decoding will report it
    return digest(video, item.start, item.end)


def text_fingerprint(text: str) -> str:
    """Identity of one caption."""
    return digest(text)


def perturbation_fingerprint(name: str, modality: str, severity: int | None) -> str:
    """Parameters and implementation version of a registered perturbation ("clean": a constant)."""
    if name == "clean":
        return "clean"
    from .registry import REGISTRY
    spec = REGISTRY.get(name, modality)
    params = spec.params(severity) if spec.has_severity else {}
    return digest(spec.name, params, spec.version)
