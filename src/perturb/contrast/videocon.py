"""VideoCon's seven misalignment types (Bansal et al. 2023, §3.2), rule-based and offline.

Each function takes a parsed caption and a Generator and yields contrasts, best first.
Deterministic rules (relation, counting, event order, adjective pairs) need no randomness; the
Generator picks colours and hallucinated details.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..text import resources
from ..text.gender import lookup as gendered
from ..text.gender import match_case
from . import explain, lexicon, tables, verb
from .types import Contrast, make, token_edits


def _cased(like: str, word: str) -> str:
    """``word`` in the case of ``like`` (lower, Title or ALL CAPS)."""
    return match_case(like, word) if like[:1].isupper() else word


def _article_fix(doc: Any, i: int, new: str) -> dict[int, str]:
    """{i-1: 'a'/'an'} when the article before token i no longer fits ``new``."""
    if i == 0 or doc[i - 1].lower_ not in ("a", "an"):
        return {}
    art = "an" if new[:1].lower() in "aeiou" else "a"
    return {} if art == doc[i - 1].lower_ else {i - 1: _cased(doc[i - 1].text, art)}


def _swap(doc: Any, i: int, new: str, type: str, rule: str, why: str = "swap") -> Contrast | None:
    """Replace token i by ``new`` (fixing a/an), explained VideoCon-style."""
    repl = {i: new, **_article_fix(doc, i, new)}
    phrase = " ".join(repl[j] for j in sorted(repl))
    return make(doc.text, token_edits(doc, repl), type, rule,
                explain.render(why, source=explain.core(doc.text), replacement=phrase))


def action(doc: Any, rng: np.random.Generator, **context: Any) -> Iterator[Contrast]:
    """A verb replaced by an antonym or a sister verb (the verb machinery, typed 'action')."""
    yield from verb.candidates(doc, rng, type="action", **context)


def object(doc: Any, rng: np.random.Generator, *, corpus: Any = None,
           frequencies: lexicon.Frequencies | None = None, min_count: int = 1,
           senses: int = 2, **_: Any) -> Iterator[Contrast]:
    """A noun replaced by a frequent WordNet co-hyponym, number kept ('cello' → 'violin'), then
    by corpus nouns of the same semantic field ('dog' → 'cat')."""
    freq = frequencies if frequencies is not None else lexicon.frequencies(corpus)
    for t in doc:
        if t.pos_ != "NOUN" or t.tag_ not in ("NN", "NNS") or not t.text.isalpha() \
                or gendered(t.text, t.tag_):
            continue
        lemma = t.lemma_.lower()
        sisters = lexicon.ranked_sisters(lemma, "NOUN", freq, min_count=min_count, senses=senses,
                                         primary=True)
        field = lexicon.ranked_field(lemma, "NOUN", freq, min_count=min_count)
        for new in dict.fromkeys(sisters + field):
            word = resources.inflect(new, "NNS") if t.tag_ == "NNS" else new
            c = _swap(doc, t.i, _cased(t.text, word), "object", "object:sister")
            if c is not None:
                yield c


def _adjective_choices(word: str, rng: np.random.Generator) -> list[tuple[str, str]]:
    """(replacement, rule) for one adjective: colour table, pair table, then WordNet antonyms."""
    colours = tables.words("colours.txt")
    if word in colours:
        same = {word} | ({"grey", "gray"} if word in ("grey", "gray") else set())
        pool = [c for c in colours if c not in same]
        return [(pool[int(k)], "attribute:colour") for k in rng.permutation(len(pool))]
    pairs = [(r["replacement"], f"attribute:{r['kind']}") for r in tables.rows("adjective_pairs.tsv")
             if r["word"] == word]
    return pairs or [(a, "attribute:antonym") for a in lexicon.antonyms(word, "a")]


def attribute(doc: Any, rng: np.random.Generator, **_: Any) -> Iterator[Contrast]:
    """A colour, size, material or other adjective swapped ('red shirt' → 'blue shirt')."""
    colours = tables.words("colours.txt")
    for t in doc:
        word = t.lower_
        is_adj = t.tag_ in ("JJ", "JJR", "JJS") or (word in colours and t.dep_ in ("amod", "compound"))
        if not is_adj or not t.text.isalpha():
            continue
        for new, rule in _adjective_choices(word, rng):
            c = _swap(doc, t.i, _cased(t.text, new), "attribute", rule)
            if c is not None:
                yield c


_NUMBERS = None


def _numbers() -> tuple[dict[str, int], dict[int, str]]:
    global _NUMBERS
    if _NUMBERS is None:
        rows = tables.rows("numbers.tsv")
        _NUMBERS = ({r["word"]: int(r["value"]) for r in rows},
                    {int(r["value"]): r["word"] for r in rows})
    return _NUMBERS


_PLURAL_VERB = {"is": "are", "was": "were", "has": "have"}


def _agreement(doc: Any, noun: Any) -> dict[int, str]:
    """Verb edits making a subject noun's verb plural ('is' → 'are', 'walks' → 'walk')."""
    if noun.dep_ not in ("nsubj", "nsubjpass"):
        return {}
    head = noun.head
    out = {}
    for v in [c for c in head.children if c.dep_ in ("aux", "auxpass")] + [head]:
        if v.i < noun.i:
            continue
        if v.lower_ in _PLURAL_VERB:
            out[v.i] = _cased(v.text, _PLURAL_VERB[v.lower_])
            break
        if v.tag_ == "VBZ":
            out[v.i] = v.lemma_
            break
    return out


