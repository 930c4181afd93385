"""Hand-made results.json documents for the gate tests, following the runner's contract."""
from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean, pstdev
from typing import Any

CATEGORY = {"gaussian_noise": ("video", "noise"), "shot_noise": ("video", "noise"),
            "motion_blur": ("video", "blur"), "Typos": ("text", "ChangeChar")}
# Perturbed t2v.R@5 per severity (text perturbations have one run, severity null).
DEFAULT_PERTURBED = {"gaussian_noise": [0.58, 0.55, 0.50, 0.45, 0.40],
                     "shot_noise": [0.59, 0.56, 0.52, 0.48, 0.44],
                     "motion_blur": [0.60, 0.58, 0.57, 0.55, 0.52],
                     "Typos": [0.54]}


def _metrics(a: float) -> dict[str, float]:
    return {"R@1": round(a / 2, 6), "R@5": a, "R@10": min(1.0, round(a * 1.2, 6)),
            "MdR": round(1 + 10 * (1 - a), 6), "MnR": round(2 + 20 * (1 - a), 6)}


def _agg(runs: list[dict]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for g in ("gamma_a", "gamma_r"):
        vals = [r[g] for r in runs if r[g] is not None]
        out[f"{g}_mean"] = fmean(vals) if vals else None
        out[f"{g}_std"] = pstdev(vals) if vals else None
    return out


def _group(runs: list[dict], key: str) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in runs:
        groups.setdefault(r[key], []).append(r)
    return groups


def summary_of(runs: list[dict]) -> dict:
    """The summary section the runner writes for these runs (γ mean and std per group)."""
    return {"perturbation": {n: {"modality": g[0]["modality"], "category": g[0]["category"], **_agg(g)}
                             for n, g in _group(runs, "perturbation").items()},
            "category": {n: {"modality": g[0]["modality"], **_agg(g)}
                         for n, g in _group(runs, "category").items()},
            "modality": {n: _agg(g) for n, g in _group(runs, "modality").items()}}


def make_results(perturbed: dict[str, list[float]] | None = None, clean: float = 0.6,
                 ci: float | None = None, schema: str = "1.0", subset: int | None = None,
                 **top: Any) -> dict:
    """A results document: t2v.R@5 clean and per run, γ computed, summary aggregated.

    ``ci`` adds symmetric bootstrap intervals of that half-width to the metric and to γ."""
    perturbed = DEFAULT_PERTURBED if perturbed is None else perturbed
    runs = []
    for name, values in perturbed.items():
        modality, category = CATEGORY[name]
        for i, a in enumerate(values):
            run = {"modality": modality, "perturbation": name, "category": category,
                   "severity": (i + 1) if modality == "video" else None,
                   "t2v": _metrics(a), "v2t": _metrics(a),
                   "gamma_a": 1 - (clean - a), "gamma_r": 1 - (clean - a) / clean if clean else None}
            if ci is not None:
                run["ci"] = {"metric": [a - ci, a + ci],
                             "gamma_a": [run["gamma_a"] - ci, run["gamma_a"] + ci],
                             "gamma_r": [run["gamma_r"] - ci / clean, run["gamma_r"] + ci / clean]}
            runs.append(run)
    summary = summary_of(runs)
    doc = {"schema_version": schema, "perturb_version": "0.1.0",
           "model": {"id": "toy:", "kind": "dual"},
           "dataset": {"name": "demo", "path": "demo", "n_items": 40, "subset": subset, "seed": 0},
           "metric": "t2v.R@5",
           "bootstrap": {"n": 1000, "seed": 0, "level": 0.95} if ci is not None else None,
           "clean": {"t2v": _metrics(clean), "v2t": _metrics(clean)},
           "runs": runs, "summary": summary}
    if ci is not None:
        doc["clean"]["ci"] = {"metric": [clean - ci, clean + ci]}
    doc.update(top)
    return doc


def write(path: Path, doc: dict) -> Path:
    """Write a document as JSON and return the path."""
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
