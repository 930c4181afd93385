"""What every build shares to resume safely: the output folder's lock, the check that a recorded
output is still whole, and the sweep of temporaries a killed build left behind."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any, Iterable

from ..errors import PerturbError
from ..fileio import sha256_file
from .staging import TMP_MARK


class BuildConflictError(PerturbError, ValueError):
    """The output directory is busy, holds a build made with other settings, or holds the dataset
    where the build writes."""


def complete(row: dict[str, Any] | None, out: Path, verify: bool) -> bool:
    """Whether a recorded output is still whole: ok row, file present, same size and sha256."""
    if not row or row.get("status") != "ok":
        return False
    path = out / row["path"]
    try:
        if path.stat().st_size != row.get("bytes"):
            return False
    except FileNotFoundError:
        return False
    return not verify or sha256_file(path) == row.get("sha256")


def sweep_temporaries(out: Path, folders: Iterable[str] = ("videos", "captions")) -> int:
    """Delete temporary files a killed build or worker left behind under ``folders`` of ``out``
    (and ``out`` itself); returns how many. Run when a build starts and when it ends, so a
    finished tree holds only finished files."""
    n = 0
    for sub in folders:
        for p in (out / sub).rglob(f"*{TMP_MARK}*"):
            p.unlink(missing_ok=True)
            n += 1
    for p in out.glob(".*.tmp"):
        p.unlink(missing_ok=True)
        n += 1
    return n


class Lock:
    """An exclusive lock on an output directory (released by the OS if the build is killed)."""

    def __init__(self, out: Path) -> None:
        self.fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise BuildConflictError(f"another build is writing to {out} (locked {out / '.lock'})") from None

    def release(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
