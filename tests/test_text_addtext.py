"""AddText: adverbs before verbs, irrelevant phrases around the caption; the asset lists."""
from __future__ import annotations

import re

import pytest

from perturb.text import apply, get
from perturb.text.words import asset_lines, asset_table, stop_words

CAPTION = "a little girl does gymnastics"
ADVERBS = set(asset_lines("text", "adverbs.txt"))


def test_insert_adv_table_1_shape():
    assert get("AddAdv").name == "InsertAdv"
    seen = set()
    for seed in range(15):
        out = apply(CAPTION, "AddAdv", seed=seed)
        m = re.fullmatch(r"a little girl (\w+) does gymnastics", out)
        assert out.applied and m and m[1] in ADVERBS, out
        seen.add(m[1])
    assert len(seen) > 5


def test_insert_adv_one_adverb_per_verb_chain():
    caption = "a man is talking and a woman has been laughing"
    out = apply(caption, "InsertAdv", seed=0).split()
    assert len(out) == len(caption.split()) + 2
    assert out[2] == "is" and out[3] in ADVERBS and out[4] == "talking"
    assert out[8:12] == ["has", "been", out[10], "laughing"] and out[10] in ADVERBS


def test_insert_adv_at_sentence_start_moves_the_capital():
    out = apply("Running people are seen.", "InsertAdv", seed=2)
    first, second = out.split()[:2]
    assert first[0].isupper() and first.lower() in ADVERBS and second == "running"
    assert out.endswith("seen.")


def test_insert_adv_not_applicable_without_verb():
    out = apply("a red car on a road", "InsertAdv", seed=0)
    assert out == "a red car on a road" and not out.applied


def test_append_irr_table_1_shape():
    beginnings = set(asset_lines("text", "irrelevant_beginnings.txt"))
    assert "On this occasion," in beginnings                  # Table 1's example
    for seed in range(10):
        out = apply(CAPTION, "AppendIrr", seed=seed)
        assert out.applied and out.endswith(" " + CAPTION)
        assert out[: -len(CAPTION) - 1] in beginnings


def test_append_irr_adds_a_sentence_after_long_captions():
    endings = set(asset_lines("text", "irrelevant_endings.txt"))
    long = "a man in a black shirt is talking with his two friends in a kitchen"
    out = apply(long, "AppendIrr", seed=1)
    assert long in out and any(out.endswith(" " + e) for e in endings)
    short = apply("a dog runs", "AppendIrr", seed=1)
    assert not any(short.endswith(e) for e in endings)


@pytest.mark.parametrize("name", [
    "adverbs.txt", "irrelevant_beginnings.txt", "irrelevant_endings.txt", "prefixes.txt",
    "punctuation_ends.txt", "punctuation_brackets.txt", "misspellings.txt",
    "keyboard_qwerty.txt", "ocr_confusions.txt", "stopwords.txt"])
def test_asset_lists_are_clean(name):
    lines = asset_lines("text", name)
    assert len(lines) >= 4 and len(set(lines)) == len(lines)
    assert all(line == line.strip() for line in lines)


def test_asset_tables():
    keyboard = asset_table("text", "keyboard_qwerty.txt")
    assert set(keyboard) == set("abcdefghijklmnopqrstuvwxyz0123456789")
    assert all(k in keyboard[v] for k, vs in keyboard.items() for v in vs)     # symmetric
    misspell = asset_table("text", "misspellings.txt")
    assert len(misspell) >= 200 and all(w not in vs for w, vs in misspell.items())
    assert {"a", "the", "is", "she", "his", "on"} <= stop_words()