def counting(doc: Any, rng: np.random.Generator, **_: Any) -> Iterator[Contrast]:
    """A count n (word or digits) becomes n + 1; 'one dog' → 'two dogs' with verb agreement.

    The indefinite article is not a count ('a dog' is left to other types).
    """
    words, names = _numbers()
    for t in doc:
        low = t.lower_
        if low in words:
            n = words[low]
            new = names.get(n + 1) or names[n - 1]
            new = _cased(t.text, new)
        elif t.text.isdigit() and t.tag_ == "CD" and t.dep_ == "nummod":
            n = int(t.text)
            new = str(n + 1)
        else:
            continue
        if t.dep_ != "nummod" and t.tag_ != "CD":
            continue
        repl = {t.i: new}
        noun = t.head if t.dep_ == "nummod" else None
        if n == 1 and noun is not None and noun.tag_ == "NN":
            repl[noun.i] = _cased(noun.text, resources.inflect(noun.lemma_, "NNS"))
            repl.update(_agreement(doc, noun))
        phrase = " ".join(repl[j] for j in sorted(repl) if noun is None or j <= noun.i).lower()
        c = make(doc.text, token_edits(doc, repl), "counting", "counting:plus_one",
                 explain.render("swap", source=explain.core(doc.text), replacement=phrase))
        if c is not None:
            yield c


def _relation_table() -> list[tuple[list[str], str]]:
    rows = [(r["phrase"].split(), r["replacement"]) for r in tables.rows("relations.tsv")]
    return sorted(rows, key=lambda r: -len(r[0]))


def _relation_ok(tokens: list[Any]) -> bool:
    """Spatial use only: not a particle ('picks up'), not the verb 'left'."""
    first = tokens[0]
    if len(tokens) == 1 and first.dep_ == "prt":
        return False
    return not first.tag_.startswith("VB")


def relation(doc: Any, rng: np.random.Generator, **_: Any) -> Iterator[Contrast]:
    """A spatial relation flipped: above/below, left/right, inside/outside, in front of/behind..."""
    table = _relation_table()
    words = [t.lower_ for t in doc]
    i = 0
    while i < len(doc):
        for phrase, new in table:
            k = len(phrase)
            if words[i:i + k] == phrase and _relation_ok(list(doc[i:i + k])):
                start, end = doc[i].idx, doc[i + k - 1].idx + len(doc[i + k - 1].text)
                new = _cased(doc[i].text, new)
                c = make(doc.text, [(start, end, new)], "relation", "relation:flip",
                         explain.render("relation", source=explain.core(doc.text), replacement=new))
                if c is not None:
                    yield c
                i += k - 1
                break
        i += 1


_ORDER = {"before": "after", "after": "before"}


def _before_after(doc: Any) -> Iterator[Contrast]:
    for t in doc:
        if t.lower_ in _ORDER and t.pos_ in ("ADP", "SCONJ"):
            new = _cased(t.text, _ORDER[t.lower_])
            why = explain.render("before_after", source=explain.core(doc.text),
                                 original=t.lower_, replacement=new.lower())
            c = make(doc.text, token_edits(doc, {t.i: new}), "event_order", "event_order:before_after", why)
            if c is not None:
                yield c


def _main_verb(tokens: list[Any]) -> Any:
    return next((t for t in tokens if t.pos_ == "VERB"), None)


def _then(doc: Any) -> Iterator[Contrast]:
    """'A (and) then B' → 'B (and) then A', swapping predicates when B has no subject."""
    for t in doc:
        if t.lower_ != "then" or t.i == 0 or t.i == len(doc) - 1:
            continue
        left = [w for w in doc[:t.i]]
        while left and (left[-1].lower_ in ("and", ",") or left[-1].is_punct):
            left.pop()
        right = [w for w in doc[t.i + 1:]]
        while right and right[-1].is_punct:
            right.pop()
        if not left or not right:
            continue
        if right[0].pos_ in ("VERB", "AUX"):
            a_start = _main_verb(left)
            if a_start is None:
                continue
            a = [w for w in left if w.i >= a_start.i]
        else:
            a = left[next((k for k, w in enumerate(left) if w.lower_ not in ("first",)), 0):]
        a0, a1 = a[0].idx, a[-1].idx + len(a[-1].text)
        b0, b1 = right[0].idx, right[-1].idx + len(right[-1].text)
        text = doc.text
        a_text, b_text, mid = text[a0:a1], text[b0:b1], text[a1:b0]
        if a0 == 0 and text[:1].isupper():
            a_text = a_text[:1].lower() + a_text[1:] if a[0].pos_ != "PROPN" and a[0].text != "I" else a_text
            b_text = b_text[:1].upper() + b_text[1:]
        why = explain.render("event_order", first=explain.lower_first(text[a0:a1]),
                             second=explain.lower_first(text[b0:b1]))
        c = make(text, [(a0, b1, b_text + mid + a_text)], "event_order", "event_order:then", why)
        if c is not None:
            yield c
        return


def event_order(doc: Any, rng: np.random.Generator, **_: Any) -> Iterator[Contrast]:
    """Event order flipped: 'before' ↔ 'after', or the two events around 'then' swapped."""
    yield from _before_after(doc)
    yield from _then(doc)


def hallucination(doc: Any, rng: np.random.Generator, **_: Any) -> Iterator[Contrast]:
    """One plausible extra detail appended ('with a dog', 'while it rains') from a table."""
    rows = tables.rows("hallucinations.tsv")
    present = {t.lemma_.lower() for t in doc} | {t.lower_ for t in doc}
    text = doc.text
    end = len(text.rstrip().rstrip(".!?").rstrip())
    if end == 0:
        return
    for k in rng.permutation(len(rows)):
        row = rows[int(k)]
        if row["key"] in present:
            continue
        c = make(text, [(end, end, " " + row["phrase"])], "hallucination", "hallucination:table",
                 row["explanation"])
        if c is not None:
            yield c
