"""DropText: replace words by ``[UNK]`` according to their Penn Treebank tag (paper §1.2).

NN means the tags NN, NNS, NNP, NNPS; VB means VB, VBD, VBG, VBN, VBP, VBZ. Auxiliaries count
as verbs ("is" in "is talking" is VBZ): the paper tags with NLTK, whose tagger gives them VB*
tags too, and Table 1 drops "does" for NoVB. Only tokens holding a word character are words,
so punctuation and emoji are never dropped ("dog." -> "[UNK].").

- No*: drop every word of the class; applies when there is one.
- Only*: drop every word *not* in the class; applies when the caption has a word of the class
  and a word outside it.
- Rand*: drop one random word of the class.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..registry import Spec, register
from . import words
from .words import NN_TAGS, VB_TAGS

CLASSES = {"NN": NN_TAGS, "VB": VB_TAGS, "NNVB": NN_TAGS | VB_TAGS}


def _tagged(doc: Any, tags: frozenset[str]) -> tuple[list[int], list[int]]:
    """Indices of the word tokens inside and outside a tag class."""
    inside, outside = [], []
    for i, tok in enumerate(doc):
        if words.is_word(tok.text):
            (inside if tok.tag_ in tags else outside).append(i)
    return inside, outside


def _kernel(tags: frozenset[str], mode: str) -> Callable[..., tuple[str, bool]]:
    """A DropText kernel: ``mode`` is "no" (drop the class), "only" (keep it) or "rand" (drop one)."""
    def kernel(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
        if doc is None:
            raise ValueError("DropText needs a spaCy Doc (use perturb.text.apply, which parses)")
        inside, outside = _tagged(doc, tags)
        if mode == "no":
            drop = inside
        elif mode == "only":
            drop = outside if inside else []
        else:
            drop = [words.pick(rng, inside)] if inside else []
        if not drop:
            return text, False
        return words.drop(words.from_doc(doc), drop), True
    return kernel


_TABLE = (  # name, class, mode, aliases (the paper's Table 1 spellings included)
    ("NoNN", "NN", "no", ("DropNN",)),
    ("NoVB", "VB", "no", ("DropVB",)),
    ("NoNNVB", "NNVB", "no", ("DropVBNN", "DropNNVB", "NoNN&VB", "NoVBNN")),
    ("OnlyNN", "NN", "only", ("NNOnly",)),
    ("OnlyVB", "VB", "only", ("VBOnly",)),
    ("OnlyNNVB", "NNVB", "only", ("NN&VBOnly", "NNVBOnly", "OnlyVBNN")),
    ("RandNN", "NN", "rand", ("RandomNN", "DropRandNN")),
    ("RandVB", "VB", "rand", ("RandomVB", "DropRandVB")),
)
_WHAT = {"NN": "noun", "VB": "verb", "NNVB": "noun and verb"}

for _name, _cls, _mode, _aliases in _TABLE:
    _summary = {"no": f"Replace every {_WHAT[_cls]} by [UNK].",
                "only": f"Replace every word but the {_WHAT[_cls]}s by [UNK].",
                "rand": f"Replace one random {_WHAT[_cls]} by [UNK]."}[_mode]
    register(Spec(_name, "text", "DropText", _kernel(CLASSES[_cls], _mode), summary=_summary,
                  aliases=_aliases, severities=None, default_severity=None, random=_mode == "rand",
                  needs_parse=True, resources=("spacy",), extra={"pipeline": "tagger"}))
