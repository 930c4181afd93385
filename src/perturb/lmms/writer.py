"""Writing a task-variant folder: per original task a clean variant and one per (op, severity), each a
YAML that includes the original; rewritten data files (local-data tasks) or ``perturb_visual.py``
(path-building tasks); and the manifest. Everything is checked before a file is written, the folder
is staged beside its final place and renamed in whole."""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from ..errors import UsageError
from ..fileio import sha256_file, write_atomic
from ..version import __version__
from .copy import BuiltCopy
from .generated import MODULE, function_name, module_text
from .manifest import MANIFEST_NAME, Manifest, TaskEntry, Variant, manifest_dict, tag_name, variant_name
from .sources import DataFile, LocalData, PathBuilding, find_source
from .yamls import find_task, load_config


@dataclass(frozen=True)
class Request:
    """What to write: the tasks, where to find them, the ops (registry refs) and severities, the copy."""
    tasks: Sequence[str]
    roots: Sequence[Path]
    ops: Sequence[str]
    severities: Sequence[int]
    copy: BuiltCopy
    out: Path
    videos: str | None = None
    video_field: str | None = None
    force: bool = False


def check_out(out: Path, force: bool) -> None:
    """Refuse a non-empty folder, unless ``force`` and it is an earlier output (it is replaced whole)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MANIFEST_NAME).is_file():
            raise UsageError(f"--out {out}: not empty and not written by perturb lmms-tasks; choose an empty folder")
        if not force:
            raise UsageError(f"--out {out}: holds an earlier perturb lmms-tasks folder; pass --force to replace it")


def header(task: str, what: str, seed: int) -> str:
    return f"# perturb lmms-tasks {__version__}: {task} {what} (seed {seed})\n"


def variant_yaml(original: Path, task: str, name: str, what: str, seed: int, extra: str = "") -> str:
    """A variant's YAML text: include the original, its own name, the task's shared tag, overrides."""
    return (header(task, what, seed) + f"include: {json.dumps(str(original))}\ntask: {name}\n"
            f"tag: [{tag_name(task)}]\n" + extra)


def data_text(data: DataFile, docs: list[dict[str, Any]]) -> str:
    """A data file rewritten in its own format."""
    if data.kind == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(data.header), lineterminator="\n")
        writer.writeheader()
        writer.writerows(docs)
        return buffer.getvalue()
    if data.kind == "jsonl":
        return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    return json.dumps({data.field: docs} if data.field else docs, ensure_ascii=False, indent=1) + "\n"


def rewrite_data_files(value: Any, renamed: dict[str, str]) -> Any:
    """``data_files`` in its own shape, each file swapped for its rewritten copy."""
    if isinstance(value, dict):
        return {k: rewrite_data_files(v, renamed) for k, v in value.items()}
    if isinstance(value, list):
        return [rewrite_data_files(v, renamed) for v in value]
    return renamed.get(str(Path(value)), value) if isinstance(value, str) else value


def local_variant(request: Request, config: dict[str, Any], source: LocalData, name: str,
                  files: dict[str, Path], out: dict[str, str]) -> str:
    """The rewritten data files of one variant (into ``out``) and its ``dataset_kwargs`` override."""
    renamed = {}
    for i, data in enumerate(source.files):
        docs = [{**doc, source.video_field: str(files[source.videos[(i, j)].stem])}
                for j, doc in enumerate(data.docs)]
        relative = f"data/{name}/{i}_{data.path.name}"
        out[relative] = data_text(data, docs)
        renamed[str(data.path)] = str(request.out / relative)
    kwargs = {**config["dataset_kwargs"], "data_files": rewrite_data_files(config["dataset_kwargs"]["data_files"], renamed)}
    return yaml.safe_dump({"dataset_kwargs": kwargs}, sort_keys=False, default_flow_style=False)


def plan_task(request: Request, task: str, out: dict[str, str], visual: dict[str, Any]) -> TaskEntry:
    """One task's files (into ``out``; path-building plans into ``visual``) and its manifest entry."""
    path = find_task(task, request.roots)
    config = load_config(path)
    source = find_source(task, config, request.videos, request.video_field)
    stems = source.stems
    seed = request.copy.seed
    clean = variant_name(task)
    out[f"{clean}.yaml"] = variant_yaml(path, task, clean, "with its own videos (clean)", seed)
    variants = []
    for op in request.ops:
        for severity in request.severities:
            files = request.copy.variant_files(op, severity, stems)
            name = variant_name(task, op, severity)
            what = f"with its videos under {op} at severity {severity}"
            if isinstance(source, LocalData):
                extra = local_variant(request, config, source, name, files, out)
            else:
                extra = f"doc_to_visual: !function {MODULE}.{function_name(name)}\n"
                visual[name] = {"original": str(source.function.module_file), "function": source.function.function,
                                "videos": str(source.videos),
                                "files": {rel: str(files[Path(p).stem]) for rel, p in source.files.items()}}
            out[f"{name}.yaml"] = variant_yaml(path, task, name, what, seed, extra)
            variants.append(Variant(name, op, severity, str(request.copy.root), request.copy.digest(op, severity, stems)))
    return TaskEntry(task=task, yaml=str(path), yaml_sha256=sha256_file(path), tag=tag_name(task), clean=clean,
                     variants=tuple(variants),
                     videos=str(source.videos) if isinstance(source, PathBuilding) else None)


def publish_folder(out: Path, files: dict[str, str]) -> None:
    """Write ``files`` into a staging folder beside ``out``, then rename it into place (an earlier
    output it replaces is removed after the rename)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for relative, text in files.items():
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(staging / relative, text)
        old = None
        if out.is_dir() and any(out.iterdir()):
            old = out.parent / f".{out.name}.{os.getpid()}.old"
            os.replace(out, old)
        os.replace(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_variants(request: Request) -> Manifest:
    """Check everything, then write the folder; the manifest it wrote."""
    check_out(request.out, request.force)
    if len(set(request.tasks)) != len(request.tasks):
        raise UsageError(f"--task names a task twice ({', '.join(request.tasks)})")
    files: dict[str, str] = {}
    visual: dict[str, Any] = {}
    entries = tuple(plan_task(request, task, files, visual) for task in request.tasks)
    if visual:
        files[f"{MODULE}.py"] = module_text(list(visual), __version__)
        files[f"{MODULE}.json"] = json.dumps(visual, ensure_ascii=False, indent=1) + "\n"
    manifest = Manifest(__version__, request.copy.seed, entries)
    files[MANIFEST_NAME] = json.dumps(manifest_dict(manifest), ensure_ascii=False, indent=2) + "\n"
    publish_folder(request.out, files)
    return manifest
