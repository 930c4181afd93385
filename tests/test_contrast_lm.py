"""The language-model path of verb contrasts, with a tiny random seq2seq model built here."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tiny_models  # noqa: E402

from perturb.contrast import generate, lexicon, lm  # noqa: E402
from perturb.errors import MissingResourceError  # noqa: E402

CAPTION = "a man is riding a horse on the beach"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    return str(tiny_models.build_seq2seq(tmp_path_factory.mktemp("t5") / "tiny"))


def lm_only(model: str, **kw):
    found = generate(CAPTION, "verb", seed=0, n=None, model=model, use_sisters=False,
                     corpus=list(tiny_models.CORPUS), beams=8, k=8, **kw)
    assert [c.rule for c in found if c.rule != "verb:lm"] == ["verb:antonym"]   # ride -> walk
    return [c for c in found if c.rule == "verb:lm"]


def test_lm_candidates_pass_every_filter(model):
    found = lm_only(model, lm_min_count=0)
    assert found
    for c in found:
        assert c.span.original == "riding"
        assert c.text == CAPTION.replace("riding", c.span.replacement)
        assert lm.similarity(CAPTION, c.text) < 0.8
    assert lm_only(model, lm_min_count=0) == found                       # deterministic


def test_each_filter_threshold_is_a_parameter(model):
    assert lm_only(model, lm_min_count=0, sentence_sim_max=-1.0) == []
    assert lm_only(model, lm_min_count=0, word_sim_max=-1.0) == []
    assert lm_only(model, lm_min_count=10**6) == []                       # verbs too rare
    freq = lexicon.Frequencies.from_captions(tiny_models.CORPUS)
    assert freq.count("play", "VERB") == 1


def test_missing_model_says_so(tmp_path):
    with pytest.raises(MissingResourceError, match="seq2seq model .* offline"):
        generate(CAPTION, "verb", seed=0, n=None, use_sisters=False, model=str(tmp_path / "none"))
