"""Dataset readers: MSR-VTT, YouCook2 and the generic CSV/JSONL, all yielding :class:`Item` lists.

A reader only parses annotations; it never opens a video. A video file that does not exist
still becomes an item (its path is kept), so the builder can record it as a failure.
"""
from __future__ import annotations

import csv
import json
import math
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..fileio import numbered_jsonl
from .items import Item

VIDEO_EXTS = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")
MSRVTT_JSON_NAMES = ("MSRVTT_data.json", "msrvtt_data.json", "train_val_videodatainfo.json",
                     "test_videodatainfo.json")
MSRVTT_VIDEO_DIRS = ("videos/all", "MSRVTT_Videos", "videos", "TrainValVideo", "TestVideo", ".")
YOUCOOK_VIDEO_DIRS = ("raw_videos", "videos", ".")
GENERIC_COLUMNS = ("video_id", "video_path", "caption")
GENERIC_REQUIRED = ("video_id", "caption")


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
    """Rows of a CSV file with a header, strictly: every quote closed, every row as wide as the
    header, no field spanning lines (a quote left open swallows the rows after it), UTF-8."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f, strict=True)
            rows = []
            for r in reader:
                line = reader.line_num
                width = len(reader.fieldnames or [])
                if None in r:                  # DictReader files surplus values under the key None
                    raise DatasetFormatError(f"{path}: line {line} has {len(r) - 1 + len(r[None])} "
                                             f"values for {width} header columns")
                if None in r.values():         # ... and fills missing ones with None
                    raise DatasetFormatError(f"{path}: line {line} has {sum(v is not None for v in r.values())} "
                                             f"values for {width} header columns")
                if any("\n" in v or "\r" in v for v in r.values()):
                    raise DatasetFormatError(f"{path}: line {line}: a field spans several lines (a quote "
                                             "left open?); expected one row per line")
                rows.append({(k or "").strip(): v.strip() for k, v in r.items()})
    except csv.Error as e:
        raise DatasetFormatError(f"{path}: from line {reader.line_num + 1}: not valid CSV ({e}); "
                                 "expected every quote closed") from None
    except UnicodeDecodeError as e:
        raise DatasetFormatError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); "
                                 "expected a UTF-8 file") from None
    return rows


def _read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, value) of every non-blank line."""
    return numbered_jsonl(path, error=DatasetFormatError)


def _require(rows: list[Mapping[str, Any]], columns: Iterable[str], path: Path) -> None:
    if not rows:
        raise DatasetFormatError(f"{path}: no rows")
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise DatasetFormatError(f"{path}:1: the header lacks column(s) {', '.join(map(repr, missing))}; "
                                 f"expected {', '.join(columns)} (got {', '.join(map(str, rows[0]))})")


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


