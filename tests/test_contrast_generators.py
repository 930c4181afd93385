"""Contrast generators: Park et al.'s examples, VideoCon rules, spans, seeds, batches."""
from __future__ import annotations

import pytest

from perturb.contrast import TYPES, Contrast, generate, generate_batch

pytest.importorskip("spacy")


def texts(caption: str, type: str, seed: int = 0, n: int | None = 1, **ctx) -> list[str]:
    return [c.text for c in generate(caption, type, seed=seed, n=n, **ctx)]


def check_span(c: Contrast) -> None:
    s = c.span
    assert c.source[s.start:s.end] == s.original
    assert c.source[:s.start] + s.replacement + c.source[s.end:] == c.text
    assert c.text != c.source
    for e in c.edits:
        assert c.source[e.start:e.end] == e.original
        assert s.start <= e.start and e.end <= s.end


# ---------------------------------------------------------------- Park et al., Table 1
def test_gender_park_examples():
    assert texts("Two men are doing wrestling.", "gender") == ["Two women are doing wrestling."]
    c = generate("A man in black shirt is talking with his two friends.", "gender", seed=0)[0]
    assert c.text == "A woman in black shirt is talking with her two friends."
    assert (c.span.original, c.span.replacement) == ("man in black shirt is talking with his",
                                                    "woman in black shirt is talking with her")
    assert [(e.original, e.replacement) for e in c.edits] == [("man", "woman"), ("his", "her")]
    check_span(c)


def test_gender_swaps_exactly_one_noun():
    found = set(texts("man and woman walk together", "gender", n=None))
    assert found == {"woman and woman walk together", "man and man walk together"}
    for seed in range(10):
        assert texts("man and woman walk together", "gender", seed=seed)[0] != \
            "woman and man walk together"


def test_gender_noun_choice_is_uniform():
    picks = [texts("a man and a woman walk together", "gender", seed=s)[0] for s in range(200)]
    share = picks.count("a woman and a woman walk together") / len(picks)
    assert 0.35 < share < 0.65


def test_gender_pronouns_follow_the_noun_and_plural_is_kept():
    assert texts("A woman is pushing her stroller.", "gender") == ["A man is pushing his stroller."]
    assert texts("The boys show their toys.", "gender") == ["The girls show their toys."]
    outs = {texts("She smiles at him.", "gender", seed=s)[0] for s in range(20)}
    assert outs == {"He smiles at him.", "She smiles at her."}       # one gender's pronouns
    assert texts("A cat sleeps.", "gender") == []


def test_verb_park_example_and_conjugation():
    assert texts("His gaze steely, Jenko lowers his gun.", "verb") == \
        ["His gaze steely, Jenko raises his gun."]
    assert texts("A man is pushing a cart.", "verb") == ["A man is pulling a cart."]
    assert texts("She pushed the door.", "verb") == ["She pulled the door."]
    assert texts("He pushes the box.", "verb") == ["He pulls the box."]
    c = generate("His gaze steely, Jenko lowers his gun.", "verb", seed=0)[0]
    assert c.rule == "verb:antonym"
    assert c.explanation == "Jenko is lowering his gun, not raising it"
    assert (c.span.original, c.span.replacement) == ("lowers", "raises")


def test_verb_sisters_come_from_the_corpus_and_are_never_synonyms():
    from perturb.contrast import lexicon
    corpus = ["a man writes a letter", "a woman is writing", "a boy is whistling", "a girl is singing"]
    found = generate("a man is talking", "verb", seed=0, n=None, corpus=corpus)
    assert [(c.text, c.rule) for c in found][:2] == [
        ("a man is writing", "verb:sister"), ("a man is whistling", "verb:sister")]
    assert {c.rule for c in found[2:]} == {"verb:sister_wordnet"}       # unseen in the corpus
    no_fallback = generate("a man is talking", "verb", seed=0, n=None, corpus=corpus, fallback=False)
    assert [c.text for c in no_fallback] == [c.text for c in found[:2]]
    for c in generate("a man is talking about a car", "verb", seed=0, n=None):
        new = c.span.replacement.split()[0]
        from perturb.text import resources
        lemma = resources.lemminflect().getLemma(new, upos="VERB")[0]
        assert not lexicon.shares_synset("talk", lemma, "v")
        assert lemma not in {"speak", "address", "utter"}


