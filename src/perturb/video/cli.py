"""Subcommands ``perturb list``, ``describe``, ``apply`` and ``gallery``."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..catalogue import severity_cell
from ..errors import UsageError
from ..listing import print_rows, to_terminal
from ..options import check_output, int_at_least
from ..selection import SEVERITY_LEVELS

WIDE = 120      # terminal columns from which `perturb list` also shows the summaries
FOLDED = ("flags", "aliases", "summary")     # `perturb list` columns that may wrap


def register(subparsers: Any) -> None:
    """Add this module's subcommands to the ``perturb`` parser."""
    p = subparsers.add_parser("list", help="list the registered perturbations")
    p.add_argument("--modality", choices=("video", "text"), help="only this modality")
    p.add_argument("--category", help="only this category (e.g. blur, temporal, ChangeChar)")
    p.add_argument("--suite", help="only this suite's members (msrvtt-p, imagenet-c, imagenet-c-bar, kinetics-c, all)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_list)
    p.epilog = ("On a terminal: a table. Piped or redirected: one perturbation a line, tab-separated: "
                + ", ".join(PLAIN_COLUMNS) + " (lists joined by commas).")

    p = subparsers.add_parser("describe", help="what a perturbation does and its parameters")
    p.add_argument("name", help="perturbation name or alias")
    p.set_defaults(func=cmd_describe)

    p = subparsers.add_parser("apply", help="perturb one video file")
    p.add_argument("input", metavar="IN", help="input video")
    p.add_argument("output", metavar="OUT", help="output video (container from the extension)")
    p.add_argument("--name", required=True, help="video perturbation name or alias; NAME:SUITE for "
                   "a suite's table (e.g. contrast:kinetics-c)")
    p.add_argument("--severity", type=int, default=3, choices=SEVERITY_LEVELS,
                   help=f"{SEVERITY_LEVELS[0]}..{SEVERITY_LEVELS[-1]} (default 3)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="random seed (default 0)")
    p.add_argument("--codec", default="ffv1",
                   help="output encoder (default ffv1: lossless, adds no artefacts of its own)")
    p.set_defaults(func=cmd_apply)

    p = subparsers.add_parser("gallery", help="PNG grid of perturbations x severities for one frame")
    p.add_argument("input", metavar="IN", help="input video")
    p.add_argument("output", metavar="OUT.png", help="output image")
    p.add_argument("--frame", type=int_at_least(0), default=None,
                   help="frame index shown (default: the middle)")
    p.add_argument("--perturbations", nargs="+", default=["all"], metavar="NAME",
                   help="names, aliases, categories or suite:NAME (default: all video perturbations)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="random seed (default 0)")
    p.add_argument("--max-frames", type=int_at_least(1), default=128,
                   help="read at most this many frames (default 128)")
    p.add_argument("--size", type=int_at_least(1), default=None,
                   help="resize frames to this short side first")
    p.set_defaults(func=cmd_gallery)


PLAIN_COLUMNS = ("name", "modality", "category", "severities", "table", "flags", "aliases", "summary")


def cmd_list(args: argparse.Namespace) -> int:
    """Print the registry: a table on a terminal, tab-separated rows when piped, or JSON."""
    import perturb

    try:
        rows = perturb.list(args.modality, args.category, args.suite)
        missing = perturb.REGISTRY.missing(args.suite) if args.suite else []
    except ValueError as e:
        raise UsageError(str(e)) from e
    if not rows:
        raise UsageError(_nothing_listed(args))
    if missing:
        print(f"perturb list: note: suite {perturb.REGISTRY.suite(args.suite).name} also names "
              f"{', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not registered in "
              f"this installation", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    cells = [{"name": r["name"], "modality": r["modality"], "category": r["category"],
              "severities": severity_cell(r),
              "flags": ",".join(f for f in ("temporal", "random", "needs_model") if r[f]),
              "aliases": ",".join(r["aliases"]), "summary": r["summary"], "table": r["table"] or "own"}
             for r in rows]
    if not to_terminal():                       # one perturbation a line, the same columns always
        print_rows([c[col] for col in PLAIN_COLUMNS] for c in cells)
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    title = f"{len(rows)} perturbations"
    if args.suite:
        title += f" in suite {perturb.REGISTRY.suite(args.suite).name}"
    table = Table(title=title)
    columns = ["name", *(["modality"] if args.modality is None else []), "category", "severities",
               *(["table"] if args.suite else []),
               "flags", "aliases", *(["summary"] if console.width >= WIDE else [])]
    for col in columns:
        table.add_column(col, **({"overflow": "fold"} if col in FOLDED
                                 else {"no_wrap": True}))
    for c in cells:
        table.add_row(*(c[col].replace(",", ", ") if col in ("flags", "aliases") else c[col]
                        for col in columns))
    console.print(table)
    return 0


def _nothing_listed(args: argparse.Namespace) -> str:
    """Why a `perturb list` whose filters are each valid selects nothing, and what would."""
    from ..registry import REGISTRY

    if args.suite:
        suite = REGISTRY.suite(args.suite)
        if args.modality and args.modality != suite.modality:
            return (f"suite {suite.name} holds {suite.modality} perturbations only, so --modality "
                    f"{args.modality} selects none; drop --modality or use --modality {suite.modality}")
        cats = list(dict.fromkeys(s.category for s in REGISTRY.suite_specs(suite.name, missing_ok=True)))
        return (f"suite {suite.name} has no perturbations in category {args.category!r}; "
                f"expected one of: {', '.join(cats)}")
    return (f"no perturbations in category {args.category!r}; expected one of: "
            f"{', '.join(REGISTRY.categories(args.modality))}")


def cmd_describe(args: argparse.Namespace) -> int:
    """Print one perturbation's description."""
    import perturb

    try:
        print(perturb.describe(args.name))
    except ValueError as e:
        raise UsageError(str(e)) from e
    return 0


def _read(path: str, **kwargs: Any) -> tuple[Any, float]:
    from ..errors import VideoReadError
    from .io.decode import read

    try:
        return read(path, **kwargs)
    except VideoReadError as e:
        raise UsageError(str(e)) from e


def cmd_apply(args: argparse.Namespace) -> int:
    """Read a video, perturb it, write it back."""
    from .api import apply, get
    from .io.encode import VideoWriter

    check_output(args.output, [args.input], "OUT")
    try:
        spec = get(args.name)
    except ValueError as e:
        raise UsageError(str(e)) from e
    clip, fps = _read(args.input)
    try:   # codec and output folder are checked before the work, the container at the first frame
        writer = VideoWriter(args.output, fps, args.codec)
        out = apply(clip, spec.ref, severity=args.severity, seed=args.seed)
        with writer:
            writer.write(out)
    except ValueError as e:
        raise UsageError(str(e)) from e
    print(f"{spec.ref} severity {args.severity} seed {args.seed}: {clip.shape[0]} frames "
          f"{clip.shape[2]}x{clip.shape[1]} -> {args.output}")
    return 0


def cmd_gallery(args: argparse.Namespace) -> int:
    """Write the perturbations x severities grid of one frame as a PNG."""
    from ..registry import REGISTRY
    from .gallery import gallery, save_png

    check_output(args.output, [args.input], "OUT.png")
    try:
        names = [s.ref for s in REGISTRY.resolve(args.perturbations, "video")]
    except ValueError as e:
        raise UsageError(str(e)) from e
    if not names:
        raise UsageError("expected at least one video perturbation in --perturbations")
    clip, _ = _read(args.input, max_frames=args.max_frames, size=args.size)
    if args.frame is not None and not 0 <= args.frame < clip.shape[0]:
        raise UsageError(f"expected --frame in 0..{clip.shape[0] - 1}; got {args.frame}")
    image = gallery(clip, names, frame=args.frame, seed=args.seed)
    path = save_png(args.output, image)
    print(f"gallery of {len(names)} perturbations on frame "
          f"{clip.shape[0] // 2 if args.frame is None else args.frame} -> {path} "
          f"({image.shape[1]}x{image.shape[0]} px)")
    return 0
