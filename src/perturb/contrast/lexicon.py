"""WordNet relations for contrast words: antonyms, co-hyponyms ("sisters") and the filters.

A replacement word must not be a synonym (share a synset), a hypernym or hyponym, nor an
entailment of the original, in any of their senses.
"""
from __future__ import annotations

import functools
from collections import Counter
from typing import Any, Iterable

from ..text import resources

WN_POS = {"VERB": "v", "NOUN": "n", "ADJ": "a"}


def _wn() -> Any:
    return resources.wordnet()


@functools.lru_cache(maxsize=20000)
def synsets(lemma: str, pos: str) -> tuple[Any, ...]:
    """WordNet synsets of a lemma for a WordNet POS ('v', 'n', 'a'), most frequent first."""
    found = _wn().synsets(lemma.replace(" ", "_"), pos=pos)
    if pos == "a":
        found = [s for s in found if s.pos() in "as"]
    return tuple(found)


@functools.lru_cache(maxsize=20000)
def _related(lemma: str, pos: str) -> frozenset[Any]:
    """Synsets a contrast word must avoid: the lemma's own, their hypernym and hyponym closures, entailments."""
    out: set[Any] = set()
    for s in synsets(lemma, pos):
        out.add(s)
        out.update(s.closure(lambda x: x.hypernyms() + x.instance_hypernyms()))
        out.update(s.closure(lambda x: x.hyponyms(), depth=3))
        if pos == "v":
            out.update(s.entailments())
            out.update(s.verb_groups())
        if pos == "a":
            out.update(s.similar_tos())
    return frozenset(out)


def shares_synset(a: str, b: str, pos: str) -> bool:
    """True when two lemmas have a WordNet synset in common (synonyms in some sense)."""
    return bool(set(synsets(a, pos)) & set(synsets(b, pos)))


def is_contrast_word(original: str, candidate: str, pos: str) -> bool:
    """True when ``candidate`` is neither the original, a synonym, hypernym, hyponym nor entailment of it."""
    if candidate.lower() == original.lower() or not synsets(candidate, pos):
        return False
    if shares_synset(original, candidate, pos):
        return False
    cand = set(synsets(candidate, pos))
    if cand & _related(original, pos):
        return False
    own = set(synsets(original, pos))
    if pos == "v" and any(own & set(c.entailments()) for c in cand):
        return False
    return True


@functools.lru_cache(maxsize=20000)
def antonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """WordNet antonyms of a lemma, from its most frequent sense on; single words only."""
    out: list[str] = []
    for s in synsets(lemma, pos):
        for lem in s.lemmas():
            if lem.name().lower() != lemma.lower():
                continue
            for ant in lem.antonyms():
                name = ant.name()
                if "_" not in name and name not in out and not shares_synset(lemma, name, pos):
                    out.append(name)
    return tuple(out)


@functools.lru_cache(maxsize=20000)
def sisters(lemma: str, pos: str, senses: int = 2, primary: bool = False) -> tuple[str, ...]:
    """Single-word co-hyponyms of the lemma's first ``senses`` senses (in WordNet order).

    ``primary`` keeps only words whose most frequent sense is the co-hyponym itself.
    """
    out: list[str] = []
    for s in synsets(lemma, pos)[:senses]:
        for parent in s.hypernyms():
            for sib in parent.hyponyms():
                if sib == s:
                    continue
                for lem in sib.lemmas():
                    name = lem.name()
                    if "_" in name or "-" in name or not name.isalpha() or name in out:
                        continue
                    if primary and synsets(name, pos)[:1] != (sib,):
                        continue
                    out.append(name)
    return tuple(name for name in out if is_contrast_word(lemma, name, pos))


@functools.lru_cache(maxsize=50000)
def wordnet_count(lemma: str, pos: str) -> int:
    """Sense-tagged corpus count of a lemma from WordNet (0 when absent)."""
    return sum(lem.count() for s in synsets(lemma, pos) for lem in s.lemmas()
               if lem.name().lower() == lemma.lower())


class Frequencies:
    """Lemma counts per coarse POS built from a list of captions (the 'training captions')."""

    def __init__(self, counts: dict[str, Counter] | None = None) -> None:
        self.counts: dict[str, Counter] = counts or {}

    @classmethod
    def from_captions(cls, captions: Iterable[str], batch_size: int = 512) -> "Frequencies":
        """Count VERB/NOUN/ADJ lemmas of the captions with the spaCy tagger."""
        counts: dict[str, Counter] = {p: Counter() for p in WN_POS}
        texts = [c for c in captions if c and c.strip()]
        for doc in resources.tagger().pipe(texts, batch_size=batch_size):
            for t in doc:
                if t.pos_ in counts:
                    counts[t.pos_][t.lemma_.lower()] += 1
        return cls(counts)

    def __bool__(self) -> bool:
        return any(self.counts.values())

    def count(self, lemma: str, upos: str) -> int:
        """How often the lemma occurs with that coarse POS."""
        return self.counts.get(upos, Counter()).get(lemma.lower(), 0)


_FREQ_CACHE: dict[int, Frequencies] = {}


def frequencies(corpus: Iterable[str] | Frequencies | None) -> Frequencies:
    """A :class:`Frequencies` for a caption list (cached per list content), or an empty one."""
    if corpus is None:
        return Frequencies()
    if isinstance(corpus, Frequencies):
        return corpus
    corpus = tuple(corpus)
    key = hash(corpus)
    if key not in _FREQ_CACHE:
        if len(_FREQ_CACHE) > 8:
            _FREQ_CACHE.clear()
        _FREQ_CACHE[key] = Frequencies.from_captions(corpus)
    return _FREQ_CACHE[key]


def ranked_sisters(lemma: str, upos: str, freq: Frequencies, *, min_count: int = 1,
                   senses: int = 2, stop: frozenset[str] = frozenset(),
                   primary: bool = False) -> list[str]:
    """Co-hyponyms ordered by corpus frequency (WordNet counts when no corpus is given).

    With a corpus, only sisters seen at least ``min_count`` times as that POS are kept.
    """
    pos = WN_POS[upos]
    cands = [s for s in sisters(lemma, pos, senses, primary) if s.lower() not in stop]
    if freq:
        scored = [(freq.count(s, upos), s) for s in cands]
        scored = [x for x in scored if x[0] >= min_count]
    else:
        scored = [(wordnet_count(s, pos), s) for s in cands]
        scored = [x for x in scored if x[0] > 0]
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [s for _, s in scored]


def ranked_field(lemma: str, upos: str, freq: Frequencies, *, min_count: int = 1,
                 stop: frozenset[str] = frozenset()) -> list[str]:
    """Corpus words of the same WordNet semantic field (lexicographer file) as the lemma's main
    sense, most frequent first; synonyms, hypernyms, hyponyms and entailments excluded.

    This reaches verbs such as 'give', 'hold' or 'watch' whose main sense has no hypernym and
    so no co-hyponyms.
    """
    pos = WN_POS[upos]
    own = synsets(lemma, pos)
    if not own or not freq:
        return []
    field = own[0].lexname()
    out = []
    for word, n in freq.counts.get(upos, Counter()).most_common():
        if n < min_count:
            break
        if word in stop or not word.isalpha() or word == lemma:
            continue
        first = synsets(word, pos)[:1]
        if first and first[0].lexname() == field and is_contrast_word(lemma, word, pos):
            out.append(word)
    return out
