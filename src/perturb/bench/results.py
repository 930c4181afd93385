"""The benchmark's results document: clean and per-run retrieval scores (or a classifier's top-k
accuracies), γ, CIs and summaries, built from the rankings (the contract, its writers and readers live in :mod:`perturb.results`)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..honesty import chance_levels, flags
from ..metric_names import DIRECTIONS, Metric, gamma_metric, measured_names
from ..results import SCHEMA_VERSION
from .scoring.classification import accuracy_summary, robustness_summary
from .scoring.bootstrap import bootstrap_ci, mean_gamma_bootstrap, paired_bootstrap
from .pipeline.data import BenchData
from .pipeline.encoder import Ranked
from .scoring.metrics import summarise
from .scoring.robustness import gamma_record, summarize


def per_query(ranked: Ranked, metric: Metric) -> np.ndarray:
    """The per-query values whose mean is the metric (hits for R@K, average precision for mAP, ...)."""
    values = ranked.values[metric.direction]
    if metric.key not in values:
        kind = metric.kind
        if kind is not None and kind.needs_judgements:
            raise ValueError(f"{metric.key} needs a judgements file (--judgements) so extra positives are known")
        raise ValueError(f"{metric.name} was not measured (measured: {', '.join(values)})")
    return values[metric.key]


def metric_values(clean: Ranked, runs: Sequence[Ranked], metric: Metric | str,
                  task: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """The per-query (a classification run: per-sample) values of the metric γ is computed on, clean
    and per run: what the bootstrap resamples."""
    if task == "classify":
        return clean.values["classify"][str(metric)], [r.values["classify"][str(metric)] for r in runs]
    parsed = gamma_metric(metric)
    return per_query(clean, parsed), [per_query(r, parsed) for r in runs]


def _run_record(ranked: Ranked, clean: Ranked, metric: Metric,
                bootstrap: dict[str, Any] | None) -> dict[str, Any]:
    job = ranked.job
    rec: dict[str, Any] = {"modality": job.modality, "perturbation": job.perturbation,
                           "category": job.category, "severity": job.severity,
                           **{d: summarise(ranked.values[d]) for d in DIRECTIONS}}
    a_c = float(np.mean(per_query(clean, metric)))
    a_p = float(np.mean(per_query(ranked, metric)))
    rec.update(gamma_record(a_c, a_p))
    if bootstrap:
        rec["ci"] = paired_bootstrap(per_query(clean, metric), per_query(ranked, metric),
                                     bootstrap["n"], bootstrap["seed"], bootstrap["level"])
    return rec


def build_results(model: dict[str, Any], data: BenchData, metric: str | Metric, clean: Ranked,
                  runs: Sequence[Ranked], bootstrap: dict[str, Any] | None = None,
                  extra: dict[str, Any] | None = None, ties: str = "pessimistic") -> dict[str, Any]:
    """The results document for one model on one dataset; ``ties`` is how its ranks broke ties."""
    from ..version import __version__

    parsed = gamma_metric(metric)
    clean_rec: dict[str, Any] = {d: summarise(clean.values[d]) for d in DIRECTIONS}
    if bootstrap:
        clean_rec["ci"] = {"metric": bootstrap_ci(per_query(clean, parsed), bootstrap["n"],
                                                  bootstrap["seed"], bootstrap["level"])}
    records = [_run_record(r, clean, parsed, bootstrap) for r in runs]
    summary = summarize(records)
    if bootstrap:
        for modality, agg in summary["modality"].items():
            agg["ci"] = mean_gamma_bootstrap(per_query(clean, parsed),
                                             [per_query(r, parsed) for r in runs if r.job.modality == modality],
                                             bootstrap["n"], bootstrap["seed"], bootstrap["level"])
    doc = {
        "schema_version": SCHEMA_VERSION, "perturb_version": __version__, "model": model,
        "dataset": {"name": data.name, "path": data.path, "n_items": len(data.items),
                    "subset": data.subset, "seed": data.seed},
        "metric": parsed.name, "ties": ties, "bootstrap": bootstrap, "clean": clean_rec,
        "chance": chance_levels(data.gains, measured_names(parsed.key, judged=True)), "runs": records, "summary": summary,
    }
    if extra:
        doc.update(extra)
    doc["flags"] = flags(doc)
    return doc


def _classification_run(job: Any, correct: dict[str, np.ndarray], clean: dict[str, np.ndarray], metric: str,
                        media: str, bootstrap: dict[str, Any] | None) -> dict[str, Any]:
    """One perturbed configuration's record: accuracies, γ on ``metric``, their paired intervals."""
    scored = robustness_summary(clean, correct, bootstrap["n"] if bootstrap else 0,
                                bootstrap["seed"] if bootstrap else 0, bootstrap["level"] if bootstrap else 0.95)
    rec: dict[str, Any] = {"modality": media, "perturbation": job.perturbation, "category": job.category,
                           "severity": job.severity, **{k: v["accuracy"] for k, v in scored.items()},
                           "gamma_a": scored[metric]["gamma_a"], "gamma_r": scored[metric]["gamma_r"]}
    if bootstrap:
        ci = {k: v["ci"]["metric"] for k, v in scored.items()}
        rec["ci"] = {**ci, "gamma_a": scored[metric]["ci"]["gamma_a"], "gamma_r": scored[metric]["ci"]["gamma_r"]}
    return rec


def build_classification_results(model: dict[str, Any], data: BenchData, clean: dict[str, np.ndarray],
                                 runs: Sequence[tuple[Any, dict[str, np.ndarray]]],
                                 bootstrap: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
                                 ties: str = "pessimistic", metric: str = "top1",
                                 labels: Sequence[str] = (), recipe: str | None = None) -> dict[str, Any]:
    """The results document of a classification run (docs/results-schema.md, task ``classify``):
    ``clean`` and each run's per-sample top-k correctness (``{"top1": (N,), "top5": (N,)}``),
    ``labels`` the model's class names in logit order."""
    from ..version import __version__

    if metric not in clean:
        raise ValueError(f"metric {metric!r} was not measured (measured: {', '.join(clean)})")
    boot = bootstrap or {}
    clean_rec: dict[str, Any] = {k: v["accuracy"] for k, v in accuracy_summary(clean, 0).items()}
    if bootstrap:
        clean_rec["ci"] = {k: v["ci"] for k, v in
                           accuracy_summary(clean, boot["n"], boot["seed"], boot["level"]).items()}
    records = [_classification_run(job, correct, clean, metric, data.media, bootstrap) for job, correct in runs]
    n_classes = len(labels)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "task": "classify", "perturb_version": __version__, "model": model,
        "dataset": {"name": data.name, "path": data.path, "n_items": len(data.items), "subset": data.subset,
                    "seed": data.seed, "media": data.media, "classes": n_classes, "recipe": recipe},
        "metric": metric, "ties": ties, "bootstrap": bootstrap, "clean": clean_rec,
        "chance": {k: min(1.0, int(k[3:]) / n_classes) for k in clean} if n_classes else None,
        "runs": records, "summary": summarize(records),
        "classification": {"labels": list(labels), "zero_shot": (model.get("card") or {}).get("zero_shot")},
    }
    if extra:
        doc.update(extra)
    doc["flags"] = flags(doc)
    return doc
