"""The model protocol the runner talks to, and the error of a bad model spec or option.

It imports no adapter family: :mod:`perturb.bench.adapters.factory` checks ``kind:target``
strings and picks and loads one.

A model is a *dual encoder* (``encode_videos(clips) -> (N, D)``, ``encode_texts(texts)
-> (N, D)``), a *cross-encoder* (``score(clips, texts) -> (N,)`` for N aligned pairs) or a
*classifier* (``labels``, ``classify(clips) -> (N, len(labels))`` logits). Clips are uint8
(T, H, W, 3) RGB arrays; an image is a clip with T = 1. :class:`Model` wraps each kind, checks every
output and counts forward calls; a classifier's logits are its video rows (cached, sharded and
resumed as a dual encoder's embeddings are).
"""
from __future__ import annotations

import inspect
from collections import Counter
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from ...errors import PerturbError

class ModelSpecError(ValueError):
    """A model spec (``--model KIND:TARGET``) of an unknown kind or with a malformed target, or a
    model option its adapter cannot take."""


@runtime_checkable
class DualEncoder(Protocol):
    """Embeds videos and texts separately into one space."""

    def encode_videos(self, clips: Sequence[np.ndarray]) -> Any: ...

    def encode_texts(self, texts: Sequence[str]) -> Any: ...


