"""Output files in the making: a hidden temporary name, then fsync and rename when complete.

A build that is killed leaves only temporaries (names containing :data:`TMP_MARK`), which the
next run sweeps; a finished name always holds a whole file.
"""
from __future__ import annotations

import uuid
from pathlib import Path

from ..fileio import publish, sha256_file

TMP_MARK = ".part-"   # temporary outputs are hidden files containing this mark


def temp_path(final: Path) -> Path:
    """A unique hidden temporary name next to ``final``."""
    return final.with_name(f".{final.name}{TMP_MARK}{uuid.uuid4().hex[:12]}")


def commit(tmp: Path, final: Path) -> tuple[str, int]:
    """fsync a finished temporary file, rename it into place; returns (sha256, bytes)."""
    digest = sha256_file(tmp)
    size = tmp.stat().st_size
    publish(tmp, final)
    return digest, size


def discard(path: Path) -> None:
    """Delete an unfinished output and the raw side file a .npz sink keeps."""
    for p in (path, Path(f"{path}.raw")):
        p.unlink(missing_ok=True)


def error_text(exc: BaseException) -> str:
    """How a failure is recorded in the manifest: ``Type: message``."""
    return f"{type(exc).__name__}: {exc}"
