"""Token helpers shared by the rule-based text perturbations.

A caption is split into *pieces* that alternate separator, word, separator, ..., separator:
words sit at the odd indices and ``"".join(pieces)`` gives the caption back exactly, so every
perturbation keeps the caption's spacing and the punctuation attached to its words
("dog." -> "[UNK].").
"""
from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping, Sequence

from .resources import asset_path

UNK = "[UNK]"
NN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})                  # Penn noun tags
VB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})     # Penn verb tags, auxiliaries too

# A word: "[UNK]", or a run of non-space characters that starts and ends with a word character
# ("girl's", "4.5", "well-known"); leading and trailing punctuation stays in the separators.
WORD = re.compile(r"(\[UNK\]|\w(?:\S*\w)?)")
HAS_WORD_CHAR = re.compile(r"\w")


def split(text: str) -> list[str]:
    """Pieces of a caption: separators at even indices, words at odd indices."""
    return WORD.split(text)


def from_doc(doc: Any) -> list[str]:
    """Pieces of a spaCy Doc, one word slot per token: ["", tok0, ws0, tok1, ws1, ...]."""
    pieces = [""]
    for tok in doc:
        pieces.append(tok.text)
        pieces.append(tok.whitespace_)
    return pieces


def words(pieces: Sequence[str]) -> list[str]:
    """The words of a piece list, in order."""
    return list(pieces[1::2])


def is_word(token: str) -> bool:
    """Whether a token holds a word character (so punctuation and emoji are never dropped)."""
    return token != UNK and HAS_WORD_CHAR.search(token) is not None


def replace(pieces: Sequence[str], new_words: Mapping[int, str]) -> str:
    """The caption with word ``i`` (0-based, among the words) replaced by ``new_words[i]``."""
    out = list(pieces)
    for i, w in new_words.items():
        out[2 * i + 1] = w
    return "".join(out)


def drop(pieces: Sequence[str], indices: Iterable[int]) -> str:
    """The caption with the words at ``indices`` replaced by ``[UNK]`` (length kept, paper §1.2)."""
    return replace(pieces, {i: UNK for i in indices})


def pick(rng: Any, options: Sequence[Any]) -> Any:
    """A uniformly random element of ``options`` from one draw of ``rng`` (cheaper than integers())."""
    return options[int(rng.random() * len(options))]


def match_case(template: str, word: str) -> str:
    """``word`` in the casing of ``template``: ALL CAPS, Capitalised or unchanged."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


@functools.lru_cache(maxsize=None)
def asset_lines(*parts: str) -> tuple[str, ...]:
    """Non-empty, non-comment lines of a plain data file in ``perturb/assets`` (cached)."""
    path = asset_path(*parts)
    with open(path, encoding="utf-8") as f:
        lines = (line.rstrip("\n") for line in f)
        return tuple(line for line in lines if line.strip() and not line.lstrip().startswith("#"))


@functools.lru_cache(maxsize=None)
def asset_table(*parts: str, symmetric: bool = False) -> Mapping[str, tuple[str, ...]]:
    """A ``key value value ...`` data file as key -> values; ``symmetric`` adds value -> key."""
    table: dict[str, list[str]] = {}
    for line in asset_lines(*parts):
        key, *values = line.split()
        table.setdefault(key, [])
        table[key].extend(v for v in values if v != key and v not in table[key])
        if symmetric:
            for v in values:
                if v != key and key not in table.setdefault(v, []):
                    table[v].append(key)
    return {k: tuple(v) for k, v in table.items() if v}


@functools.lru_cache(maxsize=None)
def stop_words() -> frozenset[str]:
    """Lower-case function words that character-level perturbations leave alone (textflint's rule)."""
    return frozenset(w.lower() for line in asset_lines("text", "stopwords.txt") for w in line.split())


def rate_levels(rates: dict[int, float]) -> dict[int, dict[str, float]]:
    """A severity table {severity: {"rate": r}} for perturbations whose strength is a rate."""
    return {s: {"rate": r} for s, r in rates.items()}