@runtime_checkable
class CrossEncoder(Protocol):
    """Scores aligned (video, text) pairs jointly."""

    def score(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> Any: ...


@runtime_checkable
class Classifier(Protocol):
    """Scores clips against a fixed set of classes; ``labels`` are the class names in logit order."""

    labels: Sequence[str]

    def classify(self, clips: Sequence[np.ndarray]) -> Any: ...


class BadEmbeddingsError(PerturbError, ValueError):
    """A model returned rows that must not be used or cached (non-finite, empty or of the wrong width)."""


def check_width(rows: np.ndarray, width: int | None, what: str) -> np.ndarray:
    """``rows`` when their width is ``width`` (None: any); else BadEmbeddingsError."""
    if width is not None and rows.shape[1] != width:
        raise BadEmbeddingsError(f"{what}: returned width {rows.shape[1]}, but this run's other rows "
                                 f"have width {width}")
    return rows


def check_rows(rows: object, n: int, width: int | None, what: str) -> np.ndarray:
    """``rows`` as float32 (n, D) with D > 0, all finite, D == ``width`` when given; else BadEmbeddingsError."""
    arr = np.asarray(rows, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise BadEmbeddingsError(f"{what}: expected {n} rows (2-D); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise BadEmbeddingsError(f"{what}: returned embeddings of width 0")
    check_width(arr, width, what)
    if not np.isfinite(arr).all():
        raise BadEmbeddingsError(f"{what}: returned NaN or inf values")
    return arr


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (cosine similarity as a dot product); a zero row stays zero."""
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _as_array(out: Any, n: int, what: str, ndim: int) -> np.ndarray:
    """A model's output where it enters: float32 on the host, checked once (embeddings by
    :func:`check_rows`; scores one finite number per pair)."""
    if hasattr(out, "detach"):
        out = out.detach().float().cpu().numpy()
    if ndim == 2:
        return check_rows(out, n, None, what)
    arr = np.asarray(out, dtype=np.float32)
    if arr.shape != (n,):
        raise BadEmbeddingsError(f"{what}: expected {n} scores (1-D); got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise BadEmbeddingsError(f"{what}: returned NaN or inf values")
    return arr


class Model:
    """A dual or cross-encoder with checked outputs and forward-pass counters."""

    def __init__(self, impl: Any, model_id: str) -> None:
        if isinstance(impl, Classifier):
            self.kind = "classifier"
        elif isinstance(impl, DualEncoder):
            self.kind = "dual"
        elif isinstance(impl, CrossEncoder):
            self.kind = "cross"
        else:
            raise TypeError(f"{model_id}: expected a dual encoder (encode_videos, encode_texts), a "
                            f"cross-encoder (score) or a classifier (labels, classify); got {type(impl).__name__}")
        if self.kind == "classifier" and not list(impl.labels):
            raise TypeError(f"{model_id}: a classifier needs at least one label; got none")
        self.impl = impl
        self.id = model_id
        self.calls = {"videos": 0, "texts": 0, "pairs": 0}
        self.items = {"videos": 0, "texts": 0, "pairs": 0}
        self.cache_key: str | None = None       # --cache-key: pins the version by hand

    @property
    def cache_version(self) -> str | None:
        """What the cache keys this model's numbers by besides its id (None: by name only).

        ``--cache-key`` when given, else the implementation's ``cache_version`` attribute (a
        checkpoint fingerprint, hub revision, a user's string, an http server's ``GET /info``).
        """
        if self.cache_key is not None:
            return f"key:{self.cache_key}"
        version = getattr(self.impl, "cache_version", None)
        return None if version is None or version == "" else str(version)

    @property
    def declared_width(self) -> int | None:
        """The embedding width the implementation declares (its ``embedding_width``, e.g. an http
        server's ``GET /info``): every row is checked against it before it is cached. None: any."""
        if self.kind == "classifier":
            return len(self.labels)
        width = getattr(self.impl, "embedding_width", None)
        return width if isinstance(width, int) and not isinstance(width, bool) and width > 0 else None

    @property
    def needs_media(self) -> bool:
        """False when embeddings come from files (the runner then skips decoding)."""
        return not hasattr(self.impl, "load_embeddings")

    def _count(self, what: str, n: int) -> None:
        self.calls[what] += 1
        self.items[what] += n

    @property
    def labels(self) -> list[str]:
        """A classifier's class names in logit order (empty for other kinds)."""
        return [str(x) for x in self.impl.labels] if self.kind == "classifier" else []

    def encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        """A dual encoder's (N, D) embeddings, or a classifier's (N, classes) logits: its video rows."""
        if self.kind == "classifier":
            return self.classify(clips)
        self._count("videos", len(clips))
        return _as_array(self.impl.encode_videos(list(clips)), len(clips), f"{self.id} encode_videos", 2)

    def classify(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        """A classifier's (N, classes) logits, checked finite and one column per label."""
        self._count("videos", len(clips))
        rows = _as_array(self.impl.classify(list(clips)), len(clips), f"{self.id} classify", 2)
        return check_width(rows, len(self.labels), f"{self.id} classify (one logit per label)")

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        self._count("texts", len(texts))
        return _as_array(self.impl.encode_texts(list(texts)), len(texts), f"{self.id} encode_texts", 2)

    def score(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
        if len(clips) != len(texts):
            raise ValueError(f"score needs aligned pairs; got {len(clips)} clips and {len(texts)} texts")
        self._count("pairs", len(texts))
        return _as_array(self.impl.score(list(clips), list(texts)), len(texts), f"{self.id} score", 1)

    def forward_passes(self) -> int:
        """Total number of encode/score calls so far."""
        return sum(self.calls.values())

    def retries(self) -> Counter[str]:
        """The retries the implementation made so far, by cause (its ``retried``; an http model's)."""
        return Counter(getattr(self.impl, "retried", None) or {})


class _LogitFunction:
    """A bare function ``f(clips) -> logits`` seen as a classifier over ``labels`` (its logit order)."""

    def __init__(self, fn: Any, labels: Sequence[str]) -> None:
        self.fn, self.labels = fn, list(labels)

    def classify(self, clips: Sequence[np.ndarray]) -> Any:
        return self.fn(clips)


class _ScoreFunction:
    """A bare function ``f(clips, texts) -> scores`` seen as a cross-encoder."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def score(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> Any:
        return self.fn(clips, texts)


def required_params(fn: Any) -> int:
    """How many positional arguments ``fn`` needs (0 where its signature cannot be read)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 0
    return sum(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in params)


def wrappable(obj: Any) -> bool:
    """Whether :func:`wrap` can take ``obj`` without calling it: a model, encoder or classifier
    object, a class, a zero-argument factory, a one-argument logit function or a two-argument score
    function."""
    if isinstance(obj, (Model, DualEncoder, CrossEncoder, Classifier)) or inspect.isclass(obj):
        return True
    return callable(obj) and required_params(obj) in (0, 1, 2)


def wrap(obj: Any, model_id: str = "callable", labels: Sequence[str] | None = None) -> Model:
    """A :class:`Model` from an encoder or classifier object, a zero-argument factory, a score
    function ``(clips, texts) -> scores`` or a logit function ``(clips) -> logits`` over ``labels``
    (the ``--classes`` file, in logit order)."""
    if isinstance(obj, Model):
        return obj
    if inspect.isclass(obj):                          # a class is a factory
        return wrap(obj(), model_id, labels)
    if isinstance(obj, (Classifier, DualEncoder, CrossEncoder)):
        return Model(obj, model_id)
    if callable(obj):
        if required_params(obj) == 0:
            return wrap(obj(), model_id, labels)
        if required_params(obj) == 2:
            return Model(_ScoreFunction(obj), model_id)
        if required_params(obj) == 1:
            if not labels:
                raise ModelSpecError(f"{model_id}: a function (clips) -> logits needs its class names in "
                                     f"logit order: pass --classes FILE (one class a line)")
            return Model(_LogitFunction(obj, labels), model_id)
    raise TypeError(f"{model_id}: expected an object with encode_videos/encode_texts, score or "
                    f"labels/classify, a factory returning one, or a function (clips, texts) -> scores "
                    f"or (clips) -> logits; got {obj!r}")
