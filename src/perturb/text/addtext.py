"""AddText: insert adverbs before verbs (InsertAdv) or add irrelevant phrases (AppendIrr)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..registry import Spec, register
from . import words
from .words import VB_TAGS, asset_lines

MIN_WORDS_FOR_ENDING = 10          # textflint's MIN_SENT_TRANS_LENGTH


def verb_heads(doc: Any) -> list[int]:
    """Token indices that get an adverb: each verb, except auxiliaries followed by their verb.

    A verb whose next token (skipping adverbs such as "not") is another verb is an auxiliary of
    it, so "is talking" gets one adverb, before "talking".
    """
    heads = []
    tags = [t.tag_ for t in doc]
    for i, tag in enumerate(tags):
        if tag not in VB_TAGS:
            continue
        j = i + 1
        while j < len(tags) and tags[j] in ("RB", "MD"):
            j += 1
        if j == len(tags) or tags[j] not in VB_TAGS:
            heads.append(i)
    return heads


def insert_adv(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
    """Put a random adverb from the asset list before each verb ("specifically does")."""
    if doc is None:
        raise ValueError("InsertAdv needs a spaCy Doc (use perturb.text.apply, which parses)")
    heads = verb_heads(doc)
    if not heads:
        return text, False
    adverbs = asset_lines("text", "adverbs.txt")
    pieces = words.from_doc(doc)
    first = next(i for i, t in enumerate(doc) if not t.is_space)
    new: dict[int, str] = {}
    for i in heads:
        verb, adv = doc[i].text, words.pick(rng, adverbs)
        if i == first and verb[:1].isupper():       # sentence start: the adverb takes the capital
            adv = words.match_case(verb, adv)
            verb = verb if verb.isupper() else verb[:1].lower() + verb[1:]
        elif len(verb) > 1 and verb.isupper():
            adv = adv.upper()
        new[i] = f"{adv} {verb}"
    return words.replace(pieces, new), True


def append_irr(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
    """Put an irrelevant phrase in front ("On this occasion, ..."), and an unrelated sentence at
    the end of captions of 10 words or more, as textflint's AppendIrr does."""
    body = text.strip()
    out = f"{words.pick(rng, asset_lines('text', 'irrelevant_beginnings.txt'))} {body}"
    if len(words.split(body)) // 2 >= MIN_WORDS_FOR_ENDING:
        out = f"{out} {words.pick(rng, asset_lines('text', 'irrelevant_endings.txt'))}"
    return out, True


register(Spec(
    "InsertAdv", "text", "AddText", insert_adv, aliases=("AddAdv",),
    summary="Insert a random adverb before each verb.", severities=None, default_severity=None,
    needs_parse=True, resources=("spacy", "assets/text/adverbs.txt"), extra={"pipeline": "tagger"},
    deviation="Adverb list written for perturb (about 120 neutral adverbs). textflint puts an "
              "adverb before every VB* token, auxiliaries included; here a verb chain "
              "('is talking', 'has been running') gets one adverb, before its last verb."))
register(Spec(
    "AppendIrr", "text", "AddText", append_irr,
    summary="Add an irrelevant phrase before the caption (and a saying after long captions).",
    severities=None, default_severity=None,
    resources=("assets/text/irrelevant_beginnings.txt", "assets/text/irrelevant_endings.txt"),
    deviation="Phrase lists written for perturb; the rule (a beginning always, a sentence at the "
              "end when the caption has 10 words or more) is textflint's."))
