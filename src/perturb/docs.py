"""Generate the perturbation catalogue (docs/perturbations.md) from the registry.

``python -m perturb.docs`` writes the file; ``python -m perturb.docs --check`` exits 1 when the
file on disk differs from what the registry gives, so the catalogue cannot drift from the code.
The text depends on the registered :class:`~perturb.registry.Spec` fields, and on the benchmark
results (:mod:`.measured`) for each op's measured speed and fidelity.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .measured import Measured, load
from .registry import REGISTRY, Spec

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "docs" / "perturbations.md"
MODALITIES = (("video", "Video perturbations"), ("text", "Text perturbations"))

HEADER = """\
# Perturbation catalogue

Generated from the registry by `python -m perturb.docs` (or `make docs`); do not edit by hand.
`python -m perturb.docs --check` fails when this file is out of date, and so does the test suite.

For every perturbation: what it does, its aliases (any of them works wherever a name is asked
for; names are case-, space-, dash- and underscore-insensitive), its flags, our parameters per
severity, the paper's where they differ, and why. Video perturbations take `severity` 1..5 and
keep the clip's shape (T, H, W, 3); every random choice comes from the `seed` passed in.
"""


def format_value(value: Any) -> str:
    """A stable, compact text form of a parameter value (no memory addresses, no reprs of objects)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:       # numpy scalar
        return format_value(value.item())
    return type(value).__name__


def _cell(value: Any) -> str:
    return format_value(value).replace("|", "\\|")


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def flags(spec: Spec) -> list[str]:
    """The flags shown for a perturbation."""
    out = ["temporal"] if spec.temporal else []
    out += ["needs a video stream"] if spec.stream else []
    out.append("random" if spec.random else "deterministic")
    out += [text for text, on in (("needs a model", spec.needs_model),
                                  ("needs a parse", spec.needs_parse)) if on]
    return out


def severity_table(spec: Spec) -> list[str]:
    """Our parameters per severity, with the paper's beside them when the spec records them."""
    ours = spec.severities or {}
    paper = spec.paper or {}
    keys = list(dict.fromkeys(k for p in ours.values() for k in p))
    paper_keys = list(dict.fromkeys(k for p in paper.values() for k in p))
    levels = sorted(set(ours) | set(paper))
    header = ["severity", *keys, *(f"paper: {k}" for k in paper_keys)]
    rows = [[s, *(ours.get(s, {}).get(k, "") for k in keys),
             *(paper.get(s, {}).get(k, "") for k in paper_keys)] for s in levels]
    return _table(header, rows)


def spec_section(spec: Spec, measured: Measured | None = None) -> list[str]:
    """The Markdown section of one perturbation (with its benchmark figures, where measured)."""
    lines = [f"#### `{spec.name}`", ""]
    if spec.summary:
        lines += [spec.summary, ""]
    facts = []
    if spec.aliases:
        facts.append("Aliases: " + ", ".join(f"`{a}`" for a in spec.aliases))
    facts.append("Flags: " + ", ".join(flags(spec)))
    if spec.severities and spec.default_severity is not None:
        facts.append(f"Default severity: {spec.default_severity}")
    if spec.resources:
        facts.append("Resources: " + ", ".join(spec.resources))
    facts += [f"{key}: {format_value(value)}" for key, value in spec.extra.items()]
    suites = REGISTRY.suites_of(spec)
    if suites:
        facts.append("Suites: " + ", ".join(f"`{s}`" for s in suites))
    lines += [f"- {f}" for f in facts] + [""]
    if spec.severities or spec.paper:
        lines += severity_table(spec) + [""]
    else:
        lines += ["No severity levels.", ""]
    for other in (REGISTRY.bind(spec, s) for s in suites):
        if other.table:
            lines += [f"The `{other.table}` table (`{other.ref}`, or through `suite:{other.table}`):", ""]
            lines += severity_table(other) + [""]
    if spec.deviation:
        lines += [f"Deviation from the paper: {spec.deviation}", ""]
    if measured is not None:
        lines += [f"Measured: {measured.sentence()}", ""]
    return lines


def suites_section() -> list[str]:
    """The named suites: members, source and the source's summary figures."""
    rows = [[f"`{s.name}`", s.title, len(s.members) if s.members is not None else "every visual op",
             s.source, ", ".join(s.figures)] for s in REGISTRY.suites()]
    return ["## Suites", "", "Select one with `--video-perturbations suite:NAME`; its members run under "
            "the suite's table where it differs from the op's own (shown under each op).", "",
            *_table(["suite", "what", "operations", "source", "summary figures"], rows), ""]


def render(specs: Iterable[Spec] | None = None) -> str:
    """The whole catalogue as Markdown (by modality, then category in registration order)."""
    specs = list(REGISTRY if specs is None else specs)
    figures = load()
    lines = [HEADER]
    known = {m for m, _ in MODALITIES}
    sections = [*MODALITIES, *((m, f"{m.capitalize()} perturbations")
                               for m in dict.fromkeys(s.modality for s in specs) if m not in known)]
    counts = ", ".join(f"{sum(s.modality == m for s in specs)} {m}" for m, _ in sections)
    lines += [f"{len(specs)} perturbations: {counts}.", ""]
    lines += suites_section()
    for modality, title in sections:
        group = [s for s in specs if s.modality == modality]
        if not group:
            continue
        lines += [f"## {title}", ""]
        categories = list(dict.fromkeys(s.category for s in group))
        for cat in categories:
            names = ", ".join(f"[`{s.name}`](#{s.name.lower()})" for s in group if s.category == cat)
            lines.append(f"- {cat}: {names}")
        lines.append("")
        for cat in categories:
            lines += [f"### {cat}", ""]
            for spec in (s for s in group if s.category == cat):
                lines += spec_section(spec, figures.get(spec.name))
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the catalogue, or with --check report whether the file on disk is current."""
    import perturb  # noqa: F401  (registers every perturbation)

    parser = argparse.ArgumentParser(prog="python -m perturb.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_PATH, help=f"default {DEFAULT_PATH}")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
        if current != text:
            print(f"{args.out} is out of date; regenerate it with `python -m perturb.docs`",
                  file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(list(REGISTRY))} perturbations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
