"""The http adapter against a server on 127.0.0.1 started by the test: happy path, retries, errors."""
from __future__ import annotations

import numpy as np
import pytest

from perturb.bench.adapters.http import HttpAdapter, HttpModelError
from perturb.bench.adapters.factory import load_model
from perturb.bench.api import benchmark
from perturb.bench.adapters.model_options import ModelOptions
from perturb.bench.options import BenchOptions
from bench_fixtures import tiny_data
from perturb.bench.pipeline.encoder import Settings
from http_model import Handler, server  # noqa: F401  (server: the fixture)


def test_http_adapter_end_to_end(server):
    model = load_model(f"http:{server}", ModelOptions(frames=3))
    assert model.kind == "dual"
    doc = benchmark(model, tiny_data(3), BenchOptions(bootstrap=0, settings=Settings(progress=False)),
                    video=["translate"], severities=[1], text=["Typos"])
    assert doc["model"]["id"].startswith("http:http://127.0.0.1")
    assert {"/encode_texts", "/encode_videos"} == set(Handler.hits)
    assert load_model(server).id == model.id.replace("@3f", "@8f")      # a bare URL works too
    clip = np.zeros((5, 16, 16, 3), np.uint8)
    assert model.encode_videos([clip])[0, 0] == 3.0                 # 3 frames sampled and sent


def test_retries_after_server_errors(server):
    Handler.mode = "flaky"
    adapter = HttpAdapter(server, retries=2, backoff=0.01)
    out = adapter.encode_texts(["a b", "c"])
    assert out.tolist() == [[3.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    assert len(Handler.hits) == 2                                   # one 503, then success


def test_timeout_gives_clear_error_after_retries(server):
    Handler.mode = "slow"
    adapter = HttpAdapter(server, timeout=0.1, retries=1, backoff=0.01)
    with pytest.raises(HttpModelError, match="failed after 2 attempts"):
        adapter.encode_texts(["x"])


@pytest.mark.parametrize("mode,message", [("notjson", "did not answer JSON"), ("badshape", "expected 'embeddings' with 2 rows"),
                                          ("missing", "expected a JSON object with key 'embeddings'"),
                                          ("client_error", "HTTP 400")])
def test_bad_responses_fail_at_once(server, mode, message):
    Handler.mode = mode
    adapter = HttpAdapter(server, retries=3, backoff=0.01)
    with pytest.raises(HttpModelError, match=message):
        adapter.encode_texts(["a", "b"])
    assert len(Handler.hits) == 1                                   # not retried


def test_unreachable_server():
    adapter = HttpAdapter("http://127.0.0.1:9", timeout=0.2, retries=1, backoff=0.01)
    with pytest.raises(HttpModelError, match="127.0.0.1:9"):
        adapter.encode_texts(["x"])
    with pytest.raises(ValueError, match="http"):
        HttpAdapter("ftp://x")


@pytest.fixture()
def sleeps(monkeypatch):
    """Record the adapter's waits instead of sleeping."""
    import perturb.bench.adapters.http as http_mod
    waited: list = []
    monkeypatch.setattr(http_mod.time, "sleep", waited.append)
    return waited


@pytest.mark.parametrize("mode", ["busy", "unavailable"])          # 429, 503
def test_429_and_503_with_retry_after_are_honoured(server, sleeps, mode):
    Handler.mode = mode
    adapter = HttpAdapter(server, retries=2, backoff=0.01)
    assert adapter.encode_texts(["a b"]).tolist() == [[3.0, 1.0, 1.0]]
    assert len(Handler.hits) == 2 and sleeps == [1.0]              # waited as asked, then 200
    Handler.hits = []
    capped = HttpAdapter(server, retries=1, backoff=0.01, max_retry_after=0.25)
    capped.encode_texts(["x"])
    assert sleeps[-1] == 0.25                                        # bounded


def test_truncated_reply_is_retried_like_a_connection_error(server, sleeps):
    Handler.mode = "cut"
    adapter = HttpAdapter(server, retries=2, backoff=0.01)
    assert adapter.encode_texts(["a b", "c"]).tolist() == [[3.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    assert len(Handler.hits) == 2
    Handler.hits = []
    with pytest.raises(HttpModelError, match=rf"{server}/encode_texts failed after 1 attempts.*cut short"):
        HttpAdapter(server, retries=0).encode_texts(["x"])


@pytest.mark.parametrize("mode", ["trickle", "slowheaders"])
def test_timeout_is_a_deadline_for_the_whole_request(server, mode):
    Handler.mode = mode                                             # a body byte / header line every 50 ms
    adapter = HttpAdapter(server, timeout=0.5, retries=0)
    with pytest.raises(HttpModelError, match=rf"{server}/encode_texts .*timeout 0.5s.*within 0.5s"):
        adapter.encode_texts(["x"])
    assert Handler.trickled < 60                                    # cut off, not read to the end


def test_info_version_keys_the_cache(server, tmp_path, capsys):
    data = tiny_data(3)

    def run():
        Handler.items = []
        return benchmark(load_model(f"http:{server}", ModelOptions(frames=2)), data,
                         BenchOptions(bootstrap=0, cache_dir=str(tmp_path), settings=Settings(progress=False)),
                         video=[], text=[])
    run()
    assert "keyed by its name only" in capsys.readouterr().err     # no GET /info: a notice
    Handler.version = "a"
    run()
    assert Handler.items                                            # a version: a new key
    run()
    assert Handler.items == []
    Handler.version = "b"                                           # another model, same URL
    run()
    assert sum(n for _, n in Handler.items) == 3 + 6                # everything re-encoded
    assert "keyed by its name only" not in capsys.readouterr().err


def test_server_that_stays_down_leaves_finished_batches_cached(server, tmp_path, capsys, sleeps):
    from bench_fixtures import write_tiny_dataset
    from perturb.cli import main

    captions = write_tiny_dataset(tmp_path / "ds", n=5)
    argv = ["bench", "--model", f"http:{server}", "--dataset", str(captions), "--out",
            str(tmp_path / "out"), "--video-perturbations", "none", "--text-perturbations", "none",
            "--bootstrap", "0", "--no-progress", "--batch-size", "2", "--frames", "2"]
    Handler.mode, Handler.videos_before_down, Handler.version = "down", 1, "v1"
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"perturb bench: error: {server}/encode_videos failed after 4 attempts")
    assert "12 rows newly cached" in err[0] and "re-run the same command to resume" in err[0]  # 10 texts, 2 videos
    assert Handler.items == [("/encode_texts", 2)] * 5 + [("/encode_videos", 2)]
    Handler.mode, Handler.items = "ok", []                          # the server recovers
    assert main(argv) == 0
    assert Handler.items == [("/encode_videos", 2), ("/encode_videos", 1)]   # only what was missing
