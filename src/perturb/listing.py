"""Listings on stdout: a table for a person at a terminal, plain rows for anything else.

Piped or redirected, a listing is one item a line, fields separated by tabs, nothing wrapped or
folded, so ``cut``, ``grep`` and ``awk`` read it whole. Imports nothing else from perturb.
"""
from __future__ import annotations

import re
import sys
from typing import Any, Iterable, Sequence


def to_terminal(stream: Any = None) -> bool:
    """Whether ``stream`` (default: stdout) is a terminal."""
    stream = sys.stdout if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):       # no isatty, or a closed stream
        return False


def cell(value: Any) -> str:
    """A field of a plain row: tabs and line breaks inside it become spaces."""
    return re.sub(r"[\t\r\n]+", " ", "" if value is None else str(value))


def print_rows(rows: Iterable[Sequence[Any]]) -> None:
    """Print each row as one line of tab-separated fields."""
    for row in rows:
        print("\t".join(cell(v) for v in row))
