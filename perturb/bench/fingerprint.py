"""Cheap fingerprints of what embeddings depend on: checkpoints, hub revisions, videos, captions, perturbations.

A fingerprint changes whenever the numbers could: a checkpoint's files (size, mtime and a hash of
its configs and safetensors headers), a video file (size, mtime, hash of its first and last
blocks), a caption's text, a perturbation's parameters and implementation version.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

SIDECAR = ".perturb-fingerprint.json"
BLOCK = 1 << 16                          # bytes hashed at each end of a video file
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
    """Hash of a config/index file's bytes, a safetensors header, or the ends of another weight file."""
    if path.suffix == ".safetensors":
        data = _safetensors_header(path) + _ends(path)      # the ends catch same-shape retrained weights
    elif path.suffix == ".json":
        data = path.read_bytes()
    else:
        data = _ends(path)
    return hashlib.sha256(data).hexdigest()[:16]


def _ends(path: Path) -> bytes:
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(BLOCK)
        if size > 2 * BLOCK:
            f.seek(size - BLOCK)
        return head + f.read(BLOCK)


def checkpoint_fingerprint(path: str | os.PathLike) -> str:
    """Fingerprint of a local checkpoint directory (or file): its weight and config files.

    Names, sizes and mtimes of every file, plus a hash of each config / index JSON and of each
    safetensors header and first and last 64 KiB. The content hashes are kept in a sidecar in the directory keyed by the
    files' stat, so an unchanged checkpoint is not read again.
    """
    root = Path(path)
    files = [root] if root.is_file() else sorted(
        p for p in root.iterdir() if p.is_file() and p.name != SIDECAR
        and (p.suffix in WEIGHTS or p.suffix == ".json" or p.suffix == ".model" or p.suffix == ".txt"))
    stats = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    signature = digest(stats)
    sidecar = root / SIDECAR if root.is_dir() else root.with_name(f".{root.name}{SIDECAR}")
    try:
        saved = json.loads(sidecar.read_text())
        if saved.get("signature") == signature:
            return str(saved["fingerprint"])
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    fingerprint = digest(stats, [_content(p) for p in files if p.suffix in (".json", ".safetensors")])
    try:
        from ..fileio import write_json
        write_json(sidecar, {"signature": signature, "fingerprint": fingerprint})
    except OSError:
        pass                                     # a read-only checkpoint is fingerprinted each run
    return fingerprint


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
    """Size, mtime and a hash of the first and last 64 KiB of a file (memoised on its stat, ctime included)."""
    st = os.stat(path)
    memo = (os.fspath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if memo not in _FILE_MEMO:
        _FILE_MEMO[memo] = digest(st.st_size, st.st_mtime_ns, hashlib.sha256(_ends(Path(path))).hexdigest())
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
    from ..registry import REGISTRY
    spec = REGISTRY.get(name, modality)
    params = spec.params(severity) if spec.has_severity else {}
    return digest(spec.name, params, spec.version)
