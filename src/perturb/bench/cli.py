"""Subcommand ``perturb bench``: run a robustness benchmark (``perturb report`` is :mod:`.report_cli`)."""
from __future__ import annotations

import argparse
import errno
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..clusters import DEFAULT_CONNECT_TIMEOUT
from ..errors import PerturbError, PlacementError, UsageError
from ..fileio import remove_if_empty, write_atomic
from ..metric_names import gamma_forms
from ..selection import add_selection_arguments
from .adapters.kinds import KINDS
from .scoring.baselines import baseline_help


def register(subparsers: Any) -> None:
    """Add ``bench`` to the ``perturb`` parser."""
    p = subparsers.add_parser("bench", help="robustness benchmark of a retrieval model",
                              description="Clean retrieval, then every video perturbation x severity, "
                              "every text perturbation and optional pairs; writes results.json, "
                              "results.csv, report.md and report.html into --out.")
    p.add_argument("--model", required=True, metavar="KIND:TARGET", help=" | ".join(k.form for k in KINDS.values())
                   + " (hf MODE: docs/models.md; http:URL#cross: a cross-encoder)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", metavar="PATH", help="dataset annotations (MSR-VTT, YouCook2, CSV/JSONL)")
    src.add_argument("--built", metavar="DIR", help="a `perturb build` output directory; perturbations and "
                     "severities default to those it was built with")
    p.add_argument("--reader", help="dataset reader (msrvtt, youcook2, generic); inferred when omitted")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    add_selection_arguments(p)
    p.set_defaults(video_perturbations=None, text_perturbations=None, severities=None)   # see _selection
    p.add_argument("--pairs", default="", metavar="V@T,...",
                   help="video+text pairs, e.g. gaussian_noise@Typos (each at every severity)")
    p.add_argument("--metric", help=f"{gamma_forms()} for γ, K from the name (default t2v.R@5); "
                                    "with --task classify top1 (default) or top5")
    p.add_argument("--task", choices=("retrieve", "classify"), default="retrieve",
                   help="retrieve (captions and videos, the default) or classify (a labelled dataset: class "
                        "folders, path,label CSV/JSONL, a Kinetics CSV with --videos)")
    p.add_argument("--classes", metavar="FILE", help="with --task classify: one class a line, in the model's "
                   "label order (wnid folders, subsets; a logit function's labels; zero-shot's class names)")
    p.add_argument("--prompt", metavar="TEMPLATE|FILE", help="with --task classify and a dual encoder: a template "
                   "with {} for the class name, or a file of them (averaged); default 'a photo of a {}.' "
                   "(images) / 'a video of a {}.' (videos)")
    p.add_argument("--clean", metavar="DIR", help="with --task classify on a corrupted tree without clean/ (a "
                   "published ImageNet-C copy): the clean images, root/<class>/<file>")
    p.add_argument("--videos", metavar="DIR", help="with --task classify: where a label file's or a Kinetics "
                   "CSV's videos are")
    p.add_argument("--baseline-errors", metavar="NAME_OR_JSON", help=baseline_help())
    p.add_argument("--trained-with", metavar="SELECTION|LOG", help="the ops the model was trained with: a "
                   "selection as RandomPerturbation takes it (suite:imagenet-c, noise,fog) or a transforms log "
                   "(JSON or JSONL of its params); results, report and check then give seen and held-out ops "
                   "apart (docs/suites.md)")
    p.add_argument("--subset", type=_subset, metavar="N|FILE", help="N items, chosen reproducibly from --seed; "
                   "with --task classify also a file of file names to keep (RobustBench's 5,000 images)")
    p.add_argument("--seed", type=int, default=0, help="seed of subset, perturbations and bootstrap")
    p.add_argument("--captions", choices=("all", "first"), default="all", help="caption queries per video (default all)")
    p.add_argument("--judgements", metavar="JSONL", help="extra positives (FIRE-style), optionally graded; enables mAP")
    p.add_argument("--mc", metavar="FILE", help="multiple-choice set (contrast TSV/JSONL): MC accuracy")
    p.add_argument("--entailment", metavar="FILE", help="entailment pairs (video, caption, label): ROC-AUC")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples, 0 = no CIs (default 1000)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--rerank", type=int, metavar="K",
                   help="re-score only each caption's top K videos of --first-stage with --model (a cross-encoder)")
    p.add_argument("--first-stage", metavar="MODEL", help="the dual encoder that ranks before --rerank")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N] (hf and clip models)")
    p.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"),
                   help="weight dtype of hf models (default: the checkpoint's)")
    p.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16", "fp16"),
                   help="autocast of hf models (auto: bf16, else fp16, on CUDA; none on CPU)")
    p.add_argument("--device-map", metavar="MAP", help="transformers device_map (e.g. auto) for models "
                   "larger than one GPU (needs accelerate)")
    p.add_argument("--model-batch", type=int, metavar="N",
                   help="items per forward pass inside hf models; 0 = automatic (halve on CUDA OOM); "
                   "default --batch-size")
    p.add_argument("--batch-size", type=int, default=32, help="items per forward pass (default 32)")
    p.add_argument("--frames", type=int, help="frames sampled per video by the model (default: the "
                   "checkpoint's count, else 8)")
    p.add_argument("--frame-sampling", metavar="RULE",
                   help="how hf models pick their frames: centre, start or linspace (default: the "
                        "family's own convention, see docs/models.md)")
    p.add_argument("--size", type=_short_side, metavar="PX|model",
                   help="decode videos to this short side, or 'model' for the short side the model reads "
                        "(default: native; the paper: 224). Perturbations act at this resolution")
    p.add_argument("--fps", type=float, help="decode at this frame rate (default: native)")
    p.add_argument("--max-frames", type=int, help="decode at most this many frames")
    p.add_argument("--workers", type=int, default=2, help="decode/perturb threads (default 2)")
    p.add_argument("--per-frame", action="store_true", help="a new weather layer every frame (fog, frost, "
                   "rain, snow, spatter), as the image suites draw every image; recorded in results.json")
    p.add_argument("--perturb-device", metavar="DEVICE",
                   help="perturb on torch on this device (cpu, cuda); default: numpy on the CPU")
    p.add_argument("--cache", metavar="DIR", help="embedding cache (default OUT/cache)")
    p.add_argument("--no-cache", action="store_true", help="do not cache embeddings")
    p.add_argument("--cache-key", metavar="STRING",
                   help="pin the model version the cache keys embeddings by (for callable/http models "
                   "without cache_version or GET /info); change it whenever the model changes")
    p.add_argument("--backend", choices=("dask", "ray", "loky"), help="shard configurations over this engine "
                   "(default: one loky replica per GPU where --device cuda/auto sees several, else this process)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler / Ray cluster "
                   "(Ray: default RAY_ADDRESS)")
    p.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT, metavar="SECONDS",
                   help=f"give up on a --scheduler that does not answer within this time (default "
                        f"{DEFAULT_CONNECT_TIMEOUT:g})")
    p.add_argument("--jobs", type=int, help="model replicas (default: one per GPU, else 2 CPU workers)")
    p.add_argument("--dry-run", action="store_true", help="print the plan (engine, replicas with device and "
                   "host, shards, where texts and cross-encoders run) and exit, loading no model")
    p.add_argument("--json", action="store_true", help="with --dry-run: the plan as JSON")
    p.add_argument("--gpus", type=int, metavar="N", help="with --dry-run: preview the plan for N GPUs from any "
                   "machine (a local one, or a cluster with --scheduler), counting and asking nothing")
    p.add_argument("--ties", choices=("pessimistic", "optimistic"), default="pessimistic",
                   help="a negative scored like the positive ranks before it (pessimistic, default) or "
                        "after it; recorded in results.json, and compare refuses to mix the two")
    p.add_argument("--timeout", type=float, default=60.0, help="http adapter timeout in seconds")
    p.add_argument("--allow-skips", action="store_true",
                   help="exit 0 even when a requested configuration could not run (it is still listed)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--debug", action="store_true", help="on a runtime failure, show the Python traceback")
    p.set_defaults(func=cmd_bench)


