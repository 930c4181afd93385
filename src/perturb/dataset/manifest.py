"""The build manifest: one JSON line per output, appended atomically, deduplicated by key.

Each row is written with a single ``write`` of a complete line on an ``O_APPEND`` descriptor,
then flushed to disk (``fsync``), so a killed build leaves at worst a partial last line; that
line is cut off when the manifest is opened again. The last row of a key wins.
"""
from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..fileio import read_jsonl, write_atomic

FIELDS = ("key", "kind", "item_id", "video_id", "perturbation", "category", "severity", "seed",
          "params", "status", "error", "path", "sha256", "bytes", "frames", "height", "width",
          "fps", "mode", "seconds", "captions", "applied_rate")


def row_key(item_id: str, perturbation: str, severity: int | None) -> str:
    """The unique key of one output: ``item|perturbation|severity`` (``*`` for caption sets)."""
    return f"{item_id}|{perturbation}|{'' if severity is None else severity}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):       # numpy scalars
        return value.item()
    return value


def encode_row(row: dict[str, Any]) -> bytes:
    """One manifest line (UTF-8 JSON, keys in FIELDS order, newline-terminated)."""
    ordered = {k: row.get(k) for k in FIELDS if k in row}
    ordered.update((k, v) for k, v in row.items() if k not in ordered)
    return (json.dumps(_jsonable(ordered), ensure_ascii=False, default=str) + "\n").encode("utf-8")


def read_rows(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every complete, valid row of a manifest file (a torn last line is ignored)."""
    if not Path(path).exists():
        return []
    return read_jsonl(path, skip_invalid=True)


def latest(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Key → last row written for it."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        out[r["key"]] = r
    return out


def repair(path: str | os.PathLike) -> int:
    """Cut a torn (unterminated) last line off a manifest; returns the bytes removed."""
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return 0
    data = p.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep == len(data):
        return 0
    with open(p, "r+b") as f:
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return len(data) - keep


class Manifest:
    """An append-only JSONL manifest: ``append(row)`` is one atomic, durable line."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair(self.path)
        self.rows = latest(read_rows(self.path))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        """Add a row with a single write, then fsync."""
        line = encode_row(row)
        if os.write(self._fd, line) != len(line):     # pragma: no cover - regular files write whole
            raise OSError(f"short write to {self.path}")
        os.fsync(self._fd)
        self.rows[row["key"]] = row

    def compact(self, order: Iterable[str] | None = None) -> None:
        """Rewrite the file with one row per key (in ``order`` first, then the rest)."""
        keys = list(dict.fromkeys([*(k for k in (order or ()) if k in self.rows), *self.rows]))
        write_atomic(self.path, b"".join(encode_row(self.rows[k]) for k in keys))
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def close(self) -> None:
        """Close the descriptor (rows already on disk)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows.values())

    def __enter__(self) -> "Manifest":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def to_parquet(rows: list[dict[str, Any]], path: str | os.PathLike) -> None:
    """Export rows to Parquet (params as a JSON string column); needs pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - pyarrow is in the dataset extra
        from ..errors import MissingResourceError
        raise MissingResourceError("a Parquet manifest needs pyarrow: pip install pyarrow") from e
    cols = {k: [] for k in FIELDS}
    for r in rows:
        for k in FIELDS:
            v = r.get(k)
            cols[k].append(json.dumps(_jsonable(v)) if k == "params" and v is not None else v)
    types = {"seed": pa.uint64()}      # per-output seeds span the full 64-bit unsigned range
    table = pa.table({k: pa.array(v, type=types.get(k)) for k, v in cols.items()
                      if any(x is not None for x in v)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    write_atomic(path, buf.getvalue())
