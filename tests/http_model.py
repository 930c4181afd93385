"""A model server on 127.0.0.1 that speaks the http: protocol (docs/benchmark.md), for the tests.

:class:`Handler`'s class attributes set how it behaves (faults, widths, what ``GET /info``
answers) and record what it was asked; the ``server`` fixture starts it on a free port, resets
it, and stops it after the test.
"""
from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

_sleep = time.sleep        # the server's own waits, untouched when a test stubs out the client's


class Handler(BaseHTTPRequestHandler):
    mode = "ok"            # ok | flaky | slow | notjson | badshape | missing | client_error | busy | cut | trickle | down
    hits: list = []
    items: list = []       # (endpoint, number of items) of every request answered 200
    version = None         # what GET /info answers (None: 404)
    info_width = None      # the width GET /info declares (None: not declared)
    info_failures = 0      # GET /info answers HTTP 500 this many times first
    info_hits = 0
    width = 3              # embedding width (rows are zero-padded past the first three values)
    video_width = None     # /encode_videos rows of another width (None: ``width``)
    first_width = None     # the first /encode_texts batch's width (None: ``width``)
    faults: list = []      # one per POST, in order: "503", "429", "cut", "slow" (0.5 s) or "ok"
    videos_before_down = 1
    trickled = 0
    url = ""               # the running server's base URL

    @classmethod
    def reset(cls) -> None:
        cls.mode, cls.hits, cls.items, cls.version, cls.trickled = "ok", [], [], None, 0
        cls.info_width, cls.info_failures, cls.info_hits = None, 0, 0
        cls.width, cls.video_width, cls.first_width, cls.faults = 3, None, None, []

    def do_GET(self):
        if self.path == "/info":
            Handler.info_hits += 1
            if Handler.info_hits <= Handler.info_failures:
                return self._send(500, b'{"error": "not ready"}')
            info = {k: v for k, v in (("version", Handler.version), ("width", Handler.info_width))
                    if v is not None}
            if info:
                return self._send(200, json.dumps(info).encode())
        return self._send(404, b'{"error": "no such endpoint"}')

    def log_message(self, *args):       # keep test output clean
        pass

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _width(self) -> int:
        if self.path.endswith("encode_videos"):
            return Handler.video_width or Handler.width
        first = not any(e == "/encode_texts" for e, _ in Handler.items)
        return Handler.first_width if first and Handler.first_width else Handler.width

    def do_POST(self):
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.hits.append(self.path)
        mode = Handler.mode
        fault = Handler.faults.pop(0) if Handler.faults else "ok"
        if fault in ("503", "429"):
            return self._send(int(fault), b'{"error": "try again"}')
        if fault == "cut":
            mode = "cut"
        if fault == "slow":
            _sleep(0.5)
        if mode == "flaky" and len(Handler.hits) % 2 == 1:
            return self._send(503, b'{"error": "warming up"}')
        if mode in ("busy", "unavailable") and len(Handler.hits) == 1:
            self.send_response(429 if mode == "busy" else 503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "2")
            self.end_headers()
            return self.wfile.write(b"{}")
        if mode == "cut" and (fault == "cut" or len(Handler.hits) == 1):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"embeddings": [[1.0, ')
            self.wfile.flush()
            self.close_connection = True
            return None
        if mode in ("trickle", "slowheaders"):
            try:
                if mode == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                else:
                    self.wfile.write(b"HTTP/1.0 200 OK\r\n")
                for _ in range(100):
                    self.wfile.write(b" " if mode == "trickle" else b"X-Slow: 1\r\n")
                    self.wfile.flush()
                    Handler.trickled += 1
                    _sleep(0.05)
            except OSError:
                pass                                  # the client gave up: the point of the test
            return None
        if mode == "down" and self.path.endswith("encode_videos"):
            if sum(e == "/encode_videos" for e, _ in Handler.items) >= Handler.videos_before_down:
                return self._send(503, b'{"error": "down"}')
        if mode == "slow":
            _sleep(0.5)
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
        width = self._width()
        emb = [(row + [0.0] * width)[:width] for row in emb]
        if mode == "badshape":
            emb = emb[:-1]
        if mode == "missing":
            return self._send(200, json.dumps({"vectors": emb}).encode())
        if Handler.version == "b":
            emb = [[-x for x in row] for row in emb]         # "another model" behind the same URL
        Handler.items.append((self.path, len(emb)))
        try:
            return self._send(200, json.dumps({"embeddings": emb}).encode())
        except OSError:
            return None                               # the client gave up (a timeout under test)


@pytest.fixture()
def server():
    """The base URL of a fresh :class:`Handler` server on 127.0.0.1 (stopped after the test)."""
    Handler.reset()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Handler.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield Handler.url
    httpd.shutdown()
    httpd.server_close()
