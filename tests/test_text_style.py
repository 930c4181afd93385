"""TextStyle rule-based perturbations (Tense, Passive, Negation) and the grammar helpers."""
from __future__ import annotations

import pytest

from perturb.text import apply, apply_batch, grammar, resources

CAPTION = "a little girl does gymnastics"
NO_VERB = "a cat on a sofa"


@pytest.mark.parametrize("caption, expected", [
    (CAPTION, "a little girl did gymnastics"),                      # Table 1
    ("a man is talking with his two friends", "a man was talking with his two friends"),
    ("two men are doing wrestling", "two men were doing wrestling"),
    ("a woman cooks pasta in a kitchen", "a woman cooked pasta in a kitchen"),
    ("people play soccer on the field", "people played soccer on the field"),
    ("a dog has caught a frisbee", "a dog had caught a frisbee"),
    ("a man can't open the door", "a man couldn't open the door"),
    ("I am singing", "I was singing"),
    ("he's running", "he was running"),
    ("A woman who is smiling holds a baby.", "A woman who was smiling held a baby."),
    ("he will play the guitar", "he would play the guitar"),
    ("a boy rode a bike", "a boy rides a bike"),                    # past → present
    ("the kids were swimming", "the kids are swimming"),
])
def test_tense(caption, expected):
    out = apply(caption, "Tense")
    assert out == expected and out.applied


@pytest.mark.parametrize("caption, expected", [
    (CAPTION, "gymnastics is done by a little girl"),               # Table 1
    ("a woman cooks pasta in a kitchen", "pasta is cooked by a woman in a kitchen"),
    ("A man is riding a horse.", "A horse is being ridden by a man."),
    ("two men carry a table", "a table is carried by two men"),
    ("a boy kicked the balls", "the balls were kicked by a boy"),
    ("the chef has chopped an onion", "an onion has been chopped by the chef"),
    ("he will play the guitar", "the guitar will be played by him"),
    ("a girl does not eat the apples", "the apples are not eaten by a girl"),
    ("people are playing soccer", "soccer is being played by people"),
    ("she picks up the ball", "the ball is picked up by her"),
    ("a man can't open the door", "the door cannot be opened by a man"),
    ("A cat doesn't like water.", "Water is not liked by a cat."),
    ("a man never eats apples", "apples are never eaten by a man"),
    ("A MAN IS RIDING A HORSE", "A HORSE IS BEING RIDDEN BY A MAN"),
])
def test_passive(caption, expected):
    out = apply(caption, "Passive")
    assert out == expected and out.applied


@pytest.mark.parametrize("caption, expected", [
    (CAPTION, "a little girl does not do gymnastics"),              # grammatical, not Table 1's
    ("a man is talking with his friends", "a man is not talking with his friends"),
    ("two men are doing wrestling", "two men are not doing wrestling"),
    ("a woman cooks pasta", "a woman does not cook pasta"),
    ("people played soccer", "people did not play soccer"),
    ("a dog can catch a frisbee", "a dog cannot catch a frisbee"),
    ("the sky is blue", "the sky is not blue"),
    ("a man has eaten an apple", "a man has not eaten an apple"),
    ("A man rides a horse.", "A man does not ride a horse."),
    ("a man riding a bike", "a man not riding a bike"),
    # reverse negation
    ("a girl does not do gymnastics", "a girl does gymnastics"),
    ("a man isn't running", "a man is running"),
    ("the kids don't swim", "the kids swim"),
    ("A cat doesn't like water.", "A cat likes water."),
    ("a man can't swim", "a man can swim"),
    ("a man never smiles", "a man smiles"),
])
def test_negation(caption, expected):
    for name in ("Negation", "Neg", "ReverseNeg"):
        out = apply(caption, name)
        assert out == expected and out.applied


@pytest.mark.parametrize("name, caption", [
    ("Tense", NO_VERB), ("Passive", NO_VERB), ("Negation", NO_VERB),
    ("Passive", "a dog is running"),                 # no direct object
    ("Passive", "the sky is blue"),                  # copula
    ("Passive", "a man has a dog"),                  # stative 'have'
    ("Tense", "a man riding a bike"),                # no finite verb
])
def test_not_applicable(name, caption):
    out = apply(caption, name)
    assert out == caption and out.applied is False


def test_batch_equals_single():
    caps = [CAPTION, NO_VERB, "", "A man is riding a horse.", "the kids don't swim"]
    for name in ("Tense", "Passive", "Negation"):
        assert [str(r) for r in apply_batch(caps, name)] == [str(apply(c, name)) for c in caps]


def test_grammar_helpers():
    nlp = resources.nlp(("ner",))
    doc = nlp("the kids don't swim")
    verb = grammar.main_verb(doc)
    assert verb.text == "swim" and grammar.negation(verb).text == "n't"
    assert [a.text for a in grammar.auxiliaries(verb)] == ["do"]
    assert grammar.conjugate("be", "VBD", plural=True) == "were"
    assert grammar.conjugate("be", "VBZ", first_person=True) == "am"
    assert grammar.conjugate("ride", "VBZ", plural=True) == "ride"
    assert grammar.conjugate("ride", "VBN") == "ridden"
    assert grammar.is_plural(nlp("gymnastics")[0]) is False
    assert grammar.verb_lemma(nlp("he rides")[1]) == "ride"
