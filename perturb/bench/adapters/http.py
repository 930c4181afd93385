"""A model served over HTTP (e.g. on a GPU box): JSON POSTs of frames or texts, embeddings back.

Endpoints under the base URL (see docs/benchmark.md):
``POST /encode_texts``  ``{"texts": [...]}`` → ``{"embeddings": [[...], ...]}``;
``POST /encode_videos`` ``{"format": "jpeg"|"npy", "videos": [[b64 frame, ...], ...]}`` →
``{"embeddings": ...}``; with a ``#cross`` URL suffix, ``POST /score`` ``{"videos", "texts"}`` →
``{"scores": [...]}``. Timeouts and 5xx/connection errors are retried with backoff; 4xx and
malformed replies fail at once with :class:`HttpModelError`.
"""
from __future__ import annotations

import base64
import io
import json
import time
import urllib.error
import urllib.request
from typing import Any, Sequence

import numpy as np

from ...errors import PerturbError
from .frames import frame_indices


class HttpModelError(PerturbError, RuntimeError):
    """The model server could not be reached or answered something unexpected."""


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
                 frames: int = 8, frame_format: str = "jpeg") -> None:
        base, _, kind = url.partition("#")
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"http model: expected http:http://HOST:PORT[/PATH][#cross]; got {url!r}")
        self.url = base.rstrip("/")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.frames, self.frame_format = frames, frame_format
        if kind == "cross":
            self.score = self._score          # becomes a cross-encoder
        else:
            self.encode_videos = self._encode_videos
            self.encode_texts = self._encode_texts

    def _post(self, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.url}/{endpoint}"
        body = json.dumps(payload).encode("utf-8")
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as e:
                if e.code < 500:
                    raise HttpModelError(f"{url} answered HTTP {e.code}: {e.read()[:200]!r}") from e
                last = e
                continue
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as e:
                last = e
                continue
            try:
                return json.loads(raw)
            except ValueError as e:
                raise HttpModelError(f"{url} did not answer JSON (got {raw[:80]!r}); expected an "
                                     f"object like {{\"embeddings\": [[...], ...]}}") from e
        raise HttpModelError(f"{url} failed after {self.retries + 1} attempts "
                             f"(timeout {self.timeout}s): {last}")

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
