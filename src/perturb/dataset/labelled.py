"""Labelled dataset readers for classification: a folder per class, a ``path,label[,start,end]``
CSV or JSONL file, and Kinetics' annotation CSV beside its videos, all yielding
:class:`LabelledItem` lists.

Like the retrieval readers, a reader never opens an image or a video; every problem with a row
is a one-line :class:`DatasetFormatError` naming the file, the row and what was expected.
"""
from __future__ import annotations

import csv
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .annotations import (DatasetFormatError, check_segment, checked_object, first_few, read_csv, read_jsonl_rows,
                          require_columns, seconds, text_field)
from .items import LabelledItem
from .readers import VIDEO_EXTS

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".webp")       # any case: ImageNet's are .JPEG
LABEL_COLUMNS = ("path", "label")
KINETICS_COLUMNS = ("label", "youtube_id", "time_start", "time_end", "split")
MISSING = ("error", "skip")
Note = Callable[[str], None]


def warn_note(line: str) -> None:
    """The default for a reader's note (rows left out): a UserWarning."""
    warnings.warn(line, stacklevel=3)


def media_kind(path: str | os.PathLike) -> str | None:
    """'image' or 'video' from the file suffix (any case), None for anything else."""
    suffix = Path(path).suffix.lower()
    return "image" if suffix in IMAGE_EXTS else "video" if suffix in VIDEO_EXTS else None


def expected_media() -> str:
    return f"an image ({' '.join(IMAGE_EXTS)}) or a video ({' '.join(VIDEO_EXTS)})"


def check_missing(missing: str) -> None:
    if missing not in MISSING:
        raise ValueError(f"missing={missing!r}; expected one of {', '.join(MISSING)}")


def label_field(value: Any, where: str) -> str:
    """A class name: a non-empty string (a JSON number is taken as written), trimmed."""
    label = text_field(value, "label", where).strip()
    if not label:
        raise DatasetFormatError(f"{where}: 'label' is blank; every row needs a class name")
    return label


def csv_header(path: Path) -> list[str]:
    """The column names of a CSV file's first line ([] for an empty file)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return [h.strip() for h in next(csv.reader(f), [])]
    except (UnicodeDecodeError, csv.Error):
        return []                                         # read_csv names the fault


def csv_rows(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a CSV file whose header must name ``columns`` (checked before any row)."""
    header = csv_header(path)
    if header:
        require_columns([dict.fromkeys(header)], columns, path)
    rows = read_csv(path)
    require_columns(rows, columns, path)
    return rows


def unique_ids(rows: Iterable[tuple[str, LabelledItem]]) -> list[LabelledItem]:
    """The items of (where, item) rows; an item id given twice names both rows."""
    seen: dict[str, str] = {}
    items = []
    for where, item in rows:
        first = seen.setdefault(item.item_id, where)
        if first != where:
            raise DatasetFormatError(f"{where}: item {item.item_id!r} appears twice (first at {first}); "
                                     "expected each file (and segment) once")
        items.append(item)
    return items


# ------------------------------------------------------------------------------- class folders
def read_class_folders(root: str | os.PathLike) -> list[LabelledItem]:
    """``root/<class>/<file>`` (ImageNet's and UCF101's layout): classes and files sorted by name,
    the folder's name the label, hidden entries skipped."""
    root = Path(root)
    if not root.is_dir():
        raise DatasetFormatError(f"{root}: not a folder; expected root/<class>/<file>")
    classes = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.name)
    if not classes:
        raise DatasetFormatError(f"{root}: no class folders; expected root/<class>/<file> "
                                 "(ImageNet's and UCF101's layout)")
    items = []
    for folder in classes:
        files = sorted((p for p in folder.iterdir() if not p.name.startswith(".")), key=lambda p: p.name)
        if not files:
            raise DatasetFormatError(f"{folder}: empty class folder; expected {expected_media()} in it")
        for f in files:
            kind = media_kind(f)
            if kind is None or not f.is_file():
                raise DatasetFormatError(f"{f}: expected {expected_media()} directly in the class folder")
            items.append(LabelledItem(f"{folder.name}/{f.name}", str(f), folder.name, kind))
    return items


