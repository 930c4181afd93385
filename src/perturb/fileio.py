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


def temp_name(path: str | os.PathLike) -> Path:
    """The hidden temporary name :func:`write_atomic` uses next to ``path`` (``.NAME.PID.tmp``)."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}.tmp")


def publish(tmp: str | os.PathLike, path: str | os.PathLike) -> Path:
    """fsync a finished temporary file and rename it to ``path`` (readers see all of it or none)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return Path(path)


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write a whole file under a temporary name, fsync it, then rename it into place."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as f:
            f.write(payload)
        return publish(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_if_changed(path: str | os.PathLike, data: bytes | str) -> bool:
    """Write ``data`` atomically unless the file already holds exactly these bytes: then it is left
    alone, so its mtime and inode (which caches and build tools look at) stay. Whether it wrote."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if Path(path).read_bytes() == payload:
            return False
    except OSError:
        pass
    write_atomic(path, payload)
    return True


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2) -> Path:
    """Atomically write ``obj`` as UTF-8 JSON (newline-terminated)."""
    return write_atomic(path, json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + "\n")


def jsonl_text(rows: Iterable[Any]) -> str:
    """JSON Lines text: one compact UTF-8 JSON value per line, newline-terminated."""
    return "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows)


def write_jsonl(path: str | os.PathLike, rows: Iterable[Any]) -> Path:
    """Atomically write one JSON value per line."""
    return write_atomic(path, jsonl_text(rows))


def numbered_jsonl(path: str | os.PathLike, *, skip_invalid: bool = False,
                   error: type[ValueError] = ValueError) -> list[tuple[int, Any]]:
    """(line number, JSON value) of every line of a JSON Lines file, blank lines skipped.

    A malformed line raises ``error`` (a ValueError subclass) naming file and line, unless
    ``skip_invalid``: then it is dropped, as an append-only log must tolerate a torn last line.
    A byte-order mark opening the file is skipped, as for CSV.
    """
    rows = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                rows.append((lineno, json.loads(raw.decode("utf-8-sig" if lineno == 1 else "utf-8"))))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                if skip_invalid:
                    continue
                why = e.msg if isinstance(e, json.JSONDecodeError) else "not UTF-8 text"
                raise error(f"{path}: line {lineno} is not valid JSON ({why})") from None
    return rows


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value of a file. A missing file raises FileNotFoundError; one that cannot be read,
    is not UTF-8 or not JSON raises ValueError whose text is the reason in one line."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(str(exc).splitlines()[0]) from None


def json_or_lines(text: str) -> tuple[Any, str]:
    """``(value, "json")`` for a JSON text, else ``(values, "jsonl")``, one value per non-blank line
    (JSON Lines); a text that is neither raises the lines' json.JSONDecodeError."""
    try:
        return json.loads(text), "json"
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()], "jsonl"


def read_jsonl(path: str | os.PathLike, *, skip_invalid: bool = False,
               error: type[ValueError] = ValueError) -> list[Any]:
    """Every JSON value of a JSON Lines file (see numbered_jsonl)."""
    return [row for _, row in numbered_jsonl(path, skip_invalid=skip_invalid, error=error)]


def remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` and its sub-folders when no file is in them (a refused run leaves no output)."""
    if folder.is_dir() and not any(p.is_file() or p.is_symlink() for p in folder.rglob("*")):
        for sub in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            sub.rmdir()
        folder.rmdir()
