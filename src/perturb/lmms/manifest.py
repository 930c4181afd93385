"""The manifest of a written lmms-eval task folder (``perturb-lmms.json``): which original tasks,
which variants over which corrupted copy, with the hashes that pin them. Read with a one-line error."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..fileio import read_json, write_json

FORMAT = "perturb-lmms/1"
MANIFEST_NAME = "perturb-lmms.json"


@dataclass(frozen=True)
class Variant:
    """One corrupted variant of a task: its lmms-eval task name, the op and severity, the copy it reads."""
    task: str
    op: str
    severity: int
    copy: str
    copy_sha256: str


@dataclass(frozen=True)
class TaskEntry:
    """One original task, its clean variant and its corrupted variants (``metric`` None = the task's
    first ``metric_list`` entry). ``videos`` is the original video folder a path-building task reads."""
    task: str
    yaml: str
    yaml_sha256: str
    tag: str
    clean: str
    variants: tuple[Variant, ...]
    metric: str | None = None
    videos: str | None = None


@dataclass(frozen=True)
class Manifest:
    """The whole ``perturb-lmms.json``."""
    perturb_version: str
    seed: int
    tasks: tuple[TaskEntry, ...]
    format: str = field(default=FORMAT)

    def task(self, name: str) -> TaskEntry:
        """The entry of original task ``name``."""
        for entry in self.tasks:
            if entry.task == name:
                return entry
        raise UsageError(f"{name!r} is not a task of this manifest (it has {', '.join(e.task for e in self.tasks)})")


def variant_name(task: str, op: str | None = None, severity: int | None = None) -> str:
    """``<task>_perturb_clean``, or ``<task>_perturb_<op>_<severity>`` with ':' in the op written as '-'."""
    if op is None:
        return f"{task}_perturb_clean"
    return f"{task}_perturb_{op.replace(':', '-')}_{severity}"


def tag_name(task: str) -> str:
    """The tag every variant of ``task`` shares (``<task>_perturb``)."""
    return f"{task}_perturb"


def manifest_dict(manifest: Manifest) -> dict[str, Any]:
    """The JSON object of a manifest, ``format`` first."""
    body = asdict(manifest)
    body.pop("format")
    order = ("task", "yaml", "yaml_sha256", "tag", "metric", "clean", "videos", "variants")
    tasks = [{key: list(entry[key]) if key == "variants" else entry[key] for key in order
              if not (key == "videos" and entry[key] is None)} for entry in body.pop("tasks")]
    return {"format": manifest.format, **body, "tasks": tasks}


def write_manifest(folder: str | os.PathLike, manifest: Manifest) -> Path:
    """Atomically write ``FOLDER/perturb-lmms.json``."""
    return write_json(Path(folder) / MANIFEST_NAME, manifest_dict(manifest))


def manifest_path(folder_or_file: str | os.PathLike) -> Path:
    """The manifest file of a written folder, or the file itself."""
    path = Path(folder_or_file)
    return path / MANIFEST_NAME if path.is_dir() else path


KINDS = {str: "a string", int: "an integer", list: "a list"}


def _need(obj: dict, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise UsageError(f"{where} has no {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise UsageError(f"{where}: {key!r} must be {KINDS[kind]}, got {value!r}")
    return value


def _variant(obj: Any, where: str) -> Variant:
    if not isinstance(obj, dict):
        raise UsageError(f"{where} must be an object")
    return Variant(task=_need(obj, "task", str, where), op=_need(obj, "op", str, where),
                   severity=_need(obj, "severity", int, where), copy=_need(obj, "copy", str, where),
                   copy_sha256=_need(obj, "copy_sha256", str, where))


def _entry(obj: Any, where: str) -> TaskEntry:
    if not isinstance(obj, dict):
        raise UsageError(f"{where} must be an object")
    metric = obj.get("metric")
    if metric is not None and not isinstance(metric, str):
        raise UsageError(f"{where}: 'metric' must be a string or null, got {metric!r}")
    videos = obj.get("videos")
    if videos is not None and not isinstance(videos, str):
        raise UsageError(f"{where}: 'videos' must be a string or absent, got {videos!r}")
    named = {key: _need(obj, key, str, where) for key in ("task", "yaml", "yaml_sha256", "tag", "clean")}
    variants = _need(obj, "variants", list, where)
    return TaskEntry(**named, metric=metric, videos=videos,
                     variants=tuple(_variant(v, f"{where} variant {i}") for i, v in enumerate(variants)))


def read_manifest(folder_or_file: str | os.PathLike) -> Manifest:
    """Read a written folder's manifest (or the file itself); a missing, unreadable or off-schema one
    raises :class:`UsageError` with one line naming the file and what was expected."""
    path = manifest_path(folder_or_file)
    try:
        body = read_json(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no {MANIFEST_NAME} (expected a folder written by perturb lmms-tasks)") from None
    except ValueError as exc:
        raise UsageError(f"{path}: not a readable JSON manifest ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        found = body.get("format") if isinstance(body, dict) else type(body).__name__
        raise UsageError(f"{path}: format must be {FORMAT!r}, got {found!r}")
    where = str(path)
    tasks = _need(body, "tasks", list, where)
    return Manifest(perturb_version=_need(body, "perturb_version", str, where), seed=_need(body, "seed", int, where),
                    tasks=tuple(_entry(t, f"{where} task {i}") for i, t in enumerate(tasks)))
