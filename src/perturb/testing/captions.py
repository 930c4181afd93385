"""A deterministic corpus of varied captions for robustness tests of text perturbations.

``varied_captions()`` starts with hard cases (empty, whitespace, single words, a 5,000-word
caption, emoji, non-ASCII, ALL CAPS, numbers, no nouns or verbs, heavy punctuation) and fills
the rest with realistic captions in the style of MSR-VTT, generated from templates.
"""
from __future__ import annotations

import numpy as np

LONG_CAPTION_WORDS = 5000

_SUBJECTS = ("a man", "a woman", "a little girl", "a boy", "two men", "a group of people",
             "a chef", "a cat", "a dog", "the players", "a young woman", "an old man",
             "people", "a girl", "a person", "kids", "a band", "a reporter", "a baby",
             "a couple", "the crowd", "a teacher", "a soldier", "a cartoon character")
_VERBS_ING = ("talking about", "playing", "cooking", "driving", "showing", "explaining",
              "singing", "dancing with", "watching", "riding", "holding", "cutting", "painting",
              "fixing", "throwing", "describing", "reviewing", "eating", "carrying", "opening")
_OBJECTS = ("a car", "the guitar", "a video game", "some food", "the news", "a ball",
            "a red shirt", "the kitchen", "a horse", "a song", "a new phone", "the table",
            "a bicycle", "the camera", "some vegetables", "a map", "a movie trailer",
            "the stage", "a toy", "a recipe")
_PLACES = ("in the kitchen", "on stage", "in a field", "on the street", "at the beach",
           "in a classroom", "on a tv show", "in the park", "at a party", "in the snow",
           "in front of a crowd", "on the news", "in a room", "at a stadium", "under a tree")
_INTRANSITIVE = ("walks", "runs", "sings", "dances", "laughs", "swims", "talks", "jumps",
                 "cries", "sleeps", "cooks", "plays")
_ADJ = ("funny", "short", "beautiful", "loud", "animated", "old", "blurry", "colorful")
_NOUNS = ("clip", "video", "scene", "cartoon", "commercial", "song", "game", "match")

_EDGE_CASES = (
    "", " ", "   ", "\t", "\n", " \t \n ",
    "dog", "running", "a", "A", "I", "gymnastics", "[UNK]", "x",
    "😀", "🐶🐱", "a dog 🐶 runs in the park 🌳", "people dancing 💃🕺 at a party!!! 🎉",
    "un garçon mange une crêpe au café", "ребёнок играет с мячом", "男孩在公园里踢足球",
    "a naïve man visits a café in Zürich", "صبي يلعب كرة القدم", "ऊँचा पेड़", "Ωμέγα άλφα",
    "A MAN IS PLAYING GUITAR ON STAGE", "TWO WOMEN ARE TALKING", "LOOK AT THIS!!!",
    "2 men and 3 women play 5 games", "1 2 3 4 5", "007 in 1999 scored 3.5 points",
    "the year 2020 had 365 days", "42",
    "very quickly and quietly", "oh wow", "the a an", "so so", "yes", "and then",
    "!!!", "...", "?!", "--", "(((( ))))", "a man -- really!!! -- is (talking)... ??",
    "'quoted' words and \"double quotes\"", "dog. cat. bird.", "a,b,c", "hello,world",
    "she's cooking; he's eating: they're happy.", "don't stop believing",
    "a well-known actor's car is on fire", "http://example.com/video?id=3",
    "#hashtag @user", "multiple   spaces   between   words", "tabs\tand\nnewlines inside",
    "  leading and trailing spaces  ", "[UNK] is [UNK] a [UNK]",
    "She gives him her book", "a girl and her mother cook dinner",
)


def _realistic(rng: np.random.Generator) -> str:
    """One MSR-VTT-like caption from the templates."""
    pick = lambda seq: seq[int(rng.integers(len(seq)))]  # noqa: E731
    k = int(rng.integers(6))
    subj = pick(_SUBJECTS)
    plural = subj.startswith(("two", "people", "kids", "the players", "the crowd"))
    be = "are" if plural else "is"
    if k == 0:
        return f"{subj} {be} {pick(_VERBS_ING)} {pick(_OBJECTS)}"
    if k == 1:
        return f"{subj} {be} {pick(_VERBS_ING)} {pick(_OBJECTS)} {pick(_PLACES)}"
    if k == 2:
        verb = pick(_INTRANSITIVE)
        return f"{subj} {verb[:-1] if plural else verb} {pick(_PLACES)}"
    if k == 3:
        return f"a {pick(_ADJ)} {pick(_NOUNS)} of {subj} {pick(_VERBS_ING)} {pick(_OBJECTS)}"
    if k == 4:
        return f"{subj.capitalize()} {be} {pick(_VERBS_ING)} {pick(_OBJECTS)}."
    return f"there {be} {subj} {pick(_VERBS_ING)} {pick(_OBJECTS)} {pick(_PLACES)} and smiling"


def long_caption(rng: np.random.Generator, n_words: int = LONG_CAPTION_WORDS) -> str:
    """A caption of exactly ``n_words`` words made of realistic clauses."""
    out: list[str] = []
    while len(out) < n_words:
        out.extend(_realistic(rng).split())
    return " ".join(out[:n_words])


def realistic_captions(n: int, seed: int = 0) -> list[str]:
    """``n`` realistic template captions (no edge cases), deterministic in ``seed``."""
    _check(n, seed)
    rng = np.random.default_rng(seed)
    return [_realistic(rng) for _ in range(n)]


def varied_captions(n: int = 1000, seed: int = 0) -> list[str]:
    """``n`` captions: the edge cases (with one 5,000-word caption) first, then realistic ones.

    Deterministic in ``seed``; when ``n`` is smaller than the number of edge cases, the first
    ``n`` of them.
    """
    _check(n, seed)
    rng = np.random.default_rng(seed)
    fixed = [*_EDGE_CASES, long_caption(rng)]
    out = fixed[:n]
    out.extend(_realistic(rng) for _ in range(n - len(out)))
    return out


def _check(n: int, seed: int) -> None:
    for name, v in (("n", n), ("seed", seed)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{name} must be a non-negative int; got {v!r}")