def _entry(value: Any, keys: Iterable[str], where: str) -> Mapping[str, Any]:
    """An annotation object that must hold ``keys``; DatasetFormatError naming where it is."""
    if not isinstance(value, Mapping):
        raise DatasetFormatError(f"{where}: expected an object; got {type(value).__name__} {value!r:.60}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise DatasetFormatError(f"{where}: missing {', '.join(map(repr, missing))}")
    return value


def _text(value: Any, column: str, where: str) -> str:
    """A non-empty id; JSON numbers are taken as written."""
    if value is None or value == "":
        raise DatasetFormatError(f"{where}: {column!r} is {'null' if value is None else 'empty'}; "
                                 f"every row needs a {column}")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DatasetFormatError(f"{where}: {column!r} must be a string; got {value!r:.60}")
    return str(value)


def _caption(value: Any, where: str, column: str = "caption") -> str:
    """A caption: a string with some text on one line."""
    if not isinstance(value, str):
        raise DatasetFormatError(f"{where}: {column!r} must be a string; got {value!r:.60}")
    if not value.strip():
        raise DatasetFormatError(f"{where}: {column!r} is empty; every row needs a caption")
    if "\n" in value or "\r" in value:
        raise DatasetFormatError(f"{where}: {column!r} spans several lines ({value!r:.60}); "
                                 "expected one line")
    return value


def _group(rows: Iterable[tuple[Any, ...]]) -> list[Item]:
    """Merge (where, item_id, video_id, path, start, end, group, meta, caption) rows into Items.

    Rows of one item may differ only in caption; one video_id must name one video file. A
    conflict is a DatasetFormatError naming both rows (``where``: file and row)."""
    merged: "OrderedDict[str, dict[str, Any]]" = OrderedDict()
    videos: dict[str, tuple[str, str]] = {}              # video_id -> (path, where first seen)
    for where, item_id, video_id, path, start, end, group, meta, caption in rows:
        first_path, first_where = videos.setdefault(video_id, (path, where))
        if path != first_path:
            raise DatasetFormatError(
                f"{where}: video_id {video_id!r} names video {path!r}, but {first_where} gave it "
                f"{first_path!r}; one video_id must name one video")
        entry = merged.setdefault(item_id, dict(video_id=video_id, path=path, start=start, end=end,
                                                group=group, meta=meta, captions=[], where=where))
        for field, value in (("video_id", video_id), ("start", start), ("end", end)):
            if entry[field] != value:
                raise DatasetFormatError(
                    f"{where}: item {item_id!r} has {field} {value!r}, but {entry['where']} gave it "
                    f"{entry[field]!r}; rows of one item may differ only in their caption")
        if caption:
            entry["captions"].append(caption)
    return [Item(item_id=k, video_id=e["video_id"], video_path=e["path"],
                 captions=tuple(e["captions"]), start=e["start"], end=e["end"],
                 group=e["group"], meta=e["meta"]) for k, e in merged.items()]


def _num(value: Any, what: str, where: str) -> float | None:
    """A time in seconds: a finite number >= 0, or None when absent."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise DatasetFormatError(f"{where}: {what} must be a finite number of seconds >= 0; got {value!r}")
    return number


def _segment(start: float | None, end: float | None, where: str) -> None:
    """A segment ends after it starts."""
    if end is not None and not end > (start or 0.0):
        raise DatasetFormatError(f"{where}: end ({end:g}) must be after start ({start or 0:g}); "
                                 "expected 0 <= start < end")


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

        def csv_row(n: int, r: Mapping[str, str]) -> tuple:
            vid = _text(r["video_id"], "video_id", f"{ann}:{n}")
            return (f"{ann}:{n}", vid, vid, _find_video(dirs, vid), None, None, None,
                    {k: r[k] for k in ("key", "vid_key") if k in r}, _caption(r["sentence"], f"{ann}:{n}", "sentence"))
        return _group(csv_row(n, r) for n, r in enumerate(rows, 2))
    data = _load_json(ann)
    if not (isinstance(data, dict) and isinstance(data.get("videos"), list)
            and isinstance(data.get("sentences"), list)):
        raise DatasetFormatError(f"{ann}: expected an MSR-VTT JSON with 'videos' and 'sentences' lists")
    caps: dict[str, list[tuple[str, str]]] = {}          # video_id -> [(where, caption)]
    listed: dict[str, str] = {}                           # video_id -> where its entry is
    meta: dict[str, dict[str, Any]] = {}
    for j, v in enumerate(data["videos"]):
        where = f"{ann}: videos[{j}]"
        vid = _text(_entry(v, ("video_id",), where)["video_id"], "video_id", where)
        caps.setdefault(vid, [])
        listed.setdefault(vid, where)
        meta[vid] = {k: v[k] for k in ("split", "category", "url") if k in v}
    for j, sent in enumerate(data["sentences"]):
        where = f"{ann}: sentences[{j}]"
        _entry(sent, ("video_id", "caption"), where)
        caption = _caption(sent["caption"], where)
        caps.setdefault(_text(sent["video_id"], "video_id", where), []).append((where, caption))
    return _group((where, v, v, _find_video(dirs, v), None, None, None, meta.get(v, {}), c)
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
    data = _load_json(path)
    if not (isinstance(data, dict) and isinstance(data.get("database"), dict)):
        raise DatasetFormatError(f"{path}: expected a YouCook2 JSON with a 'database' mapping")
    dirs = _video_dirs(path.parent, YOUCOOK_VIDEO_DIRS, videos)
    wanted = set(subsets) if subsets is not None else None
    rows = []
    for vid, entry in data["database"].items():
        _entry(entry, (), f"{path}: database[{vid!r}]")
        subset = entry.get("subset", "")
        if wanted is not None and subset not in wanted:
            continue
        sub_dirs = [d / subset / str(entry.get("recipe_type", "")) for d in dirs] + dirs
        video = _find_video(sub_dirs, vid)
        meta = {"subset": subset, "recipe_type": entry.get("recipe_type"),
                "duration": entry.get("duration")}
        for j, seg in enumerate(entry.get("annotations", [])):
            where = f"{path}: database[{vid!r}].annotations[{j}]"
            bounds = _entry(seg, ("segment",), where)["segment"]
            if not (isinstance(bounds, list) and len(bounds) == 2):
                raise DatasetFormatError(f"{where}: 'segment' must be [start, end] in seconds; got {bounds!r}")
            start, end = (_num(x, "segment", where) for x in bounds)
            if start is None or end is None:
                raise DatasetFormatError(f"{where}: 'segment' must be [start, end] in seconds; got {bounds!r}")
            _segment(start, end, where)
            rows.append((where, f"{vid}_{seg.get('id', len(rows))}", vid, video, start, end, vid,
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
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = _read_jsonl(path)
    else:
        table = _read_csv(path)
        _require(table, GENERIC_REQUIRED, path)            # a column missing from the header, once
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
        vid = _text(r["video_id"], "video_id", where)
        caption = _caption(r["caption"], where)
        start, end = _num(r.get("start"), "start", where), _num(r.get("end"), "end", where)
        _segment(start, end, where)
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

    return _group(one(n, r) for n, r in rows)


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
