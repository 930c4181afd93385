"""File plumbing shared by every part of perturb: atomic writes, JSON Lines, checksums.

Everything that writes a file others may read while we run goes through :func:`write_atomic`
(temporary name, fsync, rename), so a reader or a crash never sees half a file.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable


def sha256_file(path: str | os.PathLike, block: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(block):
            h.update(chunk)
    return h.hexdigest()


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write a whole file under a temporary name, fsync it, then rename it into place."""
    p = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2) -> Path:
    """Atomically write ``obj`` as UTF-8 JSON (newline-terminated)."""
    return write_atomic(path, json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + "\n")


def write_jsonl(path: str | os.PathLike, rows: Iterable[Any]) -> Path:
    """Atomically write one JSON value per line."""
    return write_atomic(path, "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows))


def read_jsonl(path: str | os.PathLike) -> list[Any]:
    """Every JSON value of a JSON Lines file; a malformed line is a ValueError naming file and line."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: line {lineno} is not valid JSON ({e.msg})") from None
    return rows
