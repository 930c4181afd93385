"""Dataset readers: MSR-VTT, YouCook2 and the generic CSV/JSONL, all yielding :class:`Item` lists.

A reader only parses annotations; it never opens a video. A video file that does not exist
still becomes an item (its path is kept), so the builder can record it as a failure.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .annotations import (DatasetFormatError, caption_field, check_segment, checked_object, group_items,
                          load_json, read_csv, read_jsonl_rows, require_columns, seconds, text_field)
from .items import Item

VIDEO_EXTS = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")
MSRVTT_JSON_NAMES = ("MSRVTT_data.json", "msrvtt_data.json", "train_val_videodatainfo.json",
                     "test_videodatainfo.json")
MSRVTT_VIDEO_DIRS = ("videos/all", "MSRVTT_Videos", "videos", "TrainValVideo", "TestVideo", ".")
YOUCOOK_VIDEO_DIRS = ("raw_videos", "videos", ".")
GENERIC_COLUMNS = ("video_id", "video_path", "caption")
GENERIC_REQUIRED = ("video_id", "caption")


def _find_video(dirs: Iterable[Path], video_id: str) -> str:
    """The first existing ``<dir>/<video_id><ext>``; else the .mp4 path in the first dir."""
    dirs = list(dirs)
    for d in dirs:
        for ext in VIDEO_EXTS:
            p = d / f"{video_id}{ext}"
            if p.is_file():
                return str(p)
    return str(dirs[0] / f"{video_id}.mp4")


def _video_dirs(root: Path, candidates: Iterable[str], videos: str | os.PathLike | None) -> list[Path]:
    if videos is not None:
        return [Path(videos)]
    found = [root / c for c in candidates if (root / c).is_dir()]
    return found or [root]



# ------------------------------------------------------------------------------------ MSR-VTT
def read_msrvtt(path: str | os.PathLike, videos: str | os.PathLike | None = None) -> list[Item]:
    """MSR-VTT: a folder, an ``MSRVTT_data.json``-style JSON or a ``*JSFUSION*.csv`` file."""
    path = Path(path)
    if path.is_dir():
        ann = _msrvtt_annotation(path)
        root = path
    else:
        ann, root = path, path.parent
    dirs = _video_dirs(root, MSRVTT_VIDEO_DIRS, videos)
    if ann.suffix.lower() == ".csv":
        rows = read_csv(ann)
        require_columns(rows, ("video_id", "sentence"), ann)

        def csv_row(n: int, r: Mapping[str, str]) -> tuple:
            vid = text_field(r["video_id"], "video_id", f"{ann}:{n}")
            return (f"{ann}:{n}", vid, vid, _find_video(dirs, vid), None, None, None,
                    {k: r[k] for k in ("key", "vid_key") if k in r},
                    caption_field(r["sentence"], f"{ann}:{n}", "sentence"))
        return group_items(csv_row(n, r) for n, r in enumerate(rows, 2))
    data = load_json(ann)
    if not (isinstance(data, dict) and isinstance(data.get("videos"), list)
            and isinstance(data.get("sentences"), list)):
        raise DatasetFormatError(f"{ann}: expected an MSR-VTT JSON with 'videos' and 'sentences' lists")
    caps: dict[str, list[tuple[str, str]]] = {}          # video_id -> [(where, caption)]
    listed: dict[str, str] = {}                           # video_id -> where its entry is
    meta: dict[str, dict[str, Any]] = {}
    for j, v in enumerate(data["videos"]):
        where = f"{ann}: videos[{j}]"
        vid = text_field(checked_object(v, ("video_id",), where)["video_id"], "video_id", where)
        caps.setdefault(vid, [])
        listed.setdefault(vid, where)
        meta[vid] = {k: v[k] for k in ("split", "category", "url") if k in v}
    for j, sent in enumerate(data["sentences"]):
        where = f"{ann}: sentences[{j}]"
        checked_object(sent, ("video_id", "caption"), where)
        caption = caption_field(sent["caption"], where)
        caps.setdefault(text_field(sent["video_id"], "video_id", where), []).append((where, caption))
    return group_items((where, v, v, _find_video(dirs, v), None, None, None, meta.get(v, {}), c)
                  for v in caps for where, c in (caps[v] or [(listed[v], "")]))


def _msrvtt_annotation(root: Path) -> Path:
    for name in MSRVTT_JSON_NAMES:
        for p in (root / name, root / "annotation" / name, root / "annotations" / name):
            if p.is_file():
                return p
    csvs = sorted(root.glob("*JSFUSION*.csv")) + sorted(root.glob("*/*JSFUSION*.csv"))
    if csvs:
        return csvs[0]
    raise DatasetFormatError(f"{root}: no MSR-VTT annotation found; expected one of "
                             f"{', '.join(MSRVTT_JSON_NAMES)} or an MSRVTT_JSFUSION_*.csv")


# ----------------------------------------------------------------------------------- YouCook2
def read_youcook2(path: str | os.PathLike, videos: str | os.PathLike | None = None,
                  subsets: Iterable[str] | None = None) -> list[Item]:
    """YouCook2 segments from a ``youcookii_annotations*.json`` file (or a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        found = sorted(path.glob("youcookii_annotations*.json")) + sorted(
            path.glob("*/youcookii_annotations*.json"))
        if not found:
            raise DatasetFormatError(f"{path}: no youcookii_annotations*.json found")
        path = found[0]
    data = load_json(path)
    if not (isinstance(data, dict) and isinstance(data.get("database"), dict)):
        raise DatasetFormatError(f"{path}: expected a YouCook2 JSON with a 'database' mapping")
    dirs = _video_dirs(path.parent, YOUCOOK_VIDEO_DIRS, videos)
    wanted = set(subsets) if subsets is not None else None
    rows = []
    for vid, entry in data["database"].items():
        checked_object(entry, (), f"{path}: database[{vid!r}]")
        subset = entry.get("subset", "")
        if wanted is not None and subset not in wanted:
            continue
        sub_dirs = [d / subset / str(entry.get("recipe_type", "")) for d in dirs] + dirs
        video = _find_video(sub_dirs, vid)
        meta = {"subset": subset, "recipe_type": entry.get("recipe_type"),
                "duration": entry.get("duration")}
        for j, seg in enumerate(entry.get("annotations", [])):
            where = f"{path}: database[{vid!r}].annotations[{j}]"
            bounds = checked_object(seg, ("segment",), where)["segment"]
            if not (isinstance(bounds, list) and len(bounds) == 2):
                raise DatasetFormatError(f"{where}: 'segment' must be [start, end] in seconds; got {bounds!r}")
            start, end = (seconds(x, "segment", where) for x in bounds)
            if start is None or end is None:
                raise DatasetFormatError(f"{where}: 'segment' must be [start, end] in seconds; got {bounds!r}")
            check_segment(start, end, where)
            rows.append((where, f"{vid}_{seg.get('id', len(rows))}", vid, video, start, end, vid,
                         dict(meta, segment_id=seg.get("id")), seg.get("sentence", "")))
    return group_items(rows)


# ------------------------------------------------------------------------------------ generic
def read_generic(path: str | os.PathLike) -> list[Item]:
    """The generic caption file (CSV or JSONL): ``video_id, video_path, caption[, start, end]``.

    Rows with the same video (and segment) are merged into one item with several captions;
    relative video paths are resolved against the file's folder. ``video_path`` may be absent
    for caption-only use, and an ``item_id`` or ``group`` column is kept when present.
    """
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = read_jsonl_rows(path)
    else:
        table = read_csv(path)
        require_columns(table, GENERIC_REQUIRED, path)            # a column missing from the header, once
        rows = list(enumerate(table, 2))
    if not rows:
        raise DatasetFormatError(f"{path}: no rows")
    with_video = [n for n, r in rows if isinstance(r, Mapping) and r.get("video_path") not in (None, "")]

    def one(n: int, r: Any) -> tuple:
        where = f"{path}:{n}"
        if not isinstance(r, Mapping):
            raise DatasetFormatError(f"{where}: expected an object with {', '.join(GENERIC_COLUMNS)}; "
                                     f"got {type(r).__name__} {r!r:.60}")
        missing = [c for c in GENERIC_REQUIRED if c not in r]
        if missing:
            raise DatasetFormatError(f"{where}: missing column(s) {', '.join(map(repr, missing))}; "
                                     f"expected {', '.join(GENERIC_COLUMNS)}")
        vid = text_field(r["video_id"], "video_id", where)
        caption = caption_field(r["caption"], where)
        start, end = seconds(r.get("start"), "start", where), seconds(r.get("end"), "end", where)
        check_segment(start, end, where)
        segment = f"_{start or 0:g}-{'end' if end is None else format(end, 'g')}"
        item_id = str(r.get("item_id") or (vid if start is None and end is None else vid + segment))
        raw = r.get("video_path")
        if raw in (None, "") and with_video:
            raise DatasetFormatError(f"{where}: 'video_path' is {'empty' if raw == '' else 'missing'}, but "
                                     f"{path}:{with_video[0]} has one; give every row its video or none")
        if raw is not None and not isinstance(raw, str):
            raise DatasetFormatError(f"{where}: 'video_path' must be a string; got {raw!r:.60}")
        raw = raw or ""
        video = str(path.parent / raw) if raw and not os.path.isabs(raw) else raw
        return where, item_id, vid, video, start, end, r.get("group") or None, {}, caption

    return group_items(one(n, r) for n, r in rows)


# --------------------------------------------------------------------------------- inference
READERS: dict[str, Callable[..., list[Item]]] = {
    "msrvtt": read_msrvtt, "youcook2": read_youcook2, "generic": read_generic}


def infer_reader(path: str | os.PathLike) -> str:
    """The reader name for a dataset path, from file names and a look at the content."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"dataset path {str(p)!r} does not exist")
    if p.is_dir():
        if any(p.glob("youcookii_annotations*.json")) or any(p.glob("*/youcookii_annotations*.json")):
            return "youcook2"
        try:
            _msrvtt_annotation(p)
            return "msrvtt"
        except DatasetFormatError:
            pass
        raise DatasetFormatError(f"{p}: cannot tell the dataset type; pass --reader "
                                 f"({'|'.join(READERS)}) or point at the annotation file")
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "generic"
    if suffix == ".csv":
        try:
            with open(p, newline="", encoding="utf-8-sig") as f:
                header = [h.strip() for h in next(csv.reader(f), [])]
        except UnicodeDecodeError as e:
            raise DatasetFormatError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start}); "
                                     "expected a UTF-8 file") from None
        except csv.Error as e:
            raise DatasetFormatError(f"{p}:1: not valid CSV ({e})") from None
        return "msrvtt" if "sentence" in header and "video_id" in header else "generic"
    if suffix == ".json":
        data = load_json(p)
        if isinstance(data, dict) and "database" in data:
            return "youcook2"
        if isinstance(data, dict) and "videos" in data and "sentences" in data:
            return "msrvtt"
    raise DatasetFormatError(f"{p}: cannot tell the dataset type; expected an MSR-VTT JSON/CSV, "
                             "a youcookii_annotations JSON, or a generic .csv/.jsonl")


def read_dataset(path: str | os.PathLike, reader: str | None = None, **options: Any) -> list[Item]:
    """Items of a dataset; the reader ('msrvtt', 'youcook2', 'generic') is inferred when None."""
    name = reader or infer_reader(path)
    if name not in READERS:
        raise ValueError(f"unknown reader {name!r}; expected one of {', '.join(READERS)}")
    items = READERS[name](path, **options)
    seen: set[str] = set()
    for it in items:
        if it.item_id in seen:
            raise DatasetFormatError(f"{path}: item id {it.item_id!r} appears twice")
        seen.add(it.item_id)
    return items
