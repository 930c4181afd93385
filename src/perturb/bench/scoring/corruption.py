"""The corruption suites' aggregates, one implementation for every task (retrieval's suite summary,
classification): ImageNet-C's CE, mCE and relative mCE against a baseline (Hendrycks & Dietterich
2019), Kinetics-C's mPC and rPC (Yi et al. 2021).

``cells`` map (operation, severity) to a metric in [0, 1] where higher is better (top-1 accuracy,
or a retrieval run's metric); its error is E = 1 − metric. ``clean`` is the metric on clean data.

- per operation c: CE_c = Σ_s E_s / Σ_s E^b_s over the severities run; relative CE_c =
  Σ_s (E_s − E_clean) / Σ_s (E^b_s − E^b_clean), needing the baseline's clean error;
- mCE and relative mCE: their means over the operations with a CE (only those of the baseline's
  ``mce_over`` where it names them);
- mPC: the mean metric over every cell; rPC = mPC / clean.
"""
from __future__ import annotations

from typing import Any, Mapping

from ...errors import UnknownPerturbationError
from ...registry import REGISTRY
from ...selection import SEVERITY_LEVELS
from .baselines import Baseline

Cells = Mapping[tuple[str, int], float]


def operation_name(op: str) -> str:
    """The registry's name of ``op`` (``jpeg_compression`` -> ``jpeg``; a table suffix dropped), or
    ``op`` itself where this installation does not know it."""
    try:
        return REGISTRY.get(op, "video").name
    except (UnknownPerturbationError, ValueError):
        return op


def _by_operation(cells: Cells) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    for (op, severity), value in cells.items():
        out.setdefault(operation_name(op), {})[int(severity)] = float(value)
    return out


def performance_under_corruption(cells: Cells, clean: float) -> dict[str, float | None]:
    """Kinetics-C's mPC (mean metric over every cell) and rPC = mPC / clean (None where clean is 0)."""
    if not cells:
        raise ValueError("mPC needs at least one (operation, severity) cell")
    mpc = sum(float(v) for v in cells.values()) / len(cells)
    return {"mPC": mpc, "rPC": mpc / clean if clean else None}


def _baseline_errors(baseline: Baseline, op: str, severities: list[int]) -> tuple[float | None, str | None]:
    """Σ_s E^b_s over ``severities``, or None and a one-line note why it cannot be had."""
    if op in baseline.errors:
        return sum(baseline.errors[op][s] for s in severities), None
    if sorted(severities) != list(SEVERITY_LEVELS):
        return None, (f"baseline {baseline.name} holds only {op}'s mean error over severities 1..5, so its CE "
                      f"needs all five run; got {', '.join(map(str, sorted(severities)))}")
    return len(SEVERITY_LEVELS) * baseline.means[op], None


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _mean(values: list[float | None]) -> float | None:
    finite = [v for v in values if v is not None]
    return sum(finite) / len(finite) if finite else None


def corruption_errors(cells: Cells, clean: float, baseline: Baseline) -> dict[str, Any]:
    """ImageNet-C's figures against ``baseline`` (module doc): ``CE`` and ``relative_CE`` per operation,
    ``mCE`` and ``relative_mCE``, the operations ``without_baseline``, those ``outside_mce`` (a CE,
    but not among the baseline's ``mce_over``) and one-line ``notes``. Errors are fractions (0.7638
    for 76.38%). Relative CE is None where the baseline has no clean error."""
    ce: dict[str, float | None] = {}
    rel: dict[str, float | None] = {}
    without: list[str] = []
    notes: list[str] = []
    clean_error = 1.0 - clean
    for op, by_sev in _by_operation(cells).items():
        severities = sorted(by_sev)
        if op not in baseline or (op in baseline.errors and not set(severities) <= set(baseline.errors[op])):
            without.append(op)
            continue
        denom, note = _baseline_errors(baseline, op, severities)
        if denom is None:
            without.append(op)
            notes.append(note)
            continue
        errors = sum(1.0 - v for v in by_sev.values())
        ce[op] = _ratio(errors, denom)
        rel[op] = None if baseline.clean is None else \
            _ratio(errors - len(severities) * clean_error, denom - len(severities) * baseline.clean)
    counted = [op for op in ce if baseline.mce_over is None or op in baseline.mce_over]
    return {"mCE": _mean([ce[op] for op in counted]), "CE": ce,
            "relative_mCE": _mean([rel[op] for op in counted]), "relative_CE": rel,
            "without_baseline": without, "outside_mce": [op for op in ce if op not in counted],
            "notes": notes, "baseline": baseline.name}


def corruption_summary(cells: Cells, clean: float, baseline: Baseline | None = None) -> dict[str, Any]:
    """mPC and rPC, and with ``baseline`` ImageNet-C's CE figures too: what a classification run's
    corruption cells and clean top-1 report (``cells`` as in the module doc)."""
    return {**performance_under_corruption(cells, clean),
            **(corruption_errors(cells, clean, baseline) if baseline is not None else {})}
