"""Every registered text perturbation on 1,000 varied captions: no errors, batch == one by one,
same seed -> same output, empty or blank captions unchanged; and the suite is offline."""
from __future__ import annotations

import os
import socket

import pytest

import perturb.text  # noqa: F401  (registers every text perturbation)
from perturb.errors import MissingResourceError
from perturb.registry import REGISTRY
from perturb.testing.captions import LONG_CAPTION_WORDS, varied_captions
from perturb.text import TextResult, api, apply, apply_batch

CAPTIONS = varied_captions(1000, seed=0)
SAMPLE = [c for c in CAPTIONS if len(c.split()) < LONG_CAPTION_WORDS][::20]       # 50 captions
SPECS = REGISTRY.select("text")
RULE_BASED = [s for s in SPECS if not s.needs_model]
MODEL_BASED = [s for s in SPECS if s.needs_model]
_ids = [s.name for s in SPECS]


class _CachedPipeline:
    """A spaCy pipeline that parses each distinct caption once for the whole module."""

    def __init__(self, nlp) -> None:
        self.nlp, self.docs = nlp, {}

    def __call__(self, text):
        if text not in self.docs:
            self.docs[text] = self.nlp(text)
        return self.docs[text]

    def pipe(self, texts, batch_size=256):
        texts = list(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self.docs]
        self.docs.update(zip(todo, self.nlp.pipe(todo, batch_size=batch_size)))
        return (self.docs[t] for t in texts)


@pytest.fixture(scope="module", autouse=True)
def shared_parses():
    """Parse the corpus once per pipeline instead of once per perturbation and per test."""
    cache: dict[str, _CachedPipeline] = {}
    real = api.pipeline_for

    def pipeline_for(spec):
        key = spec.extra.get("pipeline", "tagger")
        if key not in cache:
            cache[key] = _CachedPipeline(real(spec))
        return cache[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(api, "pipeline_for", pipeline_for)
        yield


@pytest.fixture(scope="module")
def no_model_configured():
    """No model through the environment either (PERTURB_*_MODEL(S) variables)."""
    with pytest.MonkeyPatch.context() as mp:
        for var in list(os.environ):
            if var.startswith("PERTURB_") and "MODEL" in var:
                mp.delenv(var)
        yield


_results: dict[str, list[TextResult]] = {}


def _batch(spec) -> list[TextResult]:
    if spec.name not in _results:
        _results[spec.name] = apply_batch(CAPTIONS, spec.name, seed=0)
    return _results[spec.name]


def test_corpus_covers_the_hard_cases():
    assert len(CAPTIONS) == 1000 and CAPTIONS == varied_captions(1000, seed=0)
    assert {"", " ", "\t"} <= set(CAPTIONS)
    assert max(len(c.split()) for c in CAPTIONS) == LONG_CAPTION_WORDS
    assert any(any(ord(ch) > 0x1F000 for ch in c) for c in CAPTIONS)          # emoji
    assert any(c.isupper() and len(c) > 10 for c in CAPTIONS)                    # ALL CAPS
    assert any(any("а" <= ch <= "я" for ch in c) for c in CAPTIONS)              # Cyrillic
    assert any(c.replace(" ", "").isdigit() for c in CAPTIONS)                   # numbers
    assert len(set(CAPTIONS)) > 900


@pytest.mark.parametrize("spec", RULE_BASED, ids=[s.name for s in RULE_BASED])
def test_runs_on_varied_captions(spec):
    results = _batch(spec)
    assert len(results) == len(CAPTIONS)
    for caption, r in zip(CAPTIONS, results):
        assert isinstance(r, TextResult) and isinstance(r.applied, bool)
        assert r.original == caption and r.perturbation == spec.name
        if not caption.strip():
            assert r == caption and not r.applied
        if not r.applied:
            assert r == caption
    assert any(r.applied for r in results), f"{spec.name} never applied on 1,000 captions"


@pytest.mark.parametrize("spec", RULE_BASED, ids=[s.name for s in RULE_BASED])
def test_batch_equals_one_by_one(spec):
    batch = apply_batch(SAMPLE, spec.name, seed=11)
    single = [apply(c, spec.name, seed=11) for c in SAMPLE]
    assert batch == single
    assert [r.applied for r in batch] == [r.applied for r in single]


@pytest.mark.parametrize("spec", RULE_BASED, ids=[s.name for s in RULE_BASED])
def test_same_seed_same_output(spec):
    again = apply_batch(CAPTIONS, spec.name, seed=0)
    assert again == _batch(spec)
    assert [r.applied for r in again] == [r.applied for r in _batch(spec)]


@pytest.mark.parametrize("spec", [s for s in RULE_BASED if s.has_severity],
                         ids=[s.name for s in RULE_BASED if s.has_severity])
def test_every_severity_runs(spec):
    for severity in sorted(spec.severities):
        results = apply_batch(SAMPLE, spec.name, seed=0, severity=severity)
        assert [r.original for r in results] == SAMPLE


@pytest.mark.parametrize("spec", MODEL_BASED, ids=[s.name for s in MODEL_BASED])
def test_model_based_need_a_model(spec, no_model_configured):
    with pytest.raises(MissingResourceError, match="model"):
        apply_batch(CAPTIONS, spec.name, seed=0)
    with pytest.raises(MissingResourceError):
        apply("a little girl does gymnastics", spec.name, seed=0)
    assert [r.applied for r in apply_batch(["", "  "], spec.name)] == [False, False]


@pytest.mark.parametrize("spec", SPECS, ids=_ids)
def test_blank_captions_are_unchanged(spec):
    for caption in ("", " ", "\n\t "):
        out = apply(caption, spec.name, seed=0)
        assert out == caption and not out.applied


def test_network_is_blocked():
    """The suite-wide guard in conftest.py: any connection outside loopback fails."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        with pytest.raises(OSError, match="network access is forbidden"):
            s.connect(("93.184.216.34", 80))
        # connect_ex is guarded as well
        with pytest.raises(OSError, match="network access is forbidden"):
            s.connect_ex(("1.1.1.1", 443))
