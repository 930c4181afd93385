"""Positional: drop the first and/or last word (as ``[UNK]``), or shuffle the word order.

Words are whitespace-separated tokens that hold a word character; punctuation attached to a
word stays in place ("a dog runs." -> DropLast -> "a dog [UNK].").
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..registry import Spec, register
from . import words


def _drop_at(positions: Callable[[int], Sequence[int]]):
    """A kernel replacing the words at ``positions(n_words)`` by [UNK]."""
    def kernel(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
        pieces = words.split(text)
        n = len(pieces) // 2
        if n == 0:
            return text, False
        new = words.drop(pieces, set(positions(n)))
        return new, new != text
    return kernel


drop_first = _drop_at(lambda n: (0,))
drop_last = _drop_at(lambda n: (n - 1,))
drop_first_last = _drop_at(lambda n: (0, n - 1))


def shuffle_order(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
    """Shuffle the words randomly (separators and attached punctuation keep their places).

    The order always changes when the caption has two different words.
    """
    pieces = words.split(text)
    tokens = words.words(pieces)
    if len(set(tokens)) < 2:
        return text, False
    for _ in range(20):
        order = rng.permutation(len(tokens))
        shuffled = [tokens[i] for i in order]
        if shuffled != tokens:
            break
    else:  # vanishingly rare: swap the first two different words
        j = next(k for k in range(1, len(tokens)) if tokens[k] != tokens[0])
        shuffled = list(tokens)
        shuffled[0], shuffled[j] = shuffled[j], shuffled[0]
    return words.replace(pieces, dict(enumerate(shuffled))), True


_CAT = "Positional"
for _name, _fn, _summary, _aliases in (
        ("DropFirst", drop_first, "Replace the first word by [UNK].", ()),
        ("DropLast", drop_last, "Replace the last word by [UNK].", ()),
        ("DropFirstLast", drop_first_last, "Replace the first and the last word by [UNK].",
         ("DropFirstandLast", "DropFirstAndLast")),
):
    register(Spec(_name, "text", _CAT, _fn, summary=_summary, aliases=_aliases, severities=None,
                  default_severity=None, random=False))
register(Spec("ShuffleOrder", "text", _CAT, shuffle_order, aliases=("Shuffle",),
              summary="Shuffle the order of the words at random.", severities=None,
              default_severity=None, random=True))
