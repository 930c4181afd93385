"""Contrast captions (hard negatives) and multiple-choice sets.

``generate(caption, type, *, seed=None, n=1, **context)`` returns :class:`Contrast` objects (text, type,
span, rule, explanation); ``generate_batch`` does the same for many captions with ``nlp.pipe``.
Types: gender, person_id, verb (Park et al. 2022) and VideoCon's object, action, attribute,
counting, relation, event_order, hallucination. MC sets and entailment sets: :mod:`.mc`,
:mod:`.entailment`.
"""
from .api import GENERATORS, generate, generate_batch
from .mc import contrast_mc, random_mc, read_mc_jsonl, read_mc_tsv, write_mc_jsonl, write_mc_tsv
from .types import TYPES, Contrast, Span

__all__ = ["generate", "generate_batch", "Contrast", "Span", "TYPES", "GENERATORS",
           "random_mc", "contrast_mc", "read_mc_tsv", "write_mc_tsv", "read_mc_jsonl",
           "write_mc_jsonl"]
