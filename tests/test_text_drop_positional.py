"""DropText and Positional: the paper's Table 1 exactly, [UNK] placement, applicability."""
from __future__ import annotations

import pytest

from perturb.testing.captions import realistic_captions
from perturb.text import apply, apply_batch, get
from perturb.text import resources

CAPTION = "a little girl does gymnastics"

TABLE_1 = {          # the supplement's Table 1, deterministic rows (names as printed there)
    "NN&VBOnly": "[UNK] [UNK] girl does gymnastics",
    "NNOnly": "[UNK] [UNK] girl [UNK] gymnastics",
    "NoNN&VB": "a little [UNK] [UNK] [UNK]",
    "NoVB": "a little girl [UNK] gymnastics",
    "VBOnly": "[UNK] [UNK] [UNK] does [UNK]",
    "NoNN": "a little [UNK] does [UNK]",
    "DropFirst": "[UNK] little girl does gymnastics",
    "DropFirstLast": "[UNK] little girl does [UNK]",
    "DropLast": "a little girl does [UNK]",
    "RandVB": "a little girl [UNK] gymnastics",       # one verb only: deterministic
}


@pytest.mark.parametrize("name, expected", sorted(TABLE_1.items()))
def test_table_1(name, expected):
    for seed in (0, 1):
        out = apply(CAPTION, name, seed=seed)
        assert out == expected and out.applied


def test_table_1_names_are_aliases():
    assert get("NN&VBOnly").name == "OnlyNNVB" and get("NoNN&VB").name == "NoNNVB"
    assert get("DropVBNN").name == get("DropNNVB").name == "NoNNVB"
    assert get("DropNN").name == "NoNN" and get("DropVB").name == "NoVB"
    assert get("DropFirstandLast").name == "DropFirstLast"
    assert {s.category for s in map(get, ("NoNN", "RandVB"))} == {"DropText"}
    assert {s.category for s in map(get, ("DropFirst", "ShuffleOrder"))} == {"Positional"}


def test_rand_nn_drops_one_noun():
    seen = set()
    for seed in range(20):
        out = apply(CAPTION, "RandNN", seed=seed)
        assert out.count("[UNK]") == 1
        seen.add(out)
    assert seen == {"a little [UNK] does gymnastics", "a little girl does [UNK]"}


def test_auxiliaries_count_as_verbs():
    assert resources.tagger()("a man is talking")[2].tag_ == "VBZ"
    assert apply("a man is talking", "NoVB") == "a man [UNK] [UNK]"
    assert apply("a man is talking", "OnlyVB") == "[UNK] [UNK] is talking"


@pytest.mark.parametrize("name, caption, expected", [
    ("NoNN", "a dog is running.", "a [UNK] is running."),
    ("OnlyNN", "a dog, a cat!", "[UNK] dog, [UNK] cat!"),
    ("NoNNVB", "Two men are  wrestling.", "Two [UNK] [UNK]  [UNK]."),
    ("DropLast", "a dog runs.", "a dog [UNK]."),
    ("DropFirst", '"Hello there," he said', '"[UNK] there," he said'),
    ("DropFirstLast", "  spaced   out  ", "  [UNK]   [UNK]  "),
    ("DropFirstLast", "dog", "[UNK]"),
    ("DropFirst", "a 😀 dog", "[UNK] 😀 dog"),
])
def test_punctuation_and_spacing_are_kept(name, caption, expected):
    assert apply(caption, name) == expected


@pytest.mark.parametrize("name, caption", [
    ("NoVB", "a red car"), ("OnlyNN", "very quickly"), ("NoNN", "runs quickly"),
    ("OnlyVB", "running"), ("RandNN", "oh wow"), ("DropFirst", "!!! ..."),
    ("DropLast", "😀 🎉"), ("ShuffleOrder", "dog"), ("ShuffleOrder", "ha ha ha"),
])
def test_not_applicable(name, caption):
    out = apply(caption, name, seed=0)
    assert out == caption and not out.applied


@pytest.mark.parametrize("name", ["NoNN", "NoVB", "NoNNVB", "OnlyNN", "OnlyVB", "OnlyNNVB",
                                  "RandNN", "RandVB", "DropFirst", "DropLast", "DropFirstLast"])
def test_length_is_kept(name):
    captions = realistic_captions(60, seed=3)
    for before, after in zip(captions, apply_batch(captions, name, seed=0)):
        assert len(after.split()) == len(before.split())
        kept = [w for w in after.split() if "[UNK]" not in w]
        assert all(w in before.split() for w in kept)


def test_only_and_no_are_complements():
    for caption in realistic_captions(30, seed=4):
        no, only = apply(caption, "NoNNVB"), apply(caption, "OnlyNNVB")
        for a, b, original in zip(no.split(), only.split(), caption.split()):
            a, b, original = a.rstrip("."), b.rstrip("."), original.rstrip(".")
            assert (a == "[UNK]") != (b == "[UNK]") and original in (a, b), (caption, no, only)


def test_shuffle_order_permutes_words_and_keeps_punctuation():
    caption = "A man is slicing bread."
    outs = {apply(caption, "ShuffleOrder", seed=s) for s in range(10)}
    for out in outs:
        assert out.applied and out != caption and out.endswith(".")
        assert sorted(out.rstrip(".").split()) == sorted(caption.rstrip(".").split())
    assert len(outs) > 3
    assert apply(CAPTION, "ShuffleOrder", seed=5) == apply(CAPTION, "ShuffleOrder", seed=5)
