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
from . import explain, lexicon, tables
from .types import Contrast, make

VERB_TAGS = ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ")
_SUBJECT_DEPS = ("nsubj", "nsubjpass")


def lemma_of(token: Any) -> str:
    """The verb lemma known to WordNet: lemminflect's, else spaCy's, else WordNet's morphy."""
    text = token.text.lower()
    options = [*resources.lemminflect().getLemma(text, upos="VERB"), token.lemma_.lower(),
               resources.wordnet().morphy(text, "v")]
    return next((lem for lem in options if lem and lexicon.synsets(lem, "v")), token.lemma_.lower())


def targets(doc: Any, stop: frozenset[str] | None = None) -> list[Any]:
    """Content verbs of a Doc that may be replaced: the root verb first, then in order."""
    stop = tables.verb_stoplist() if stop is None else stop
    found = [t for t in doc if t.pos_ == "VERB" and t.tag_ in VERB_TAGS and t.text.isalpha()
             and lemma_of(t) not in stop and lexicon.synsets(lemma_of(t), "v")]
    return sorted(found, key=lambda t: (t.dep_ != "ROOT", t.i))


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


def _subject(token: Any) -> Any:
    if token.dep_ == "acl" and token.head.pos_ in ("NOUN", "PROPN", "PRON"):
        return token.head
    t = token
    for _ in range(4):
        subj = [c for c in t.children if c.dep_ in _SUBJECT_DEPS]
        if subj:
            return subj[0]
        if t.head is t:
            break
        t = t.head
    return None


def _phrase(token: Any) -> str:
    if token is None:
        return ""
    words = [w for w in token.subtree if w.i <= token.i or w.dep_ not in ("acl", "relcl")]
    if any(w.dep_ in ("acl", "relcl") for w in token.children):
        words = list(token.lefts) + [token]
    return " ".join(w.text for w in words)


def explanation(token: Any, original: str, new: str) -> str:
    """'Jenko is lowering his gun, not raising it' for a verb token and two lemmas."""
    subj = _subject(token)
    obj = next((c for c in token.children if c.dep_ in ("dobj", "obj")), None)
    plural = subj is not None and (subj.tag_ in ("NNS", "NNPS") or subj.lower_ in ("they", "we")
                                   or any(c.dep_ == "conj" for c in subj.children))
    return explain.verb(original, new, _phrase(subj), plural, _phrase(obj))


def edits_for(doc: Any, token: Any, word: str) -> list[tuple[int, int, str]]:
    """Edits replacing a verb token by ``word`` and dropping its particle ('picks up')."""
    edits = [(token.idx, token.idx + len(token.text), word)]
    for p in token.children:
        if p.dep_ == "prt" and p.i > token.i:
            prev = doc[p.i - 1]
            edits.append((prev.idx + len(prev.text), p.idx + len(p.text), ""))
    return edits


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
