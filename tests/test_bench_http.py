"""The http adapter against a server on 127.0.0.1 started by the test: happy path, retries, errors."""
from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from perturb.bench.adapters.http import HttpAdapter, HttpModelError
from perturb.bench.adapters.protocol import load_model
from perturb.bench.api import benchmark
from perturb.bench.fixtures import tiny_data
from perturb.bench.runner import Settings


class Handler(BaseHTTPRequestHandler):
    mode = "ok"            # ok | flaky | slow | notjson | badshape | missing | client_error
    hits: list = []

    def log_message(self, *args):       # keep test output clean
        pass

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.hits.append(self.path)
        mode = Handler.mode
        if mode == "flaky" and len(Handler.hits) % 2 == 1:
            return self._send(503, b'{"error": "warming up"}')
        if mode == "slow":
            time.sleep(0.5)
        if mode == "client_error":
            return self._send(400, b'{"error": "bad request"}')
        if mode == "notjson":
            return self._send(200, b"<html>oops</html>")
        if self.path.endswith("encode_texts"):
            emb = [[len(t), t.count(" "), 1.0] for t in payload["texts"]]
        else:
            assert payload["format"] == "jpeg"
            emb = []
            for frames in payload["videos"]:
                raw = base64.b64decode(frames[0])
                assert raw[:2] == b"\xff\xd8"                    # a JPEG
                emb.append([len(frames), len(raw) % 7, 1.0])
        if mode == "badshape":
            emb = emb[:-1]
        if mode == "missing":
            return self._send(200, json.dumps({"vectors": emb}).encode())
        return self._send(200, json.dumps({"embeddings": emb}).encode())


@pytest.fixture()
def server():
    Handler.mode, Handler.hits = "ok", []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_http_adapter_end_to_end(server):
    model = load_model(f"http:{server}", frames=3)
    assert model.kind == "dual"
    doc = benchmark(model, tiny_data(3), video=["translate"], severities=[1], text=["Typos"], bootstrap=0,
                    settings=Settings(progress=False))
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
