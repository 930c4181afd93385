"""TextStyle: rewrite a caption's style (paper §1.2, Table 1).

Tense, Passive and Negation are rule-based on spaCy's parse (:mod:`perturb.text.grammar`);
Casual and Formal run a seq2seq style-transfer model given by name or path
(:mod:`perturb.text.models`).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..registry import Spec, register
from . import grammar, models


def _rule(transform: Callable[[Any], Optional[str]]) -> Callable[..., tuple[str, bool]]:
    """A kernel from a grammar transformation (None = not applicable)."""
    def kernel(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
        if doc is None:
            raise ValueError("TextStyle perturbations need a spaCy Doc (use perturb.text.apply)")
        new = transform(doc)
        return (text, False) if new is None or new == text else (new, True)
    kernel.__name__ = transform.__name__
    return kernel


def _style(style: str) -> Callable[..., tuple[str, bool]]:
    """A kernel running the ``style`` transfer model (option ``model=``, ``prefix=``)."""
    env = models.MODEL_ENV[style.capitalize()][0]

    def kernel(text: str, rng: np.random.Generator, *, doc: Any = None,
               model: Optional[str] = None, prefix: str = "") -> tuple[str, bool]:
        ref = models.resolve(model, env, style.capitalize())
        new = models.generate(ref, text, prefix=prefix)
        return (text, False) if not new or new == text else (new, True)
    kernel.__name__ = style
    return kernel


_RULE_DEV = ("Rule-based on spaCy's dependency parse and lemminflect (the paper used a "
             "style-transfer toolkit); applies to the main clause.")
register(Spec("Casual", "text", "TextStyle", _style("casual"), random=False, needs_model=True,
              summary="Rewrite the caption in a casual style with a seq2seq model.",
              severities=None, default_severity=None, resources=("transformers",),
              deviation="Needs a style-transfer model: model=... or PERTURB_CASUAL_MODEL / "
                        "PERTURB_STYLE_MODEL; prefix=... is prepended to the input."))
register(Spec("Formal", "text", "TextStyle", _style("formal"), random=False, needs_model=True,
              summary="Rewrite the caption in a formal style with a seq2seq model.",
              severities=None, default_severity=None, resources=("transformers",),
              deviation="Needs a style-transfer model: model=... or PERTURB_FORMAL_MODEL / "
                        "PERTURB_STYLE_MODEL; prefix=... is prepended to the input."))
register(Spec("Negation", "text", "TextStyle", _rule(grammar.toggle_negation), random=False,
              aliases=("Neg", "ReverseNeg"), needs_parse=True, severities=None,
              default_severity=None, resources=("spacy", "lemminflect"),
              extra={"pipeline": "parser"},
              summary="Negate the main verb grammatically, or remove the negation if negated.",
              deviation=_RULE_DEV + " Grammatical 'does not do' where Table 1 shows 'does not "
                                    "gymnastics'."))
register(Spec("Passive", "text", "TextStyle", _rule(grammar.passivise), random=False,
              needs_parse=True, severities=None, default_severity=None,
              resources=("spacy", "lemminflect"), extra={"pipeline": "parser"},
              summary="Turn an active clause with a direct object into the passive voice.",
              deviation=_RULE_DEV))
register(Spec("Tense", "text", "TextStyle", _rule(grammar.change_tense), random=False,
              needs_parse=True, severities=None, default_severity=None,
              resources=("spacy", "lemminflect"), extra={"pipeline": "parser"},
              summary="Put present-tense verbs in the past (a past-tense caption in the present).",
              deviation=_RULE_DEV))
