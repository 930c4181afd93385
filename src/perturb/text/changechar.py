"""ChangeChar: character-level noise in a fraction of the words (textflint's rules and rates).

Keyboard, OCR, SpellingError and Typos change ``int(rate * n_words)`` words, at least 1 and at
most 10, chosen at random among the words that are not stop words and that the rule can alter;
each chosen word gets one change. PrefixSwap swaps the prefix of up to ``max_words`` words for
another prefix that keeps the part of speech; Punctuation wraps the caption in brackets and
ends it with a new mark.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import numpy as np

from ..registry import Spec, register
from . import resources, words
from .words import asset_lines, asset_table

MIN_WORDS, MAX_WORDS = 1, 10          # textflint's trans_min / trans_max

# Severity 3 is textflint's default rate for each rule.
RATES_02 = {1: 0.05, 2: 0.1, 3: 0.2, 4: 0.3, 5: 0.4}     # Keyboard, OCR (trans_p = 0.2)
RATES_03 = {1: 0.1, 2: 0.2, 3: 0.3, 4: 0.4, 5: 0.5}      # Typos, SpellingError (trans_p = 0.3)

Mutator = Callable[[str, np.random.Generator], Optional[str]]


def words_to_change(n_words: int, rate: float) -> int:
    """How many words a rate changes: int(rate * n), clipped to [1, 10] as in textflint."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be a fraction in [0, 1]; got {rate!r}")
    return int(min(MAX_WORDS, max(MIN_WORDS, int(rate * n_words))))


def change_words(text: str, rng: np.random.Generator, rate: float, mutate: Mutator) -> tuple[str, bool]:
    """Apply ``mutate`` to a random ``rate`` of the eligible words (the shared ChangeChar engine)."""
    pieces = words.split(text)
    tokens = words.words(pieces)
    stop = words.stop_words()
    candidates = [i for i, w in enumerate(tokens) if w != words.UNK and w.lower() not in stop]
    wanted = words_to_change(len(tokens), rate)
    changed: dict[int, str] = {}
    for i in rng.permutation(len(candidates)) if candidates else ():
        new = mutate(tokens[candidates[i]], rng)
        if new is not None and new != tokens[candidates[i]]:
            changed[candidates[i]] = new
            if len(changed) == wanted:
                break
    if not changed:
        return text, False
    return words.replace(pieces, changed), True


def substitute_char(table: dict[str, tuple[str, ...]]) -> Mutator:
    """A mutator replacing one random character that ``table`` knows by one of its confusions."""
    def mutate(word: str, rng: np.random.Generator) -> Optional[str]:
        spots = [i for i, c in enumerate(word) if c in table]
        if not spots:
            return None
        i = words.pick(rng, spots)
        return word[:i] + words.pick(rng, table[word[i]]) + word[i + 1:]
    return mutate


@functools.lru_cache(maxsize=None)
def keyboard_table() -> dict[str, tuple[str, ...]]:
    """QWERTY neighbours of letters and digits, upper case included (case kept)."""
    base = asset_table("text", "keyboard_qwerty.txt")
    table = dict(base)
    table.update({k.upper(): tuple(v.upper() for v in vs) for k, vs in base.items() if k.isalpha()})
    return table


@functools.lru_cache(maxsize=None)
def _keyboard_mutator() -> Mutator:
    return substitute_char(keyboard_table())


@functools.lru_cache(maxsize=None)
def _ocr_mutator() -> Mutator:
    return substitute_char(dict(asset_table("text", "ocr_confusions.txt", symmetric=True)))


def keyboard(text: str, rng: np.random.Generator, *, rate: float = 0.2, doc: Any = None) -> tuple[str, bool]:
    """One key slip (a QWERTY neighbour) in each of a ``rate`` of the words."""
    return change_words(text, rng, rate, _keyboard_mutator())


def ocr(text: str, rng: np.random.Generator, *, rate: float = 0.2, doc: Any = None) -> tuple[str, bool]:
    """One OCR confusion (o/0, l/1, s/8...) in each of a ``rate`` of the words."""
    return change_words(text, rng, rate, _ocr_mutator())


@functools.lru_cache(maxsize=None)
def misspellings() -> dict[str, tuple[str, ...]]:
    """Correct word -> common misspellings (and back), lower case."""
    return dict(asset_table("text", "misspellings.txt", symmetric=True))


