"""results.json (schema ``SCHEMA_VERSION``, documented in docs/results-schema.md) and tidy results.csv."""
from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..fileio import write_atomic
from .bootstrap import bootstrap_ci, mean_gamma_bootstrap, paired_bootstrap
from .data import BenchData
from .metrics import KS, rank_summary
from .honesty import chance_levels, flags
from .robustness import gamma_a, gamma_r, summarize
from .runner import Ranked

SCHEMA_VERSION = "1.2"         # 1.1 added "ties"; 1.2 "chance", "flags", summary.modality.*.ci
DIRECTIONS = ("t2v", "v2t")
GAMMA_METRICS = tuple(f"R@{k}" for k in KS) + ("mAP",)


def parse_metric(metric: str) -> tuple[str, str]:
    """``"t2v.R@5"`` → ("t2v", "R@5"); a bare ``"R@5"`` means text→video."""
    direction, _, name = metric.rpartition(".")
    direction = direction or "t2v"
    if direction not in DIRECTIONS or name not in GAMMA_METRICS:
        raise ValueError(f"--metric must be [t2v.|v2t.]R@1|R@5|R@10|mAP (a value in [0, 1], so γ is "
                         f"defined); got {metric!r}")
    return direction, name


def per_query(ranked: Ranked, direction: str, name: str) -> np.ndarray:
    """The per-query values whose mean is the metric (hits for R@K, average precision for mAP)."""
    if name == "mAP":
        if direction not in ranked.ap:
            raise ValueError("mAP needs a judgements file (--judgements) so extra positives are known")
        return ranked.ap[direction]
    k = int(name.split("@")[1])
    return (getattr(ranked, direction) <= k).astype(np.float64)


def _direction(ranked: Ranked, direction: str) -> dict[str, float]:
    out = rank_summary(getattr(ranked, direction))
    if direction in ranked.ap:
        out["mAP"] = float(np.mean(ranked.ap[direction]))
    return out


def _none_if_nan(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _run_record(ranked: Ranked, clean: Ranked, metric: tuple[str, str],
                bootstrap: dict[str, Any] | None) -> dict[str, Any]:
    job = ranked.job
    rec: dict[str, Any] = {"modality": job.modality, "perturbation": job.perturbation,
                           "category": job.category, "severity": job.severity,
                           "t2v": _direction(ranked, "t2v"), "v2t": _direction(ranked, "v2t")}
    a_c = float(np.mean(per_query(clean, *metric)))
    a_p = float(np.mean(per_query(ranked, *metric)))
    rec["gamma_a"] = _none_if_nan(gamma_a(a_c, a_p))
    rec["gamma_r"] = _none_if_nan(gamma_r(a_c, a_p))
    if bootstrap:
        rec["ci"] = paired_bootstrap(per_query(clean, *metric), per_query(ranked, *metric),
                                     bootstrap["n"], bootstrap["seed"], bootstrap["level"])
    return rec


def build_results(model: dict[str, Any], data: BenchData, metric: str, clean: Ranked,
                  runs: Sequence[Ranked], bootstrap: dict[str, Any] | None = None,
                  extra: dict[str, Any] | None = None, ties: str = "pessimistic") -> dict[str, Any]:
    """The results document for one model on one dataset; ``ties`` is how its ranks broke ties."""
    from ..version import __version__

    parsed = parse_metric(metric)
    clean_rec: dict[str, Any] = {"t2v": _direction(clean, "t2v"), "v2t": _direction(clean, "v2t")}
    if bootstrap:
        clean_rec["ci"] = {"metric": bootstrap_ci(per_query(clean, *parsed), bootstrap["n"],
                                                  bootstrap["seed"], bootstrap["level"])}
    records = [_run_record(r, clean, parsed, bootstrap) for r in runs]
    summary = summarize(records)
    if bootstrap:
        for modality, agg in summary["modality"].items():
            agg["ci"] = mean_gamma_bootstrap(per_query(clean, *parsed),
                                             [per_query(r, *parsed) for r in runs if r.job.modality == modality],
                                             bootstrap["n"], bootstrap["seed"], bootstrap["level"])
    doc = {
        "schema_version": SCHEMA_VERSION, "perturb_version": __version__, "model": model,
        "dataset": {"name": data.name, "path": data.path, "n_items": len(data.items),
                    "subset": data.subset, "seed": data.seed},
        "metric": f"{parsed[0]}.{parsed[1]}", "ties": ties, "bootstrap": bootstrap, "clean": clean_rec,
        "chance": chance_levels(data.relevance), "runs": records, "summary": summary,
    }
    if extra:
        doc.update(extra)
    doc["flags"] = flags(doc)
    return doc


def write_json(doc: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write results.json atomically (NaN is never written: γr of A_c = 0 is null)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode())
    return path


def load_results(path: str | os.PathLike) -> dict[str, Any]:
    """Read a results.json, checking its schema major version; a ValueError names the file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read results file {str(path)!r}: {e}") from e
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: expected a JSON object (a results.json); got {type(doc).__name__}")
    version = str(doc.get("schema_version", ""))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise ValueError(f"{path}: expected results schema_version {SCHEMA_VERSION.split('.')[0]}.x; "
                         f"got {version or 'none'}")
    return doc


CSV_FIELDS = ("model", "dataset", "modality", "perturbation", "category", "severity", "measure", "value")


def tidy_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (run, measure): t2v.R@1 ... v2t.MnR, gamma_a, gamma_r; the clean run first."""
    base = {"model": doc["model"]["id"], "dataset": doc["dataset"]["name"]}
    rows = []
    runs = [{"modality": "clean", "perturbation": "clean", "category": "clean", "severity": None,
             **doc["clean"]}] + list(doc["runs"])
    for run in runs:
        ident = {**base, **{k: run[k] for k in ("modality", "perturbation", "category", "severity")}}
        for direction in DIRECTIONS:
            rows += [{**ident, "measure": f"{direction}.{m}", "value": v} for m, v in run[direction].items()]
        rows += [{**ident, "measure": g, "value": run[g]} for g in ("gamma_a", "gamma_r") if g in run]
    return rows


def write_csv(doc: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write the tidy results.csv (empty cells for null)."""
    path = Path(path)
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    w.writeheader()
    for row in tidy_rows(doc):
        w.writerow({k: "" if row[k] is None else row[k] for k in CSV_FIELDS})
    write_atomic(path, buf.getvalue().encode("utf-8"))      # a reader never sees half a table
    return path