# ------------------------------------------------------------------------------ CSV and JSONL
def read_label_file(path: str | os.PathLike, videos: str | os.PathLike | None = None) -> list[LabelledItem]:
    """A ``.csv`` (header required) or ``.jsonl`` of ``path, label[, start, end]`` (an optional
    ``id`` column names the item). Relative paths are resolved against ``videos`` when given,
    else the file's folder; start/end (seconds, a segment of a video) may be given alone."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = read_jsonl_rows(path)
    else:
        rows = list(enumerate(csv_rows(path, LABEL_COLUMNS), 2))
    if not rows:
        raise DatasetFormatError(f"{path}: no rows")
    base = Path(videos) if videos is not None else path.parent

    def one(n: int, r: Any) -> tuple[str, LabelledItem]:
        where = f"{path}:{n}"
        r = checked_object(r, LABEL_COLUMNS, where, "path, label[, start, end]")
        rel = r["path"]
        if not isinstance(rel, str) or not rel.strip():
            raise DatasetFormatError(f"{where}: 'path' must be a file path; got {rel!r:.60}")
        label = label_field(r["label"], where)
        kind = media_kind(rel)
        if kind is None:
            raise DatasetFormatError(f"{where}: {rel!r} is neither; expected {expected_media()}")
        start, end = seconds(r.get("start"), "start", where), seconds(r.get("end"), "end", where)
        check_segment(start, end, where)
        segment = start is not None or end is not None
        if segment and kind == "image":
            raise DatasetFormatError(f"{where}: {rel!r} is an image; start/end only apply to a video")
        item_id = str(r.get("id") or (f"{rel}_{start or 0:g}-{'end' if end is None else format(end, 'g')}"
                                      if segment else rel))
        full = rel if os.path.isabs(rel) else str(base / rel)
        return where, LabelledItem(item_id, full, label, kind, start, end)

    return unique_ids(one(n, r) for n, r in rows)


# -------------------------------------------------------------------------------- Kinetics
def read_kinetics(path: str | os.PathLike, videos: str | os.PathLike | None = None,
                  missing: str = "error", note: Note = warn_note) -> list[LabelledItem]:
    """Kinetics' annotation CSV (``label, youtube_id, time_start, time_end, split``) and its videos.

    A row's video is ``<youtube_id>_<time_start:06d>_<time_end:06d>.<ext>`` (the trimmed clip the
    download scripts write; the whole file is the item) or ``<youtube_id>.<ext>`` (the full video;
    the item is the row's segment), anywhere under ``videos`` (default: ``videos/``, or a folder
    named after the CSV (``val/`` for ``val.csv``) beside it or beside its folder, or the CSV's
    folder). Rows without a video are an error listing the first few, or with ``missing="skip"``
    are left out with one ``note`` line.
    """
    check_missing(missing)
    path = Path(path)
    rows = csv_rows(path, KINETICS_COLUMNS)
    folder = kinetics_videos(path, videos)
    index = video_index(folder)
    found, absent = [], []
    for n, r in enumerate(rows, 2):
        where = f"{path}:{n}"
        label = label_field(r["label"], where)
        yid = text_field(r["youtube_id"], "youtube_id", where)
        start, end = seconds(r["time_start"], "time_start", where), seconds(r["time_end"], "time_end", where)
        if start is None or end is None:
            raise DatasetFormatError(f"{where}: time_start and time_end are required; got "
                                     f"{r['time_start']!r}, {r['time_end']!r}")
        check_segment(start, end, where)
        clip = f"{yid}_{int(start):06d}_{int(end):06d}" if start.is_integer() and end.is_integer() else None
        trimmed = lookup(index, clip, where) if clip else None
        video = trimmed or lookup(index, yid, where)
        if not video:
            absent.append(f"line {n} ({clip or yid})")
            continue
        meta = {"youtube_id": yid, "split": r["split"], "time_start": start, "time_end": end}
        found.append((where, LabelledItem(clip or f"{yid}_{start:g}-{end:g}", video, label, "video",
                                          None if trimmed else start, None if trimmed else end, meta)))
    if absent:
        what = (f"{path}: {len(absent)} of {len(rows)} rows have no video under {folder} (looked for "
                f"<youtube_id>_<start:06d>_<end:06d> or <youtube_id>, {'/'.join(VIDEO_EXTS)}): "
                f"{first_few(absent)}")
        if missing == "error" or not found:
            raise DatasetFormatError(what + ("; no row has its video" if not found else
                                             "; pass missing='skip' to leave them out"))
        note(what.replace(" rows have", " rows are left out: they have", 1))
    return unique_ids(found)


def kinetics_videos(path: Path, videos: str | os.PathLike | None) -> Path:
    """The folder the Kinetics videos are searched under."""
    if videos is not None:
        if not Path(videos).is_dir():
            raise DatasetFormatError(f"videos folder {str(videos)!r} does not exist; expected the "
                                     "folder holding the Kinetics clips")
        return Path(videos)
    here = path.parent
    candidates = (here / "videos", here / path.stem, here.parent / path.stem)
    return next((c for c in candidates if c.is_dir()), here)


def video_index(folder: Path) -> dict[str, list[Path]]:
    """Video files under ``folder`` (at any depth) by file name without its suffix."""
    index: dict[str, list[Path]] = {}
    for p in sorted(folder.rglob("*")):
        if p.suffix.lower() in VIDEO_EXTS and p.is_file():
            index.setdefault(p.stem, []).append(p)
    return index


def lookup(index: Mapping[str, list[Path]], stem: str, where: str) -> str | None:
    """The one video named ``stem``; two copies are an error naming both."""
    paths = index.get(stem, [])
    if len(paths) > 1:
        raise DatasetFormatError(f"{where}: video {stem!r} is found {len(paths)} times ({first_few(paths, 2)}); "
                                 "expected one copy")
    return str(paths[0]) if paths else None


# --------------------------------------------------------------------------------- dispatch
READERS: dict[str, Callable[..., list[LabelledItem]]] = {
    "folder": read_class_folders, "csv": read_label_file, "jsonl": read_label_file, "kinetics": read_kinetics}


def infer_labelled_reader(path: str | os.PathLike) -> str:
    """The labelled reader for a path: a folder, a ``.jsonl``, or a ``.csv`` whose header tells a
    Kinetics annotation file (``youtube_id``) from a ``path,label`` list."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"dataset path {str(p)!r} does not exist")
    if p.is_dir():
        return "folder"
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "kinetics" if "youtube_id" in csv_header(p) else "csv"
    raise DatasetFormatError(f"{p}: cannot tell the labelled dataset type; expected a class folder, a "
                             f".csv or a .jsonl, or pass reader= ({'|'.join(READERS)})")


def read_labelled(path: str | os.PathLike, reader: str | None = None, videos: str | os.PathLike | None = None,
                  missing: str = "error", note: Note = warn_note) -> list[LabelledItem]:
    """Items of a labelled dataset; the reader ('folder', 'csv', 'jsonl', 'kinetics') is inferred
    when None. ``videos``: where relative paths (csv, jsonl) or the clips (kinetics) are;
    ``missing``/``note``: the Kinetics rows without a video (see :func:`read_kinetics`)."""
    name = reader or infer_labelled_reader(path)
    if name not in READERS:
        raise ValueError(f"unknown labelled reader {name!r}; expected one of {', '.join(READERS)}")
    check_missing(missing)
    if name == "kinetics":
        return read_kinetics(path, videos, missing, note)
    if missing != "error":
        raise ValueError(f"missing={missing!r} applies to the kinetics reader only, not {name!r}")
    if name == "folder":
        if videos is not None:
            raise ValueError("the folder reader takes no videos folder: the files are in root/<class>/")
        return read_class_folders(path)
    return read_label_file(path, videos)
