"""A model served over HTTP (e.g. on a GPU box): JSON POSTs of frames or texts, embeddings back.

Endpoints under the base URL (see docs/benchmark.md):
``POST /encode_texts``  ``{"texts": [...]}`` → ``{"embeddings": [[...], ...]}``;
``POST /encode_videos`` ``{"format": "jpeg"|"npy", "videos": [[b64 frame, ...], ...]}`` →
``{"embeddings": ...}``; with a ``#cross`` URL suffix, ``POST /score`` ``{"videos", "texts"}`` →
``{"scores": [...]}``; ``GET /info`` may answer ``{"version": ..., "width": ...}`` (the version is
part of the cache key; every row is checked against the width before it is cached).
Timeouts (a whole-request deadline), 5xx, 429, connection errors and truncated replies are
retried with backoff (``Retry-After`` honoured, capped), ``GET /info`` included; other 4xx and
malformed replies fail at once. Every :class:`HttpModelError` names the URL; the retries made
are counted by cause (:attr:`HttpAdapter.retried`, :func:`retries_note`).
"""
from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time
import http.client
import urllib.parse
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from ...errors import PerturbError
from .frames import frame_indices


class HttpModelError(PerturbError, RuntimeError):
    """The model server could not be reached or answered something unexpected."""


NO_INFO = (404, 405, 501)        # GET /info answered this way: the server has none (no version, no width)
INFO_FORM = '{"version": "...", "width": 512}'


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _describe(e: BaseException) -> str:
    if isinstance(e, http.client.IncompleteRead):
        return f"reply cut short ({len(e.partial)} bytes read, {e.expected} more expected)"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _cause(e: BaseException) -> str:
    """What a retried failure was, as a retry count names it."""
    if isinstance(e, http.client.IncompleteRead):
        return "cut body"
    if isinstance(e, TimeoutError):
        return "timeout"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    if isinstance(e, ConnectionResetError):
        return "connection reset"
    return type(e).__name__


def retries_note(counts: Mapping[str, int]) -> str | None:
    """One line for the retries an http model made, by cause, most frequent first; None for none."""
    total = sum(counts.values())
    if not total:
        return None
    causes = ", ".join(f"{n}× {cause}" for cause, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n)
    return f"http model: {total} {'retry' if total == 1 else 'retries'} ({causes})"


def _retry_after(value: str | None, limit: float) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta-seconds or HTTP date), capped at ``limit``."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), limit)


def encode_frame(frame: np.ndarray, fmt: str) -> str:
    """One RGB frame as base64 JPEG (quality 95) or base64 ``.npy``."""
    if fmt == "jpeg":
        import cv2
        ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(frame[..., ::-1]), [cv2.IMWRITE_JPEG_QUALITY, 95])
        if not ok:
            raise ValueError("could not JPEG-encode a frame")
        data = buf.tobytes()
    elif fmt == "npy":
        out = io.BytesIO()
        np.save(out, np.ascontiguousarray(frame), allow_pickle=False)
        data = out.getvalue()
    else:
        raise ValueError(f"frame format must be jpeg or npy; got {fmt!r}")
    return base64.b64encode(data).decode("ascii")


