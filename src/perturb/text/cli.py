"""Subcommand ``perturb text``: perturb one caption (or stdin lines), or show every perturbation."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import MissingResourceError, UsageError
from .availability import check_extras
from .inputs import check_captions

MODEL_HINT = "(needs a model: --model NAME_OR_PATH)"


def register(subparsers: Any) -> None:
    """Add ``perturb text`` to the ``perturb`` parser."""
    p = subparsers.add_parser(
        "text", help="perturb a caption",
        description="Print the perturbed caption alone on stdout (--name), or every text "
                    "perturbation of the caption as a table (--all). CAPTION '-' reads one "
                    "caption per line from stdin and prints one result per line.")
    p.add_argument("caption", metavar="CAPTION", help="the caption, or '-' for stdin lines")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--name", help="text perturbation name or alias (e.g. Typos, NoVB)")
    what.add_argument("--all", action="store_true", help="every text perturbation, as a table")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0: reproducible)")
    p.add_argument("--severity", type=int, default=None,
                   help="1..5 for perturbations with a strength (default: the paper's rate)")
    p.add_argument("--model", default=None,
                   help="Hugging Face model name or local path for the model-based perturbations")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 1 when the perturbation does not apply")
    p.set_defaults(func=cmd_text)


def _options(spec: Any, args: argparse.Namespace) -> dict[str, Any]:
    return {"model": args.model} if spec.needs_model and args.model else {}


def _checked(captions: list[str]) -> list[str]:
    """The captions, or a UsageError naming the first that is not valid text."""
    try:
        return check_captions(captions)
    except ValueError as e:
        raise UsageError(str(e)) from e


def cmd_text(args: argparse.Namespace) -> int:
    """Run ``perturb text``."""
    if args.seed < 0:
        raise UsageError(f"expected --seed >= 0; got {args.seed}")
    if args.all:
        if args.caption == "-":
            raise UsageError("--all takes one caption, not '-'")
        _checked([args.caption])
        return _all(args)
    from .api import apply_batch, get

    try:
        spec = get(args.name)
        spec.params(args.severity)
    except ValueError as e:
        raise UsageError(str(e)) from e
    check_extras([spec.name])
    captions = _checked(sys.stdin.read().splitlines() if args.caption == "-" else [args.caption])
    try:
        results = apply_batch(captions, spec.name, seed=args.seed, severity=args.severity,
                              **_options(spec, args))
    except MissingResourceError as e:
        print(f"perturb text: {spec.name}: {e}", file=sys.stderr)
        return 1
    for r in results:
        print(r)
    if not all(r.applied for r in results):
        skipped = sum(not r.applied for r in results)
        print(f"perturb text: {spec.name} did not apply to {skipped} of {len(results)} "
              f"caption(s); printed unchanged", file=sys.stderr)
        if args.strict:
            return 1
    return 0


def _all(args: argparse.Namespace) -> int:
    """Print every text perturbation of one caption, like the paper's Table 1."""
    from ..registry import REGISTRY
    from .api import apply

    rows = []
    for spec in REGISTRY.select("text"):          # registration follows Table 1
        if spec.needs_model and not args.model:
            rows.append((spec.category, spec.name, "-", MODEL_HINT))
            continue
        severity = args.severity if spec.has_severity else None
        try:
            r = apply(args.caption, spec.name, seed=args.seed, severity=severity,
                      **_options(spec, args))
        except MissingResourceError as e:
            rows.append((spec.category, spec.name, "-", f"(missing resource: {e})"))
            continue
        rows.append((spec.category, spec.name, "yes" if r.applied else "no", str(r)))
    header = ("category", "perturbation", "applied", "perturbed")
    widths = [max(len(r[k]) for r in (header, *rows)) for k in range(3)]
    for row in (header, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row[:3], widths)) + "  " + row[3])
    return 0
