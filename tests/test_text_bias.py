"""Bias perturbations and the gender core: Table 1, Park et al.'s examples, pronouns, edge cases."""
from __future__ import annotations

import pytest

from perturb.errors import NotApplicableError
from perturb.text import apply, apply_batch, gender, resources

CAPTION = "a little girl does gymnastics"


@pytest.fixture(scope="module")
def parse():
    return resources.nlp(("ner",))


@pytest.mark.parametrize("name, expected", [
    ("GenderSwap", "a little boy does gymnastics"),
    ("AllMale", "a little boy does gymnastics"),
    ("GenderNeutral", "a little child does gymnastics"),
    ("Neutral", "a little child does gymnastics"),
    ("AllFemale", "a little girl does gymnastics"),
])
def test_table1(name, expected):
    assert apply(CAPTION, name) == expected


def test_all_female_on_female_caption_reports_no_change():
    assert not apply(CAPTION, "AllFemale").applied
    assert apply(CAPTION, "AllMale").applied


@pytest.mark.parametrize("caption, expected", [
    ("Two men are doing wrestling.", "Two women are doing wrestling."),
    ("A man in black shirt is talking with his two friends.",
     "A woman in black shirt is talking with her two friends."),
    ("she gives him her book", "he gives her his book"),
    ("He saw her.", "She saw him."),
    ("She saw him with her dog", "He saw her with his dog"),
    ("Two women and three boys", "Two men and three girls"),
    ("a man, a woman.", "a woman, a man."),
    ("A MAN RIDES A HORSE", "A WOMAN RIDES A HORSE"),
    ("SHE RIDES HER BIKE", "HE RIDES HIS BIKE"),
    ("an uncle hugs a nephew", "an aunt hugs a niece"),
    ("a boy hugs his aunt", "a girl hugs her uncle"),
    ("John hugs Mary.", "Mary hugs John."),
    ("Mr. Smith talks to his wife", "Mrs. Smith talks to her husband"),
    ("The actress and the king", "The actor and the queen"),
])
def test_gender_swap(caption, expected):
    out = apply(caption, "GenderSwap")
    assert out == expected and out.applied


@pytest.mark.parametrize("name, caption, expected", [
    ("AllMale", "she gives him her book", "he gives him his book"),
    ("AllFemale", "she gives him her book", "she gives her her book"),
    ("AllMale", "A woman and a man dance", "A man and a man dance"),
    ("AllFemale", "a boy and his father", "a girl and her mother"),
    ("GenderNeutral", "Two men are doing wrestling.", "Two people are doing wrestling."),
    ("GenderNeutral", "she gives him her book", "they give them their book"),
    ("GenderNeutral", "She is singing while he plays the guitar.",
     "They are singing while they play the guitar."),
    ("GenderNeutral", "an uncle hugs a boy", "a relative hugs a child"),
    ("GenderNeutral", "A man in black shirt is talking with his two friends.",
     "A person in black shirt is talking with their two friends."),
])
def test_all_male_female_neutral(name, caption, expected):
    assert apply(caption, name) == expected


@pytest.mark.parametrize("name", ["GenderSwap", "AllMale", "AllFemale", "GenderNeutral"])
def test_not_applicable(name):
    out = apply("a cat sleeps on a mat", name)
    assert out == "a cat sleeps on a mat" and out.applied is False
    with pytest.raises(NotApplicableError):
        apply("a cat sleeps on a mat", name, strict=True)


def test_gendered_tokens_fields(parse):
    got = gender.gendered_tokens(parse("she gives him her book"))
    assert [(g.i, g.text, g.gender, g.kind, g.plural, g.tag) for g in got] == [
        (0, "she", "female", "pronoun", False, "PRP"),
        (2, "him", "male", "pronoun", False, "PRP"),
        (3, "her", "female", "pronoun", False, "PRP$"),
    ]
    got = gender.gendered_tokens(parse("Two women met John and Mary Jones"))
    assert [(g.text, g.gender, g.kind, g.plural) for g in got] == [
        ("women", "female", "noun", True), ("John", "male", "name", False),
        ("Mary", "female", "name", False)]       # "Jones" is a surname: not a first name


@pytest.mark.parametrize("word, to, tag, expected", [
    ("man,", None, "", "woman,"),
    ("MAN", None, "", "WOMAN"),
    ("She", None, "", "He"),
    ("her", None, "PRP$", "his"),
    ("her", None, "PRP", "him"),
    ("her", None, "", "his"),
    ("him", None, "", "her"),
    ("his", None, "", "her"),
    ("(Boys)", None, "", "(Girls)"),
    ("girls", "male", "", "boys"),
    ("girls", "female", "", "girls"),
    ("Women", "neutral", "", "People"),
    ("herself", "neutral", "", "themselves"),
    ("cat", None, "", "cat"),
    ("sir", "neutral", "", "sir"),
])
def test_swap_word(word, to, tag, expected):
    assert gender.swap_word(word, to, tag=tag) == expected


def test_swap_word_rejects_bad_target():
    with pytest.raises(ValueError):
        gender.swap_word("man", "other")


def test_rewrite_keeps_whitespace_and_removes_cleanly(parse):
    doc = parse("a  man isn't here ,ok")
    at = {t.text: t.i for t in doc}
    assert gender.rewrite(doc, {}) == "a  man isn't here ,ok"
    assert gender.rewrite(doc, {at["man"]: "woman"}) == "a  woman isn't here ,ok"
    assert gender.rewrite(doc, {at["n't"]: ""}) == "a  man is here ,ok"
    assert gender.rewrite(doc, {at["here"]: ""}) == "a  man isn't ,ok"


def test_batch_equals_single():
    caps = ["she gives him her book", "", "a cat", "John hugs Mary.", CAPTION]
    for name in ("GenderSwap", "GenderNeutral"):
        assert [str(r) for r in apply_batch(caps, name)] == [str(apply(c, name)) for c in caps]