def _pairs(text: str) -> list[tuple[str, str]]:
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        video, sep, txt = part.partition("@")
        if not sep or not video or not txt:
            raise UsageError(f"--pairs expects VIDEO@TEXT items (e.g. gaussian_noise@Typos); got {part!r}")
        out.append((video, txt))
    return out


def _subset(value: str) -> int | str:
    """--subset: a number of items, or a file of file names."""
    return int(value) if value.strip().lstrip("-").isdigit() else value


def _short_side(value: str) -> int | str:
    if value == "model":
        return value
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of pixels or 'model'; got {value!r}")
    return size


def cmd_bench(args: argparse.Namespace) -> int:
    """Run the benchmark and write results and reports."""
    from .adapters.factory import check_available, parse_spec
    from .adapters.http import retries_note
    from .adapters.protocol import ModelSpecError
    from .api import benchmark
    from .bench_data import bench_data, check_built, classify_selection, selection, tree_of
    from .checks import check_bench, check_per_frame_option
    from .pipeline.classify import ClassMapError, check_jobs
    from .distributed.dry_run import check_placement, print_placement
    from .options import bench_options
    from .pipeline.jobs import jobs_of
    from .pipeline.built import Built
    from .reporting.report import print_summary, write_reports
    from ..results import write_csv, write_json
    from ..engines import BACKEND_MODULES
    from ..extras import require
    from ..text.availability import check_extras, left_out_line

    pairs = _pairs(args.pairs)
    metric = check_bench(args, pairs)        # every option, before any work
    try:
        parse_spec(args.model)
        check_available(args.model)          # an hf model cached or reachable, its tokenizer there
        tree = tree_of(args)                 # --task classify on a corrupted tree (ImageNet-C's layout)
        built = Built(args.built, seed=args.seed) if args.built else tree
        severities, video, text, left_out = selection(args, built)
        check_extras(text + [t for _, t in pairs])
        require(modules=[BACKEND_MODULES[args.backend]] if args.backend else [], why=f"for --backend {args.backend}")
        require(modules=[] if args.dry_run or args.json else ["matplotlib"], why="to draw the report's figures")
        if args.per_frame:
            check_per_frame_option(video, built)
        data = bench_data(args, tree)
        if args.task == "classify":
            video, text, left_out = classify_selection(args, video, text, left_out, data.media)
        jobs = jobs_of(video, text, severities, pairs)
        if args.task == "classify":
            check_jobs(jobs, data.media)
        if built is not None:
            check_built(built, data, jobs)
        engine, why = check_placement(args)            # the engine, chosen once
        options = bench_options(args, built, engine)    # --baseline-errors read here, once
    except (ValueError, FileNotFoundError) as e:
        raise UsageError(str(e)) from e
    if left_out:
        print(f"perturb bench: note: {left_out_line(left_out)}", file=sys.stderr)
    if args.dry_run or args.json:
        return print_placement(args, data, jobs, (engine, why))
    if args.backend is None and engine is not None:
        print(f"perturb bench: note: {why}", file=sys.stderr)
    out = Path(args.out)
    created = not out.exists()
    check_out_dir(out)
    stats: dict[str, Any] = {}
    try:
        with model_loading_bars(not args.no_progress):
            doc = benchmark(args.model, data, options, video=video, text=text, severities=severities, pairs=pairs,
                            metric=metric, stats=stats)
        if left_out:
            doc["left_out"] = left_out
        if args.allow_skips and doc.get("skipped"):
            doc["skips_allowed"] = True              # `perturb check` then lists them without failing
        write_json(doc, out / "results.json")
        write_csv(doc, out / "results.csv")
        paths = write_reports([doc], out)
    except (ModelSpecError, PlacementError, ClassMapError) as e:   # an hf checkpoint refusing an option, a cluster
        if created:                                  # without GPUs or not answering: nothing ran
            remove_if_empty(out)
        raise UsageError(str(e)) from None
    except UsageError:
        raise
    except Exception as e:                               # runtime failure: one line, resumable
        if args.debug:
            raise
        print(f"perturb bench: error: {failure_message(e, args.model, stats.get('progress'), options.cache_dir)}",
              file=sys.stderr)
        return 1
    print_summary(doc)
    if "rerank" in doc:
        r = doc["rerank"]
        print(f"re-ranked top {r['k']} of {r['first_stage']}: {r['pairs_scored']} pairs scored ({r['note']})")
    print(f"{stats['configs']} configurations in {stats['seconds']} s, {stats['forward_passes']} forward "
          f"passes; wrote {out / 'results.json'}, results.csv, {paths['md'].name}, {paths['html'].name}")
    retried = retries_note(stats.get("retries", {}))
    if retried:
        print(f"perturb bench: note: {retried}", file=sys.stderr)
    return _skips_status(doc.get("skipped", []), args.allow_skips)


