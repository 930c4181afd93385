"""Subcommand ``perturb bench``: run a robustness benchmark (``perturb report`` is :mod:`.report_cli`)."""
from __future__ import annotations

import argparse
import errno
import json
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
    p.add_argument("--videos", metavar="DIR", help="with --task classify: where a label file's or a Kinetics "
                   "CSV's videos are")
    p.add_argument("--baseline-errors", metavar="NAME_OR_JSON", help=baseline_help())
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


def _selection(args: argparse.Namespace,
               built: Any) -> tuple[tuple[int, ...], list[str], list[str], list[dict[str, Any]]]:
    """Severities, video and text perturbations: the options given, else what ``built`` holds, else
    the defaults; then the text perturbations left out because they cannot run here."""
    from ..registry import REGISTRY
    from ..selection import DEFAULT_VIDEO_SELECTION, SEVERITY_LEVELS, parse_severities
    from ..text.availability import runnable

    video, text, sevs = built.selection() if built is not None else (DEFAULT_VIDEO_SELECTION, "all", SEVERITY_LEVELS)
    severities = parse_severities(args.severities if args.severities is not None else sevs or SEVERITY_LEVELS)
    video = REGISTRY.resolve(args.video_perturbations if args.video_perturbations is not None else video, "video")
    given = args.text_perturbations is not None
    text, left_out = runnable(args.text_perturbations if given else text, "--text-perturbations" if given else None)
    return severities, [s.ref for s in video], [s.name for s in text], left_out


def check_built(built: Any, data: Any, jobs: list[Any]) -> None:
    """Every output the jobs read must be in the built directory: else a UsageError before any work."""
    missing = built.missing(data.items, [(j.video, j.severity) for j in jobs], [j.text for j in jobs])
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise UsageError(f"--built {built.root} lacks {len(missing)} requested output(s): {shown}; "
                         f"build them with `perturb build`, or leave out --video-perturbations, "
                         f"--text-perturbations and --severities to bench what was built")


def _data(args: argparse.Namespace):
    from ..dataset.readers import read_dataset
    from .pipeline.data import make_data

    if args.built:
        info = json.loads((Path(args.built) / "dataset.json").read_text()) \
            if (Path(args.built) / "dataset.json").exists() else None
        if not info or not info.get("dataset"):
            raise UsageError(f"--built {args.built}: expected dataset.json naming the source dataset")
        path, reader = info["dataset"], args.reader or info.get("reader")
    else:
        path, reader = args.dataset, args.reader
    if args.task == "classify":
        return _labelled_data(args, path, reader)
    if isinstance(args.subset, str):
        raise UsageError(f"--subset {args.subset}: a file of names applies to --task classify; "
                         "expected a number of items")
    items = read_dataset(path, reader)
    return make_data(items, Path(path).stem if Path(path).is_file() else Path(path).name, str(path),
                     subset=args.subset, seed=args.seed, captions=args.captions, judgements=args.judgements)


def _classify_selection(args: argparse.Namespace, video: list[str], text: list[str], left_out: list[Any],
                        media: str) -> tuple[list[str], list[str], list[Any]]:
    """A classification run perturbs only the visual side: text only when named (then refused); on
    images the default selection keeps the ops that apply to one image."""
    from .pipeline.classify import image_selection

    if args.video_perturbations is None and media == "image":
        video = image_selection(video)
    return video, text if args.text_perturbations is not None else [], []


def _labelled_data(args: argparse.Namespace, path: str, reader: str | None) -> Any:
    """A classification run's labelled data: read, kept to --subset FILE, or N items drawn."""
    from ..dataset.labelled import read_labelled
    from ..dataset.subset import keep_subset
    from .pipeline.data import make_labelled_data

    items = read_labelled(path, reader, args.videos)
    if isinstance(args.subset, str):
        items = keep_subset(items, args.subset)
    name = Path(path).stem if Path(path).is_file() else Path(path).name
    data = make_labelled_data(items, name, str(path), subset=args.subset if isinstance(args.subset, int) else None,
                              seed=args.seed)
    if isinstance(args.subset, str):
        data.subset = args.subset
    return data


def cmd_bench(args: argparse.Namespace) -> int:
    """Run the benchmark and write results and reports."""
    from .adapters.factory import check_available, parse_spec
    from .adapters.http import retries_note
    from .adapters.protocol import ModelSpecError
    from .api import benchmark
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
        built = Built(args.built, seed=args.seed) if args.built else None
        severities, video, text, left_out = _selection(args, built)
        check_extras(text + [t for _, t in pairs])
        require(modules=[BACKEND_MODULES[args.backend]] if args.backend else [], why=f"for --backend {args.backend}")
        require(modules=[] if args.dry_run or args.json else ["matplotlib"], why="to draw the report's figures")
        if args.per_frame:
            check_per_frame_option(video, built)
        data = _data(args)
        if args.task == "classify":
            video, text, left_out = _classify_selection(args, video, text, left_out, data.media)
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
