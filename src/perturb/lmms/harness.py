"""What lmms-eval writes under ``--output_path`` with ``--log_samples``, read without importing it:
per run a ``<date>_results.json`` (per task its metrics as ``"<metric>,<filter>"``, its config and
how many samples) and per task a ``<date>_samples_<task>.jsonl`` (a line per document: ``doc_id``,
``target``, ``filtered_resps`` and the metric's per-sample value). lmms-eval exits 0 even when the
evaluation fails, and then writes no results file: a task's run is read from these files only, and a
missing file, a task without results, or a metric that is not a number is an error naming the task
and what was looked for.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..errors import UsageError
from ..fileio import read_json

RESULTS_GLOB = "*_results.json"
# where a dict-valued per-sample record (Video-MME's, TempCompass's) keeps its 0/1 or numeric value
PER_SAMPLE_KEYS = ("score", "rating", "accuracy", "acc", "correct")


@dataclass(frozen=True)
class TaskRun:
    """The newest run of one lmms-eval task among the folders given: its results file, the date
    lmms-eval stamped it with, and how many runs of the task were found in all."""

    task: str
    results: Path
    date: str
    found: int

    @property
    def samples(self) -> Path:
        """The task's samples log beside the results file (``<date>_samples_<task>.jsonl``)."""
        return self.results.with_name(f"{self.results.name.removesuffix('_results.json')}_samples_{self.task}.jsonl")

    def describe(self) -> str:
        """``colourmc_perturb_clean: DIR/..._results.json (the newest of 2 runs)``."""
        return f"{self.task}: {self.results}" + (f" (the newest of {self.found} runs)" if self.found > 1 else "")


def _json(path: Path) -> Any:
    try:
        return read_json(path)
    except (OSError, ValueError) as e:                     # missing, unreadable, not UTF-8, not JSON
        raise UsageError(f"{path}: not a readable lmms-eval results file ({str(e).splitlines()[0]})") from None


def results_files(dirs: Sequence[str | os.PathLike]) -> dict[Path, Mapping[str, Any]]:
    """Every lmms-eval results file under the ``--results`` folders (any depth: older versions write
    one more folder per model), read."""
    out: dict[Path, Mapping[str, Any]] = {}
    for d in dirs:
        if not Path(d).is_dir():
            raise UsageError(f"--results {d}: not a folder (expected lmms-eval's --output_path of a run with --log_samples)")
        for path in sorted(Path(d).rglob(RESULTS_GLOB)):
            doc = _json(path)
            if isinstance(doc, Mapping) and isinstance(doc.get("results"), Mapping):
                out[path] = doc
    return out


def newest_run(files: Mapping[Path, Mapping[str, Any]], task: str, dirs: Iterable[str | os.PathLike]) -> TaskRun:
    """The newest run (by lmms-eval's ``date``, then path) whose results hold ``task``."""
    runs = sorted((str(doc.get("date") or path.name), str(path)) for path, doc in files.items()
                  if task in doc["results"])
    if not runs:
        raise UsageError(f"{task}: no lmms-eval results for this task under {', '.join(map(str, dirs))} (looked for "
                         f"{RESULTS_GLOB} holding it; lmms-eval writes none when the evaluation fails)")
    date, path = runs[-1]
    return TaskRun(task, Path(path), date, len(runs))


def metric_name(doc: Mapping[str, Any], run: TaskRun, wanted: str | None) -> str:
    """The metric to read: the manifest's, else the task's first ``metric_list`` entry."""
    if wanted:
        return wanted
    listed = ((doc.get("configs") or {}).get(run.task) or {}).get("metric_list") or []
    if not listed or not isinstance(listed[0], Mapping) or not isinstance(listed[0].get("metric"), str):
        raise UsageError(f"{run.task}: {run.results} has no metric_list for the task in its configs; "
                         f"name the metric in the manifest's \"metric\"")
    return listed[0]["metric"]


def task_value(doc: Mapping[str, Any], run: TaskRun, metric: str) -> tuple[str, float]:
    """The harness's own number for the task's metric (``"accuracy,none"``: the ``none`` filter when
    there are several) and its key; an error when it is absent or not a finite number (a failed run)."""
    values = doc["results"][run.task]
    keys = [k for k in values if k.partition(",")[0] == metric] if isinstance(values, Mapping) else []
    if not keys:
        held = sorted({k.partition(",")[0] for k in values if "_stderr" not in k and k != "alias"}) \
            if isinstance(values, Mapping) else []
        raise UsageError(f"{run.task}: {run.results} holds no {metric!r} for the task "
                         f"(it holds {', '.join(held) or 'no metric'}; the run failed or the metric is another)")
    key = f"{metric},none" if f"{metric},none" in keys else keys[0]
    value = values[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"{run.task}: {key} is {value!r} in {run.results}; expected a number (the run failed)")
    return key, float(value)


def _sample_value(record: Mapping[str, Any], metric: str, where: str) -> float:
    value = record.get(metric)
    if isinstance(value, Mapping):
        value = next((value[k] for k in PER_SAMPLE_KEYS if k in value), None)
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"{where}: expected the per-sample {metric!r} as a number (or an object with one of "
                         f"{', '.join(PER_SAMPLE_KEYS)}); got {record.get(metric)!r}")
    return float(value)


def per_sample(run: TaskRun, metric: str) -> dict[int, float]:
    """doc_id → the metric's per-sample value, from the task's samples log (a missing log, a line
    without a doc_id, or a doc_id logged twice: an error naming the task)."""
    path = run.samples
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise UsageError(f"{run.task}: no samples log {path} (run lmms-eval with --log_samples)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{run.task}: cannot read {path} ({e})") from None
    out: dict[int, float] = {}
    for n, line in enumerate((x for x in lines if x.strip()), 1):
        where = f"{run.task}: {path} line {n}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise UsageError(f"{where}: not JSON ({e})") from None
        doc_id = record.get("doc_id") if isinstance(record, Mapping) else None
        if isinstance(doc_id, bool) or not isinstance(doc_id, int):
            raise UsageError(f"{where}: expected an integer doc_id; got {doc_id!r}")
        if doc_id in out:
            raise UsageError(f"{where}: doc_id {doc_id} is logged twice")
        out[doc_id] = _sample_value(record, metric, where)
    if not out:
        raise UsageError(f"{run.task}: {path} logs no samples")
    return out


def model_id(doc: Mapping[str, Any]) -> str:
    """``lmms-eval:<model>`` and its ``model_args`` when given (``lmms-eval:qwen2_vl,pretrained=...``)."""
    config = doc.get("config") or {}
    args = config.get("model_args") or ""
    if isinstance(args, Mapping):
        args = ",".join(f"{k}={v}" for k, v in args.items())
    return f"lmms-eval:{config.get('model') or doc.get('model_name') or 'unknown'}" + (f",{args}" if args else "")
