"""Dataset readers: MSR-VTT, YouCook2 and the generic CSV/JSONL, all yielding :class:`Item` lists.

A reader only parses annotations; it never opens a video. A video file that does not exist
still becomes an item (its path is kept), so the builder can record it as a failure.
"""
from __future__ import annotations

import csv
import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..fileio import read_jsonl
from .items import Item

VIDEO_EXTS = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")
MSRVTT_JSON_NAMES = ("MSRVTT_data.json", "msrvtt_data.json", "train_val_videodatainfo.json",
                     "test_videodatainfo.json")
MSRVTT_VIDEO_DIRS = ("videos/all", "MSRVTT_Videos", "videos", "TrainValVideo", "TestVideo", ".")
YOUCOOK_VIDEO_DIRS = ("raw_videos", "videos", ".")
GENERIC_COLUMNS = ("video_id", "video_path", "caption")


class DatasetFormatError(ValueError):
    """An annotation file that does not match the layout its reader expects."""


# ------------------------------------------------------------------------------ small helpers
def _load_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DatasetFormatError(f"{path}: not valid JSON ({e})") from e


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    return [{(k or "").strip(): (v or "").strip() for k, v in r.items()} for r in rows]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path, error=DatasetFormatError)


def _require(rows: list[Mapping[str, Any]], columns: Iterable[str], path: Path) -> None:
    if not rows:
        raise DatasetFormatError(f"{path}: no rows")
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise DatasetFormatError(f"{path}: missing column(s) {missing}; expected "
                                 f"{', '.join(columns)} (got {', '.join(map(str, rows[0]))})")


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


def _group(rows: Iterable[tuple[Any, ...]]) -> list[Item]:
    """Merge (item_id, video_id, path, start, end, group, meta, caption) rows into Items."""
    merged: "OrderedDict[str, dict[str, Any]]" = OrderedDict()
    for item_id, video_id, path, start, end, group, meta, caption in rows:
        entry = merged.setdefault(item_id, dict(video_id=video_id, path=path, start=start, end=end,
                                                group=group, meta=meta, captions=[]))
        if caption:
            entry["captions"].append(caption)
    return [Item(item_id=k, video_id=e["video_id"], video_path=e["path"],
                 captions=tuple(e["captions"]), start=e["start"], end=e["end"],
                 group=e["group"], meta=e["meta"]) for k, e in merged.items()]


def _num(value: Any, what: str, where: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise DatasetFormatError(f"{where}: {what} must be a number of seconds; got {value!r}") from None


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
        rows = _read_csv(ann)
        _require(rows, ("video_id", "sentence"), ann)
        return _group((r["video_id"], r["video_id"], _find_video(dirs, r["video_id"]), None, None,
                       None, {k: r[k] for k in ("key", "vid_key") if k in r}, r["sentence"])
                      for r in rows)
    data = _load_json(ann)
    if not (isinstance(data, dict) and "videos" in data and "sentences" in data):
        raise DatasetFormatError(f"{ann}: expected an MSR-VTT JSON with 'videos' and 'sentences'")
    order = [v["video_id"] for v in data["videos"]]
    meta = {v["video_id"]: {k: v[k] for k in ("split", "category", "url") if k in v}
            for v in data["videos"]}
    caps: dict[str, list[str]] = {v: [] for v in order}
    for s in data["sentences"]:
        caps.setdefault(s["video_id"], []).append(s["caption"])
    return _group((v, v, _find_video(dirs, v), None, None, None, meta.get(v, {}), c)
                  for v in caps for c in (caps[v] or [""]))


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
    data = _load_json(path)
    if not (isinstance(data, dict) and isinstance(data.get("database"), dict)):
        raise DatasetFormatError(f"{path}: expected a YouCook2 JSON with a 'database' mapping")
    dirs = _video_dirs(path.parent, YOUCOOK_VIDEO_DIRS, videos)
    wanted = set(subsets) if subsets is not None else None
    rows = []
    for vid, entry in data["database"].items():
        subset = entry.get("subset", "")
        if wanted is not None and subset not in wanted:
            continue
        sub_dirs = [d / subset / str(entry.get("recipe_type", "")) for d in dirs] + dirs
        video = _find_video(sub_dirs, vid)
        meta = {"subset": subset, "recipe_type": entry.get("recipe_type"),
                "duration": entry.get("duration")}
        for seg in entry.get("annotations", []):
            start, end = (float(x) for x in seg["segment"])
            rows.append((f"{vid}_{seg.get('id', len(rows))}", vid, video, start, end, vid,
                         dict(meta, segment_id=seg.get("id")), seg.get("sentence", "")))
    return _group(rows)


# ------------------------------------------------------------------------------------ generic
def read_generic(path: str | os.PathLike) -> list[Item]:
    """The generic caption file (CSV or JSONL): ``video_id, video_path, caption[, start, end]``.

    Rows with the same video (and segment) are merged into one item with several captions;
    relative video paths are resolved against the file's folder. ``video_path`` may be absent
    for caption-only use, and an ``item_id`` or ``group`` column is kept when present.
    """
    path = Path(path)
    rows = _read_jsonl(path) if path.suffix.lower() in (".jsonl", ".ndjson") else _read_csv(path)
    _require(rows, ("video_id", "caption"), path)

    def one(n: int, r: Mapping[str, Any]) -> tuple:
        where = f"{path}:{n}"
        vid = str(r["video_id"])
        start, end = _num(r.get("start"), "start", where), _num(r.get("end"), "end", where)
        segment = f"_{start or 0:g}-{'end' if end is None else format(end, 'g')}"
        item_id = str(r.get("item_id") or (vid if start is None and end is None else vid + segment))
        raw = str(r.get("video_path") or "")
        video = str(path.parent / raw) if raw and not os.path.isabs(raw) else raw
        return item_id, vid, video, start, end, r.get("group") or None, {}, str(r["caption"])

    return _group(one(n, r) for n, r in enumerate(rows, 2))


read_captions = read_generic

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
        with open(p, newline="", encoding="utf-8-sig") as f:
            header = [h.strip() for h in next(csv.reader(f), [])]
        return "msrvtt" if "sentence" in header and "video_id" in header else "generic"
    if suffix == ".json":
        data = _load_json(p)
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
