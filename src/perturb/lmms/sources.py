"""Where a task's videos come from: a local data file whose docs name video files (the variant rewrites
``data_files``), or a ``doc_to_visual`` function that builds paths under a video folder (the variant
wraps it). Anything else has no video field for perturb to corrupt."""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dataset.readers import VIDEO_EXTS
from ..errors import UsageError
from ..fileio import json_or_lines
from .yamls import FunctionRef


@dataclass(frozen=True)
class DataFile:
    """One local data file of a task, its docs, and how it was written (``json``, ``jsonl``, ``csv``)."""
    path: Path
    kind: str
    docs: list[dict[str, Any]]
    header: tuple[str, ...] = ()
    field: str | None = None         # the JSON object's key holding the docs (dataset_kwargs.field)


@dataclass(frozen=True)
class LocalData:
    """A local-data task: its data files, the field naming each doc's video, and each video's file."""
    files: tuple[DataFile, ...]
    video_field: str
    videos: dict[tuple[int, int], Path]      # (file index, doc index) -> the original video

    @property
    def stems(self) -> dict[str, Path]:
        return stems_of(self.videos.values())


@dataclass(frozen=True)
class PathBuilding:
    """A task whose ``doc_to_visual`` builds paths under ``videos`` (Video-MME's, TempCompass's)."""
    function: FunctionRef
    videos: Path
    files: dict[str, Path]                   # path relative to ``videos`` -> the original video

    @property
    def stems(self) -> dict[str, Path]:
        return stems_of(self.files.values())


def is_video(value: Any) -> bool:
    return isinstance(value, str) and value.lower().endswith(VIDEO_EXTS)


def stems_of(paths: Any) -> dict[str, Path]:
    """stem -> video; two different videos with one stem cannot be told apart in the copy: one line."""
    out: dict[str, Path] = {}
    for path in paths:
        other = out.setdefault(Path(path).stem, Path(path))
        if other != Path(path):
            raise UsageError(f"two videos share the name {Path(path).stem!r} ({other}, {path}); "
                             "the copy names each video by its file name's stem")
    return out


def data_paths(data_files: Any) -> list[Path]:
    """Every file a ``data_files`` value names (a path, a list, or split -> path or list)."""
    values = data_files.values() if isinstance(data_files, dict) else [data_files]
    flat = [p for v in values for p in (v if isinstance(v, list) else [v])]
    return list(dict.fromkeys(Path(p) for p in flat if isinstance(p, str)))


def read_data_file(path: Path, builder: str, field: str | None) -> DataFile:
    """A json/jsonl/csv data file's docs (what the ``datasets`` json and csv builders read)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the task's data file ({exc.__class__.__name__})") from None
    if builder == "csv":
        reader = csv.DictReader(io.StringIO(text))
        return DataFile(path, "csv", [dict(r) for r in reader], tuple(reader.fieldnames or ()))
    try:
        body, kind = json_or_lines(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: neither JSON nor JSON Lines ({exc})") from None
    docs = body.get(field) if field and isinstance(body, dict) else body
    if not isinstance(docs, list) or not all(isinstance(d, dict) for d in docs):
        raise UsageError(f"{path}: expected a list of objects (docs){f' under {field!r}' if field else ''}")
    return DataFile(path, kind, docs, field=field if kind == "json" and isinstance(body, dict) else None)


def find_local(task: str, config: dict[str, Any], field: str | None) -> LocalData | None:
    """A local json/csv task's video field and files, or None when no field of its docs names videos."""
    kwargs = config.get("dataset_kwargs") or {}
    builder = config.get("dataset_path")
    if builder not in ("json", "csv") or not isinstance(kwargs, dict) or "data_files" not in kwargs:
        return None
    files = tuple(read_data_file(p, builder, kwargs.get("field")) for p in data_paths(kwargs["data_files"]))
    docs = [d for f in files for d in f.docs]
    candidates = [k for k in dict.fromkeys(k for d in docs for k in d) if docs and all(is_video(d.get(k)) for d in docs)]
    plain = config.get("doc_to_visual") if isinstance(config.get("doc_to_visual"), str) else None
    chosen = field or plain
    if chosen is None:
        if not candidates:
            return None
        if len(candidates) > 1:
            raise UsageError(f"task {task!r}: several fields name videos ({', '.join(candidates)}); pass --video-field")
        chosen = candidates[0]
    elif chosen not in candidates:
        raise UsageError(f"task {task!r}: field {chosen!r} does not name a video file in every doc")
    videos = {}
    for i, data in enumerate(files):
        for j, doc in enumerate(data.docs):
            video = Path(doc[chosen]) if os.path.isabs(doc[chosen]) else data.path.parent / doc[chosen]
            if not video.is_file():
                raise UsageError(f"{data.path}: doc {j}'s {chosen} {doc[chosen]!r} is not a file "
                                 f"(relative paths are read from {data.path.parent})")
            videos[(i, j)] = video.resolve()
    return LocalData(files, chosen, videos)


def find_source(task: str, config: dict[str, Any], videos: str | None, field: str | None) -> LocalData | PathBuilding:
    """The task's video source; a task with none is one line naming what was expected."""
    local = find_local(task, config, field)
    if local is not None:
        return local
    visual = config.get("doc_to_visual")
    if isinstance(visual, FunctionRef) and videos:
        root = Path(videos).resolve()
        if not root.is_dir():
            raise UsageError(f"--videos {videos}: not a folder")
        files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file() and is_video(p.name)}
        if not files:
            raise UsageError(f"--videos {videos}: no video files ({', '.join(VIDEO_EXTS)}) under it")
        if not visual.module_file.is_file():
            raise UsageError(f"task {task!r}: doc_to_visual {visual.name} is not in {visual.module_file}")
        return PathBuilding(visual, root, files)
    if isinstance(visual, FunctionRef):
        raise UsageError(f"task {task!r} builds its video paths in {visual.name}: pass --videos DIR "
                         "(the folder of its videos, which the copy was built from)")
    raise UsageError(f"task {task!r} has no video field: neither a local data file whose docs name video "
                     "files nor a doc_to_visual function over a video folder")
