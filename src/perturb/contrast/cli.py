"""``perturb contrast``, ``perturb mc`` and ``perturb entailment``."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..errors import MissingResourceError, UsageError
from ..extras import require
from ..options import check_distinct_outputs, check_output
from ..text.inputs import check_captions
from .types import TYPES


def _cli_error(msg: str) -> Exception:
    return UsageError(msg)


def _context(args: Any) -> dict[str, Any]:
    """Generator context from the common options (cast list, corpus file, LM)."""
    ctx: dict[str, Any] = {}
    if getattr(args, "cast", None):
        cast = {}
        for part in args.cast.split(","):
            name, _, g = part.partition(":")
            if not name.strip() or g.strip() not in ("m", "f"):
                raise _cli_error(f"--cast expects NAME:m|f,...; got {part!r}")
            cast[name.strip()] = g.strip()
        ctx["cast"] = cast
    if getattr(args, "corpus", None):
        ctx["corpus"] = _read_lines(args.corpus, "--corpus")
    if getattr(args, "model", None):
        from .lm import seq2seq
        try:
            seq2seq(args.model)                # loaded now (and kept): a bad --model is exit 2 at once
        except MissingResourceError as e:
            raise _cli_error(f"--model {args.model}: {e}") from None
        ctx["model"] = args.model
    return ctx


def _read_lines(path: str, option: str) -> list[str]:
    """The non-blank lines of a UTF-8 text file."""
    p = Path(path)
    if not p.is_file():
        raise _cli_error(f"{option} {path}: no such file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _cli_error(f"{option} {path}: not UTF-8 text ({e.reason} at byte {e.start}); expected "
                         "captions, one per line") from None
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def _type(value: str) -> str:
    from .api import get
    try:
        return get(value).name
    except ValueError as e:
        raise _cli_error(str(e)) from None


def cmd_contrast(args: Any) -> int:
    from .api import generate_batch
    require(["text"], why="to parse captions with spaCy")
    captions = args.caption or [ln.rstrip("\n") for ln in sys.stdin if ln.strip()]
    if not captions:
        raise _cli_error("give a caption (or captions on standard input)")
    if args.n is not None and args.n < 1:
        raise _cli_error("--n must be at least 1")
    try:
        check_captions(captions)
    except ValueError as e:
        raise _cli_error(str(e)) from None
    type = _type(args.type)
    found = generate_batch(captions, type, seed=args.seed, n=args.n, **_context(args))
    for contrasts in found:
        for c in contrasts:
            print(json.dumps(c.to_dict(), ensure_ascii=False) if args.json else c.text)
    missing = sum(not contrasts for contrasts in found)
    if missing:
        # as ``perturb text``: a caption without a contrast is reported, not an error
        print(f"perturb contrast: no {type} contrast for {missing} of {len(found)} caption(s); "
              f"nothing printed for them", file=sys.stderr)
        if args.strict:
            return 1
    return 0


def _items(path: str, group_column: str | None) -> list[tuple[str, str, str | None]]:
    """(clip, caption, group) per item of a caption CSV/JSONL (first caption of each video)."""
    from ..dataset.readers import DatasetFormatError, read_dataset
    p = Path(path)
    if not p.exists():
        raise _cli_error(f"no such file: {path}")
    try:
        items = read_dataset(p)
    except DatasetFormatError as e:
        raise _cli_error(str(e)) from None
    out = []
    for it in items:
        group = it.group if group_column in (None, "group") else it.meta.get(group_column)
        if it.captions:
            out.append((it.item_id, it.captions[0], group if group_column else None))
    if group_column and all(group is None for _, _, group in out):
        raise _cli_error(f"--group-column {group_column}: no row of {path} has a value in that column; "
                         "expected a column such as group")
    return out


def cmd_mc(args: Any) -> int:
    from . import mc
    for option in ("--out", "--jsonl"):
        path = getattr(args, option[2:])
        if path is not None:
            check_output(path, [args.captions, args.corpus], option)
    check_distinct_outputs([("--out", args.out), ("--jsonl", args.jsonl)])
    items = _items(args.captions, args.group_column)
    try:
        if args.type in (None, "random"):
            result = mc.random_mc(items, seed=args.seed)
        else:
            result = mc.contrast_mc(items, _type(args.type), seed=args.seed, **_context(args))
    except ValueError as e:                  # e.g. too few distinct captions for the endings
        raise _cli_error(f"{args.captions}: {e}") from None
    try:
        mc.write_mc_tsv(result.rows, args.out)
        if args.jsonl:
            mc.write_mc_jsonl(result.rows, args.jsonl)
    except OSError as e:
        raise _cli_error(str(e)) from None
    print(f"{len(result.rows)} rows written to {args.out}; {result.filtered} clips filtered "
          f"(no valid contrast)", file=sys.stderr)
    return 0


def cmd_entailment(args: Any) -> int:
    from .entailment import entailment_set, write_entailment
    check_output(args.out, [args.captions, args.corpus], "--out")
    items = [(c, cap) for c, cap, _ in _items(args.captions, None)]
    types = [_type(t) for t in args.type.split(",")]
    pairs = entailment_set(items, types, seed=args.seed, **_context(args))
    write_entailment(pairs, args.out)
    print(f"{len(pairs)} pairs written to {args.out}", file=sys.stderr)
    return 0


def _common(p: Any) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--cast", help="person_id cast list, e.g. Jenko:m,Schmidt:m,Zach:m")
    p.add_argument("--corpus", help="text file of training captions (one per line) for word frequencies")
    p.add_argument("--model", help="seq2seq model name or local path for LM verb candidates")


def register(subparsers: Any) -> None:
    """Add the contrast subcommands."""
    p = subparsers.add_parser("contrast", help="contrast captions (hard negatives) of a caption")
    p.add_argument("caption", nargs="*", help="caption(s); read from standard input when absent")
    p.add_argument("--type", required=True, help=f"one of: {', '.join(TYPES)}")
    p.add_argument("--n", type=int, default=1, help="contrasts per caption (default 1)")
    p.add_argument("--json", action="store_true", help="JSON lines with every field")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 1 when a caption has no contrast of this type")
    _common(p)
    p.set_defaults(func=cmd_contrast)

    p = subparsers.add_parser("mc", help="multiple-choice set (published TSV layout)")
    p.add_argument("--captions", required=True, help="caption CSV/JSONL (video_id, caption, ...)")
    p.add_argument("--type", default="random", help=f"random (default) or one of: {', '.join(TYPES)}")
    p.add_argument("--out", required=True, help="output TSV")
    p.add_argument("--jsonl", help="also write the JSONL form (types and spans) here")
    p.add_argument("--group-column", help="draw negatives from the same group (e.g. group)")
    _common(p)
    p.set_defaults(func=cmd_mc)

    p = subparsers.add_parser("entailment", help="(video, caption, label) entailment set")
    p.add_argument("--captions", required=True, help="caption CSV/JSONL (video_id, caption, ...)")
    p.add_argument("--type", required=True, help="contrast type(s), comma-separated")
    p.add_argument("--out", required=True, help="output .tsv or .jsonl")
    _common(p)
    p.set_defaults(func=cmd_entailment)
