"""Verb contrasts (Park et al. 3.2/A.3) and VideoCon's action contrasts.

The main verb is replaced by a WordNet antonym, then by co-hyponyms ("sister verbs") that are
frequent in a caption corpus, conjugated to the original's Penn tag. Synonyms, hypernyms,
hyponyms and entailments of the original never qualify. With a seq2seq model, the paper's
language-model candidates are added (:mod:`perturb.contrast.lm`).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..text import resources
from ..text.gender import match_case
from . import lexicon, tables
from .types import Contrast, make
from .verb_tokens import edits_for, explanation, lemma_of, targets


def conjugate(lemma: str, tag: str, like: str = "") -> str:
    """``lemma`` in the form of Penn tag ``tag``, capitalised like ``like``."""
    word = lemma if tag in ("VB", "VBP") else resources.inflect(lemma, tag)
    return match_case(like, word) if like[:1].isupper() else word


def replacements(lemma: str, freq: lexicon.Frequencies, *, use_sisters: bool = True,
                 min_count: int = 1, senses: int = 2, fallback: bool = True,
                 stop: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """(new lemma, rule) pairs: WordNet antonyms, then corpus-frequent sister verbs.

    Then corpus verbs of the same semantic field (WordNet lexicographer file); with
    ``fallback``, sisters unseen in the corpus follow, ranked by WordNet's counts.
    """
    seen = set()
    for ant in lexicon.antonyms(lemma, "v"):
        if ant not in stop and not lexicon.shares_synset(lemma, ant, "v"):
            seen.add(ant)
            yield ant, "antonym"
    if use_sisters:
        for sis in lexicon.ranked_sisters(lemma, "VERB", freq, min_count=min_count,
                                          senses=senses, stop=stop):
            if sis not in seen:
                seen.add(sis)
                yield sis, "sister"
    if use_sisters:
        for word in lexicon.ranked_field(lemma, "VERB", freq, min_count=min_count, stop=stop):
            if word not in seen:
                seen.add(word)
                yield word, "field"
    if use_sisters and fallback and freq:
        for sis in lexicon.ranked_sisters(lemma, "VERB", lexicon.Frequencies(), senses=senses,
                                          stop=stop):
            if sis not in seen:
                seen.add(sis)
                yield sis, "sister_wordnet"


def tag_kept(text: str, start: int, tag: str) -> bool:
    """True when the word at character ``start`` of ``text`` is re-tagged ``tag``."""
    doc = resources.tagger()(text)
    return any(t.idx == start and t.tag_ == tag for t in doc)


def candidates(doc: Any, rng: np.random.Generator, *, type: str = "verb", corpus: Any = None,
               frequencies: lexicon.Frequencies | None = None, use_sisters: bool = True,
               min_count: int = 1, senses: int = 2, fallback: bool = True, check_tag: bool = True,
               model: Any = None, **lm_options: Any) -> Iterator[Contrast]:
    """Verb contrasts of a parsed caption, best first (root verb, antonyms, frequent sisters)."""
    source = doc.text
    freq = frequencies if frequencies is not None else lexicon.frequencies(corpus)
    stop = tables.verb_stoplist()
    for token in targets(doc, stop):
        lemma = lemma_of(token)
        for new, how in replacements(lemma, freq, use_sisters=use_sisters, min_count=min_count,
                                     senses=senses, fallback=fallback, stop=stop):
            word = conjugate(new, token.tag_, token.text)
            c = make(source, edits_for(doc, token, word), type, f"{type}:{how}",
                     explanation(token, lemma, new))
            if c is None or (check_tag and not tag_kept(c.text, token.idx, token.tag_)):
                continue
            yield c
    if model is not None:
        from . import lm
        yield from lm.candidates(doc, rng, type=type, model=model, frequencies=freq,
                                 corpus=corpus, **lm_options)