def _skips_status(skipped: list[dict[str, Any]], allowed: bool) -> int:
    """Name every requested configuration that did not run; exit 1 for them unless --allow-skips."""
    from ..honesty import run_label

    for s in skipped:
        print(f"perturb bench: {'note' if allowed else 'error'}: requested {s['modality']} "
              f"{run_label(s)} did not run: {s['reason']}", file=sys.stderr)
    if skipped and not allowed:
        print(f"perturb bench: error: {len(skipped)} requested configuration(s) did not run (listed under "
              f"'skipped' in results.json and the report); pass --allow-skips to accept", file=sys.stderr)
        return 1
    return 0


HUB_BARS_ENV = "HF_HUB_DISABLE_PROGRESS_BARS"
# module -> (is on?, switch on, switch off): the bars transformers and huggingface_hub draw while loading
BAR_SWITCHES = {
    "transformers.utils.logging": (lambda m: m.is_progress_bar_enabled(), "enable_progress_bar",
                                   "disable_progress_bar"),
    "huggingface_hub.utils": (lambda m: not m.are_progress_bars_disabled(), "enable_progress_bars",
                              "disable_progress_bars"),
}


@contextmanager
def model_loading_bars(enabled: bool) -> Iterator[None]:
    """With ``enabled`` False, no hub download or "Loading weights" bars while models load (restored after)."""
    if enabled:
        yield
        return
    before = os.environ.get(HUB_BARS_ENV)
    os.environ[HUB_BARS_ENV] = "1"              # read when huggingface_hub is first imported
    was_on = {name: BAR_SWITCHES[name][0](sys.modules[name]) for name in BAR_SWITCHES if name in sys.modules}
    for name in BAR_SWITCHES:
        if name in sys.modules:
            getattr(sys.modules[name], BAR_SWITCHES[name][2])()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(HUB_BARS_ENV, None)
        else:
            os.environ[HUB_BARS_ENV] = before
        for name, (_, on, _off) in BAR_SWITCHES.items():      # a module first imported above read the
            if name in sys.modules and was_on.get(name, False):   # variable once: enabling it only warns
                getattr(sys.modules[name], on)()


