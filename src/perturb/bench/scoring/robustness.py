"""Robustness scores γa, γr (Schiappa et al.) and their aggregation per perturbation, category, modality.

γa = 1 − (A_c − A_p) and γr = 1 − (A_c − A_p) / A_c for a metric A in [0, 1]. When A_c = 0,
γr is undefined: it is NaN here and ``null`` in results.json. Aggregates are the mean and
population standard deviation over runs, ignoring NaN; all-NaN gives None.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np


def gamma_a(clean: Any, perturbed: Any) -> Any:
    """Absolute robustness 1 − (A_c − A_p); works on floats and arrays."""
    out = 1.0 - (np.asarray(clean, dtype=np.float64) - np.asarray(perturbed, dtype=np.float64))
    return float(out) if out.ndim == 0 else out


def gamma_r(clean: Any, perturbed: Any) -> Any:
    """Relative robustness 1 − (A_c − A_p)/A_c; NaN where A_c = 0."""
    c = np.asarray(clean, dtype=np.float64)
    p = np.asarray(perturbed, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(c == 0, np.nan, 1.0 - (c - p) / np.where(c == 0, 1.0, c))
    return float(out) if out.ndim == 0 else out


def gamma_record(clean: float, perturbed: float) -> dict[str, float | None]:
    """``{"gamma_a": ..., "gamma_r": ...}`` of one run as results.json holds them (an undefined γ: None)."""
    return {name: (None if np.isnan(value) else float(value))
            for name, value in (("gamma_a", gamma_a(clean, perturbed)), ("gamma_r", gamma_r(clean, perturbed)))}


def _mean_std(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    v = np.array([np.nan if x is None else x for x in values], dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None, None
    return float(v.mean()), float(v.std())


def aggregate(runs: list[Mapping[str, Any]]) -> dict[str, float | None]:
    """``gamma_a_mean``, ``gamma_a_std``, ``gamma_r_mean``, ``gamma_r_std`` over ``runs`` (None when none is defined)."""
    out: dict[str, float | None] = {}
    for g in ("gamma_a", "gamma_r"):
        out[f"{g}_mean"], out[f"{g}_std"] = _mean_std(r.get(g) for r in runs)
    return out


def _grouped(runs: list[Mapping[str, Any]], key: str) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in runs:
        groups.setdefault(r[key], []).append(r)
    return groups


def summarize(runs: list[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per-perturbation (over severities), per-category and per-modality mean ± std of γa and γr."""
    summary: dict[str, dict[str, dict[str, Any]]] = {"perturbation": {}, "category": {}, "modality": {}}
    for name, group in _grouped(runs, "perturbation").items():
        summary["perturbation"][name] = {"modality": group[0]["modality"],
                                         "category": group[0]["category"], **aggregate(group)}
    for name, group in _grouped(runs, "category").items():
        summary["category"][name] = {"modality": group[0]["modality"], **aggregate(group)}
    for name, group in _grouped(runs, "modality").items():
        summary["modality"][name] = aggregate(group)
    return summary
