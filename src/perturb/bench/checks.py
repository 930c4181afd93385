"""``perturb bench`` options checked before any work: numbers in range, models and files that
exist, pairs of known perturbations. A bad option is a UsageError (exit 2) in well under a
second, never a model failure reported after embedding."""
from __future__ import annotations

import argparse
import math
import os
from typing import Any, Sequence
from urllib.parse import urlparse

from ..errors import UsageError
from ..options import check_output
from ..metric_names import Metric, gamma_kinds, gamma_metric

# (option, attribute, smallest accepted value) of the whole-number options; None is "not given".
AT_LEAST = (("--seed", "seed", 0), ("--bootstrap", "bootstrap", 0), ("--batch-size", "batch_size", 1),
            ("--model-batch", "model_batch", 0), ("--frames", "frames", 1), ("--workers", "workers", 1),
            ("--subset", "subset", 1), ("--max-frames", "max_frames", 1), ("--jobs", "jobs", 1),
            ("--rerank", "rerank", 1), ("--gpus", "gpus", 0))


def check_numbers(args: argparse.Namespace) -> None:
    """Whole numbers at or above their floor; level strictly inside (0, 1); rates and times > 0."""
    for option, name, floor in AT_LEAST:
        value = getattr(args, name, None)
        if isinstance(value, (int, float)) and value < floor:       # --subset may name a file
            raise UsageError(f"{option} must be an integer >= {floor}; got {value}")
    if not 0 < args.level < 1:
        raise UsageError(f"--level must be a confidence level between 0 and 1, exclusive; got {args.level}")
    for option, name in (("--fps", "fps"), ("--timeout", "timeout"), ("--connect-timeout", "connect_timeout")):
        value = getattr(args, name, None)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise UsageError(f"{option} must be > 0, a finite number; got {value}")


def check_model(spec: str, option: str = "--model") -> str:
    """A model spec whose target can exist: local paths present, a callable callable, a URL a
    URL; returns its kind (hf:/clip: folders are checked by parse_spec). Nothing is loaded (a
    callable's module is imported)."""
    from .adapters.factory import parse_spec
    from .adapters.kinds import import_target
    from .adapters.protocol import ModelSpecError, wrappable

    try:
        kind, target = parse_spec(spec)
        if kind == "callable" and not wrappable(import_target(target)):
            raise UsageError(f"{option} {spec}: {target} is not a model; expected an object with "
                             "encode_videos/encode_texts or score, a class or zero-argument factory "
                             "returning one, or a function (clips, texts) -> scores")
    except ModelSpecError as e:
        raise UsageError(str(e)) from None
    path = os.path.expanduser(target)
    if kind == "precomputed" and not os.path.isdir(path):
        raise UsageError(f"{option} {spec}: {path} is not a directory; expected precomputed:DIR")
    if kind == "http":
        url = urlparse(target.partition("#")[0])
        if url.scheme not in ("http", "https") or not url.netloc or " " in target:
            raise UsageError(f"{option} {spec}: expected http:http://HOST:PORT[/PATH][#cross]; "
                             f"got {target!r}")
    return kind


def check_pairs(pairs: Sequence[tuple[str, str]]) -> None:
    """Every VIDEO@TEXT pair names a known video and a known text perturbation."""
    from ..registry import REGISTRY

    for video, text in pairs:
        try:
            REGISTRY.resolve([video], "video")
            REGISTRY.resolve([text], "text")
        except ValueError as e:
            raise UsageError(f"--pairs {video}@{text}: {e}") from None


BENCH_OUTPUTS = ("results.json", "results.csv", "report.md", "report.html")   # what bench writes in --out


