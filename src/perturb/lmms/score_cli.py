"""``perturb lmms-score``: score lmms-eval runs of a written task folder's variants as a perturb
results.json, which ``perturb report``, ``perturb check`` and ``perturb compare`` read."""
from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError

DEFAULT_BOOTSTRAP = 1000
LEVEL = 0.95


def register(subparsers: Any) -> None:
    """Add ``lmms-score`` to the ``perturb`` parser."""
    p = subparsers.add_parser(
        "lmms-score", help="score lmms-eval runs of perturb's task variants (γ with paired CIs, mPC, rPC)",
        description="Read the results JSON and samples logs that lmms-eval wrote (--log_samples) for the clean "
                    "variant and each corrupted variant of a task folder written by perturb lmms-tasks, and "
                    "write a results.json: the harness's own score per variant, γa and γr with paired "
                    "bootstrap CIs over the same questions, per op, category and suite, mPC and rPC. The "
                    "newest run of each variant is read when a folder holds several.")
    p.add_argument("manifest", metavar="FOLDER_OR_MANIFEST", help="a folder written by perturb lmms-tasks, or its perturb-lmms.json")
    p.add_argument("--results", action="append", required=True, metavar="DIR",
                   help="lmms-eval's --output_path of a run with --log_samples (repeatable)")
    p.add_argument("--out", required=True, metavar="RESULTS_JSON", help="the results.json to write")
    p.add_argument("--task", metavar="NAME", help="the manifest's task to score (needed when it holds several)")
    p.add_argument("--bootstrap", type=int, default=DEFAULT_BOOTSTRAP,
                   help=f"bootstrap resamples, 0 = no CIs (default {DEFAULT_BOOTSTRAP})")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resamples (default 0)")
    p.set_defaults(func=cmd_lmms_score)


def cmd_lmms_score(args: argparse.Namespace) -> int:
    """Score the runs, then write results.json (nothing is written when any input is off)."""
    from ..options import check_output
    from ..results import write_json
    from .manifest import manifest_path, read_manifest
    from .score import pick_task, score_task

    for option, value in (("--bootstrap", args.bootstrap), ("--seed", args.seed)):
        if value < 0:
            raise UsageError(f"{option} must be >= 0; got {value}")
    source = manifest_path(args.manifest)
    check_output(args.out, [source, *args.results], "--out")
    manifest = read_manifest(args.manifest)
    entry = pick_task(manifest, args.task)
    boot = {"n": args.bootstrap, "seed": args.seed, "level": LEVEL} if args.bootstrap else None
    doc, runs = score_task(manifest, entry, args.results, boot, str(source))
    for run in runs:
        print(f"read {run.describe()}")
    path = write_json(doc, args.out)
    print(f"{entry.task}: clean score {doc['clean']['score']:.4f} over {doc['dataset']['n_items']} questions, "
          f"{len(doc['runs'])} variant(s); wrote {path}")
    return 0
