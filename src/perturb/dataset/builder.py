"""The -P dataset builder: every video × perturbation × severity and every caption set, resumably.

Output layout under ``out``::

    videos/<perturbation>/<severity>/<item_id>.<ext>
    captions/<perturbation>.jsonl
    manifest.jsonl        (and manifest.parquet with BuildOptions(parquet=True))
    dataset.json

A re-run skips outputs whose manifest row is ok and whose file still has the recorded sha256,
redoes the rest, and rewrites the manifest with one row per output at the end.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..fileio import write_json
from ..options import options_object, written_input
from ..registry import REGISTRY, Spec, per_frame_selection
from ..selection import DEFAULT_VIDEO_SELECTION, parse_severities
from ..rng import item_seed
from .. import engines
from . import encode
from .build_options import BuildOptions
from .items import Item
from .manifest import Manifest, row_key, to_parquet
from .readers import GENERIC_COLUMNS, DatasetFormatError, infer_reader, read_dataset
from .resume import BuildConflictError, Lock, complete, sweep_temporaries
from .work_units import Output, Preprocess, TextTask, VideoTask
from .work import run_task

PAPER_PREPROCESS = Preprocess(short_side=224, fps=30.0)   # the paper's S3D input: 224 px, 30 fps
SETTINGS = ("seed", "format", "preprocess", "per_frame", "recipe")   # must match to resume into an existing DIR


OUTPUT_NAMES = ("dataset.json", "manifest.jsonl", "manifest.parquet", "captions", "videos", ".lock")


@dataclass
class BuildResult:
    """What a build did: counts, the failed rows, and where everything is."""

    out: Path
    total: int = 0
    done: int = 0
    skipped: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    unavailable: list[dict[str, Any]] = field(default_factory=list)   # missing model/resource
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        """One line: outputs made, already complete, failed, time and throughput."""
        rate = self.done / self.seconds if self.seconds > 0 else 0.0
        return (f"{self.total} outputs: {self.done} made, {self.skipped} already complete, "
                f"{len(self.failed)} failed, {len(self.unavailable)} skipped (missing resource) "
                f"in {self.seconds:.1f} s ({rate:.2f} outputs/s)")


# --------------------------------------------------------------------------------- selection
def resolve(selection: str | Iterable[str | Spec] | None, modality: str) -> list[Spec]:
    """Names, categories, 'all'/'none' or Spec objects → Specs of one modality."""
    if selection is None or isinstance(selection, str):
        return REGISTRY.resolve(selection or "none", modality)
    specs: list[Spec] = []
    for s in selection:
        specs += [s] if isinstance(s, Spec) else REGISTRY.resolve(s, modality)
    return list({s.ref: s for s in specs}.values())


def safe_name(item_id: str) -> str:
    """A file-name-safe form of an item id."""
    name = re.sub(r"[^\w.\-]+", "_", item_id).strip(".")
    return name or "_"


# ------------------------------------------------------------------------------------- plan
def check_items(items: Sequence[Item], videos: bool, source: str = "items") -> None:
    """Every item id gets its own output file name and, when ``videos`` are perturbed, names a
    video; DatasetFormatError (naming ``source``, the dataset) otherwise."""
    names: dict[str, str] = {}
    for it in items:
        other = names.setdefault(safe_name(it.item_id), it.item_id)
        if other != it.item_id:
            raise DatasetFormatError(f"{source}: item ids {other!r} and {it.item_id!r} both map to the "
                                     f"file name {safe_name(it.item_id)!r}; rename one of them")
        if videos and not it.video_path:
            raise DatasetFormatError(f"{source}: item {it.item_id!r} has no 'video_path'; building video "
                                     f"perturbations needs the columns {', '.join(GENERIC_COLUMNS)}")


def plan_video(items: Sequence[Item], specs: Sequence[Spec], severities: Sequence[int], seed: int,
               fmt: encode.Format) -> list[tuple[Item, list[Output]]]:
    """Every (item, outputs) pair with per-output seeds derived from (seed, id, name, severity)."""
    check_items(items, videos=bool(specs))
    plan = []
    for it in items:
        outs = [Output(spec, sev, item_seed(seed, it.item_id, spec.ref, sev),
                       f"videos/{safe_name(spec.ref)}/{sev}/{safe_name(it.item_id)}.{fmt.ext}")
                for spec in specs for sev in spec.levels(severities)]
        plan.append((it, outs))
    return plan


# ------------------------------------------------------------------------------------- build
def _absolute(item: Item) -> Item:
    """The item with an absolute video path, so a worker started in another directory finds it."""
    if not item.video_path or os.path.isabs(item.video_path):
        return item
    return replace(item, video_path=os.path.abspath(item.video_path))


def build(dataset: str | os.PathLike | Sequence[Item], out: str | os.PathLike, *,
          reader: str | None = None,
          video_perturbations: str | Iterable[str | Spec] | None = DEFAULT_VIDEO_SELECTION,
          severities: str | Iterable[int] = "1-5",
          text_perturbations: str | Iterable[str | Spec] | None = "all", seed: int = 0,
          options: BuildOptions | None = None) -> BuildResult:
    """Build a perturbed copy of ``dataset`` in ``out``; resumes what an earlier run left.

    ``dataset`` is a path (reader inferred unless given) or a list of :class:`Item`.
    Perturbations are names, categories, ``suite:NAME`` (default ``suite:msrvtt-p``), 'all',
    'none' or Spec objects; a suite's members come under the suite's tables. Per-output seeds come
    from ``item_seed(seed, item_id, perturbation, severity)``, so the bytes do not depend on
    backend, worker count or order. ``options`` (a :class:`BuildOptions`) says where and how it
    runs and what it writes; its ``per_frame`` redraws weather ops every frame (dataset.json).
    """
    t0 = time.perf_counter()
    options = options_object(options, BuildOptions, "build")
    if isinstance(dataset, (str, os.PathLike)) and (clash := written_input(out, OUTPUT_NAMES, [dataset])):
        raise BuildConflictError(f"{out}: the build writes {clash[0]}, which is or holds the dataset "
                                 f"{clash[1]}; expected an output folder apart from the dataset")
    if isinstance(dataset, (str, os.PathLike)):
        reader = reader or infer_reader(dataset)
        items = read_dataset(dataset, reader)
    else:
        items = list(dataset)
    items = [_absolute(it) for it in items[:options.limit]]
    vspecs = per_frame_selection(resolve(video_perturbations, "video"), options.per_frame)
    tspecs = resolve(text_perturbations, "text")
    sevs = parse_severities(severities)
    fmt = options.output_format
    check_items(items, bool(vspecs), str(dataset) if isinstance(dataset, (str, os.PathLike)) else "items")
    root = Path(out).absolute()           # workers may run elsewhere (a reused pool, a cluster)
    info = _describe(dataset, reader, items, vspecs, tspecs, sevs, seed, options)
    vplan = plan_video(items, vspecs, sevs, seed, fmt)
    return execute(root, info, lambda manifest: _pending(vplan, tspecs, items, seed, root, manifest, options),
                   options, t0)


Pending = Callable[[Manifest], "tuple[list[Any], list[str], BuildResult]"]


def execute(root: Path, info: dict[str, Any], pending: Pending, options: BuildOptions, t0: float,
            folders: Sequence[str] = ("videos", "captions")) -> BuildResult:
    """Run a planned build in ``root`` under its lock: refuse other settings (``info`` is
    dataset.json), sweep temporaries under ``folders``, run what ``pending(manifest)`` says is
    left, and record the status in dataset.json whatever happens."""
    root.mkdir(parents=True, exist_ok=True)
    lock = Lock(root)
    try:
        check_compatible(root / "dataset.json", info)
        sweep_temporaries(root, folders)
        manifest = Manifest(root / "manifest.jsonl")
        tasks, order, result = pending(manifest)
        write_json(root / "dataset.json", {**info, "status": "running"})
        try:
            run_tasks(tasks, order, result, manifest, root, options)
        except BaseException as e:          # never leave "running" behind a build that stopped
            stopped = "interrupted" if isinstance(e, KeyboardInterrupt) else "failed"
            write_json(root / "dataset.json", {**info, "status": stopped,
                                               "error": f"{type(e).__name__}: {e}"})
            raise
        finally:
            sweep_temporaries(root, folders)   # a worker that died mid-write (its task ran again) left one
        result.seconds = time.perf_counter() - t0
        final = {k: manifest.rows[k] for k in order if k in manifest.rows}
        write_json(root / "dataset.json", {**info, "status": "complete" if result.ok
                                           else "incomplete", "summary": counts(final)})
        return result
    finally:
        lock.release()


def run_tasks(tasks: list[Any], order: list[str], result: BuildResult, manifest: Manifest, root: Path,
         options: BuildOptions) -> None:
    """Run the pending tasks, recording each row in the manifest (and the Parquet export)."""
    runs = engines.run(run_task, tasks, backend=options.backend, jobs=options.jobs,
                       scheduler=options.scheduler, connect_timeout=options.connect_timeout)
    with manifest:
        for rows in _progress(runs, sum(t.size for t in tasks), options.progress):
            for row in rows:
                manifest.append(row)
                if row["status"] == "ok":
                    result.done += 1
                elif row["status"] == "skipped":
                    result.unavailable.append(row)
                else:
                    result.failed.append(row)
        manifest.compact(order)
        if options.parquet:
            to_parquet(list(manifest), root / "manifest.parquet")


def _pending(vplan: list[tuple[Item, list[Output]]], tspecs: Sequence[Spec], items: Sequence[Item],
             seed: int, root: Path, manifest: Manifest,
             options: BuildOptions) -> tuple[list[Any], list[str], BuildResult]:
    """Tasks still to run (complete outputs dropped), all keys in plan order, and the counts."""
    verify, fmt, pre = options.verify, options.output_format, options.preprocess
    result = BuildResult(out=root)
    order: list[str] = []
    text_tasks: list[Any] = []
    for spec in tspecs:
        key = row_key("*", spec.name, None)
        order.append(key)
        if complete(manifest.rows.get(key), root, verify):
            result.skipped += 1
        else:
            text_tasks.append(TextTask(spec, tuple(items), seed, str(root),
                                       f"captions/{spec.name}.jsonl"))
    video_tasks = []
    checking = _progress(iter(vplan), len(vplan), options.progress and verify and bool(manifest.rows),
                         desc="verify", unit="video")
    for it, outs in checking:
        todo = []
        for o in outs:
            key = row_key(it.item_id, o.spec.ref, o.severity)
            order.append(key)
            if complete(manifest.rows.get(key), root, verify):
                result.skipped += 1
            else:
                todo.append(o)
        if todo:
            video_tasks.append(VideoTask(it, tuple(todo), str(root), fmt.name, pre))
    result.total = len(order)
    return text_tasks + video_tasks, order, result


def _progress(results: Iterator[Any], total: int, show: bool, desc: str = "build",
              unit: str = "output") -> Iterator[Any]:
    """Pass results through, with a tqdm bar (throughput and ETA) counting outputs."""
    if not show:
        yield from results
        return
    from ..progress import bar

    with bar(total=total, desc=desc, unit=unit, dynamic_ncols=True, smoothing=0.1) as shown:
        for r in results:
            yield r
            shown.update(len(r) if isinstance(r, list) else 1)


def counts(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ok = sum(r["status"] == "ok" for r in rows.values())
    return {"outputs": len(rows), "ok": ok, "failed": len(rows) - ok,
            "bytes": sum(r.get("bytes") or 0 for r in rows.values())}


def _describe(dataset: Any, reader: str | None, items: Sequence[Item], vspecs: Sequence[Spec],
              tspecs: Sequence[Spec], sevs: Sequence[int], seed: int, options: BuildOptions) -> dict[str, Any]:
    from ..version import __version__

    fmt = options.output_format

    return {
        "perturb_version": __version__,
        "command": options.command or shlex.join(sys.argv),
        "dataset": os.fspath(dataset) if isinstance(dataset, (str, os.PathLike)) else None,
        "reader": reader, "items": len(items),
        "captions": sum(len(it.captions) for it in items),
        "seed": seed, "seed_rule": "derive_seed(seed, item_id, perturbation, severity)",
        "severities": list(sevs),
        "video_perturbations": [{"name": s.ref, "category": s.category, "temporal": s.temporal,
                                 "table": s.table or "own", "suites": REGISTRY.suites_of(s.name),
                                 "params": {str(v): s.params(v) for v in sevs} if s.has_severity
                                 else {}} for s in vspecs],
        "text_perturbations": [{"name": s.name, "category": s.category} for s in tspecs],
        "per_frame": any(s.per_frame for s in vspecs),
        "format": {"name": fmt.name, "ext": fmt.ext, "codec": fmt.codec,
                   "options": dict(fmt.options), "summary": fmt.summary},
        "preprocess": options.preprocess.as_dict(),
        "layout": {"videos": "videos/<perturbation>/<severity>/<item_id>.<ext>",
                   "captions": "captions/<perturbation>.jsonl", "manifest": "manifest.jsonl"},
    }


def check_compatible(path: Path, info: dict[str, Any]) -> None:
    """Refuse to resume into a directory built with another seed, format, preprocessing or recipe."""
    if not path.exists():
        return
    try:
        before = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return
    diff = [k for k in SETTINGS if (k in before or k == "recipe")        # a recipe tree is no plain build
            and before.get(k) != json.loads(json.dumps(info.get(k)))]
    if diff:
        raise BuildConflictError(
            f"{path.parent} was built with other settings ({', '.join(f'{k}={before.get(k)!r}' for k in diff)}; "
            f"now {', '.join(f'{k}={info.get(k)!r}' for k in diff)}); use another --out or the same settings")
