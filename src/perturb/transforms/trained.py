"""What a model was trained with, for ``perturb bench --trained-with``: a selection as the training
transforms take it (``suite:imagenet-c``, ``noise,fog``, ``all``), read by the same expansion
(:func:`.draws.resolve_ops`), or a transforms log, the recorded draws of ``t.params(keys=...)``
(a JSON list, or JSON lines, of ``{"op", "severity", "seed"}`` objects or nulls; a batch's list
on one line is read too). The seen ops are named as the registry names them (``shot_noise`` for
``shot_noise:imagenet-c``): a model that saw an op under one table has seen the op.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..fileio import json_or_lines
from ..registry import REGISTRY
from .draws import resolve_ops

LOG_SUFFIXES = (".json", ".jsonl")
SELECTION, LOG = "selection", "log"


@dataclass(frozen=True)
class TrainedWith:
    """The ops a model was trained with: ``given`` as written, ``kind`` ``selection`` or ``log``, and
    ``operations``, the registry's names in listing order."""

    given: str
    kind: str
    operations: tuple[str, ...]

    def record(self) -> dict[str, Any]:
        """results.json's ``split.trained_with``."""
        return {"given": self.given, "kind": self.kind, "operations": list(self.operations)}


def _names(refs: Any) -> tuple[str, ...]:
    """Registry names of ops (refs or names), in listing order, each once."""
    wanted = {REGISTRY.get(r, "video").name for r in refs}
    return tuple(s.name for s in REGISTRY.select("video") if s.name in wanted)


def _entries(value: Any, where: str) -> Iterator[str]:
    """The ``op`` of every draw in a log value: a draw, null, or a list of them (nested lists too)."""
    if value is None:
        return
    if isinstance(value, list):
        for v in value:
            yield from _entries(v, where)
        return
    op = value.get("op") if isinstance(value, dict) else None
    if not isinstance(op, str):
        raise ValueError(f"{where}: expected draws {{\"op\": ..., \"severity\": ..., \"seed\": ...}} or null "
                         f"(as t.params(keys=...) returns); got {json.dumps(value)[:60]}")
    yield op


def logged_ops(path: str | os.PathLike) -> list[str]:
    """The ops a transforms log records, as written (refs), in order of first appearance; a
    ValueError in one line for a file that cannot be read or holds something else."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"--trained-with {path}: cannot read the transforms log ({e})") from None
    try:
        body, kind = json_or_lines(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"--trained-with {path}: not JSON or JSON lines ({e})") from None
    values = [body] if kind == "json" else body
    return list(dict.fromkeys(op for v in values for op in _entries(v, f"--trained-with {path}")))


def is_log(text: str) -> bool:
    """A path to a transforms log rather than a selection: a file that exists, or a .json/.jsonl name."""
    return os.path.isfile(text) or text.lower().endswith(LOG_SUFFIXES)


def trained_with(given: str | TrainedWith) -> TrainedWith:
    """``--trained-with``'s value read: a transforms log's ops, or a selection's (the training transforms'
    own parser, so its errors are theirs); a ValueError in one line otherwise."""
    if isinstance(given, TrainedWith):
        return given
    if not isinstance(given, str) or not given.strip():
        raise ValueError(f"--trained-with expects a selection (e.g. suite:imagenet-c) or a transforms log; "
                         f"got {given!r}")
    given = given.strip()
    if is_log(given):
        if not os.path.isfile(given):
            raise ValueError(f"--trained-with {given}: no such transforms log")
        refs, kind = logged_ops(given), LOG
    else:
        refs, kind = None, SELECTION
    try:
        if refs is None:
            refs = [s.ref for s in resolve_ops(given, "video")]
        return TrainedWith(given, kind, _names(refs))
    except ValueError as e:                               # an unknown op, in the selection or the log
        raise ValueError(f"--trained-with {given}: {e}") from None
