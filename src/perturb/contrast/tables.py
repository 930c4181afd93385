"""Loaders for the plain data tables in ``assets/contrast/``."""
from __future__ import annotations

import csv
import functools

from ..text.words import asset_lines


@functools.lru_cache(maxsize=None)
def words(name: str) -> tuple[str, ...]:
    """A one-word-per-line table."""
    return tuple(ln.strip().lower() for ln in asset_lines("contrast", name))


@functools.lru_cache(maxsize=None)
def rows(name: str) -> tuple[dict[str, str], ...]:
    """A tab-separated table with a header line, as dicts."""
    return tuple(csv.DictReader(asset_lines("contrast", name), delimiter="\t", quoting=csv.QUOTE_NONE))


def verb_stoplist() -> frozenset[str]:
    """Verb lemmas the verb/action contrasts leave alone."""
    return frozenset(words("verb_stoplist.txt"))
