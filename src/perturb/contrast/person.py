"""Person-ID contrasts (Park et al. A.2): character names swapped within a cast, same gender.

The first character name is replaced by a different cast name of the same gender (uniformly);
each further name is kept or swapped with probability 1/2. The cast is ``cast={name: gender}``
(per movie, as in LSMDC); without it, ``names=`` captions give the names seen in a dataset,
with gender from gender-guesser. With neither, no contrast is made.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

import numpy as np

from ..text import resources
from . import explain
from .types import Contrast, make, token_edits

_GENDER = {"m": "male", "male": "male", "man": "male", "f": "female", "female": "female",
           "woman": "female", "w": "female"}


def normalize_cast(cast: Mapping[str, str]) -> dict[str, str]:
    """{name: 'male'/'female'}; genders given as m/f/male/female (case-insensitive)."""
    out = {}
    for name, g in cast.items():
        key = str(g).strip().lower()
        if key not in _GENDER:
            raise ValueError(f"unknown gender {g!r} for {name!r}; use 'm' or 'f'")
        out[str(name)] = _GENDER[key]
    return out


def cast_from_captions(captions: Iterable[str]) -> dict[str, str]:
    """Names seen in captions with their gender: capitalised words known to gender-guesser that
    are tagged NNP or are not common English words (the tagger misses rare names)."""
    cast: dict[str, str] = {}
    texts = [c for c in captions if c and c.strip()]
    for doc in resources.tagger().pipe(texts, batch_size=256):
        for t in doc:
            if t.text.isalpha() and t.text.istitle() and t.text not in cast and \
                    (t.tag_ == "NNP" or not resources.wordnet().synsets(t.text.lower())):
                g = resources.name_gender(t.text)
                if g is not None:
                    cast[t.text] = g
    return cast


_CAST_CACHE: dict[int, dict[str, str]] = {}


def _cast(cast: Mapping[str, str] | None, names: Iterable[str] | None) -> dict[str, str]:
    if cast:
        return normalize_cast(cast)
    if names is None:
        return {}
    names = tuple(names)
    key = hash(names)
    if key not in _CAST_CACHE:
        _CAST_CACHE.clear()
        _CAST_CACHE[key] = cast_from_captions(names)
    return _CAST_CACHE[key]


def candidates(doc: Any, rng: np.random.Generator, *, cast: Mapping[str, str] | None = None,
               names: Iterable[str] | None = None, **_: Any) -> Iterator[Contrast]:
    """One person-ID contrast of a parsed caption (none when no name of the cast occurs)."""
    pool = _cast(cast, names)
    found = [t for t in doc if t.text in pool]
    order = list(dict.fromkeys(t.text for t in found))
    if not order:
        return
    used = set(order)
    mapping: dict[str, str] = {}
    for k, name in enumerate(order):
        if k > 0 and rng.random() < 0.5:
            continue
        options = sorted(n for n, g in pool.items() if g == pool[name] and n not in used)
        if not options:
            if k == 0:
                return
            continue
        new = options[int(rng.integers(len(options)))]
        mapping[name] = new
        used.add(new)
    repl = {t.i: mapping[t.text] for t in found if t.text in mapping}
    first = order[0]
    why = explain.render("person_id", original=first, replacement=mapping[first])
    c = make(doc.text, token_edits(doc, repl), "person_id", "person_id:cast", why)
    if c is not None:
        yield c
