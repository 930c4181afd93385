"""Parse-dependent text perturbations share one spaCy parse per caption and pipeline."""
from __future__ import annotations

import pytest

import perturb.text.api as text_api
from perturb.bench.pipeline.sources import OnTheFly
from perturb.errors import MissingResourceError
from perturb.registry import REGISTRY
from perturb.text.api import apply_batch, parse_batch, pipeline_key

CAPTIONS = ["a man is slicing a red tomato in the kitchen", "", "two dogs run quickly across a green park",
            "she does not like the loud music at the party"]


def _parse_specs():
    return [s for s in REGISTRY.resolve("all", "text") if s.needs_parse]


def test_shared_docs_give_the_same_captions_for_every_parse_dependent_perturbation():
    specs = _parse_specs()
    assert len(specs) >= 10
    shared = {key: parse_batch(CAPTIONS, key) for key in {pipeline_key(s) for s in specs}}
    compared = 0
    for spec in specs:                          # one after another on the same Docs: none may change them
        try:
            alone = apply_batch(CAPTIONS, spec.name, seed=3)
        except MissingResourceError:
            continue
        reused = apply_batch(CAPTIONS, spec.name, seed=3, docs=shared[pipeline_key(spec)])
        assert [str(t) for t in reused] == [str(t) for t in alone], spec.name
        compared += 1
    assert compared >= 10
    with pytest.raises(ValueError, match="one spaCy Doc per text"):
        apply_batch(CAPTIONS, specs[0].name, seed=3, docs=[None])
    with pytest.raises(ValueError, match="pipeline"):
        parse_batch(CAPTIONS, "everything")


def test_the_runner_source_parses_each_caption_once_per_pipeline(monkeypatch):
    calls: list[str] = []
    real = text_api.parse_batch

    def counting(texts, pipeline="tagger", batch_size=256):
        calls.append(pipeline)
        return real(texts, pipeline, batch_size)

    monkeypatch.setattr(text_api, "parse_batch", counting)
    source = OnTheFly(seed=0)
    ids = [f"q{i}" for i in range(len(CAPTIONS))]
    specs = _parse_specs()
    for spec in specs:
        try:
            source.captions(ids, CAPTIONS, spec.name)
        except MissingResourceError:
            continue
    assert sorted(calls) == sorted({pipeline_key(s) for s in specs}) and len(specs) > len(calls)
