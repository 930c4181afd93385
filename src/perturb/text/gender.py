"""Gendered words of a caption and their counterparts: the core of the Bias perturbations.

One table (``assets/text/gendered_words.tsv``) maps every gendered noun and pronoun to its male,
female and neutral form; first names go through gender-guesser (only tokens tagged NNP/PROPN)
and swap through ``assets/text/names.tsv``.

Public API:

- :func:`gendered_tokens` — the gendered tokens of a spaCy Doc (:class:`GenderedToken`);
- :func:`swap_word` — one token (or word) turned male, female, neutral or to the other gender,
  keeping its case and attached punctuation; possessive "her" (PRP$) becomes "his", object
  "her" (PRP) becomes "him";
- :func:`swap_doc` — the replacements for a whole Doc, with "a"/"an" fixed before changed words;
- :func:`fix_articles` — 'a'/'an' agreeing with the words that replaced their nouns;
- :func:`rewrite` — a Doc re-joined with some tokens replaced, original whitespace kept.
"""
from __future__ import annotations

import csv
import functools
import re
import zlib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from . import resources
from .words import asset_lines, match_case

GENDERS = ("male", "female")
TARGETS = ("male", "female", "neutral")
_EDGE = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)
_POSSESSIVE_DEPS = ("poss",)
_PREMODIFIER_DEPS = ("nmod", "compound", "amod")


@dataclass(frozen=True)
class _Row:
    """One word family of the table: its three forms and what kind of word it is."""

    male: str
    female: str
    neutral: Optional[str]
    plural: bool
    kind: str
    tag: str

    def form(self, gender: str) -> Optional[str]:
        return getattr(self, gender)


@dataclass(frozen=True)
class GenderedToken:
    """A gendered token of a Doc: index, text, gender ("male"/"female"), kind, plural, Penn tag."""

    i: int
    text: str
    gender: str
    kind: str            # "noun", "pronoun" or "name"
    plural: bool
    tag: str = ""


def _read_tsv(name: str) -> list[dict[str, str]]:
    """Rows of a tab-separated asset with a header line; '#' lines are comments."""
    return list(csv.DictReader(asset_lines("text", name), delimiter="\t", quoting=csv.QUOTE_NONE))


@functools.lru_cache(maxsize=None)
def _table() -> dict[tuple[str, str], tuple[_Row, str]]:
    """(lower-case word, tag or '-') → (row, gender of the word); first row wins."""
    index: dict[tuple[str, str], tuple[_Row, str]] = {}
    for r in _read_tsv("gendered_words.tsv"):
        row = _Row(r["male"], r["female"], None if r["neutral"] == "-" else r["neutral"],
                   r["number"] == "pl", r["kind"], r["tag"])
        for gender in GENDERS:
            word = row.form(gender)
            index.setdefault((word, row.tag), (row, gender))
            index.setdefault((word, "-"), (row, gender))
    return index


@functools.lru_cache(maxsize=None)
def _names() -> dict[str, Any]:
    """Name pairs: 'male'/'female' → tuple of names, and lower-case name → counterpart."""
    rows = _read_tsv("names.tsv")
    out: dict[str, Any] = {"male": tuple(r["male"] for r in rows),
                           "female": tuple(r["female"] for r in rows)}
    for r in rows:
        out.setdefault(r["male"].lower(), r["female"])
        out.setdefault(r["female"].lower(), r["male"])
    return out


def split_edges(word: str) -> tuple[str, str, str]:
    """('(', 'man', '),') for '(man),': leading punctuation, core word, trailing punctuation."""
    lead, core, trail = _EDGE.match(word).groups()
    return lead, core, trail


def lookup(word: str, tag: str = "") -> Optional[tuple[_Row, str]]:
    """The table row and gender of a word (tag picks between 'her' PRP$ and PRP), else None."""
    core = split_edges(word)[1].lower().replace("\u2019", "'")
    if not core:
        return None
    table = _table()
    hit = table.get((core, tag)) or table.get((core, "-"))
    if hit is not None and hit[0].kind == "noun" and tag.startswith("VB"):
        return None                      # "to host", "to man the boat": verbs are not gendered
    return hit


def _pronoun_tag(token: Any) -> str:
    """PRP$ for a possessive 'her'/'his' (by tag, or by the parse when the tagger slips)."""
    tag = token.tag_
    if tag == "PRP$" or token.dep_ in _POSSESSIVE_DEPS:
        return "PRP$"
    if tag == "PRP" and token.dep_ in _PREMODIFIER_DEPS and token.head.i > token.i:
        return "PRP$"                    # "HER BIKE" tagged PRP, attached to the noun after it
    return tag