@pytest.mark.parametrize("caption,participle", [
    ("a smiling woman astronaut", "smiling"),
    ("a smiling woman astronaut floats in space", "smiling"),
    ("a man sits in a moving car", "moving"),
    ("people walk past a parked car", "parked"),
    ("a crying baby lies in a cot", "crying"),
])
def test_verb_leaves_adjectival_participles_alone(caption, participle):
    """Issue 27 item 18: a participle modifying a noun is an adjective; only verbs are swapped
    ("a smiling woman astronaut" never becomes "a suggesting woman astronaut")."""
    found = generate(caption, "verb", seed=0, n=None)
    for c in found:
        assert c.span.original.split()[0] != participle, c.text
        assert f" {participle} " in f" {c.text} "
    if caption.split()[1:] != ["smiling", "woman", "astronaut"]:
        assert found                                  # the main verb is still swapped


def test_person_id_park_example():
    cast = {"Jenko": "m", "Schmidt": "m", "Zach": "m", "Molly": "f"}
    src = "His gaze steely, Jenko lowers his gun."
    outs = {texts(src, "person_id", seed=s, cast=cast)[0] for s in range(20)}
    assert outs == {"His gaze steely, Schmidt lowers his gun.", "His gaze steely, Zach lowers his gun."}
    c = generate(src, "person_id", seed=0, cast=cast)[0]
    assert c.span.original == "Jenko" and c.span.replacement in ("Schmidt", "Zach")
    check_span(c)


def test_person_id_further_names_kept_or_swapped():
    cast = {"Jenko": "m", "Schmidt": "m", "Zach": "m", "Eric": "m"}
    src = "Jenko and Schmidt sit in the rear pew."
    outs = [texts(src, "person_id", seed=s, cast=cast)[0] for s in range(200)]
    assert all(not o.startswith("Jenko") for o in outs)
    kept = sum(o.split(" and ")[1].startswith("Schmidt") for o in outs) / len(outs)
    assert 0.35 < kept < 0.65
    assert all(o.split()[0] != o.split()[2] for o in outs)        # never the same name twice


def test_person_id_from_dataset_names():
    names = ["Sarah walks home.", "John and Mary talk.", "Emily cooks."]
    outs = {texts("Mary opens the door.", "person_id", seed=s, names=names)[0] for s in range(20)}
    assert outs == {"Sarah opens the door.", "Emily opens the door."}
    assert texts("Mary opens the door.", "person_id") == []


# ---------------------------------------------------------------- VideoCon types
VIDEOCON = {
    "relation": [
        ("a cat sits under the table", "a cat sits over the table"),
        ("a woman talks in front of a camera", "a woman talks behind a camera"),
        ("people are dancing inside the club", "people are dancing outside the club"),
        ("a bird flies towards the tree", "a bird flies away from the tree"),
        ("a bowl is shown above a yellow broth", "a bowl is shown below a yellow broth"),
        ("a man pours water into a glass", "a man pours water out of a glass"),
    ],
    "counting": [
        ("two dogs are playing", "three dogs are playing"),
        ("One man is walking.", "Two men are walking."),
        ("three girls sing on the voice", "four girls sing on the voice"),
        ("a man has 3 cats", "a man has 4 cats"),
        ("one boy runs in the park", "two boys run in the park"),
        ("twelve people dance", "eleven people dance"),
    ],
    "event_order": [
        ("A man walks to the door and then opens it.", "A man opens it and then walks to the door."),
        ("a girl sneezes then drops the cup", "a girl drops the cup then sneezes"),
        ("After the man sits down, he reads a book.", "Before the man sits down, he reads a book."),
        ("a boy eats before he sleeps", "a boy eats after he sleeps"),
        ("A woman is singing, then a man starts dancing.", "A man starts dancing, then a woman is singing."),
    ],
    "attribute": [
        ("a big dog runs", "a small dog runs"),
        ("a wooden table is shown", "a metal table is shown"),
        ("an old man is walking", "a young man is walking"),
        ("a girl with long hair dances", "a girl with short hair dances"),
        ("a man drinks from an empty cup", "a man drinks from a full cup"),
    ],
    "action": [
        ("a man is opening the door", "a man is closing the door"),
        ("His gaze steely, Jenko lowers his gun.", "His gaze steely, Jenko raises his gun."),
        ("a woman pushes a stroller", "a woman pulls a stroller"),
        ("the players lost the game", "the players won the game"),
        ("a man is buying a car", "a man is selling a car"),
    ],
}


