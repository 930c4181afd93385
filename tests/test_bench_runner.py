"""Runner: no wasted encoding, resume from the disk cache, subsets, results documents, adapters."""
from __future__ import annotations

import json

import numpy as np
import pytest

from perturb.bench.adapters.factory import load_model
from perturb.bench.adapters.protocol import wrap
from perturb.bench.adapters.toy import ToyEncoder
from perturb.bench.api import benchmark
from perturb.bench.options import BenchOptions
from perturb.bench.pipeline.data import make_data, select_subset
from bench_fixtures import tiny_data, tiny_items
from perturb.results import load_results, tidy_rows, write_csv, write_json
from perturb.bench.pipeline.encoder import Settings

QUIET = Settings(progress=False, batch_size=4)
CONTRACT = {"schema_version", "perturb_version", "model", "dataset", "metric", "ties", "bootstrap", "clean", "runs",
            "summary"}


class Counting(ToyEncoder):
    """A toy dual encoder that counts what it encodes."""

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__(16)
        self.id = "counting"
        self.videos = self.texts = self.calls = self.video_calls = 0
        self.fail_after = fail_after

    def encode_videos(self, clips):
        self.calls += 1
        self.video_calls += 1
        if self.fail_after is not None and self.video_calls > self.fail_after:
            raise KeyboardInterrupt("simulated interruption")
        self.videos += len(clips)
        return super().encode_videos(clips)

    def encode_texts(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return super().encode_texts(texts)


def _run(model, data, cache_dir=None, **kw):
    kw.setdefault("video", ["translate"])
    kw.setdefault("severities", [1, 2])
    kw.setdefault("text", ["Typos"])
    return benchmark(model, data, BenchOptions(bootstrap=50, cache_dir=cache_dir, settings=QUIET), **kw)


def test_unperturbed_modality_is_never_re_encoded():
    data = tiny_data(5)                                   # 5 videos, 10 captions
    m = Counting()
    doc = _run(m, data, pairs=[("translate", "Typos")])
    # videos: clean + 2 severities; texts: clean + Typos; the pair runs reuse both, encoding nothing
    assert m.videos == 5 * 3
    assert m.texts == 10 * 2
    assert [r["modality"] for r in doc["runs"]] == ["video", "video", "text", "both", "both"]


def test_second_run_is_free_and_interrupted_run_resumes(tmp_path):
    data = tiny_data(6)
    first = Counting()
    doc1 = _run(first, data, cache_dir=str(tmp_path))
    assert first.calls > 0
    second = Counting()
    doc2 = _run(second, data, cache_dir=str(tmp_path))
    assert second.calls == 0                               # 0 forward passes
    assert doc2["runs"] == doc1["runs"] and doc2["clean"] == doc1["clean"]

    other = tmp_path / "other"
    broken = Counting(fail_after=1)                        # texts + 1 video batch, then "killed"
    with pytest.raises(KeyboardInterrupt):
        _run(broken, data, cache_dir=str(other))
    resumed = Counting()
    doc3 = _run(resumed, data, cache_dir=str(other))
    assert resumed.videos == 6 * 3 - 4                     # the first 4-clip batch came from the cache
    assert doc3["runs"] == doc1["runs"]


def test_cache_is_keyed_by_seed_and_model(tmp_path):
    data = tiny_data(4)
    _run(Counting(), data, cache_dir=str(tmp_path))
    again = Counting()
    benchmark(again, tiny_data(4, seed=1),
              BenchOptions(bootstrap=0, cache_dir=str(tmp_path), settings=Settings(seed=1, progress=False)),
              video=["translate"], severities=[1], text=[])
    assert again.videos == 4 * 2                           # another seed is another key: clean + severity 1
    renamed = Counting()
    renamed.id = "another-model"
    _run(renamed, data, cache_dir=str(tmp_path))
    assert renamed.calls > 0


def test_subset_is_reproducible_and_order_independent():
    items = tiny_items(10, frames=2, size=16)
    a = [it.item_id for it in select_subset(items, 4, seed=7)]
    b = [it.item_id for it in select_subset(list(reversed(items)), 4, seed=7)]
    c = [it.item_id for it in select_subset(items, 4, seed=8)]
    assert a == b and len(set(a)) == 4 and a != c
    assert len(select_subset(items, None)) == 10 == len(select_subset(items, 50))
    data = make_data(items, "tiny", "memory", subset=4, seed=7)
    assert data.item_ids == a and data.subset == 4


def test_results_document_matches_contract(tmp_path):
    doc = _run(Counting(), tiny_data(5), pairs=[("translate", "Typos")])
    assert CONTRACT <= set(doc)
    assert doc["metric"] == "t2v.R@5" and doc["model"] == {"id": "counting", "kind": "dual"}
    assert doc["schema_version"] == "1.5" and doc["ties"] == "pessimistic"
    assert doc["dataset"] == {"name": "tiny", "path": "memory", "n_items": 5, "subset": None, "seed": 0}
    keys = {"R@1", "R@5", "R@10", "MdR", "MnR"}
    assert set(doc["clean"]["t2v"]) == keys == set(doc["clean"]["v2t"])
    run = doc["runs"][0]
    assert {"modality", "perturbation", "category", "severity", "t2v", "v2t", "gamma_a", "gamma_r", "ci"} <= set(run)
    assert run["category"] == "camera" and run["severity"] == 1
    text = doc["runs"][2]
    assert (text["modality"], text["perturbation"], text["category"], text["severity"]) == ("text", "Typos", "ChangeChar", None)
    both = doc["runs"][3]
    assert both["perturbation"] == "translate+Typos" and both["category"] == "camera+ChangeChar"
    assert set(doc["summary"]) == {"perturbation", "category", "modality"}
    assert set(doc["summary"]["modality"]) == {"video", "text", "both"}
    a_c, a_p = doc["clean"]["t2v"]["R@5"], run["t2v"]["R@5"]
    assert run["gamma_a"] == pytest.approx(1 - (a_c - a_p))
    path = write_json(doc, tmp_path / "results.json")
    assert load_results(path)["runs"] == json.loads(json.dumps(doc["runs"]))
    write_csv(doc, tmp_path / "results.csv")
    lines = (tmp_path / "results.csv").read_text().splitlines()
    assert lines[0] == "model,dataset,modality,perturbation,category,severity,measure,value"
    assert len(lines) - 1 == len(tidy_rows(doc)) == (1 + 5) * 10 + 5 * 2


def test_the_tie_convention_is_recorded():
    optimistic = Settings(progress=False, batch_size=4, ties="optimistic")
    doc = benchmark(Counting(), tiny_data(3), BenchOptions(bootstrap=0, settings=optimistic), video=["translate"],
                    severities=[1], text=[])
    assert doc["ties"] == "optimistic"


def test_gamma_r_is_null_when_clean_metric_is_zero(tmp_path):
    class Blind:
        id = "blind"

        def encode_videos(self, clips):
            return np.ones((len(clips), 3))

        def encode_texts(self, texts):
            return np.ones((len(texts), 3))

    doc = benchmark(Blind(), tiny_data(8), BenchOptions(bootstrap=20, settings=QUIET), video=["translate"],
                    severities=[1], text=[], metric="R@1")
    assert doc["clean"]["t2v"]["R@1"] == 0.0                # all ties -> pessimistic worst rank
    assert doc["runs"][0]["gamma_r"] is None and doc["runs"][0]["gamma_a"] == 1.0
    write_json(doc, tmp_path / "r.json")                    # no NaN reaches the JSON
    assert "NaN" not in (tmp_path / "r.json").read_text()


def test_judgements_add_positives_and_map(tmp_path):
    items = tiny_items(4, frames=2, size=16, captions=1)
    j = tmp_path / "judgements.jsonl"
    j.write_text(json.dumps({"query_id": "item00#0", "item_id": "item01"}) + "\n"
                 + json.dumps({"caption": items[2].captions[0], "video_id": "item03"}) + "\n")
    data = make_data(items, "tiny", "memory", judgements=str(j))
    assert data.extra_positives == 2 and data.relevance.sum() == 6
    doc = benchmark(Counting(), data, BenchOptions(bootstrap=0, settings=QUIET), video=[], text=[], metric="mAP")
    assert "mAP" in doc["clean"]["t2v"] and doc["metric"] == "t2v.mAP"


def test_precomputed_adapter(tmp_path):
    data = tiny_data(3)
    rng = np.random.default_rng(0)
    (tmp_path / "videos" / "translate").mkdir(parents=True)
    (tmp_path / "texts").mkdir()
    (tmp_path / "video_ids.json").write_text(json.dumps(data.item_ids))
    (tmp_path / "text_ids.json").write_text(json.dumps(data.query_ids))
    text = rng.normal(size=(6, 4)).astype(np.float32)
    np.save(tmp_path / "texts" / "clean.npy", text)
    np.save(tmp_path / "videos" / "clean.npy", text[::2])                 # video i == its 1st caption
    np.save(tmp_path / "videos" / "translate" / "1.npy", text[::2][::-1].copy())
    doc = benchmark(f"precomputed:{tmp_path}", data, BenchOptions(bootstrap=0, settings=QUIET), video=["translate"],
                    severities=[1], text=[], metric="R@1")
    assert doc["clean"]["v2t"]["R@1"] == 1.0
    with pytest.raises(FileNotFoundError, match="Typos"):
        benchmark(f"precomputed:{tmp_path}", data, BenchOptions(bootstrap=0, settings=QUIET), text=["Typos"])


def test_callable_spec_and_score_function_cross_encoder():
    m = load_model("callable:perturb.bench.adapters.toy:ToyEncoder")
    assert m.kind == "dual"
    calls = []

    def score(clips, texts):
        calls.append(len(texts))
        return np.array([float(c.mean()) / 255 + len(t) / 100 for c, t in zip(clips, texts)])

    model = wrap(score, "cross-fn")
    assert model.kind == "cross"
    doc = benchmark(model, tiny_data(3), BenchOptions(bootstrap=0, settings=QUIET), video=["translate"],
                    severities=[1], text=[])
    assert doc["model"]["kind"] == "cross" and sum(calls) == 3 * 6 * 2    # every pair, clean + perturbed
    with pytest.raises(TypeError, match="encode_videos"):
        wrap(42)
    with pytest.raises(ValueError, match="callable:MODULE:ATTR"):
        load_model("callable:nomodule")


@pytest.mark.parametrize("spec, words", [
    ("nosuch:x", "unknown model kind 'nosuch' in 'nosuch:x'; expected one of "
                 "hf:NAME_OR_PATH[@REVISION][#MODE], clip:NAME_OR_PATH, "
                 "precomputed:DIR, callable:MODULE:ATTR, http:URL, toy:DIM"),
    ("nosuch", "model 'nosuch' names no kind; expected one of hf:NAME_OR_PATH"),
    ("toy:", "model 'toy:' has no target; expected toy:DIM"),
    ("toy:abc", "toy:DIM takes a positive whole dimension; got 'toy:abc'"),
    ("callable:no_such_module_x:build", "callable:no_such_module_x:build: no module named 'no_such_module_x'"),
    ("callable:perturb.bench.adapters.toy:Nope",
     "callable:perturb.bench.adapters.toy:Nope: 'perturb.bench.adapters.toy' has no attribute 'Nope'"),
])
def test_bad_model_specs_are_model_spec_errors_listing_the_kinds(spec, words):
    from perturb.bench.adapters.protocol import ModelSpecError

    with pytest.raises(ModelSpecError) as info:
        load_model(spec)
    assert str(info.value).startswith(words)
    assert isinstance(info.value, ValueError)


def test_bad_metric_and_missing_model_perturbation_is_skipped():
    with pytest.raises(ValueError, match="MdR|R@1"):
        benchmark(Counting(), tiny_data(3), BenchOptions(settings=QUIET), metric="MdR")
    doc = benchmark(Counting(), tiny_data(3), BenchOptions(bootstrap=0, settings=QUIET), video=[], text=["BackTrans"])
    assert doc["runs"] == [] and doc["skipped"][0]["perturbation"] == "BackTrans"


def test_prefetch_keeps_order_and_runs_in_parallel():
    import threading

    from perturb.bench.pipeline.prefetch import batched, prefetch

    barrier = threading.Barrier(2, timeout=20)      # only passes if two items are in flight at once

    def work(x):
        if x < 2:
            barrier.wait()
        return x * x

    assert list(prefetch(work, range(10), workers=2, window=4)) == [x * x for x in range(10)]
    assert list(prefetch(lambda x: x + 1, [], workers=2)) == []
    assert list(batched(range(5), 2)) == [[0, 1], [2, 3], [4]]


def test_clips_are_prepared_while_the_model_encodes():
    import threading

    started = threading.Event()
    data = tiny_data(8)

    class Slow(ToyEncoder):
        id = "slow"

        def __init__(self):
            super().__init__(8)
            self.batches = 0

        def encode_videos(self, clips):
            self.batches += 1
            if self.batches == 1:                    # the next batch is being made meanwhile
                assert started.wait(20)
            return super().encode_videos(clips)

    from perturb.bench.pipeline.sources import OnTheFly

    class Watching(OnTheFly):
        def frames(self, item, clean, perturbation, severity, spec):
            if item.item_id >= "item04":
                started.set()
            return super().frames(item, clean, perturbation, severity, spec)

    options = BenchOptions(bootstrap=0, source=Watching(), settings=Settings(progress=False, batch_size=4, workers=2))
    benchmark(Slow(), data, options, video=[], text=[])
