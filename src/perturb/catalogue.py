"""Read-only views of the registry: ``perturb.list()``, ``perturb.describe()``."""
from __future__ import annotations

from typing import Any

from .registry import REGISTRY


def list_perturbations(modality: str | None = None, category: str | None = None,
                       suite: str | None = None) -> list[dict[str, Any]]:
    """One dict per registered perturbation: name, modality, category, aliases, flags and the
    suites it is in, and ``params``: each severity's parameters (under ``suite``'s table when one
    is named). ``suite`` keeps that suite's registered members (``table``: the suite's table
    where it differs from the op's own, else "")."""
    specs = REGISTRY.select(modality, category)
    if suite is not None:
        members = {s.name: s for s in REGISTRY.suite_specs(suite, missing_ok=True)}
        specs = [members[s.name] for s in specs if s.name in members]
    return [{"name": s.name, "modality": s.modality, "category": s.category,
             "aliases": list(s.aliases), "severities": sorted(s.severities) if s.severities else [],
             "temporal": s.temporal, "random": s.random, "needs_model": s.needs_model,
             "summary": s.summary, "suites": REGISTRY.suites_of(s.name), "table": s.table,
             "params": {str(sev): dict(p) for sev, p in sorted((s.severities or {}).items())}}
            for s in specs]


def severity_cell(row: dict[str, Any]) -> str:
    """A listing's severities: "1-5", and the source's own points where its table names them in
    a ``level`` column (ImageNet-C-bar's 1-10 scale): "1-5 = levels 2.35,3.2,4.9,6.6,9.15"."""
    if not row["severities"]:
        return "-"
    text = f"{min(row['severities'])}-{max(row['severities'])}"
    levels = [p["level"] for p in row["params"].values() if "level" in p]
    return f"{text} = levels {','.join(f'{v:g}' for v in levels)}" if levels else text


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
    suites = REGISTRY.suites_of(s.name)
    if suites:
        lines.append(f"  suites: {', '.join(suites)}")
    if s.severities:
        for sev, params in sorted(s.severities.items()):
            line = f"  severity {sev}: {_show(params)}"
            if s.paper and sev in s.paper:
                line += f"   (paper: {_show(s.paper[sev])})"
            lines.append(line)
    for other in (REGISTRY.bind(s, suite) for suite in suites):
        if other.table:
            lines.append(f"  {other.table} table (selected as {other.ref}, or through suite:{other.table}):")
            lines += [f"    severity {sev}: {_show(params)}" for sev, params in sorted(other.severities.items())]
    if s.deviation:
        lines.append(f"  deviation from the paper: {s.deviation}")
    return "\n".join(lines)
