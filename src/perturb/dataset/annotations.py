"""Strict parsing of annotation files for the dataset readers: JSON, CSV and JSONL rows, the
checked fields of a row (ids, captions, times), and rows merged into :class:`Item` lists.

Every problem is a :class:`DatasetFormatError` naming the file and the row.
"""
from __future__ import annotations

import csv
import json
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..fileio import numbered_jsonl
from .items import Item


class DatasetFormatError(ValueError):
    """An annotation file that does not match the layout its reader expects."""


def load_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DatasetFormatError(f"{path}: not valid JSON ({e})") from e


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV file with a header, strictly: every quote closed, every row as wide as the
    header, each column named once, no field spanning lines (a quote left open swallows the rows
    after it), UTF-8."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f, strict=True)
            names = [(h or "").strip() for h in reader.fieldnames or []]
            twice = [n for n in dict.fromkeys(names) if n and names.count(n) > 1]
            if twice:                          # a dict row would keep only the last of them
                raise DatasetFormatError(f"{path}:1: column {twice[0]!r} appears {names.count(twice[0])} "
                                         "times in the header; expected each column once")
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


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file (a byte-order mark skipped)."""
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as e:
        raise DatasetFormatError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); "
                                 "expected a UTF-8 file") from None


def read_jsonl_rows(path: Path) -> list[tuple[int, Any]]:
    """(line number, value) of every non-blank line."""
    return numbered_jsonl(path, error=DatasetFormatError)


def require_columns(rows: list[Mapping[str, Any]], columns: Iterable[str], path: Path) -> None:
    if not rows:
        raise DatasetFormatError(f"{path}: no rows")
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise DatasetFormatError(f"{path}:1: the header lacks column(s) {', '.join(map(repr, missing))}; "
                                 f"expected {', '.join(columns)} (got {', '.join(map(str, rows[0]))})")


def checked_object(value: Any, keys: Iterable[str], where: str, expected: str = "") -> Mapping[str, Any]:
    """An annotation object that must hold ``keys``; DatasetFormatError naming where it is and,
    when given, the ``expected`` fields."""
    if not isinstance(value, Mapping):
        raise DatasetFormatError(f"{where}: expected an object{' with ' + expected if expected else ''}; "
                                 f"got {type(value).__name__} {value!r:.60}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise DatasetFormatError(f"{where}: missing {', '.join(map(repr, missing))}"
                                 f"{'; expected ' + expected if expected else ''}")
    return value


def text_field(value: Any, column: str, where: str) -> str:
    """A non-empty id; JSON numbers are taken as written."""
    if value is None or value == "":
        raise DatasetFormatError(f"{where}: {column!r} is {'null' if value is None else 'empty'}; "
                                 f"every row needs a {column}")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DatasetFormatError(f"{where}: {column!r} must be a string; got {value!r:.60}")
    return str(value)


def caption_field(value: Any, where: str, column: str = "caption") -> str:
    """A caption: a string with some text on one line."""
    if not isinstance(value, str):
        raise DatasetFormatError(f"{where}: {column!r} must be a string; got {value!r:.60}")
    if not value.strip():
        raise DatasetFormatError(f"{where}: {column!r} is empty; every row needs a caption")
    if "\n" in value or "\r" in value:
        raise DatasetFormatError(f"{where}: {column!r} spans several lines ({value!r:.60}); "
                                 "expected one line")
    return value


def group_items(rows: Iterable[tuple[Any, ...]]) -> list[Item]:
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


def first_few(values: Iterable[Any], limit: int = 5) -> str:
    """The first ``limit`` values, comma-separated, with ', ...' when there are more."""
    values = list(values)
    return ", ".join(map(str, values[:limit])) + (", ..." if len(values) > limit else "")


def seconds(value: Any, what: str, where: str) -> float | None:
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


def check_segment(start: float | None, end: float | None, where: str) -> None:
    """A segment ends after it starts."""
    if end is not None and not end > (start or 0.0):
        raise DatasetFormatError(f"{where}: end ({end:g}) must be after start ({start or 0:g}); "
                                 "expected 0 <= start < end")
