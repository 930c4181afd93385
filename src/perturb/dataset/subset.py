"""A subset of a labelled dataset named by a file of file names (RobustBench's 5,000-image ImageNet
list: ``n01440764/ILSVRC2012_val_00000293.JPEG`` a line)."""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Iterable

from .annotations import DatasetFormatError, first_few, read_lines
from .items import LabelledItem
from .labelled import Note, check_missing, warn_note


def read_subset(path: str | os.PathLike) -> list[tuple[int, tuple[str, ...]]]:
    """(line number, path parts) of each non-blank line: a relative path or a bare file name."""
    path = Path(path)
    lines = read_lines(path)
    names = [(n, PurePosixPath(line.strip().replace("\\", "/")).parts) for n, line in enumerate(lines, 1)
             if line.strip()]
    names = [(n, parts[1:] if parts[0] == "/" else parts) for n, parts in names]
    if not names:
        raise DatasetFormatError(f"{path}: no file names; expected one relative path or file name a line")
    return names


def keep_subset(items: Iterable[LabelledItem], path: str | os.PathLike, missing: str = "error",
                note: Note = warn_note) -> list[LabelledItem]:
    """The items whose file a line of ``path`` names, in dataset order.

    A line names a file when it is the file's name or the end of its path (``class/file.JPEG``);
    every segment of a named video is kept. A line naming two different files is an error. Lines
    naming no file are an error counting them (``missing="skip"``: one ``note`` line instead);
    a file naming no item at all is always an error.
    """
    check_missing(missing)
    items = list(items)
    by_name: dict[str, list[LabelledItem]] = {}
    for it in items:
        by_name.setdefault(Path(it.path).name, []).append(it)
    names = read_subset(path)
    kept: set[str] = set()
    absent = []
    for n, parts in names:
        hits = [it for it in by_name.get(parts[-1], []) if Path(it.path).parts[-len(parts):] == parts]
        files = sorted({it.path for it in hits})
        if len(files) > 1:
            raise DatasetFormatError(f"{path}:{n}: {'/'.join(parts)!r} names {len(files)} files "
                                     f"({first_few(files, 2)}); expected a path that names one")
        if not hits:
            absent.append(f"line {n} ({'/'.join(parts)})")
        kept.update(it.item_id for it in hits)
    if absent:
        what = f"{path}: {len(absent)} of {len(names)} names are not files of the dataset: {first_few(absent)}"
        if not kept:
            example = "/".join(Path(items[0].path).parts[-2:]) if items else "(no items)"
            raise DatasetFormatError(f"{path}: none of its {len(names)} names is a file of the dataset "
                                     f"({len(items)} items): {first_few(absent)}; expected relative paths "
                                     f"or file names such as {example!r}")
        if missing == "error":
            raise DatasetFormatError(what + f"; pass missing='skip' to keep the {len(names) - len(absent)} found")
        note(what.replace(" names are not", " names are left out: they are not", 1))
    return [it for it in items if it.item_id in kept]