def check_files(args: argparse.Namespace, inputs: Sequence[str]) -> None:
    """Input files exist and parse; --out and --cache are folders that are not an input."""
    from ..contrast.entailment import read_entailment
    from ..contrast.mc import read_mc_jsonl, read_mc_tsv

    for option, path in (("--judgements", args.judgements), ("--mc", args.mc), ("--entailment", args.entailment)):
        if path is not None and not os.path.isfile(path):
            raise UsageError(f"{option} {path}: no such file")
    readers: list[tuple[str, str | None, Any]] = [
        ("--mc", args.mc, read_mc_jsonl if str(args.mc).endswith(".jsonl") else read_mc_tsv),
        ("--entailment", args.entailment, read_entailment)]
    for option, path, read in readers:
        if path is None:
            continue
        try:
            rows = read(path)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            raise UsageError(f"{option} {path}: not a readable {option[2:]} file ({e})") from None
        if not rows:
            raise UsageError(f"{option} {path}: no rows; expected at least one question")
    inputs = [*inputs, args.judgements, args.mc, args.entailment, args.baseline_errors]
    check_output(args.out, inputs, "--out", kind="dir", writes=BENCH_OUTPUTS)
    if args.cache and not args.no_cache:
        check_output(args.cache, inputs, "--cache", kind="dir")


def check_metric(args: argparse.Namespace) -> Metric | str:
    """The metric γ is computed on, parsed (a classification run's: top1 or top5); a kind that
    counts extra positives (mAP) needs --judgements."""
    if getattr(args, "task", "retrieve") == "classify":
        from .pipeline.classify import classify_metric
        try:
            return classify_metric(args.metric or "top1")
        except ValueError as e:
            raise UsageError(str(e)) from None
    try:
        metric = gamma_metric(args.metric or "t2v.R@5")
    except ValueError as e:
        raise UsageError(str(e)) from None
    if metric.kind.needs_judgements and not args.judgements:
        raise UsageError(f"--metric {metric.key} needs --judgements (the extra positives it ranks); "
                         f"expected one of {' or '.join(gamma_kinds(judged=False))} without them")
    return metric


def check_task_options(args: argparse.Namespace) -> None:
    """--classes, --prompt, --videos and --clean belong to --task classify."""
    if getattr(args, "task", "retrieve") == "classify":
        return
    given = [o for o, v in (("--classes", args.classes), ("--prompt", args.prompt), ("--videos", args.videos),
                            ("--clean", args.clean)) if v]
    if given:
        raise UsageError(f"{', '.join(given)} apply to --task classify (a labelled dataset); "
                         f"add --task classify or drop them")


def check_rerank(args: argparse.Namespace) -> None:
    """--rerank K re-scores with --model as a cross-encoder after the dual --first-stage."""
    from .adapters.factory import encoder_type

    if (args.rerank is None) != (args.first_stage is None):
        raise UsageError("--rerank K and --first-stage MODEL go together")
    if args.rerank is None:
        return
    check_model(args.first_stage, "--first-stage")
    if encoder_type(args.model) == "dual":                # known without importing anything
        raise UsageError(f"--rerank re-scores with a cross-encoder; --model {args.model} is a dual "
                         "encoder (expected hf:...#itm, hf:...#logits, hf:...#yesno or http:URL#cross)")


def check_frames(args: argparse.Namespace) -> None:
    """--frame-sampling names a rule, for a model kind that takes one."""
    from .adapters.factory import check_frame_sampling
    from .adapters.protocol import ModelSpecError

    try:
        check_frame_sampling(args.model, args.frame_sampling)
    except ModelSpecError as e:
        raise UsageError(str(e)) from None


def check_per_frame_option(video: Sequence[str], built: Any) -> None:
    """--per-frame perturbs on the fly, and some selected op must take it (the library's rule, in
    the command's words)."""
    from ..errors import PerFrameError
    from ..registry import REGISTRY, per_frame_selection
    from ..selection import per_frame_refusal

    if built is not None:
        raise UsageError("--per-frame renders on the fly; --built benches the clips as built (build them "
                         "with `perturb build --per-frame`)")
    try:
        per_frame_selection([REGISTRY.get(v, "video") for v in video], True)
    except PerFrameError as e:
        raise UsageError(per_frame_refusal(e.takers)) from None


def check_bench(args: argparse.Namespace, pairs: Sequence[tuple[str, str]]) -> Metric | str:
    """Every check above, in the order a reader of the command line would make them; the parsed metric."""
    check_numbers(args)
    check_task_options(args)
    check_model(args.model)
    check_frames(args)
    metric = check_metric(args)
    check_rerank(args)
    check_pairs(pairs)
    check_files(args, [p for p in (args.dataset, args.built) if p])
    return metric
