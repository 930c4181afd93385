"""Hand-made classification results.json documents (schema 1.3, task "classify"), in the shape the
runner writes them: per-cell accuracies become runs, γ on the metric, the summary and suites made by
the same functions the runner uses."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from perturb.bench.scoring.baselines import load_baseline
from perturb.bench.scoring.robustness import summarize
from perturb.bench.scoring.suite_summary import summarize_suites
from perturb.registry import REGISTRY

LABELS = ["tench", "goldfish", "great white shark", "tiger shark", "hammerhead", "electric ray"]
# top-1 accuracy per (operation, severity) of a small made-up ImageNet-C style run
CELLS = {("gaussian_noise", s): a for s, a in zip(range(1, 6), (0.60, 0.50, 0.40, 0.30, 0.20))}
CELLS |= {("fog:imagenet-c", s): a for s, a in zip(range(1, 6), (0.70, 0.68, 0.66, 0.64, 0.62))}


def _ci(value: float, half: float) -> list[float]:
    return [round(max(0.0, value - half), 6), round(min(1.0, value + half), 6)]


def _run(op: str, severity: int, top1: float, clean: Mapping[str, float], metric: str, modality: str,
         half: float | None) -> dict[str, Any]:
    top5 = round(min(1.0, top1 + 0.2), 6)
    value = {"top1": top1, "top5": top5}[metric]
    run = {"modality": modality, "perturbation": op, "category": REGISTRY.get(op, "video").category,
           "severity": severity, "top1": top1, "top5": top5,
           "gamma_a": 1 - (clean[metric] - value), "gamma_r": value / clean[metric]}
    if half is not None:
        run["ci"] = {"top1": _ci(top1, half), "top5": _ci(top5, half),
                     "gamma_a": _ci(run["gamma_a"], half), "gamma_r": _ci(run["gamma_r"], half)}
    return run


def classification_doc(cells: Mapping[tuple[str, int], float] = CELLS, clean_top1: float = 0.76,
                       clean_top5: float | None = 0.93, *, metric: str = "top1", modality: str = "image",
                       baseline: str | None = None, half: float | None = None, model: str = "hf:tiny/vit@1#classify@1f",
                       n_items: int = 5000, labels: Sequence[str] = LABELS) -> dict[str, Any]:
    """A classification results document: one run per cell (``op`` or ``op:suite``, severity → top-1
    accuracy; top-5 is top-1 + 0.2), ``half`` the half-width of every CI (None: no bootstrap), and
    ``suites`` summarised with ``baseline`` errors (a built-in name) where given."""
    clean: dict[str, Any] = {"top1": clean_top1}
    if clean_top5 is not None:
        clean["top5"] = clean_top5
    runs = [_run(op, s, a, clean, metric, modality, half) for (op, s), a in cells.items()]
    if half is not None:
        clean["ci"] = {k: _ci(v, half) for k, v in clean.items()}
    doc: dict[str, Any] = {
        "schema_version": "1.3", "task": "classify", "perturb_version": "0.3.0",
        "model": {"id": model, "kind": "classifier", "card": {"family": "vit", "frames": 1, "sampling": "middle"}},
        "dataset": {"name": "imagenet-val", "path": "/data/val", "n_items": n_items, "subset": None, "seed": 0,
                    "media": modality, "classes": len(labels), "recipe": "imagenet-c"},
        "metric": metric, "ties": "pessimistic",
        "bootstrap": None if half is None else {"n": 1000, "seed": 0, "level": 0.95},
        "clean": clean, "runs": runs, "summary": summarize(runs),
        "chance": {"top1": 1 / len(labels), "top5": 5 / len(labels)},
        "classification": {"labels": list(labels), "zero_shot": None},
    }
    doc["suites"] = summarize_suites(doc, load_baseline(baseline) if baseline else None)
    return doc


def write(path: Path, doc: Mapping[str, Any]) -> Path:
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path
