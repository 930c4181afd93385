"""perturb.transforms.RandomTextPerturbation: a caption's output depends on (seed, epoch, key) only
and equals perturb.text.apply with its recorded params."""
from __future__ import annotations

import pickle

import pytest

from perturb.text import apply
from perturb.transforms import RandomTextPerturbation

CHEAP = "Keyboard,OCR,Typos,DropFirst,ShuffleOrder,AppendIrr"      # no parse, no model
CAPTIONS = ["a man is playing a guitar on stage", "two women are cooking pasta in a kitchen",
            "a dog runs in the park", "a child rides a red bicycle down the street",
            "people dance at a wedding party", "a cat sleeps on a sofa"]


def test_each_caption_equals_apply_and_ignores_its_batch() -> None:
    t = RandomTextPerturbation(CHEAP + ",NoNN", severity=(2, 4), seed=3)      # NoNN is parsed in a group
    keys = [f"clip{i}" for i in range(len(CAPTIONS))]
    out = t(CAPTIONS, keys=keys)
    params = t.params(keys)
    for caption, got, p in zip(CAPTIONS, out, params):
        assert got == apply(caption, p["op"], p["severity"], seed=p["seed"])
        assert p["severity"] in ((2, 3, 4) if p["op"] in ("Keyboard", "OCR", "Typos") else (None,))
    assert sum(o != c for o, c in zip(out, CAPTIONS)) >= len(CAPTIONS) - 1
    order = [4, 1, 3]
    assert t([CAPTIONS[i] for i in order], keys=[keys[i] for i in order]) == [out[i] for i in order]
    assert t(CAPTIONS[2], keys=keys[2]) == out[2]


def test_epochs_p_and_keys() -> None:
    t = RandomTextPerturbation(CHEAP, seed=0)
    keys = list(range(40))
    first = t.params(keys)
    t.set_epoch(1)
    assert sum(a != b for a, b in zip(first, t.params(keys))) >= 35
    t.set_epoch(0)
    assert t.params(keys) == first
    none = RandomTextPerturbation(CHEAP, p=0.0, seed=0)
    assert none(CAPTIONS, keys=range(len(CAPTIONS))) == CAPTIONS
    assert t(CAPTIONS) == t(CAPTIONS, keys=CAPTIONS)         # without keys, a caption keys itself
    copy = pickle.loads(pickle.dumps(t))
    assert copy(CAPTIONS, keys=range(6)) == t(CAPTIONS, keys=range(6))


def test_default_ops_need_no_model_and_model_ops_are_refused() -> None:
    ops = RandomTextPerturbation().ops
    assert len(ops) == 31 and "Typos" in ops and "MLM" not in ops
    with pytest.raises(ValueError, match="BackTrans, MLM need a model"):
        RandomTextPerturbation("SwapText")


@pytest.mark.parametrize("kwargs,says", [
    (dict(ops="NoSuchOp"), "NoSuchOp"),
    (dict(ops="suite:imagenet-c"), "expected a text selection"),
    (dict(ops="Typos", severity=(5, 1)), "severity range"),
    (dict(ops="Typos,OCR", weights=[1]), "one weight per op: 2 ops"),
    (dict(p=-0.1), "p must be"),
])
def test_bad_settings_get_one_line_errors(kwargs: dict, says: str) -> None:
    with pytest.raises(ValueError) as err:
        RandomTextPerturbation(**kwargs)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_bad_calls_get_errors() -> None:
    t = RandomTextPerturbation(CHEAP)
    with pytest.raises(ValueError, match="expected 2 keys"):
        t(CAPTIONS[:2], keys=[1, 2, 3])
    with pytest.raises(ValueError, match="a sample key must be an int or a str"):
        t(CAPTIONS[:1], keys=[2.5])
    with pytest.raises(TypeError, match="expected a caption as str at index 1"):
        t(["a dog", 3], keys=[1, 2])


def test_non_str_captions_are_value_errors_as_documented() -> None:
    """Bad batches are a ValueError in one line (docs/transforms.md); also a TypeError, as before."""
    from perturb.text import apply, apply_batch

    t = RandomTextPerturbation(CHEAP)
    calls = [(lambda: t(["a dog", 3], keys=[1, 2]), "expected a caption as str at index 1; got int"),
             (lambda: t(7, keys=1), "expected a sequence of captions (str); got int"),
             (lambda: t(b"a dog", keys=1), "expected a sequence of captions (str), e.g. a list; got a "
                                           "single bytes b'a dog': wrap it in a list"),
             (lambda: apply(None, "Typos"), "expected a caption as str; got NoneType"),
             (lambda: apply_batch(["a", 2.5], "Typos"), "expected a caption as str at index 1; got float")]
    for call, says in calls:
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value) == says and isinstance(err.value, TypeError)


def test_outputs_for_a_fixed_seed_are_pinned() -> None:
    """Recorded captions: a parsed op drawn by several captions (a blank one among them), and ops without a parse."""
    captions = CAPTIONS + ["", "   "]
    t = RandomTextPerturbation("Typos,NoNN,ShuffleOrder", severity=(2, 4), seed=5)
    keys = list(range(len(captions)))
    assert [p and (p["op"], p["severity"]) for p in t.params(keys)] == [
        ("NoNN", None), ("Typos", 3), ("Typos", 2), ("NoNN", None), ("ShuffleOrder", None), ("Typos", 4),
        ("NoNN", None), ("Typos", 4)]
    assert t(captions, keys=keys) == [
        "a [UNK] is playing a [UNK] on [UNK]", "to wolen are cooking pasta in a kitchen", "a dog runs in the parrk",
        "a [UNK] rides a red [UNK] down the [UNK]", "people wedding dance at party a", "a cant slelps on a sofa",
        "", "   "]
