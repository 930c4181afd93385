"""Loaders for the plain data tables in ``assets/contrast/``."""
from __future__ import annotations

import csv
import functools

from ..text import resources


def _lines(name: str) -> list[str]:
    with open(resources.asset_path("contrast", name), encoding="utf-8") as f:
        return [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#")]


@functools.lru_cache(maxsize=None)
def words(name: str) -> tuple[str, ...]:
    """A one-word-per-line table."""
    return tuple(ln.strip().lower() for ln in _lines(name))


@functools.lru_cache(maxsize=None)
def rows(name: str) -> tuple[dict[str, str], ...]:
    """A tab-separated table with a header line, as dicts."""
    return tuple(csv.DictReader(_lines(name), delimiter="\t", quoting=csv.QUOTE_NONE))


def verb_stoplist() -> frozenset[str]:
    """Verb lemmas the verb/action contrasts leave alone."""
    return frozenset(words("verb_stoplist.txt"))