def check_out_dir(out: Path) -> None:
    """``--out`` must be (or become) a writable directory; else a UsageError saying why."""
    for parent in (out, *out.parents):
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                where = "is a file" if parent == out else f"is under {parent}, which is a file"
                raise UsageError(f"--out {out} {where}; expected a directory")
            break
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / ".perturb-write-check", b"").unlink()
    except OSError as e:
        raise UsageError(f"--out {out} is not writable ({e.strerror or e})") from e


def failure_message(error: BaseException, model: str, progress: dict[str, Any] | None,
                    cache_dir: str | None) -> str:
    """What failed (endpoint, model or path), what finished and is cached, and how to resume."""
    from .pipeline.built import BuiltOutputError

    if isinstance(error, BuiltOutputError):              # not the model's fault; re-running cannot help
        return f"{error}; build it with `perturb build`"
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        what = f"disk full (no space left on device) writing {error.filename or cache_dir or 'output'}"
    elif isinstance(error, PerturbError):
        what = str(error)                                 # names the URL / model / file already
    elif isinstance(error, OSError) and error.filename:
        what = f"{error.strerror or error}: {error.filename}"
    else:
        what = f"model {model} failed: {type(error).__name__}: {error}"
    finished = (progress or {}).get("finished", [])
    done = (f"finished {len(finished)} embedding sets ({', '.join(finished[-3:])}"
            f"{', ...' if len(finished) > 3 else ''})" if finished else "no embedding set finished")
    if cache_dir is None:
        return f"{what}; {done}; nothing is cached (--no-cache), so re-running starts over"
    rows = (progress or {}).get("rows_cached", 0)
    return (f"{what}; {done}, {rows} rows newly cached in {cache_dir}; "
            f"re-run the same command to resume from there")