@pytest.mark.parametrize("type,source,expected",
                         [(t, s, e) for t, cases in VIDEOCON.items() for s, e in cases])
def test_videocon_deterministic_rules(type, source, expected):
    found = generate(source, type, seed=0)
    assert [c.text for c in found] == [expected]
    check_span(found[0])
    assert found[0].type == type and found[0].explanation


def test_videocon_rules_leave_non_matches_alone():
    assert texts("a man picks up a box", "relation") == []          # particle, not a relation
    assert texts("a dog runs", "counting") == []                    # the article is not a count
    assert texts("a man walks and talks", "event_order") == []
    assert texts("a man is", "action") == []


def test_attribute_colour_is_another_colour():
    outs = {texts("A man in a red shirt is singing.", "attribute", seed=s)[0] for s in range(30)}
    assert len(outs) > 3
    for o in outs:
        art, colour = o.split()[3:5]
        assert o == f"A man in {art} {colour} shirt is singing." and colour != "red"
        assert art == ("an" if colour[0] in "aeiou" else "a")


def test_object_sibling_nouns_with_corpus():
    corpus = ["a man plays the guitar", "a boy plays the violin", "a woman plays the piano",
              "a cat and a dog", "a dog chases a cat"]
    assert texts("a woman plays the cello", "object", corpus=corpus) == ["a woman plays the violin"]
    assert texts("a dog is chasing a ball", "object", corpus=corpus) == ["a cat is chasing a ball"]
    assert texts("two dogs are running", "object", corpus=corpus) == ["two cats are running"]
    assert texts("a man is eating an apple", "object", corpus=["a pear"]) == ["a man is eating a pear"]
    assert texts("a woman plays the cello", "object", corpus=["a dog barks"]) == []


def test_hallucination_adds_one_detail_from_the_table():
    c = generate("A woman is reading a book.", "hallucination", seed=0)[0]
    assert c.text.startswith("A woman is reading a book ") and c.text.endswith(".")
    assert c.span.original == "" and c.span.start == len("A woman is reading a book")
    check_span(c)
    outs = {texts("a dog runs in the park", "hallucination", seed=s)[0] for s in range(40)}
    assert not any(o.endswith("with a dog") for o in outs)          # key word already present
    assert len(outs) > 5


# ---------------------------------------------------------------- invariants
CAPTIONS = ["Two men are doing wrestling.", "a man is opening the door of a red car",
            "two girls sing then dance", "a cat sits under the table", "", "   ",
            "A woman in a blue dress is cooking pasta in the kitchen.", "!!!", "a"]


@pytest.mark.parametrize("type", TYPES)
def test_spans_seeds_and_batch(type):
    ctx = {"cast": {"Jenko": "m", "Schmidt": "m"}} if type == "person_id" else {}
    batch = generate_batch(CAPTIONS, type, seed=7, n=None, **ctx)
    single = [generate(c, type, seed=7, n=None, **ctx) for c in CAPTIONS]
    assert [[c.to_dict() for c in b] for b in batch] == [[c.to_dict() for c in s] for s in single]
    again = generate_batch(CAPTIONS, type, seed=7, n=None, **ctx)
    assert batch == again
    for src, found in zip(CAPTIONS, batch):
        for c in found:
            assert c.source == src and c.type == type
            check_span(c)
            assert Contrast.from_dict(c.to_dict()) == c


def test_unknown_type_lists_the_types():
    with pytest.raises(ValueError, match="event_order"):
        generate("a man", "colour")
    with pytest.raises(TypeError):
        generate(3, "gender")


def test_verb_same_field_reaches_verbs_without_hypernyms():
    corpus = ["people are listening to music", "a girl is cooking"]      # watch.v.01 has no hypernym
    found = generate("a boy is watching", "verb", seed=0, n=None, corpus=corpus, fallback=False)
    assert [(c.text, c.rule) for c in found] == [("a boy is listening", "verb:field")]


def test_case_is_kept():
    assert texts("TWO WOMEN ARE TALKING", "counting") == ["THREE WOMEN ARE TALKING"]
    assert texts("A MAN LOWERS HIS GUN", "verb") == ["A MAN RAISES HIS GUN"]
    assert texts("An old man walks", "attribute") == ["A young man walks"]
