"""Gender contrasts (Park et al. A.1): one gendered noun swapped, then that gender's pronouns.

Only one noun changes, so "man and woman walk together" never becomes "woman and man walk
together". The noun is chosen uniformly; number is kept (the table maps "men" to "women").
With no gendered noun, the pronouns of one gender (chosen uniformly) are swapped.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..text import gender as words
from . import explain
from .types import Contrast, make, token_edits


def _contrast(doc: Any, chosen: list[words.GenderedToken], head: words.GenderedToken) -> Contrast | None:
    repl = words.swap_doc(doc, None, tokens=chosen)
    if head.i not in repl:
        return None
    lead = [j for j in repl if j < head.i]            # a/an fixed before the noun
    original = " ".join([doc[j].text for j in lead] + [head.text])
    new = " ".join([repl[j] for j in lead] + [repl[head.i]])
    det = next((c for c in doc[head.i].children if c.dep_ in ("det", "nummod") and c.i not in repl
                and c.i < head.i), None)
    if det is not None:
        original, new = f"{det.text} {original}", f"{det.text} {new}"
    return make(doc.text, token_edits(doc, repl), "gender", f"gender:{head.kind}",
                explain.render("gender", original=explain.lower_first(original),
                                replacement=explain.lower_first(new)))


def candidates(doc: Any, rng: np.random.Generator, **_: Any) -> Iterator[Contrast]:
    """Gender contrasts of a parsed caption, one per gendered noun, in a uniformly random order."""
    found = words.gendered_tokens(doc)
    nouns = [g for g in found if g.kind == "noun"]
    pronouns = [g for g in found if g.kind == "pronoun"]
    if nouns:
        for k in rng.permutation(len(nouns)):
            head = nouns[int(k)]
            same = [p for p in pronouns if p.gender == head.gender]
            c = _contrast(doc, [head, *same], head)
            if c is not None:
                yield c
        return
    genders = sorted({p.gender for p in pronouns})
    for k in rng.permutation(len(genders)):
        same = [p for p in pronouns if p.gender == genders[int(k)]]
        c = _contrast(doc, same, same[0])
        if c is not None:
            yield c
