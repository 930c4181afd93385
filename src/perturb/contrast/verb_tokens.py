"""Verb tokens of a parsed caption: which may be replaced, their lemma, the edits that replace
them and the sentence that explains the change.

Shared by the WordNet path (:mod:`.verb`) and the language-model path (:mod:`.lm`) of verb
contrasts, so neither imports the other for them.
"""
from __future__ import annotations

from typing import Any

from ..text import resources
from . import explain, lexicon, tables

VERB_TAGS = ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ")
_SUBJECT_DEPS = ("nsubj", "nsubjpass")
# A participle in these relations modifies a noun ("a smiling woman", "a parked car"): it is an
# adjective there, not an action, so it is never swapped for another verb.
ADJECTIVAL_DEPS = ("amod", "compound")


def lemma_of(token: Any) -> str:
    """The verb lemma known to WordNet: lemminflect's, else spaCy's, else WordNet's morphy."""
    text = token.text.lower()
    options = [*resources.lemminflect().getLemma(text, upos="VERB"), token.lemma_.lower(),
               resources.wordnet().morphy(text, "v")]
    return next((lem for lem in options if lem and lexicon.synsets(lem, "v")), token.lemma_.lower())


def targets(doc: Any, stop: frozenset[str] | None = None) -> list[Any]:
    """Content verbs of a Doc that may be replaced, adjectival participles left out: the root verb
    first, then in order."""
    stop = tables.verb_stoplist() if stop is None else stop
    found = [t for t in doc if t.pos_ == "VERB" and t.tag_ in VERB_TAGS and t.text.isalpha()
             and t.dep_ not in ADJECTIVAL_DEPS
             and lemma_of(t) not in stop and lexicon.synsets(lemma_of(t), "v")]
    return sorted(found, key=lambda t: (t.dep_ != "ROOT", t.i))


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
