"""SwapText: SynWordNet, SynWordEmbd, JJSwap, NNSwap (model-based ones are in test_text_models)."""
from __future__ import annotations

import pytest

from perturb.text import apply, apply_batch, get, resources, swaptext

CAPTION = "a little girl does gymnastics"
LONG = ("a happy young man quickly rides a brown horse along the quiet sandy beach while two "
        "small children build a large castle and their tired parents watch the calm blue ocean")


def _changed(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.split(), after.split()
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


@pytest.fixture(scope="module")
def tags():
    nlp = resources.nlp(("parser", "ner"))
    return lambda text: {t.text: t.tag_ for t in nlp(text)}


@pytest.mark.parametrize("seed", range(5))
def test_synwordnet_uses_same_pos_synonyms(seed, tags):
    out = apply(CAPTION, "SynWordNet", seed=seed)
    assert out.applied
    [(old, new)] = _changed(CAPTION, out)              # default rate 0.1 → one word here
    tag = tags(CAPTION)[old]
    assert new in swaptext.wordnet_synonyms(old, tag)
    pos = swaptext.WORDNET_POS[tag[:2]]
    wn = resources.wordnet()
    assert any(new.lower() == n.lower() or resources.inflect(n, tag) == new
               for s in wn.synsets(old, pos) for n in s.lemma_names())


def test_wordnet_synonyms_known_words():
    assert "small" in swaptext.wordnet_synonyms("little", "JJ")
    assert "manages" in swaptext.wordnet_synonyms("does", "VBZ")      # inflected like 'does'
    assert "little" not in swaptext.wordnet_synonyms("little", "JJ")
    assert swaptext.wordnet_synonyms("the", "DT") == ()


@pytest.mark.parametrize("name", ["SynWordNet", "SynWordEmbd"])
def test_severity_sets_number_of_words(name):
    n = len(LONG.split())                               # 30 words
    assert get(name).params(None) == {"rate": 0.1}
    counts = [len(_changed(LONG, apply(LONG, name, seed=1, severity=s))) for s in (1, 3, 5)]
    assert counts == [1, 3, 9]                          # int(rate * 30): 0.05→1, 0.1→3, 0.3→9
    assert counts[-1] <= n


@pytest.mark.parametrize("seed", range(5))
def test_synwordembd_uses_neighbours(seed, tags):
    out = apply(CAPTION, "SynWordEmbd", seed=seed)
    [(old, new)] = _changed(CAPTION, out)
    ref = swaptext.embedding_model()
    assert new in swaptext.embedding_neighbours(old, tags(CAPTION)[old], ref)


def test_embedding_neighbours_are_other_lemmas_of_same_pos():
    ref = swaptext.embedding_model()
    near = swaptext.embedding_neighbours("horse", "NN", ref)
    assert len(near) == 5 and "stallion" in near and "horses" not in near and "horse" not in near
    assert swaptext.embedding_neighbours("zzqxj", "NN", ref) == ()
    assert swaptext._embedding_space(ref) is swaptext._embedding_space(ref)   # cached matrix


@pytest.mark.parametrize("name, pos, changed_word", [
    ("JJSwap", "a", "little"), ("NNSwap", "n", None),
])
def test_multipos_swaps(name, pos, changed_word):
    pool = set(swaptext.multipos_pool(pos))
    for seed in range(5):
        out = apply(CAPTION, name, seed=seed)
        changes = _changed(CAPTION, out)
        assert out.applied and 1 <= len(changes) <= 2
        for old, new in changes:
            tag = "NNS" if old == "gymnastics" else "NN"    # inflected like the word replaced
            assert any(swaptext.inflect_like(p, tag) == new for p in pool if p[:2] == new[:2])
            if changed_word:
                assert old == changed_word


def test_multipos_pool_words_have_two_pos():
    wn = resources.wordnet()
    for word in swaptext.multipos_pool("a")[:50]:
        assert {s.pos() for s in wn.synsets(word)} - {"a", "s"}


def test_multipos_swaps_at_most_two():
    out = apply("a big red old car near a tall green tree", "JJSwap", seed=0)
    assert len(_changed("a big red old car near a tall green tree", out)) == 2


def test_article_fixed():
    for seed in range(20):
        out = apply("a little girl", "JJSwap", seed=seed)
        art, word = out.split()[:2]
        assert art == ("an" if word[0] in "aeiou" else "a")


@pytest.mark.parametrize("name, caption", [
    ("JJSwap", "two men run"), ("NNSwap", "run quickly"), ("SynWordNet", "the of and"),
    ("SynWordEmbd", "the of and"),
])
def test_not_applicable(name, caption):
    out = apply(caption, name, seed=0)
    assert out == caption and out.applied is False


@pytest.mark.parametrize("name", ["SynWordNet", "SynWordEmbd", "JJSwap", "NNSwap"])
def test_deterministic_and_batch(name):
    caps = [CAPTION, LONG, "", "A MAN RIDES A HORSE", "a cat"]
    one = [str(apply(c, name, seed=7)) for c in caps]
    assert one == [str(apply(c, name, seed=7)) for c in caps]
    assert [str(r) for r in apply_batch(caps, name, seed=7)] == one
