"""Choosing what to run: the severity levels, ``--severities`` parsing and the selection options.

Shared by the dataset builder, the benchmark runner and their subcommands; imports nothing
else from perturb, so any layer may use it.
"""
from __future__ import annotations

import argparse
import re
from typing import Iterable

SEVERITY_LEVELS: tuple[int, ...] = (1, 2, 3, 4, 5)   # every video perturbation's severities
DEFAULT_VIDEO_SELECTION = "suite:msrvtt-p"          # what build and bench run unless told


def parse_severities(value: str | int | Iterable[int]) -> tuple[int, ...]:
    """'1-5', '1,3', 3 or [1, 3] -> a sorted tuple of distinct severity levels."""
    if isinstance(value, int) and not isinstance(value, bool):
        parts: list[int] = [value]
    elif isinstance(value, str):
        parts = []
        for tok in split_items(value, "severity", f"levels in {SEVERITY_LEVELS[0]}..{SEVERITY_LEVELS[-1]} "
                               "as e.g. '1-5' or '1,3'"):
            m = re.fullmatch(r"(\d+)\s*-\s*(\d+)|(\d+)", tok)
            if not m:
                raise ValueError(f"bad severity {tok!r}; expected e.g. '1-5' or '1,3'")
            lo, hi = (int(m[1]), int(m[2])) if m[1] else (int(m[3]), int(m[3]))
            parts += range(lo, hi + 1)
    else:
        parts = [int(v) for v in value]
    bad = [s for s in parts if s not in SEVERITY_LEVELS]
    if bad or not parts:
        raise ValueError(f"severities must be in {SEVERITY_LEVELS[0]}..{SEVERITY_LEVELS[-1]}; "
                         f"got {value!r}")
    return tuple(sorted(set(parts)))


def split_items(value: str, what: str, expected: str = "comma-separated items") -> list[str]:
    """The comma-separated items of ``value``, stripped; a ValueError for an empty one (``""``,
    ``","``, ``"1,,3"``): an empty item selects nothing, which is never meant (``none`` is)."""
    items = [t.strip() for t in value.split(",")]
    if not all(items):
        raise ValueError(f"an empty {what} item in {value!r}; expected {expected}")
    return items


def selection_option(text: str) -> str:
    """argparse type of ``--video-perturbations`` / ``--text-perturbations``: no empty item (``none``
    is the way to select nothing); names are checked against the registry later."""
    try:
        split_items(text, "selection")
    except ValueError:
        raise argparse.ArgumentTypeError(f"has an empty item in {text!r}; expected all, none, "
                                         "suite:NAME, CATEGORY or NAME items, comma-separated "
                                         "(none selects nothing)") from None
    return text


def severities_option(text: str) -> str:
    """argparse type of ``--severities``: checked while parsing (a one-line usage error naming the
    option), kept as written."""
    try:
        parse_severities(text)
    except ValueError:
        lo, hi = SEVERITY_LEVELS[0], SEVERITY_LEVELS[-1]
        raise argparse.ArgumentTypeError(f"must be levels in {lo}..{hi} as e.g. '{lo}-{hi}' or '1,3'; "
                                         f"got {text!r}") from None
    return text


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The perturbation and severity options shared by ``perturb build`` and ``perturb bench``."""
    sel = ("all | none | CATEGORY,... | NAME,... (default: all that can run here: a model-based one "
           "runs once its model is configured, docs/benchmark.md)")
    lo, hi = SEVERITY_LEVELS[0], SEVERITY_LEVELS[-1]
    parser.add_argument("--video-perturbations", default=DEFAULT_VIDEO_SELECTION, metavar="SEL",
                        type=selection_option,
                        help="suite:NAME (msrvtt-p, imagenet-c, imagenet-c-bar, kinetics-c, all) | all | none | "
                        f"CATEGORY,... | NAME[:SUITE],... (default: {DEFAULT_VIDEO_SELECTION})")
    parser.add_argument("--severities", default=f"{lo}-{hi}", type=severities_option,
                        help=f"video severities, e.g. {lo}-{hi} or 1,3,5 (default: {lo}-{hi})")
    parser.add_argument("--text-perturbations", default="all", metavar="SEL", type=selection_option, help=sel)


def per_frame_refusal(takers: Iterable[str]) -> str:
    """``--per-frame`` where no selected op takes it, as both commands word it (the library's
    PerFrameError names the ops that take it: ``takers``)."""
    return f"--per-frame applies to {', '.join(takers)}; none of them is selected (--video-perturbations)"
