"""Read-only views of the registry: ``perturb.list()``, ``perturb.describe()``."""
from __future__ import annotations

from typing import Any

from .registry import REGISTRY


def list_perturbations(modality: str | None = None, category: str | None = None) -> list[dict[str, Any]]:
    """One dict per registered perturbation: name, modality, category, aliases and flags."""
    return [{"name": s.name, "modality": s.modality, "category": s.category,
             "aliases": list(s.aliases), "severities": sorted(s.severities) if s.severities else [],
             "temporal": s.temporal, "random": s.random, "needs_model": s.needs_model,
             "summary": s.summary}
            for s in REGISTRY.select(modality, category)]


def _show(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def describe(name: str) -> str:
    """A human-readable description of one perturbation: what it does and its parameters."""
    s = REGISTRY.get(name)
    lines = [f"{s.name} ({s.modality} / {s.category})", f"  {s.summary}"]
    if s.aliases:
        lines.append(f"  aliases: {', '.join(s.aliases)}")
    flags = [f for f, on in (("temporal", s.temporal), ("random", s.random),
                             ("needs a model", s.needs_model)) if on]
    if flags:
        lines.append(f"  flags: {', '.join(flags)}")
    if s.severities:
        for sev, params in sorted(s.severities.items()):
            line = f"  severity {sev}: {_show(params)}"
            if s.paper and sev in s.paper:
                line += f"   (paper: {_show(s.paper[sev])})"
            lines.append(line)
    if s.deviation:
        lines.append(f"  deviation from the paper: {s.deviation}")
    return "\n".join(lines)
