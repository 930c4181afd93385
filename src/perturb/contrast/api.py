"""``generate`` and ``generate_batch``: contrast captions of any type, seeded and batchable.

The per-caption Generator is derived from (seed, type, caption), so a batch gives exactly the
one-by-one results.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..rng import SeedLike, as_generator, derive_generator
from ..text import resources
from ..text.inputs import check_caption, check_captions
from . import lexicon
from .types import TYPES, Contrast

Kernel = Callable[..., Iterator[Contrast]]


@dataclass(frozen=True)
class Generator:
    """One contrast type: its kernel and the spaCy pipeline it needs."""

    name: str
    module: str
    disable: tuple[str, ...] = ("ner",)      # spaCy components the kernel can do without
    uses_corpus: bool = False

    def kernel(self) -> Kernel:
        import importlib
        mod = importlib.import_module(f"perturb.contrast.{self.module}")
        return getattr(mod, "candidates" if self.module != "videocon" else self.name)


GENERATORS = {g.name: g for g in (
    Generator("gender", "gender", ()),
    Generator("person_id", "person", ()),
    Generator("verb", "verb", uses_corpus=True),
    Generator("action", "videocon", uses_corpus=True),
    Generator("object", "videocon", uses_corpus=True),
    Generator("attribute", "videocon"),
    Generator("counting", "videocon"),
    Generator("relation", "videocon"),
    Generator("event_order", "videocon"),
    Generator("hallucination", "videocon"),
)}
assert set(GENERATORS) == set(TYPES)


def get(type: str) -> Generator:
    """The generator of a contrast type; ValueError listing the types when unknown."""
    key = str(type).strip().lower().replace("-", "_").replace(" ", "_")
    key = {"person": "person_id", "personid": "person_id", "id": "person_id",
           "count": "counting", "order": "event_order", "event": "event_order",
           "spatial": "relation"}.get(key, key)
    if key not in GENERATORS:
        raise ValueError(f"unknown contrast type {type!r}; expected one of: {', '.join(TYPES)}")
    return GENERATORS[key]


def _prepare(gen: Generator, context: dict[str, Any]) -> dict[str, Any]:
    """Build shared context once (the corpus frequency list)."""
    if gen.uses_corpus and "frequencies" not in context:
        context = {**context, "frequencies": lexicon.frequencies(context.get("corpus"))}
    return context


def _run(gen: Generator, doc: Any, caption: str, seed: SeedLike, n: int | None,
         context: dict[str, Any]) -> list[Contrast]:
    if not caption.strip():
        return []
    rng = derive_generator(seed, gen.name, caption)
    seen: set[str] = set()
    out: list[Contrast] = []
    for c in gen.kernel()(doc, rng, **context):
        if c.text in seen or c.text == caption:
            continue
        seen.add(c.text)
        out.append(c)
        if n is not None and len(out) >= n:
            break
    return out


def check_n(n: Any) -> int | None:
    """``n``: how many contrasts at most, an int >= 1, or None for all of them."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
        raise ValueError(f"expected n to be an int >= 1 (contrasts per caption) or None for all; got {n!r}")
    return None if n is None else int(n)


def generate(caption: str, type: str, *, seed: SeedLike = None, n: int | None = 1,
             **context: Any) -> list[Contrast]:
    """Contrast captions of one caption, best first (at most ``n``; ``n=None`` for all).

    ``context`` goes to the generator: ``corpus=`` captions (verb/action/object frequency
    list), ``cast=`` {name: gender} or ``names=`` captions (person_id), ``model=`` (verb LM path).
    """
    caption = check_caption(caption)
    n = check_n(n)
    gen = get(type)
    context = _prepare(gen, context)
    doc = resources.nlp(gen.disable)(caption) if caption.strip() else None
    return _run(gen, doc, caption, seed, n, context)


def generate_batch(captions: Iterable[str], type: str, *, seed: SeedLike = None,
                   n: int | None = 1, batch_size: int = 256,
                   **context: Any) -> list[list[Contrast]]:
    """``[generate(c, type, seed=seed, n=n, **context) for c in captions]``, parsed with
    ``nlp.pipe``. ``captions`` is a sequence of str (a lone str is refused)."""
    gen = get(type)
    captions = check_captions(captions)
    n = check_n(n)
    if isinstance(seed, np.random.Generator):
        seed = int(as_generator(seed).integers(0, 2**63))
    context = _prepare(gen, context)
    nonempty = [c for c in captions if c.strip()]
    docs = iter(resources.nlp(gen.disable).pipe(nonempty, batch_size=batch_size))
    return [_run(gen, next(docs) if c.strip() else None, c, seed, n, context) for c in captions]


def first(contrasts: list[Contrast]) -> Contrast | None:
    """The best contrast of a list, or None."""
    return next(iter(contrasts), None)


__all__ = ["generate", "generate_batch", "get", "GENERATORS", "first"]
