"""An lmms-eval task and its perturb variants scored as a perturb results document (task ``lmms``,
docs/results-schema.md): per variant the harness's own number for the task's metric, γa and γr
against the clean variant with **paired** bootstrap intervals (each resample draws doc ids once, for
the clean and the perturbed run alike), per op, category and suite, and each suite's mPC and rPC,
all from the benchmark's own scorers (:mod:`perturb.bench.scoring`).

γ needs a metric in [0, 1]: a run's ``score`` is the harness's number divided by the task's scale,
1 or 100 (Video-MME reports percent), the one for which it equals the mean of the per-sample values.
A metric that is not such a mean (a task's custom aggregate) is refused, since its intervals would
not be of the number the harness reports.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any, Mapping, Sequence

import numpy as np

from ..bench.scoring.bootstrap import bootstrap_ci, mean_gamma_bootstrap, paired_bootstrap
from ..bench.scoring.robustness import gamma_record, summarize
from ..bench.scoring.suite_summary import summarize_suites
from ..errors import UsageError
from ..honesty import flags
from ..registry import REGISTRY
from ..results import SCHEMA_VERSION
from .harness import TaskRun, metric_name, model_id, newest_run, per_sample, results_files, task_value
from .manifest import Manifest, TaskEntry, Variant

SCALES = (1.0, 100.0)      # a task's metric: a fraction, or a percentage of the per-sample mean
SCALE_TOLERANCE = 1e-9     # relative: the harness's mean and ours differ by float rounding only


@dataclass(frozen=True)
class Scored:
    """One variant as the harness scored it: its newest run, the metric's key and number, the per-sample values."""

    variant: Variant | None        # None: the clean variant
    run: TaskRun
    key: str
    value: float
    samples: dict[int, float]
    model: str


def pick_task(manifest: Manifest, task: str | None) -> TaskEntry:
    """The manifest's task named ``task``, or its only one."""
    if task is not None:
        return manifest.task(task)
    if len(manifest.tasks) != 1:
        raise UsageError(f"the manifest holds {len(manifest.tasks)} tasks "
                         f"({', '.join(e.task for e in manifest.tasks)}); choose one with --task")
    return manifest.tasks[0]


def _scored(files: Mapping[Path, Mapping[str, Any]], dirs: Sequence[str | os.PathLike], name: str,
            metric: str | None, variant: Variant | None) -> Scored:
    run = newest_run(files, name, dirs)
    doc = files[run.results]
    metric = metric_name(doc, run, metric)
    key, value = task_value(doc, run, metric)
    return Scored(variant, run, key, value, per_sample(run, metric), model_id(doc))


def scale_of(scored: Scored) -> float:
    """1 or 100: the factor between the harness's number and the mean of the per-sample values."""
    mean = fmean(scored.samples.values())
    for scale in SCALES:
        if math.isclose(scored.value, scale * mean, rel_tol=SCALE_TOLERANCE, abs_tol=SCALE_TOLERANCE * scale):
            return scale
    raise UsageError(f"{scored.run.task}: the harness's {scored.key} is {scored.value:.6g} but its {len(scored.samples)} "
                     f"per-sample values average {mean:.6g}; perturb scores a metric that is their mean (or 100 times it)")


def paired(clean: Scored, other: Scored, order: list[int]) -> np.ndarray:
    """The variant's per-sample values in the clean variant's doc order; a doc missing or extra: an error."""
    missing = sorted(set(clean.samples) - set(other.samples))
    extra = sorted(set(other.samples) - set(clean.samples))
    if missing or extra:
        said = ([f"misses doc_id {', '.join(map(str, missing[:5]))}{' ...' if len(missing) > 5 else ''}"] if missing else []) \
            + ([f"holds doc_id {', '.join(map(str, extra[:5]))}{' ...' if len(extra) > 5 else ''} the clean run has not"]
               if extra else [])
        raise UsageError(f"{other.run.task}: its samples log {' and '.join(said)} "
                         f"({other.run.samples} against {clean.run.samples})")
    if other.model != clean.model:
        raise UsageError(f"{other.run.task}: ran {other.model} but {clean.run.task} ran {clean.model}; "
                         f"score runs of one model")
    return np.array([other.samples[i] for i in order], dtype=np.float64)


