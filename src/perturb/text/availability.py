"""Which selected text perturbations can run here.

A selection through ``all``, a category or a suite leaves out the model-based perturbations whose
model nobody configured, and says so (which, why, how to enable them); a perturbation named on its
own that cannot run is a usage error before any work, for ``perturb bench`` and ``perturb build``.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..errors import UsageError
from .. import extras
from ..names import normalize
from ..registry import REGISTRY, SUITE_PREFIX, Spec
from . import models

GROUPS = ("all", "none")          # selection words that name no perturbation on its own
WHERE = "a model is a local folder or a Hub name in the local cache; nothing is downloaded"


def _named(selection: str | Iterable[str]) -> set[str]:
    """Canonical names that ``selection`` names one by one (not through all, a category or a suite)."""
    items = selection.split(",") if isinstance(selection, str) else [str(i) for i in selection]
    categories = {normalize(c) for c in REGISTRY.categories("text")}
    return {REGISTRY.get(item, "text").name for item in (i.strip() for i in items if i.strip())
            if not item.lower().startswith(SUITE_PREFIX) and normalize(item) not in (*GROUPS, *categories)}


def cannot_run(spec: Spec) -> bool:
    """A model-based perturbation whose model no environment variable names."""
    return spec.needs_model and not models.configured(spec.name)


def runnable(selection: str | Iterable[str],
             option: str | None = "--text-perturbations") -> tuple[list[Spec], list[dict[str, Any]]]:
    """(the specs of ``selection`` that can run, a record of each one left out); UsageError when a
    perturbation named on its own in ``option`` cannot run (``option`` None: a selection nobody
    typed, such as a build's, leaves every such one out)."""
    specs = REGISTRY.resolve(selection, "text")
    cannot = [s for s in specs if cannot_run(s)]
    typed = _named(selection) if option is not None and cannot else set()
    named = [s.name for s in cannot if s.name in typed]
    if named:
        raise UsageError(f"{option} {','.join(named)}: {' and '.join(named)} "
                         f"need{'s' if len(named) == 1 else ''} a model and none is configured; "
                         f"{'; '.join(models.how_to_configure(n) for n in named)} ({WHERE}), or leave "
                         f"{'it' if len(named) == 1 else 'them'} out of the selection")
    return [s for s in specs if s not in cannot], [left_out(s) for s in cannot]


def check_extras(names: Iterable[str]) -> None:
    """UsageError before any work when a text perturbation of ``names`` needs a module of an extra
    that is not installed (spaCy of ``text``, ...), naming the extra and the perturbations."""
    needs = {s.name: extras.of_resources(s.resources) for s in (REGISTRY.get(n, "text") for n in dict.fromkeys(names))}
    absent = {m for ms in needs.values() for m in ms if not extras.found(m)}
    needing = [name for name, ms in needs.items() if absent & set(ms)]
    shown = ", ".join(needing[:4]) + (f" and {len(needing) - 4} more" if len(needing) > 4 else "")
    extras.require(modules=sorted(absent), why=f"for the text perturbation{'s' if len(needing) > 1 else ''} {shown}")


def left_out(spec: Spec) -> dict[str, Any]:
    """results.json's record of a perturbation the selection left out (docs/results-schema.md)."""
    return {"modality": spec.modality, "perturbation": spec.name,
            "reason": "needs a model and none is configured",
            "enable": f"{models.how_to_configure(spec.name)} ({WHERE})"}


def left_out_line(records: Iterable[dict[str, Any]]) -> str:
    """One line: which perturbations were left out, why, and how to run them."""
    records = list(records)
    names = ", ".join(r["perturbation"] for r in records)
    how = "; ".join(f"{r['perturbation']}: {models.how_to_configure(r['perturbation'])}" for r in records)
    return (f"left out the text perturbations {names}: each needs a model and none is configured "
            f"(to run them, {how}; {WHERE})")
