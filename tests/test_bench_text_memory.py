"""Memory through a benchmark's text phase stays bounded: caption sets are released after their
last job, one spaCy model serves every pipeline, and the MiniLM table is held once."""
from __future__ import annotations

import tracemalloc

import pytest

from bench_fixtures import tiny_data
from perturb.bench.adapters.protocol import wrap
from perturb.bench.adapters.toy import ToyEncoder
from perturb.bench.adapters.cache import EmbeddingCache
from perturb.bench.pipeline.encoder import Encoder, Settings
from perturb.bench.pipeline.jobs import jobs_of
from perturb.bench.distributed.shards import run_jobs
from perturb.bench.pipeline.sources import OnTheFly
from perturb.errors import MissingResourceError
from perturb.text import resources

CAPTIONS = ["a man is slicing a red tomato in the kitchen", "two dogs run quickly across a green park. They rest.",
            "she does not like the loud music at the party", "John Smith talks to Mary in New York"]


def test_caption_sets_are_released_after_their_last_job():
    model = wrap(ToyEncoder(8), "toy")
    encoder = Encoder(model, tiny_data(3), OnTheFly(seed=0), EmbeddingCache(None), Settings(progress=False))
    jobs = jobs_of(video=["translate"], text=["Typos", "Punctuation"], severities=[1], pairs=[("translate", "Typos")])
    clean, runs, skipped = run_jobs(encoder, jobs)
    assert len(runs) == 4 and not skipped
    assert model.items["texts"] == 3 * 2 * 3                  # clean, Typos, Punctuation: each embedded once
    assert sorted(k for k in [*encoder.memo, *encoder.units] if k[0] == "text") == [("text", "clean", None)] * 2


def _signature(doc):
    return ([(t.text, t.tag_, t.lemma_, t.dep_, t.head.i, t.ent_type_, t.is_sent_start) for t in doc],
            doc.has_annotation("DEP"))


def test_one_spacy_model_serves_every_pipeline(monkeypatch):
    from perturb.text.api import PIPELINES, parse_batch
    try:
        import spacy
        resources.nlp(())
    except (ImportError, MissingResourceError):
        pytest.skip("spaCy's English pipeline is not installed")

    def separately(off):
        for package in resources.SPACY_MODELS:
            try:
                return spacy.load(package, disable=list(off))
            except (OSError, ImportError):
                continue

    alone = {key: [_signature(d) for d in separately(off).pipe(CAPTIONS)] for key, off in PIPELINES.items()}
    loads: list = []
    real = spacy.load

    def counted(*args, **kwargs):
        model = real(*args, **kwargs)
        loads.append(args)                                    # models loaded, not names tried
        return model
    monkeypatch.setattr(spacy, "load", counted)
    resources.nlp.cache_clear()
    getattr(resources, "_english", resources.nlp).cache_clear()
    shared = {key: [_signature(d) for d in parse_batch(CAPTIONS, key)] for key in PIPELINES}
    assert len(loads) == 1                                    # not one model per set of components
    assert shared == alone                                    # the same parses as separate loads
    assert [_signature(resources.nlp(PIPELINES["tagger"])(c)) for c in CAPTIONS] == alone["tagger"]


def test_the_minilm_table_is_held_once():
    from perturb.text import swaptext
    try:
        ref = str(resources.minilm_path())
    except MissingResourceError:
        pytest.skip("the bundled MiniLM is not installed")
    table = resources.token_embeddings(ref)
    swaptext._embedding_space.cache_clear()
    getattr(resources.token_embeddings, "cache_clear", lambda: None)()
    tracemalloc.start()
    try:
        swaptext._embedding_space(ref)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        swaptext._embedding_space.cache_clear()
    assert held < 1.25 * table.nbytes                         # the normalised table, not also the raw one