def _is_name_candidate(token: Any) -> bool:
    if token.tag_ != "NNP" and token.pos_ != "PROPN":
        return False
    if token.ent_type_ not in ("", "PERSON"):
        return False
    if token.i > 0 and token.nbor(-1).tag_ == "NNP":
        return False                     # "Mr. Jones", "Mary Jones": a surname, not a first name
    text = token.text
    return text.isalpha() and (text.istitle() or text.isupper())


def classify(token: Any) -> Optional[GenderedToken]:
    """A spaCy token as a :class:`GenderedToken`, or None when it carries no gender."""
    tag = _pronoun_tag(token)
    hit = lookup(token.text, tag)
    if hit is not None:
        row, gender = hit
        return GenderedToken(token.i, token.text, gender, row.kind, row.plural, tag)
    if _is_name_candidate(token):
        gender = resources.name_gender(token.text)
        if gender is not None:
            return GenderedToken(token.i, token.text, gender, "name", False, token.tag_)
    return None


def gendered_tokens(doc: Iterable[Any]) -> list[GenderedToken]:
    """Every gendered noun, pronoun and first name of a spaCy Doc, in order."""
    return [g for g in map(classify, doc) if g is not None]


def _swap_name(name: str, gender: str, to: str) -> str:
    if to == "neutral" or to == gender:
        return name
    names = _names()
    other = names.get(name.lower())
    if other is None:
        pool = names[to]
        other = pool[zlib.crc32(name.lower().encode("utf-8")) % len(pool)]
    return match_case(name, other)


def swap_word(token: Any, to: Optional[str] = None, *, tag: str = "") -> str:
    """The word turned ``to`` "male", "female", "neutral" or (None) the other gender.

    ``token`` is a :class:`GenderedToken`, a spaCy token or a plain word (then ``tag`` may give
    its Penn tag; an untagged 'her' counts as possessive). Case and attached punctuation are
    kept ("She"→"He", "MAN"→"WOMAN", "man,"→"woman,"); a word with no gender, or with no form
    for the target, comes back unchanged.
    """
    if to is not None and to not in TARGETS:
        raise ValueError(f"to must be one of {TARGETS} or None; got {to!r}")
    if isinstance(token, GenderedToken):
        info: Optional[GenderedToken] = token
        text = token.text
    elif isinstance(token, str):
        text = token
        hit = lookup(token, tag)
        info = GenderedToken(-1, token, hit[1], hit[0].kind, hit[0].plural, tag) if hit else None
    else:
        text = token.text
        info = classify(token)
    if info is None:
        return text
    target = to or ("female" if info.gender == "male" else "male")
    lead, core, trail = split_edges(text)
    if info.kind == "name":
        return lead + _swap_name(core, info.gender, target) + trail
    if target == info.gender:
        return text
    hit = lookup(core, info.tag)
    new = hit[0].form(target) if hit else None
    if new is None:
        return text
    return lead + match_case(core, new) + trail


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def swap_doc(doc: Any, to: Optional[str] = None, *,
             tokens: Optional[Iterable[GenderedToken]] = None) -> dict[int, str]:
    """Replacements {token index: new text} turning gendered tokens ``to`` a gender (None = swap).

    ``tokens`` restricts the change to some gendered tokens (default: all of them). An article
    "a"/"an" right before a changed word is fixed ("an uncle" → "an aunt", "a boy" → "a child").
    """
    chosen = gendered_tokens(doc) if tokens is None else list(tokens)
    out: dict[int, str] = {}
    for g in chosen:
        new = swap_word(g, to)
        if new != g.text:
            out[g.i] = new
    out.update(fix_articles(doc, out))
    return out


def fix_articles(doc: Any, replacements: Mapping[int, str]) -> dict[int, str]:
    """Replacements for 'a'/'an' right before replaced words ('a' + 'aunt' → 'an')."""
    out: dict[int, str] = {}
    for i, new in replacements.items():
        if i > 0 and doc[i - 1].lower_ in ("a", "an") and (i - 1) not in replacements:
            art = doc[i - 1].text
            fixed = match_case(art, _article(split_edges(new)[1]))
            if fixed.lower() != art.lower():
                out[i - 1] = fixed
    return out


def rewrite(doc: Iterable[Any], replacements: Mapping[int, str]) -> str:
    """The Doc's text with tokens replaced, each keeping its original trailing whitespace.

    An empty replacement removes the token; its whitespace survives only where the text
    before it would otherwise run into the next word ("is|n't |running" → "is running").
    """
    parts: list[str] = []
    for t in doc:
        new = replacements.get(t.i, t.text)
        if t.i in replacements and new == "":
            if parts and t.whitespace_ and not parts[-1][-1:].isspace():
                parts.append(t.whitespace_)
            elif parts and not t.whitespace_:              # "does not." → "does."
                parts[-1] = parts[-1].rstrip()
            continue
        parts.append(new + t.whitespace_)
    return "".join(parts)
