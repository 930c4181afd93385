"""``perturb build``: the -P dataset builder on the command line (exit 0 ok, 1 failures, 2 usage)."""
from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
import threading
import warnings
from typing import TYPE_CHECKING, Any, Iterator

from ..errors import MissingResourceError, PerFrameError, PlacementError, UnknownPerturbationError, UsageError
from ..options import check_output, int_at_least, positive_number
from ..selection import DEFAULT_VIDEO_SELECTION, add_selection_arguments, parse_severities, per_frame_refusal
from .. import engines
from ..clusters import DEFAULT_CONNECT_TIMEOUT
from . import encode

if TYPE_CHECKING:
    from .build_options import BuildOptions

FAILED_LISTED = 20
# joblib's note when a stopped build abandons the tasks its workers held or finished ("N tasks have
# been successfully executed but not used", "... have been cancelled"); the manifest already says
# what finished, and a re-run resumes
ABANDONED_TASKS = r"\d+ tasks (have been successfully executed|which were still being processed)"


@contextlib.contextmanager
def stoppable() -> Iterator[None]:
    """A build stopped by SIGTERM (kill, a CI timeout) stops as Ctrl-C does, so dataset.json says
    'interrupted' rather than 'running'; joblib's cancelled-tasks warning is not printed."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        def terminate(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt("terminated (SIGTERM)")
        previous = signal.signal(signal.SIGTERM, terminate)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=ABANDONED_TASKS, category=UserWarning)
            yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def register(subparsers: Any) -> None:
    """Add the ``build`` subcommand."""
    p = subparsers.add_parser(
        "build", help="build a perturbed copy of a dataset (MSRVTT-P / YouCook2-P style)",
        description="Write videos/<perturbation>/<severity>/<item>.<ext>, captions/<perturbation>"
                    ".jsonl, manifest.jsonl and dataset.json under --out. Re-running resumes.")
    p.add_argument("dataset", metavar="DATASET",
                   help="dataset folder or annotation file (MSR-VTT JSON/CSV, youcookii JSON, "
                        "generic CSV/JSONL)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--reader", choices=("msrvtt", "youcook2", "generic"),
                   help="dataset reader (inferred when omitted)")
    add_selection_arguments(p)
    p.add_argument("--seed", type=int_at_least(0), default=0, help="base seed (default: 0)")
    p.add_argument("--jobs", type=int_at_least(1), default=None, metavar="N",
                   help="workers (default: all cores; for dask/ray without --scheduler, local workers)")
    p.add_argument("--backend", choices=engines.BACKENDS, default="loky",
                   help="loky (one machine), dask or ray (default: loky)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="dask scheduler (tcp://host:8786) or ray address to run on a cluster")
    p.add_argument("--connect-timeout", type=positive_number, metavar="SECONDS",
                   help=f"give up on a --scheduler that does not answer within this time (default "
                        f"{DEFAULT_CONNECT_TIMEOUT:g})")
    p.add_argument("--format", default="lossless", choices=sorted({*encode.FORMATS, *encode.ALIASES}),
                   help="output format: lossless (FFV1/MKV, default), x264 (qp 0), npy, npz")
    p.add_argument("--short-side", type=int_at_least(1), metavar="PX",
                   help="resize so the short side is PX before perturbing (paper: 224 or 256)")
    p.add_argument("--fps", type=positive_number, help="resample to this frame rate before perturbing")
    p.add_argument("--paper-preprocess", action="store_true",
                   help="the paper's input: short side 224 at 30 fps")
    p.add_argument("--limit", type=int_at_least(1), metavar="N", help="only the first N items")
    p.add_argument("--no-verify", action="store_true",
                   help="on resume trust recorded sizes instead of re-hashing outputs")
    p.add_argument("--parquet", action="store_true", help="also write manifest.parquet")
    p.add_argument("--per-frame", action="store_true", help="a new weather layer every frame (fog, frost, "
                   "rain, snow, spatter), as the image suites draw every image; recorded in dataset.json")
    p.add_argument("--recipe", choices=("imagenet-c", "kinetics-c"),
                   help="build a class folder (root/<class>/<file>) as the suite's source did: "
                        "<out>/<corruption>/<severity>/<class>/<file> (imagenet-c: resize 256, crop 224, "
                        "JPEG q85, and clean/<class>/<file>; default ops: its 15)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    if not os.path.exists(args.dataset):
        raise UsageError(f"dataset path {args.dataset!r} does not exist")
    if args.scheduler and args.backend == "loky":
        raise UsageError("--scheduler needs --backend dask or ray")
    from .builder import OUTPUT_NAMES
    check_output(args.out, [args.dataset], "--out", kind="dir", writes=OUTPUT_NAMES)


def command_line(args: argparse.Namespace) -> str:
    """The build as a ``perturb build`` command (every option spelled out), for dataset.json."""
    words = ["perturb", "build", args.dataset]
    for name, value in vars(args).items():
        if name in ("dataset", "func", "command") or value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        words += [flag] if value is True else [flag, str(value)]
    return shlex.join(words)


def build_options(args: argparse.Namespace) -> BuildOptions:
    """The build's :class:`~perturb.dataset.BuildOptions` from the command line (made here only)."""
    from .build_options import BuildOptions
    from .builder import PAPER_PREPROCESS

    short, fps = args.short_side, args.fps
    if args.paper_preprocess:
        short, fps = short or PAPER_PREPROCESS.short_side, fps or PAPER_PREPROCESS.fps
    return BuildOptions(jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
                        connect_timeout=args.connect_timeout or DEFAULT_CONNECT_TIMEOUT,
                        format=args.format, short_side=short, fps=fps, per_frame=args.per_frame,
                        limit=args.limit, verify=not args.no_verify, parquet=args.parquet,
                        progress=not args.no_progress, command=command_line(args))


