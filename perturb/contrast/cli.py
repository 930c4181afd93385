"""``perturb contrast``, ``perturb mc`` and ``perturb entailment``."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .types import TYPES


def _cli_error(msg: str) -> Exception:
    from ..errors import UsageError
    return UsageError(msg)


def _context(args: Any) -> dict[str, Any]:
    """Generator context from the common options (cast list, corpus file, LM)."""
    ctx: dict[str, Any] = {}
    if getattr(args, "cast", None):
        cast = {}
        for part in args.cast.split(","):
            name, _, g = part.partition(":")
            if not g:
                raise _cli_error(f"--cast expects NAME:m|f,...; got {part!r}")
            cast[name.strip()] = g.strip()
        ctx["cast"] = cast
    if getattr(args, "corpus", None):
        ctx["corpus"] = _read_lines(args.corpus)
    if getattr(args, "model", None):
        ctx["model"] = args.model
    return ctx


def _read_lines(path: str) -> list[str]:
    p = Path(path)
    if not p.is_file():
        raise _cli_error(f"no such file: {path}")
    return [ln.strip() for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _type(value: str) -> str:
    from .api import get
    try:
        return get(value).name
    except ValueError as e:
        raise _cli_error(str(e)) from None


def cmd_contrast(args: Any) -> int:
    from .api import generate_batch
    captions = args.caption or [ln.rstrip("\n") for ln in sys.stdin if ln.strip()]
    if not captions:
        raise _cli_error("give a caption (or captions on standard input)")
    if args.n is not None and args.n < 1:
        raise _cli_error("--n must be at least 1")
    found = generate_batch(captions, _type(args.type), args.seed, n=args.n, **_context(args))
    for contrasts in found:
        for c in contrasts:
            print(json.dumps(c.to_dict(), ensure_ascii=False) if args.json else c.text)
    return 0 if any(found) else 1


def _items(path: str, group_column: str | None) -> list[tuple[str, str, str | None]]:
    """(clip, caption, group) per item of a caption CSV/JSONL (first caption of each video)."""
    from ..dataset.readers import read_dataset
    p = Path(path)
    if not p.exists():
        raise _cli_error(f"no such file: {path}")
    items = read_dataset(p)
    out = []
    for it in items:
        group = it.group if group_column in (None, "group") else it.meta.get(group_column)
        if it.captions:
            out.append((it.item_id, it.captions[0], group if group_column else None))
    return out


def cmd_mc(args: Any) -> int:
    from . import mc
    items = _items(args.captions, args.group_column)
    if args.type in (None, "random"):
        result = mc.random_mc(items, args.seed)
    else:
        result = mc.contrast_mc(items, _type(args.type), args.seed, **_context(args))
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
    items = [(c, cap) for c, cap, _ in _items(args.captions, None)]
    types = [_type(t) for t in args.type.split(",")]
    pairs = entailment_set(items, types, args.seed, **_context(args))
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