def _spec(variant: Variant) -> Any:
    try:
        return REGISTRY.get(variant.op, "video")
    except (KeyError, ValueError) as e:
        raise UsageError(f"{variant.task}: {str(e).splitlines()[0]}") from None


def _run_record(scored: Scored, clean_score: float, scale: float, values: np.ndarray, clean: np.ndarray,
                boot: Mapping[str, Any] | None) -> dict[str, Any]:
    spec = _spec(scored.variant)
    score = scored.value / scale
    rec: dict[str, Any] = {"modality": "video", "perturbation": spec.ref, "category": spec.category,
                           "severity": scored.variant.severity, "score": score,
                           **gamma_record(clean_score, score)}
    if boot:
        ci = paired_bootstrap(clean, values, boot["n"], boot["seed"], boot["level"])
        rec["ci"] = {"score": ci["metric"], "gamma_a": ci["gamma_a"], "gamma_r": ci["gamma_r"]}
    return rec


def _variant_entry(scored: Scored) -> dict[str, Any]:
    v = scored.variant
    return {"task": scored.run.task, "op": v.op if v else None, "severity": v.severity if v else None,
            "value": scored.value, "key": scored.key, "results": str(scored.run.results),
            "samples": str(scored.run.samples), "runs_found": scored.run.found}


def score_task(manifest: Manifest, entry: TaskEntry, dirs: Sequence[str | os.PathLike],
               bootstrap: Mapping[str, Any] | None, source: str = "") -> tuple[dict[str, Any], list[TaskRun]]:
    """The results document of one manifest task, and the runs it read (the newest of each variant's)."""
    from ..version import __version__

    files = results_files(dirs)
    clean = _scored(files, dirs, entry.clean, entry.metric, None)
    variants = [_scored(files, dirs, v.task, entry.metric, v) for v in entry.variants]
    order = sorted(clean.samples)
    clean_values = np.array([clean.samples[i] for i in order], dtype=np.float64)
    per_variant = [paired(clean, v, order) for v in variants]
    scale = scale_of(clean)
    for v in variants:
        if scale_of(v) != scale:
            raise UsageError(f"{v.run.task}: its {v.key} is on another scale than {clean.run.task}'s")
    clean_score = clean.value / scale
    boot = dict(bootstrap) if bootstrap else None
    clean_rec: dict[str, Any] = {"score": clean_score}
    if boot:
        clean_rec["ci"] = {"score": bootstrap_ci(clean_values, boot["n"], boot["seed"], boot["level"])}
    records = [_run_record(v, clean_score, scale, values, clean_values, boot) for v, values in zip(variants, per_variant)]
    summary = summarize(records)
    if boot and records:
        summary["modality"]["video"]["ci"] = mean_gamma_bootstrap(clean_values, per_variant, boot["n"], boot["seed"],
                                                                  boot["level"])
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "task": "lmms", "perturb_version": __version__,
        "model": {"id": clean.model, "kind": "lmms-eval"},
        "dataset": {"name": entry.task, "n_items": len(order), "seed": manifest.seed},
        "metric": "score", "bootstrap": boot, "clean": clean_rec, "runs": records, "summary": summary,
        "lmms": {"task": entry.task, "metric": clean.key, "scale": scale, "manifest": source,
                 "yaml": entry.yaml, "yaml_sha256": entry.yaml_sha256,
                 "variants": [_variant_entry(s) for s in [clean, *variants]]},
    }
    doc["suites"] = summarize_suites(doc)
    doc["flags"] = flags(doc)
    return doc, [clean.run, *(v.run for v in variants)]