def run(args: argparse.Namespace) -> int:
    """Run a build; print the summary and the failed outputs."""
    from .builder import BuildConflictError, build, resolve
    from .readers import DatasetFormatError
    from ..extras import require
    from ..registry import per_frame_selection
    from ..text.availability import check_extras, left_out_line, runnable

    _check(args)
    options = build_options(args)
    if args.recipe:
        return run_recipe(args, options)
    try:
        parse_severities(args.severities)
        video = resolve(args.video_perturbations, "video")
        text, left_out = runnable(args.text_perturbations)
        check_extras(t.name for t in text)
        if options.backend != "loky" or (options.jobs or engines.default_jobs()) > 1:
            require(modules=[engines.BACKEND_MODULES[options.backend]],
                    why=f"for workers on {options.backend} (--jobs 1 needs none)")
        require(modules=["pyarrow"] if options.parquet else [], why="for --parquet")
        per_frame_selection(video, options.per_frame)
    except PerFrameError as e:
        raise UsageError(per_frame_refusal(e.takers)) from None
    except (UnknownPerturbationError, ValueError) as e:
        raise UsageError(str(e)) from None
    if left_out:
        print(f"perturb build: note: {left_out_line(left_out)}", file=sys.stderr)
    try:
        with stoppable():
            result = build(args.dataset, args.out, reader=args.reader,
                           video_perturbations=args.video_perturbations, severities=args.severities,
                           text_perturbations=[t.name for t in text], seed=args.seed, options=options)
    except (DatasetFormatError, FileNotFoundError, MissingResourceError, BuildConflictError, PlacementError) as e:
        raise UsageError(str(e)) from None
    return report(result, args.out)


def run_recipe(args: argparse.Namespace, options: BuildOptions) -> int:
    """``--recipe``: a class folder built as the suite's source built it (text ops do not apply)."""
    from .builder import BuildConflictError
    from .readers import DatasetFormatError
    from .recipe_build import build_recipe

    chosen = None if args.video_perturbations == DEFAULT_VIDEO_SELECTION else args.video_perturbations
    try:
        with stoppable():
            result = build_recipe(args.dataset, args.out, args.recipe, video_perturbations=chosen,
                                  severities=args.severities, seed=args.seed, options=options)
    except (DatasetFormatError, FileNotFoundError, BuildConflictError, UnknownPerturbationError, ValueError) as e:
        raise UsageError(str(e)) from None
    return report(result, args.out)


def report(result: Any, out: str) -> int:
    """Print a build's summary and its failed outputs; the exit status."""
    print(result.summary())
    for row in result.unavailable:
        print(f"  skipped {row['perturbation']}: {row['error']}", file=sys.stderr)
    for row in result.failed[:FAILED_LISTED]:
        print(f"  failed {row['key']}: {row['error']}", file=sys.stderr)
    if len(result.failed) > FAILED_LISTED:
        print(f"  ... and {len(result.failed) - FAILED_LISTED} more (status 'failed' in "
              f"{os.path.join(out, 'manifest.jsonl')})", file=sys.stderr)
    return 0 if result.ok else 1
