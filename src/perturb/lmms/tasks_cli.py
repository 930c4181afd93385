"""``perturb lmms-tasks``: write lmms-eval task variants over a perturb-built copy of a task's videos
(exit 0 written, 2 bad input: one line, before any file is written)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UnknownPerturbationError, UsageError
from ..selection import parse_severities, selection_option, severities_option


def register(subparsers: Any) -> None:
    """Add the ``lmms-tasks`` subcommand."""
    p = subparsers.add_parser(
        "lmms-tasks", help="write lmms-eval task variants over a perturb-built copy of the task's videos",
        description="Write, per task, <task>_perturb_clean and <task>_perturb_<op>_<severity> YAMLs (each "
                    "including the original, tagged <task>_perturb), their data or doc_to_visual, and "
                    "perturb-lmms.json into --out; run them with lmms-eval --include_path OUT. See docs/lmms-eval.md.")
    p.add_argument("--task", action="append", required=True, metavar="NAME", help="an lmms-eval task (repeatable)")
    p.add_argument("--include-path", action="append", default=[], metavar="DIR",
                   help="a folder of task YAMLs, as lmms-eval's --include_path (searched first; repeatable)")
    p.add_argument("--lmms-tasks", metavar="DIR",
                   help="lmms-eval's task folder (default: the installed lmms_eval/tasks, found without importing it)")
    p.add_argument("--perturbations", required=True, type=selection_option, metavar="SEL",
                   help="video ops: NAME[:SUITE],..., CATEGORY, suite:NAME or all")
    p.add_argument("--severities", required=True, type=severities_option, help="e.g. 1-5 or 1,3")
    p.add_argument("--copy", required=True, metavar="DIR",
                   help="a perturb build output of the task's videos (item ids = the videos' file stems)")
    p.add_argument("--videos", metavar="DIR",
                   help="the folder of the task's original videos (the copy's input), for a task whose "
                        "doc_to_visual builds paths (Video-MME, TempCompass)")
    p.add_argument("--video-field", metavar="NAME",
                   help="the docs' field naming the video, when a local data file has several")
    p.add_argument("--seed", type=int, help="the copy's build seed, checked against its dataset.json")
    p.add_argument("--out", required=True, metavar="FOLDER", help="the folder to write (empty or new)")
    p.add_argument("--force", action="store_true", help="replace an earlier perturb lmms-tasks folder at --out")
    p.set_defaults(func=run)


def ops_of(selection: str) -> list[str]:
    """The registry refs of a video selection (``shot_noise:imagenet-c`` ...); nothing selected is one line."""
    from ..registry import REGISTRY

    try:
        specs = REGISTRY.resolve(selection, "video")
    except (UnknownPerturbationError, ValueError) as exc:
        raise UsageError(f"--perturbations: {exc}") from None
    if not specs:
        raise UsageError(f"--perturbations {selection!r} selects no video op")
    return [s.ref for s in specs]


def run(args: argparse.Namespace) -> int:
    from .copy import read_copy
    from .writer import Request, write_variants
    from .yamls import installed_tasks_dir

    ops = ops_of(args.perturbations)
    for folder in args.include_path:
        if not Path(folder).is_dir():
            raise UsageError(f"--include-path {folder}: not a folder")
    installed = Path(args.lmms_tasks) if args.lmms_tasks else installed_tasks_dir()
    if args.lmms_tasks and not installed.is_dir():
        raise UsageError(f"--lmms-tasks {args.lmms_tasks}: not a folder")
    copy = read_copy(args.copy)
    if args.seed is not None and args.seed != copy.seed:
        raise UsageError(f"--seed {args.seed}: the copy {copy.root} was built with seed {copy.seed}")
    roots = [Path(f).resolve() for f in args.include_path] + ([installed] if installed else [])
    manifest = write_variants(Request(args.task, roots, ops, parse_severities(args.severities), copy,
                                      Path(args.out).resolve(), args.videos, args.video_field, args.force))
    for entry in manifest.tasks:
        print(f"{entry.task}: {1 + len(entry.variants)} variants (tag {entry.tag}) in {Path(args.out).resolve()}")
    return 0
