"""A ``perturb build`` output read as the corrupted copy of a task's videos: which file holds each
video under each (op, severity), checked complete before anything is written, and a digest per variant.

A video is found by its file name's stem: the copy's item id (the ``video_id`` of the build's input
file) is the stem of the original video (``clips/red_1.mp4`` -> ``red_1``)."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..dataset.manifest import latest, read_rows
from ..errors import UsageError
from ..fileio import read_json


@dataclass(frozen=True)
class BuiltCopy:
    """The copy's root, its build seed, and (op ref, severity) -> item id -> (relative path, sha256)."""
    root: Path
    seed: int
    files: dict[tuple[str, int], dict[str, tuple[str, str]]]

    def variant_files(self, op: str, severity: int, stems: Iterable[str]) -> dict[str, Path]:
        """stem -> the absolute file of that video under (op, severity); what is missing is one line."""
        built = self.files.get((op, severity))
        if built is None:
            have = ", ".join(f"{o}@{s}" for o, s in sorted(self.files)) or "no video outputs"
            raise UsageError(f"the copy {self.root} has no {op} at severity {severity} (it has {have})")
        wanted = sorted(set(stems))
        missing = [s for s in wanted if s not in built or not (self.root / built[s][0]).is_file()]
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise UsageError(f"the copy {self.root} lacks video {missing[0]!r}{more} for {op} at severity "
                             f"{severity} (built with ok status for {len(built)} videos)")
        return {s: (self.root / built[s][0]).resolve() for s in wanted}

    def digest(self, op: str, severity: int, stems: Iterable[str]) -> str:
        """sha256 over the ``path sha256`` lines (sorted) of the files a variant reads."""
        built = self.files[(op, severity)]
        lines = sorted(f"{built[s][0]} {built[s][1]}\n" for s in set(stems))
        return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def read_copy(root: str | os.PathLike) -> BuiltCopy:
    """Read a ``perturb build`` output folder (its dataset.json and manifest.jsonl's ``ok`` video rows)."""
    root = Path(root).resolve()
    info_path = root / "dataset.json"
    try:
        info = read_json(info_path)
    except FileNotFoundError:
        raise UsageError(f"--copy {root}: not a perturb build output (no dataset.json)") from None
    except ValueError as exc:
        raise UsageError(f"--copy {root}: unreadable dataset.json ({exc})") from None
    if info.get("recipe"):
        raise UsageError(f"--copy {root}: a --recipe tree; build the task's videos with a plain perturb build")
    files: dict[tuple[str, int], dict[str, tuple[str, str]]] = {}
    for row in latest(read_rows(root / "manifest.jsonl")).values():
        if row.get("kind") == "video" and row.get("status") == "ok" and row.get("path"):
            files.setdefault((row["perturbation"], int(row["severity"])), {})[row["item_id"]] = \
                (row["path"], row.get("sha256") or "")
    return BuiltCopy(root, int(info.get("seed", 0)), files)