class HttpAdapter:
    """A dual encoder (or, with ``#cross``, a cross-encoder) behind an HTTP endpoint."""

    def __init__(self, url: str, timeout: float = 60.0, retries: int = 3, backoff: float = 0.5,
                 frames: int = 8, frame_format: str = "jpeg", max_retry_after: float = 30.0) -> None:
        base, _, kind = url.partition("#")
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"http model: expected http:http://HOST:PORT[/PATH][#cross]; got {url!r}")
        self.url = base.rstrip("/")
        if not timeout > 0:
            raise ValueError(f"http model: timeout must be > 0 seconds; got {timeout!r}")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.max_retry_after = max_retry_after
        self.frames, self.frame_format = frames, frame_format
        self.retried: Counter[str] = Counter()     # retries made, by cause ("HTTP 503", "timeout"...)
        if kind == "cross":
            self.score = self._score          # becomes a cross-encoder
        else:
            self.encode_videos = self._encode_videos
            self.encode_texts = self._encode_texts

    def _request(self, method: str, url: str, body: bytes | None, deadline: float) -> tuple[int, dict[str, str], bytes]:
        """One request whose connect, headers and body all finish by ``deadline`` (monotonic)."""
        parts = urllib.parse.urlsplit(url)
        conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection

        def remaining() -> float:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no complete reply within {self.timeout}s")
            return left

        conn = conn_type(parts.hostname, parts.port, timeout=remaining())
        watchdog = None
        try:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            conn.connect()
            sock = conn.sock
            # whatever blocks (slow headers included) is woken at the deadline by shutting the socket
            watchdog = threading.Timer(remaining(), _shut, (sock,))
            watchdog.daemon = True
            watchdog.start()
            conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
            sock.settimeout(remaining())
            resp = conn.getresponse()
            chunks = []
            while True:                               # read in pieces so a trickle cannot pass the deadline
                sock.settimeout(remaining())
                chunk = resp.read1(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            remaining()                               # woken by the watchdog: a timeout, not a short reply
            raw = b"".join(chunks)
            length = resp.getheader("Content-Length")
            if length is not None and length.isdigit() and len(raw) < int(length):
                raise http.client.IncompleteRead(raw, int(length) - len(raw))
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, raw
        except (OSError, http.client.HTTPException):
            remaining()                               # past the deadline: say so
            raise
        finally:
            if watchdog is not None:
                watchdog.cancel()
            conn.close()

    def _call(self, method: str, endpoint: str, payload: dict[str, Any] | None = None,
              expected: str = '{"embeddings": [[...], ...]}', absent: tuple[int, ...] = ()) -> Any:
        """The JSON reply of one call, retried on timeouts, connection errors, cut replies, 5xx
        (except a status in ``absent``) and 429; None for a status in ``absent``; else HttpModelError."""
        url = f"{self.url}/{endpoint}"
        body = None if payload is None else json.dumps(payload).encode("utf-8")
        last, cause, retry_after = "", "", None
        for attempt in range(self.retries + 1):
            if attempt:
                self.retried[cause] += 1
                time.sleep(max(self.backoff * 2 ** (attempt - 1), retry_after or 0.0))
            retry_after = None
            try:
                status, headers, raw = self._request(method, url, body, time.monotonic() + self.timeout)
            except (TimeoutError, ConnectionError, OSError, http.client.HTTPException) as e:
                last, cause = _describe(e), _cause(e)     # truncated replies included: retried
                continue
            if status in absent:
                return None
            if status == 429 or status >= 500:
                last, cause = f"HTTP {status}: {raw[:200]!r}", f"HTTP {status}"
                retry_after = _retry_after(headers.get("retry-after"), self.max_retry_after)
                continue
            if status >= 400:
                raise HttpModelError(f"{url} answered HTTP {status}: {raw[:200]!r}")
            try:
                return json.loads(raw)
            except ValueError as e:
                raise HttpModelError(f"{url} did not answer JSON (got {raw[:80]!r}); expected an "
                                     f"object like {expected}") from e
        raise HttpModelError(f"{url} failed after {self.retries + 1} attempts "
                             f"(timeout {self.timeout}s per request): {last}")

    def _post(self, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", endpoint, payload)

    def info(self) -> dict[str, Any]:
        """``GET /info``, asked once and retried like every request: {} when the server has no
        such endpoint (HTTP 404, 405 or 501); HttpModelError when it cannot be had."""
        if not hasattr(self, "_info"):
            reply = self._call("GET", "info", expected=INFO_FORM, absent=NO_INFO)
            if reply is not None and not isinstance(reply, dict):
                raise HttpModelError(f"{self.url}/info: expected a JSON object like {INFO_FORM}; "
                                     f"got {type(reply).__name__}")
            self._info = reply or {}
        return self._info

    @property
    def cache_version(self) -> str | None:
        """The server's model version from ``GET /info``; None when it answers without one."""
        version = self.info().get("version")
        return None if version in (None, "") else f"info:{version}"

    @property
    def embedding_width(self) -> int | None:
        """The embedding width ``GET /info`` declares; None when it declares none."""
        width = self.info().get("width")
        if width is not None and (isinstance(width, bool) or not isinstance(width, int) or width < 1):
            raise HttpModelError(f"{self.url}/info: 'width' must be a positive integer (the embedding "
                                 f"width); got {width!r}")
        return width

    def _field(self, reply: Any, key: str, n: int, ndim: int) -> np.ndarray:
        if not isinstance(reply, dict) or key not in reply:
            got = sorted(reply) if isinstance(reply, dict) else type(reply).__name__
            raise HttpModelError(f"{self.url}: expected a JSON object with key {key!r}; got {got}")
        try:
            arr = np.asarray(reply[key], dtype=np.float32)
        except (TypeError, ValueError) as e:
            raise HttpModelError(f"{self.url}: {key!r} is not a numeric array") from e
        if arr.ndim != ndim or len(arr) != n:
            raise HttpModelError(f"{self.url}: expected {key!r} with {n} rows ({ndim}-D); got shape {arr.shape}")
        return arr

    def _videos(self, clips: Sequence[np.ndarray]) -> list[list[str]]:
        return [[encode_frame(f, self.frame_format) for f in np.asarray(c)[frame_indices(len(c), self.frames)]]
                for c in clips]

    def _encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        reply = self._post("encode_videos", {"format": self.frame_format, "videos": self._videos(clips)})
        return self._field(reply, "embeddings", len(clips), 2)

    def _encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self._field(self._post("encode_texts", {"texts": list(texts)}), "embeddings", len(texts), 2)

    def _score(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
        reply = self._post("score", {"format": self.frame_format, "videos": self._videos(clips),
                                     "texts": list(texts)})
        return self._field(reply, "scores", len(texts), 1)
