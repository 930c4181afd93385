"""Two-stage retrieval (BLIP's protocol): a dual encoder ranks, a cross-encoder re-scores each query's top K.

Only text-to-video queries are re-ranked: for every caption the first stage's top K videos are
re-scored by the cross-encoder (Q x K pairs per configuration) and placed, in their new order,
above the rest, which keep the first stage's order. So t2v R@k for k <= K measures the re-ranker
and R@k for k > K mixes in the first stage; v2t ranks are read off the same score matrix.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...metric_names import reported_names
from ..adapters.cache import EmbeddingCache
from ..adapters.protocol import Model
from .data import BenchData
from .encoder import Encoder, Settings
from ...fingerprint import digest, text_fingerprint
from .jobs import Job
from .prefetch import prefetch
from .built import Source


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """(Q, k) column indices of each row's k highest scores, best first (ties: lower index first)."""
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def merge(first: np.ndarray, top: np.ndarray, rescored: np.ndarray) -> np.ndarray:
    """``first`` with each row's ``top`` entries replaced by ``rescored``, lifted above every other entry."""
    out = first.astype(np.float64).copy()
    lift = float(first.max() - rescored.min() + 1.0) if rescored.size else 0.0
    np.put_along_axis(out, top, rescored.astype(np.float64) + lift, axis=1)
    return out


class RerankEncoder(Encoder):
    """An :class:`Encoder` whose similarity is the first stage's, re-scored on each query's top K."""

    def __init__(self, model: Model, first: Encoder, k: int, data: BenchData, source: Source,
                 cache: EmbeddingCache, settings: Settings, measured: Sequence[str] = reported_names()) -> None:
        if model.kind != "cross":
            raise ValueError(f"--rerank re-scores with a cross-encoder (matching or yes/no model); "
                             f"{model.id} is a dual encoder")
        if first.model.kind != "dual":
            raise ValueError(f"--first-stage must be a dual encoder; {first.model.id} is a cross-encoder")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"--rerank K must be a positive int; got {k!r}")
        super().__init__(model, data, source, cache, settings, measured)
        self.first, self.k = first, k
        self.pairs_scored = 0

    def _rescore(self, job: Job, top: np.ndarray) -> np.ndarray:
        """Cross-encoder scores of every (query, top video) pair, one clip decoded per distinct video.

        Each pair's score is cached (one row of width 1 per "video_id|query_id", fingerprinted by
        the clip and the caption text), so a re-run, another K or another first stage re-scores
        only pairs not seen before.
        """
        texts = self.captions(job.text)
        item_ids, query_ids = self.data.item_ids, self.data.query_ids
        key = self._key("pairs", f"{job.video}|{job.text}", job.severity)
        video_fps = self.video_fingerprints(job.video, job.severity)
        cells = [(q, slot, int(v)) for q, row in enumerate(top) for slot, v in enumerate(row)]
        pair = {(q, v): f"{item_ids[v]}|{query_ids[q]}" for q, _, v in cells}
        fps = {pair[q, v]: digest(video_fps[item_ids[v]], text_fingerprint(texts[q])) for q, _, v in cells}
        cached = self.cache.load(key, list(fps), fps)
        out = np.zeros(top.shape, dtype=np.float64)
        by_video: dict[int, list[tuple[int, int]]] = {}
        for q, slot, v in cells:
            if pair[q, v] in cached:
                out[q, slot] = float(cached[pair[q, v]][0])
            else:
                by_video.setdefault(v, []).append((q, slot))
        videos = sorted(by_video)
        items = self.data.items
        clips = prefetch(lambda v: self.source.clip(items[v], job.video, job.severity), videos,
                         self.settings.workers, self.settings.batch_size + 2 * self.settings.workers)
        for v, clip in zip(videos, clips):
            todo = by_video[v]
            scores = self.model.score([clip] * len(todo), [texts[q] for q, _ in todo])[:, None]  # float32, checked
            self.cache.save(key, [pair[q, v] for q, _ in todo], scores, fps)
            self.pairs_scored += len(todo)
            for (q, slot), s in zip(todo, scores[:, 0]):
                out[q, slot] = s
        return out

    def similarity(self, job: Job) -> np.ndarray:
        key = ("rerank", f"{job.video}|{job.text}", job.severity)
        if key not in self.memo:
            first = self.first.similarity(job)
            top = top_k(first, min(self.k, first.shape[1]))
            self.memo[key] = merge(first, top, self._rescore(job, top))
        return self.memo[key]

    def flush(self) -> None:
        super().flush()
        self.first.flush()

    def release_texts(self, perturbation: str) -> None:
        super().release_texts(perturbation)
        self.first.release_texts(perturbation)

    def describe(self) -> dict[str, Any]:
        """The ``rerank`` block of results.json."""
        return {"k": self.k, "first_stage": self.first.model.id, "pairs_scored": self.pairs_scored,
                "directions": ["t2v"],
                "note": f"t2v R@k for k > {self.k} includes first-stage ranks; v2t is read off the "
                        "t2v re-ranked scores"}
