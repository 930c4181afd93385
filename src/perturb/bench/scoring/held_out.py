"""The seen/held-out split of a run (``perturb bench --trained-with``): the visual runs whose op the
model was trained with are **seen**, every other visual run is **held out**; text and pair runs
belong to neither. Each part is scored by the run's own scorers applied to its runs: γa and γr
(mean ± std, :func:`.robustness.aggregate`), their bootstrap intervals
(:func:`.bootstrap.mean_gamma_bootstrap`, the same resamples as the whole run's), mPC and rPC
(:func:`.corruption.performance_under_corruption`), and ImageNet-C's CE figures
(:func:`.corruption.corruption_errors`) where a baseline covers every op of the part.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ...metric_names import PARTS, VISUAL, record_value
from .baselines import Baseline
from .bootstrap import mean_gamma_bootstrap
from .corruption import corruption_errors, operation_name, performance_under_corruption
from .robustness import aggregate

PART_WORDS = {"seen": "seen", "held_out": "held-out"}


def part_of(run: Mapping[str, Any], seen: Iterable[str]) -> str | None:
    """``seen`` or ``held_out`` for a visual run (by its op's registry name), None for a text or pair run."""
    if run.get("modality") not in VISUAL:
        return None
    return "seen" if operation_name(run["perturbation"]) in set(seen) else "held_out"


def part_positions(runs: Sequence[Mapping[str, Any]], seen: Iterable[str]) -> dict[str, list[int]]:
    """Per part, the positions of its runs in ``runs``."""
    seen = set(seen)
    out: dict[str, list[int]] = {part: [] for part in PARTS}
    for i, run in enumerate(runs):
        part = part_of(run, seen)
        if part is not None:
            out[part].append(i)
    return out


def part_figures(runs: Sequence[Mapping[str, Any]], clean: float, metric: str,
                 baseline: Baseline | None = None) -> dict[str, Any]:
    """mPC and rPC over the part's runs (every run one cell; ``{}`` for an empty part) and, with a
    ``baseline`` holding errors for every op of the part (each op and severity run once), mCE,
    relative mCE and the rest of :func:`.corruption.corruption_errors`."""
    if not runs:
        return {}
    values = [record_value(r, metric) for r in runs]
    figures: dict[str, Any] = performance_under_corruption(
        {(r["perturbation"], int(r["severity"])): v for r, v in zip(runs, values)}, clean)
    by_name = {(operation_name(r["perturbation"]), int(r["severity"])): v for r, v in zip(runs, values)}
    if baseline is not None and len(by_name) == len(runs):
        errors = corruption_errors(by_name, clean, baseline)
        if not errors["without_baseline"]:
            figures.update(errors)
    return figures


def part_entry(runs: Sequence[Mapping[str, Any]], clean: float, metric: str, baseline: Baseline | None,
               ci: dict[str, list[float | None]] | None) -> dict[str, Any]:
    """One part of ``split``: its ops (registry names, run order), configurations, γ mean ± std,
    the intervals of the mean γ (None without bootstrap or runs) and its figures."""
    return {"operations": list(dict.fromkeys(operation_name(r["perturbation"]) for r in runs)),
            "configurations": len(runs), **aggregate(list(runs)), "ci": ci,
            "figures": part_figures(runs, clean, metric, baseline)}


def split_summary(doc: Mapping[str, Any], seen: Iterable[str], clean_values: Any, run_values: Sequence[Any],
                  baseline: Baseline | None = None) -> dict[str, dict[str, Any]]:
    """``{"seen": ..., "held_out": ...}`` of a results document (:func:`part_entry`): ``clean_values``
    and ``run_values`` are the clean run's and each run's per-query (per-sample) values of the
    document's metric, in run order, for the intervals."""
    runs, metric, boot = doc["runs"], doc["metric"], doc.get("bootstrap")
    clean = record_value(doc["clean"], metric)
    out = {}
    for part, positions in part_positions(runs, seen).items():
        ci = mean_gamma_bootstrap(clean_values, [run_values[i] for i in positions], boot["n"], boot["seed"],
                                  boot["level"]) if boot and positions else None
        out[part] = part_entry([runs[i] for i in positions], clean, metric, baseline, ci)
    return out


def with_baseline(doc: Mapping[str, Any], baseline: Baseline) -> dict[str, Any]:
    """A document's ``split`` with each part's figures computed anew against ``baseline`` (``perturb
    report --baseline-errors``); the intervals are kept, as they need the per-query values."""
    split = dict(doc["split"])
    positions = part_positions(doc["runs"], split["trained_with"]["operations"])
    clean = record_value(doc["clean"], doc["metric"])
    for part in PARTS:
        runs = [doc["runs"][i] for i in positions[part]]
        split[part] = {**split[part], "figures": part_figures(runs, clean, doc["metric"], baseline)}
    return split