def _misspell(word: str, rng: np.random.Generator) -> Optional[str]:
    options = misspellings().get(word.lower())
    return words.match_case(word, words.pick(rng, options)) if options else None


def spelling_error(text: str, rng: np.random.Generator, *, rate: float = 0.3,
                   doc: Any = None) -> tuple[str, bool]:
    """Replace a ``rate`` of the words by a common misspelling of them (words in the table only)."""
    return change_words(text, rng, rate, _misspell)


# --- Typos: one insert / delete / swap / replace inside a word (first and last letter kept) ---

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _letter(word: str, rng: np.random.Generator) -> str:
    c = words.pick(rng, _LETTERS)
    return c.upper() if word.isupper() else c


def _typo_replace(word: str, rng: np.random.Generator) -> Optional[str]:
    if len(word) < 3:
        return None
    i = 1 + int(rng.random() * (len(word) - 2))
    c = _letter(word, rng)
    return word[:i] + c + word[i + 1:] if c.lower() != word[i].lower() else None


def _typo_delete(word: str, rng: np.random.Generator) -> Optional[str]:
    if len(word) < 3:
        return None
    i = 1 + int(rng.random() * (len(word) - 2))
    return word[:i] + word[i + 1:]


def _typo_insert(word: str, rng: np.random.Generator) -> Optional[str]:
    if len(word) < 2:
        return None
    i = 1 + int(rng.random() * (len(word) - 1))
    return word[:i] + _letter(word, rng) + word[i:]


def _typo_swap(word: str, rng: np.random.Generator) -> Optional[str]:
    spots = [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]]
    if not spots:
        return None
    i = words.pick(rng, spots)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


_TYPOS = (_typo_insert, _typo_delete, _typo_swap, _typo_replace)


def _typo(word: str, rng: np.random.Generator) -> Optional[str]:
    if not any(c.isalpha() for c in word):
        return None
    start = int(rng.random() * len(_TYPOS))
    for k in range(start, start + len(_TYPOS)):
        new = _TYPOS[k % len(_TYPOS)](word, rng)
        if new is not None and new != word:
            return new
    return None


def typos(text: str, rng: np.random.Generator, *, rate: float = 0.3, doc: Any = None) -> tuple[str, bool]:
    """One random insert, delete, swap or replace of a letter in each of a ``rate`` of the words."""
    return change_words(text, rng, rate, _typo)


# --- PrefixSwap ---------------------------------------------------------------------------

_WN_POS = {"NN": "n", "VB": "v", "JJ": "a", "RB": "r"}


@functools.lru_cache(maxsize=None)
def prefixes() -> tuple[str, ...]:
    """Derivational prefixes, longest first."""
    return tuple(sorted(asset_lines("text", "prefixes.txt"), key=len, reverse=True))


@functools.lru_cache(maxsize=None)
def _lemmas(pos: str) -> frozenset[str]:
    """Every single-word WordNet lemma of a POS (adjectives include satellites)."""
    return frozenset(n for n in resources.wordnet().all_lemma_names(pos) if "_" not in n)


def prefix_candidates(word: str, lemma: str, wn_pos: str) -> list[str]:
    """Words made by swapping ``word``'s prefix for another that gives a WordNet word of the same POS."""
    low, lem = word.lower(), lemma.lower()
    lemmas = _lemmas(wn_pos)
    out: list[str] = []
    for p in prefixes():
        if not (low.startswith(p) and lem.startswith(p)) or len(lem) - len(p) < 3:
            continue
        stem, lem_stem = low[len(p):], lem[len(p):]
        for q in prefixes():
            if q != p and q + lem_stem in lemmas:
                out.append(words.match_case(word, q + stem))
    return list(dict.fromkeys(out))


def prefix_swap(text: str, rng: np.random.Generator, *, max_words: int = 2,
                doc: Any = None) -> tuple[str, bool]:
    """Swap the prefix of up to ``max_words`` nouns, verbs, adjectives or adverbs, keeping the POS."""
    if doc is None:
        raise ValueError("PrefixSwap needs a spaCy Doc (use perturb.text.apply, which parses)")
    pieces = words.from_doc(doc)
    options: dict[int, list[str]] = {}
    for i, tok in enumerate(doc):
        wn_pos = _WN_POS.get(tok.tag_[:2])
        if wn_pos and tok.is_alpha and len(tok.text) > 4 and not tok.tag_.startswith("NNP"):
            cands = prefix_candidates(tok.text, tok.lemma_, wn_pos)
            if cands:
                options[i] = cands
    if not options:
        return text, False
    keys = list(options)
    chosen = rng.permutation(len(keys))[:max_words]
    return words.replace(pieces, {keys[k]: words.pick(rng, options[keys[k]]) for k in chosen}), True


