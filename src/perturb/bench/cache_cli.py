"""``perturb cache ls | rm | prune``: see and clear what the embedding cache stores."""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..listing import print_rows, to_terminal
from ..options import positive_number
from .adapters.cache import KEY_FILE, read_part, clean_temporaries, entries

IDENTITY = ("model", "dataset", "modality", "perturbation", "severity", "seed", "settings")


def register(subparsers: Any) -> None:
    """Add ``cache`` with its ``ls``, ``rm`` and ``prune`` actions."""
    p = subparsers.add_parser("cache", help="list or clear the embedding cache of perturb bench",
                              description="Each entry holds one model version's embeddings of one dataset "
                              "under one perturbation, severity, seed and decoding setting.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("ls", help="list entries with their size and what they hold",
                        epilog="Piped or redirected: one entry a line, tab-separated: "
                        + ", ".join(PLAIN_FIELDS) + "; the total goes to stderr.")
    rm = sub.add_parser("rm", help="remove the entries matching every filter given")
    prune = sub.add_parser("prune", help="remove damaged parts, stale temporaries, entries superseded by a "
                           "newer model or perturbation version, and (with --older-than) old entries")
    for q in (ls, rm, prune):
        q.add_argument("dir", metavar="DIR", help="the cache directory (perturb bench --cache, default OUT/cache)")
    for q in (ls, rm):
        q.add_argument("--model", help="only entries whose model id contains this")
        q.add_argument("--dataset", help="only entries of this dataset (name or fingerprint)")
        q.add_argument("--perturbation", help="only entries whose perturbation contains this")
    rm.add_argument("--all", action="store_true", help="remove every entry")
    prune.add_argument("--older-than", type=positive_number, metavar="DAYS",
                       help="also remove entries unused this long (a number of days > 0)")
    p.set_defaults(func=cmd_cache)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _matches(entry: dict[str, Any], args: argparse.Namespace) -> bool:
    key = entry["key"]
    return ((args.model is None or args.model in str(key.get("model", "")))
            and (args.dataset is None or args.dataset in (key.get("dataset"), key.get("dataset_name")))
            and (args.perturbation is None or args.perturbation in str(key.get("perturbation", ""))))


def _rows(entry: dict[str, Any]) -> tuple[int, int]:
    rows = damaged = 0
    for part in entry["parts"]:
        try:
            rows += len(read_part(part)[0])
        except ValueError:
            damaged += 1
    return rows, damaged


def _describe(entry: dict[str, Any], root: Path) -> str:
    k = entry["key"]
    sev = "" if k.get("severity") is None else f"@{k['severity']}"
    version = k.get("model_version") or "name only"
    dataset = f"{k['dataset_name']} ({k.get('dataset', '?')})" if k.get("dataset_name") else k.get("dataset", "?")
    return (f"{k.get('model', '?')} [{version}] {dataset} {k.get('modality', '?')} "
            f"{k.get('perturbation', '?')}{sev} seed {k.get('seed', '?')}  "
            f"({entry['folder'].relative_to(root)})")


def _remove(entry: dict[str, Any]) -> int:
    shutil.rmtree(entry["folder"], ignore_errors=True)
    return entry["bytes"]


def cmd_cache(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory (expected a perturb bench cache, e.g. OUT/cache)")
    found = entries(root)
    if args.action == "ls":
        return _ls(root, [e for e in found if _matches(e, args)])
    if args.action == "rm":
        _check_filters(args)
        chosen = [e for e in found if _matches(e, args)]
        freed = sum(_remove(e) for e in chosen)
        print(f"removed {len(chosen)} entries ({_size(freed)}) from {root}")
        return 0
    return _prune(root, found, args.older_than)


# `cache ls` piped: one entry a line, these tab-separated fields (the total goes to stderr)
PLAIN_FIELDS = ("bytes", "parts", "rows", "damaged", "model", "model_version", "dataset_name", "dataset",
                "modality", "perturbation", "severity", "seed", "folder")


def _ls(root: Path, chosen: list[dict[str, Any]]) -> int:
    """Entries with their size: aligned lines and a total on a terminal; plain rows otherwise."""
    terminal = to_terminal()
    plain = []
    for e in chosen:
        rows, damaged = _rows(e)
        if terminal:
            note = f", {damaged} damaged" if damaged else ""
            print(f"{_size(e['bytes']):>10}  {len(e['parts'])} parts, {rows} rows{note}  {_describe(e, root)}")
            continue
        k = e["key"]
        plain.append([e["bytes"], len(e["parts"]), rows, damaged, *(k.get(f, "") for f in PLAIN_FIELDS[4:-1]),
                      e["folder"].relative_to(root)])
    print_rows(plain)
    total = f"{_size(sum(e['bytes'] for e in chosen))} in {len(chosen)} entries under {root}"
    print(total, file=None if terminal else sys.stderr)
    return 0


def _check_filters(args: argparse.Namespace) -> None:
    """``cache rm`` removes what its filters name: at least one filter or --all, never both,
    and no blank filter (an empty string is in every model id, so it would match everything)."""
    filters = {"--model": args.model, "--dataset": args.dataset, "--perturbation": args.perturbation}
    blank = [name for name, value in filters.items() if value is not None and not value.strip()]
    if blank:
        raise UsageError(f"{blank[0]} is blank, which would match every entry; expected some text "
                         "(use --all to remove everything)")
    given = [name for name, value in filters.items() if value is not None]
    if args.all and given:
        raise UsageError(f"--all removes every entry; expected either --all or {', '.join(given)}, not both")
    if not (args.all or given):
        raise UsageError("cache rm needs --model, --dataset, --perturbation or --all")


def _prune(root: Path, found: list[dict[str, Any]], older_than: float | None) -> int:
    freed = removed = 0
    newest: dict[tuple, dict[str, Any]] = {}
    for e in found:
        ident = tuple(str(e["key"].get(k)) for k in IDENTITY)
        if ident in newest and newest[ident]["key"].get("created", 0) >= e["key"].get("created", 0):
            freed, removed = freed + _remove(e), removed + 1          # an older version of the same thing
            continue
        if ident in newest:
            freed, removed = freed + _remove(newest[ident]), removed + 1
        newest[ident] = e
    cutoff = time.time() - older_than * 86400 if older_than is not None else None
    damaged = temporaries = 0
    for e in newest.values():
        last = max((p.stat().st_mtime for p in e["parts"]), default=(e["folder"] / KEY_FILE).stat().st_mtime)
        if cutoff is not None and last < cutoff:
            freed, removed = freed + _remove(e), removed + 1
            continue
        temporaries += clean_temporaries(e["folder"])
        for part in e["parts"]:
            try:
                read_part(part)
            except ValueError:
                freed += part.stat().st_size
                part.unlink()
                damaged += 1
    print(f"removed {removed} entries, {damaged} damaged parts and {temporaries} stale temporaries "
          f"({_size(freed)}) from {root}")
    return 0
