"""ChangeChar: the kind of change each rule makes, its rate and severities, determinism."""
from __future__ import annotations

import re

import numpy as np
import pytest

from perturb.text import apply, apply_batch, get
from perturb.text import changechar, words
from perturb.text.words import asset_table

CAPTION = "a little girl does gymnastics"
LONG = ("the young chef quickly cuts fresh vegetables while a small crowd watches the cooking "
        "show inside a bright kitchen studio today")          # 20 words, 1 stop word class only


def changed_pairs(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) for every word that differs (the rules keep the word count)."""
    a, b = words.words(words.split(before)), words.words(words.split(after))
    assert len(a) == len(b), (before, after)
    return [(x, y) for x, y in zip(a, b) if x != y]


def levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


# An independent QWERTY geometry: key centres with the usual row stagger.
_ROWS = (("1234567890", 1.5), ("qwertyuiop", 2.0), ("asdfghjkl", 2.25), ("zxcvbnm", 2.75))
_KEY_XY = {k: (x0 + i, y) for y, (keys, x0) in enumerate(_ROWS) for i, k in enumerate(keys)}


def qwerty_neighbours(a: str, b: str) -> bool:
    (xa, ya), (xb, yb) = _KEY_XY[a.lower()], _KEY_XY[b.lower()]
    return a != b and abs(ya - yb) <= 1 and abs(xa - xb) <= 1.25


def test_rate_rule_follows_textflint():
    assert changechar.words_to_change(5, 0.3) == 1        # int(1.5), at least 1
    assert changechar.words_to_change(0, 0.3) == 1
    assert changechar.words_to_change(20, 0.3) == 6
    assert changechar.words_to_change(1000, 0.3) == 10    # at most 10
    with pytest.raises(ValueError, match="rate"):
        changechar.words_to_change(10, 1.5)


@pytest.mark.parametrize("name, rate", [("Keyboard", 0.2), ("OCR", 0.2), ("Typos", 0.3),
                                        ("SpellingError", 0.3)])
def test_default_severity_is_textflint_rate(name, rate):
    spec = get(name)
    assert spec.category == "ChangeChar"
    assert spec.params(None) == {"rate": rate} == spec.params(3)
    assert str(rate) in spec.extra["rate"]
    rates = [spec.params(s)["rate"] for s in range(1, 6)]
    assert rates == sorted(rates) and len(set(rates)) == 5


def test_keyboard_replaces_one_char_by_a_qwerty_neighbour():
    for seed in range(60):
        out = apply(CAPTION, "Keyboard", seed=seed)
        assert out.applied
        [(old, new)] = changed_pairs(CAPTION, out)          # 5 words * 0.2 -> one word
        assert old != "a" and len(old) == len(new)
        diffs = [(x, y) for x, y in zip(old, new) if x != y]
        assert len(diffs) == 1 and qwerty_neighbours(*diffs[0]), (old, new)


def test_keyboard_keeps_case():
    out = apply("LITTLE GIRLS DANCE", "Keyboard", seed=1)
    [(old, new)] = changed_pairs("LITTLE GIRLS DANCE", out)
    assert new == new.upper() or any(c.isdigit() for c in new)


def test_ocr_uses_ocr_confusions():
    table = asset_table("text", "ocr_confusions.txt", symmetric=True)
    assert "8" in table["s"] and "0" in table["o"] and "1" in table["l"]   # classic confusions
    seen = set()
    for seed in range(60):
        out = apply("a boy rolls his scooter", "OCR", seed=seed)
        for old, new in changed_pairs("a boy rolls his scooter", out):
            diffs = [(x, y) for x, y in zip(old, new) if x != y]
            assert len(old) == len(new) and len(diffs) == 1 and diffs[0][1] in table[diffs[0][0]]
            seen.add(diffs[0])
    assert len(seen) > 3


def test_typos_change_exactly_one_word_by_one_edit():
    kinds = set()
    for seed in range(100):
        out = apply(CAPTION, "Typos", seed=seed)
        [(old, new)] = changed_pairs(CAPTION, out)          # 5 words * 0.3 -> one word
        assert 1 <= levenshtein(old, new) <= 2              # a swap is 2 in Levenshtein distance
        assert new[0] == old[0] and new[-1] == old[-1]      # first and last letters kept
        kinds.add(len(new) - len(old))
    assert kinds == {-1, 0, 1}                              # delete, swap/replace, insert


def test_spelling_error_uses_the_misspelling_table():
    table = changechar.misspellings()
    assert "lettil" in table["little"]                      # the paper's Table 1 example
    for seed in range(30):
        out = apply(CAPTION, "SpellingError", seed=seed)
        [(old, new)] = changed_pairs(CAPTION, out)
        assert new in table[old]
    out = apply("Beautiful People", "SpellingError", seed=0)
    assert all(new[0].isupper() for _, new in changed_pairs("Beautiful People", out))


def test_stop_words_are_never_changed():
    caption = "she is in the house and he has a ball"
    for name in ("Keyboard", "OCR", "Typos"):
        for seed in range(20):
            out = apply(caption, name, seed=seed)
            assert {old for old, _ in changed_pairs(caption, out)} <= {"house", "ball"}


@pytest.mark.parametrize("name, caption", [
    ("Typos", "a an the"), ("SpellingError", "xyzzy plugh"), ("OCR", "hi"),
    ("Keyboard", "!!! ..."), ("Punctuation", "?!")])
def test_not_applicable_leaves_caption(name, caption):
    out = apply(caption, name, seed=0)
    assert out == caption and not out.applied


@pytest.mark.parametrize("name", ["Keyboard", "OCR", "Typos", "SpellingError"])
def test_higher_severity_changes_more_words(name):
    caption = LONG if name != "SpellingError" else (
        "people are playing football and singing a song while the woman is cooking dinner "
        "in the kitchen with her friends and family")
    mean = {}
    for severity in (1, 3, 5):
        outs = apply_batch([caption] * 15, name, seed=0, severity=severity)
        assert len(set(outs)) == 1 and outs[0].applied      # stream from (seed, name, caption)
        counts = [len(changed_pairs(caption, apply(caption, name, seed=s, severity=severity)))
                  for s in range(15)]
        mean[severity] = np.mean(counts)
    assert 1 <= mean[1] < mean[3] < mean[5]


def test_punctuation_wraps_and_replaces_the_end_mark():
    pairs = {tuple(line.split()) for line in words.asset_lines("text", "punctuation_brackets.txt")}
    ends = set(words.asset_lines("text", "punctuation_ends.txt"))
    pattern = re.compile(r"^(\S+) a little girl does gymnastics(\.\.\.|[.,;]) (\S+)$")
    seen = set()
    for seed in range(40):
        out = apply(CAPTION + ".", "Punctuation", seed=seed)       # its own '.' is replaced
        m = pattern.match(out)
        assert m and (m[1], m[3]) in pairs and m[2] in ends, out
        seen.add((m[1], m[2]))
    assert len(seen) > 5


def test_prefix_swap_keeps_the_part_of_speech():
    out = apply(CAPTION, "SwapPrefix", seed=0)                      # Table 1: nothing to swap
    assert out == CAPTION and not out.applied
    wn = changechar._lemmas("v")
    caption = "a woman is reheating the soup"
    results = {apply(caption, "PrefixSwap", seed=s) for s in range(12)}
    for out in results:
        [(old, new)] = changed_pairs(caption, out)
        assert old == "reheating" and new.endswith("heating") and new != old
        assert new[: -len("ing")] in wn                     # preheat, overheat...: verbs
    assert len(results) > 1


def test_same_seed_same_output_and_seeds_differ():
    for name in ("Keyboard", "OCR", "Typos", "SpellingError", "Punctuation"):
        a = apply_batch([CAPTION, LONG], name, seed=7)
        assert a == apply_batch([CAPTION, LONG], name, seed=7)
        assert len({apply(LONG, name, seed=s) for s in range(8)}) > 1
