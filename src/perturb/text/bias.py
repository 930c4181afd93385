"""Bias: change the gender of the people a caption mentions (paper §1.2, Table 1).

GenderSwap turns every gendered word to the other gender, AllMale and AllFemale turn them all
male or female, GenderNeutral replaces them by neutral words ('girl' → 'child', 'she' → 'they',
with the verb made plural). Deterministic; the word table and pronoun rules are in
:mod:`perturb.text.gender`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import numpy as np

from ..registry import Spec, register
from . import gender, grammar

NEUTRAL_SUBJECTS = frozenset({"he", "she"})


def _neutral_agreement(doc: Any, replacements: dict[int, str]) -> dict[int, str]:
    """Verb agreement for 'he'/'she' turned 'they' ('she is' → 'they are')."""
    out: dict[int, str] = {}
    for i in replacements:
        if doc[i].lower_ in NEUTRAL_SUBJECTS:
            out.update(grammar.plural_agreement(doc[i]))
    return out


def regender(text: str, rng: np.random.Generator, *, doc: Any = None,
             to: Optional[str] = None) -> tuple[str, bool]:
    """Kernel: every gendered word turned ``to`` a gender (None = the other one)."""
    if doc is None:
        raise ValueError("Bias perturbations need a spaCy Doc (use perturb.text.apply)")
    replacements = gender.swap_doc(doc, to)
    if to == "neutral":
        replacements.update(_neutral_agreement(doc, replacements))
    if not replacements:
        return text, False
    new = gender.rewrite(doc, replacements)
    return new, new != text


def _kernel(to: Optional[str]) -> Callable[..., tuple[str, bool]]:
    return functools.partial(regender, to=to)


_DEVIATION = ("The paper's code swaps words from a flat list; ours tells possessive from object "
              "'her' by the Penn tag (PRP$ → his, PRP → him), keeps plurals, capitals and attached "
              "punctuation, fixes 'a'/'an', and swaps first names through gender-guesser.")
_TABLE = (  # name, target, aliases, summary
    ("AllFemale", "female", ("Female",), "Turn every male word, pronoun and first name female."),
    ("AllMale", "male", ("Male",), "Turn every female word, pronoun and first name male."),
    ("GenderNeutral", "neutral", ("Neutral",),
     "Replace gendered words and pronouns by neutral ones (girl → child, she → they)."),
    ("GenderSwap", None, ("SwapGender",), "Turn every gendered word to the other gender."),
)

for _name, _to, _aliases, _summary in _TABLE:
    register(Spec(_name, "text", "Bias", _kernel(_to), summary=_summary, aliases=_aliases,
                  severities=None, default_severity=None, random=False, needs_parse=True,
                  resources=("spacy", "gender-guesser"), deviation=_DEVIATION,
                  extra={"pipeline": "parser"}))