# --- Punctuation -------------------------------------------------------------------------

_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n…。、！？"


def punctuation(text: str, rng: np.random.Generator, *, doc: Any = None) -> tuple[str, bool]:
    """Replace the final punctuation by a new mark and wrap the caption in a random bracket pair.

    Spaced as textflint's token output: '" a little girl does gymnastics, "'.
    """
    body = text.strip()
    core = body.rstrip(_PUNCT)
    if not core:
        return text, False
    opening, closing = words.pick(rng, asset_lines("text", "punctuation_brackets.txt")).split()
    end = words.pick(rng, asset_lines("text", "punctuation_ends.txt")).strip()
    return f"{opening} {core}{end} {closing}", True


# --- registration ----------------------------------------------------------------------------

_CAT = "ChangeChar"
_WORDS_NOTE = "fraction of words changed (at least 1, at most 10), one character each"

register(Spec(
    "Keyboard", "text", _CAT, keyboard,
    summary="A key slip: one character replaced by a QWERTY neighbour in a fraction of the words.",
    severities=words.rate_levels(RATES_02), resources=("assets/text/keyboard_qwerty.txt",),
    extra={"rate": f"{RATES_02[3]} ({_WORDS_NOTE}; textflint trans_p=0.2)"},
    deviation="Letters keep their case (textflint also substitutes the other case); neighbours "
              "are letters and digits only, not symbols."))
register(Spec(
    "OCR", "text", _CAT, ocr, aliases=("Ocr",),
    summary="An OCR misreading (0/o, 1/l, s/8, r/k...) of one character in a fraction of the words.",
    severities=words.rate_levels(RATES_02), resources=("assets/text/ocr_confusions.txt",),
    extra={"rate": f"{RATES_02[3]} ({_WORDS_NOTE}; textflint trans_p=0.2)"},
    deviation="Confusion table written for perturb: textflint's pairs plus l/I, S/5, B/8, G/6, g/q."))
register(Spec(
    "PrefixSwap", "text", _CAT, prefix_swap, aliases=("SwapPrefix",),
    summary="Swap a word's prefix for another one that gives a real word of the same part of speech.",
    severities={1: {"max_words": 1}, 2: {"max_words": 2}, 3: {"max_words": 3},
                4: {"max_words": 4}, 5: {"max_words": 6}},
    default_severity=2, needs_parse=True, resources=("spacy", "wordnet", "assets/text/prefixes.txt"),
    extra={"pipeline": "tagger", "rate": "up to 2 words (textflint trans_max=2)"},
    deviation="textflint segments words with a Morfessor model from its unreachable bucket; here "
              "a word starting with a listed prefix may take another listed prefix when the "
              "result (checked on the lemma) is a WordNet lemma of the same POS. All NN*/VB*/JJ*/RB* "
              "tags count, not only the base tags."))
register(Spec(
    "Punctuation", "text", _CAT, punctuation, aliases=("Punct",),
    summary="Replace the final punctuation and wrap the caption in brackets or quotes.",
    severities=None, default_severity=None,
    resources=("assets/text/punctuation_brackets.txt", "assets/text/punctuation_ends.txt"),
    extra={"rate": "one bracket pair and one end mark per caption (textflint)"},
    deviation="No severity levels: the rule has no natural strength."))
register(Spec(
    "SpellingError", "text", _CAT, spelling_error, aliases=("SpellErr", "Spelling"),
    summary="Replace a fraction of the words by a common misspelling of them.",
    severities=words.rate_levels(RATES_03), resources=("assets/text/misspellings.txt",),
    extra={"rate": f"{RATES_03[3]} (fraction of words, at least 1, at most 10; textflint trans_p=0.3)"},
    deviation="Misspelling table written for perturb (about 250 words common in video captions); "
              "textflint's own table could not be obtained."))
register(Spec(
    "Typos", "text", _CAT, typos, aliases=("Typo",),
    summary="One random letter inserted, deleted, swapped or replaced inside a fraction of the words.",
    severities=words.rate_levels(RATES_03),
    extra={"rate": f"{RATES_03[3]} ({_WORDS_NOTE}; textflint trans_p=0.3; first and last letter kept)"}))
