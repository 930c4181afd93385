"""What a rule or a comparison is about: every perturbation, one perturbation, a category or a modality."""
from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Any, Mapping

from ..errors import GateInputError
from ..names import normalize, unknown_name
from ..registry import REGISTRY
from ..metric_names import MODALITIES, Metric, figure_value, part_value
from ..results import Results

EACH = "each"        # the kind of a scope meaning "every perturbation, one by one"


@dataclass(frozen=True)
class Scope:
    """A selection of runs; ``present`` is False for a known name that the results never ran."""

    kind: str                     # "each", or a run field: "perturbation", "category", "modality"
    name: str | None = None
    severity: int | None = None
    present: bool = True

    @property
    def label(self) -> str:
        base = "*" if self.kind == EACH else str(self.name)
        return base if self.severity is None else f"{base}@{self.severity}"


def _match(name: str, pool: list[str]) -> str | None:
    key = normalize(name)
    return next((p for p in pool if normalize(p) == key), None)


def _operation(perturbation: str) -> str | None:
    """The registry's name of a run's perturbation (``fog:imagenet-c`` -> ``fog``); None for a pair or
    a name this installation does not know."""
    try:
        return REGISTRY.get(perturbation).name
    except ValueError:            # UnknownPerturbationError is one
        return None


def _registry_categories() -> list[str]:
    return list(dict.fromkeys(c for m in ("video", "text") for c in REGISTRY.categories(m)))


def resolve_scope(results: Results, text: str | None, severity: int | None = None) -> Scope:
    """A scope name → Scope; registry names absent from the results resolve with present=False."""
    if text is None or text.strip() in ("", "*", "all"):
        return Scope(EACH, None, severity)
    text = text.strip()
    perts, cats = list(results.perturbations()), results.categories()
    if (found := _match(text, perts)) is not None:
        return Scope("perturbation", found, severity)
    if text in REGISTRY:
        canonical = REGISTRY.get(text).name
        found = next((p for p in perts if _operation(p) == canonical), None)     # fog runs as fog:imagenet-c
        return Scope("perturbation", found or canonical, severity, present=found is not None)
    if (found := _match(text, cats)) is not None:
        return Scope("category", found, severity)
    if (found := _match(text, _registry_categories())) is not None:
        return Scope("category", found, severity, present=False)
    if (found := _match(text, MODALITIES)) is not None:
        return Scope("modality", found, severity, present=found in results.modalities())
    pool = perts + [s.name for s in REGISTRY if s.name not in perts] + cats + \
        [c for c in _registry_categories() if c not in cats] + list(MODALITIES)
    valid = list(dict.fromkeys(["*"] + pool))
    raise GateInputError(unknown_name("perturbation, category or modality", text, {v: v for v in valid}, valid))


def each_perturbation(results: Results, severity: int | None = None) -> list[Scope]:
    """One perturbation scope per perturbation in the results, in run order."""
    return [Scope("perturbation", name, severity) for name in results.perturbations()]


def select_runs(results: Results, scope: Scope) -> list[Mapping[str, Any]]:
    """The runs a (non-'each') scope covers, filtered by severity when it has one."""
    return [r for r in results.runs if r[scope.kind] == scope.name
            and (scope.severity is None or r["severity"] == scope.severity)]


def _summary_value(results: Results, scope: Scope, metric: Metric) -> float | None:
    if not metric.is_gamma or scope.severity is not None:
        return None
    entry = results.summary.get(scope.kind, {}).get(scope.name) or {}
    value = entry.get(f"{metric.key}_mean")
    return None if value is None else float(value)


def scope_value(results: Results, scope: Scope | None, metric: Metric) -> float | None:
    """The metric over a scope: clean value, a part's γ mean or figure, a suite's figure, the summary's γ
    mean, or the mean over its runs."""
    if metric.part:
        return part_value(results, metric)
    if metric.clean:
        return metric.of(results.clean)
    if metric.is_figure:
        return figure_value(results, metric.key)
    summary = _summary_value(results, scope, metric)
    if summary is not None:
        return summary
    values = [v for v in (metric.of(r) for r in select_runs(results, scope)) if v is not None]
    return fmean(values) if values else None
