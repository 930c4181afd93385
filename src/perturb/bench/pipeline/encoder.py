"""The :class:`Encoder`: embeddings and rankings of one model per configuration, through the cache.

A video perturbation re-encodes only videos (clean text embeddings are reused), a text
perturbation only texts, and a video+text pair reuses both perturbed sets: a dual encoder
never encodes the unperturbed modality twice. A dual encoder's videos follow the video-major
schedule (:mod:`perturb.bench.pipeline.schedule`): each video is decoded once for every configuration,
and only the frames the model reads are rendered.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..adapters.cache import CacheKey, EmbeddingCache
from ..adapters.frames import frame_spec_of
from ..adapters.protocol import Model, check_width, unit_rows
from .data import BenchData
from ...fingerprint import digest, item_fingerprint, perturbation_fingerprint, text_fingerprint
from ...metric_names import DIRECTIONS, reported_names
from ...ranking import Ranking
from ..scoring.classification import per_sample_correct
from ..scoring.metrics import per_query_values
from .jobs import Job
from .prefetch import batched, prefetch
from .schedule import Config, video_batches
from .built import Source
from .sources import CLEAN
from .widths import WidthCheck, batch_label

@dataclass
class Settings:
    """How the runner works (not what it measures)."""

    seed: int = 0
    batch_size: int = 32
    workers: int = 2                    # prefetching threads (decode + perturb)
    ties: str = "pessimistic"
    progress: bool = True


@dataclass
class Ranked:
    """The per-query values of every measured metric of one job: direction → metric name → (Q,)."""

    job: Job
    values: dict[str, dict[str, np.ndarray]]


def _host(frames: Any) -> np.ndarray:
    """uint8 frames as a numpy array (torch tensors are copied off their device)."""
    return frames.cpu().numpy() if hasattr(frames, "cpu") else np.asarray(frames)


def _bar(total: int, desc: str, enabled: bool, nested: bool = True) -> Any:
    """A bar that is erased when done; a nested one (inside the configurations' bar) only on a terminal."""
    from ...progress import bar
    return bar(total=total, desc=desc, unit="item", enabled=enabled, nested=nested, leave=False)


def _video_desc(cfg: Config) -> str:
    return f"videos {cfg[0]} {cfg[1] or ''}".strip()


def recipe(modality: str, perturbation: str, severity: int | None) -> str:
    """Parameters and implementation versions of the perturbation(s) behind a cache key."""
    if modality == "text":
        return perturbation_fingerprint(perturbation, "text", None)
    if modality in ("cross", "pairs"):
        video, _, text = perturbation.partition("|")
        return digest(perturbation_fingerprint(video, "video", severity),
                      perturbation_fingerprint(text or CLEAN, "text", None))
    return perturbation_fingerprint(perturbation, "video", severity)


class Encoder:
    """Embeddings (dual) or score rows (cross) of one model on one dataset, cached and memoised."""

    def __init__(self, model: Model, data: BenchData, source: Source, cache: EmbeddingCache,
                 settings: Settings, measured: Sequence[str] = reported_names()) -> None:
        self.model, self.data, self.source, self.cache = model, data, source, cache
        self.settings, self.measured = settings, tuple(measured)      # metric names, per direction
        self.memo: dict[tuple[str, str, int | None], np.ndarray] = {}
        self.units: dict[tuple[str, str, int | None], np.ndarray] = {}   # memo rows at unit length
        self.widths = WidthCheck(model.id, model.declared_width, cache.root) if model.kind == "dual" else None
        self.progress: dict[str, Any] = {"finished": [], "rows_cached": 0}
        self._item_fps: dict[str, str] | None = None

    def _key(self, modality: str, perturbation: str, severity: int | None) -> CacheKey:
        settings = self.source.settings if modality != "text" else ""
        spec = frame_spec_of(self.model.impl) if modality != "text" else None
        if spec is not None:                   # which frames the model reads, and how they were picked
            settings = f"{settings}|{spec.key}"
        return CacheKey(self.model.id, self.data.fingerprint(), modality, perturbation, severity,
                        self.source.seed, settings, model_version=self.model.cache_version or "",
                        recipe=recipe(modality, perturbation, severity), dataset_name=self.data.name)

    def item_fingerprints(self) -> dict[str, str]:
        """Per-item identity of each video (file size, mtime, content hash), computed once."""
        if self._item_fps is None:
            self._item_fps = {it.item_id: item_fingerprint(it) for it in self.data.items}
        return self._item_fps

    def video_fingerprints(self, perturbation: str, severity: int | None) -> dict[str, str]:
        """Per-item identity of the clips a configuration encodes (source video, built output)."""
        base = self.item_fingerprints()
        identity = getattr(self.source, "identity", None)
        if identity is None or perturbation == CLEAN:
            return base
        extra = {it.item_id: identity(it, perturbation, severity) for it in self.data.items}
        return {i: digest(fp, extra[i]) if extra[i] else fp for i, fp in base.items()}

    def _save(self, key: CacheKey, ids: Sequence[str], rows: np.ndarray,
              fingerprints: dict[str, str] | None) -> None:
        self.cache.save(key, ids, rows, fingerprints)
        if self.cache.root is not None:
            self.progress["rows_cached"] += len(ids)

    def _load(self, key: CacheKey, ids: Sequence[str], fingerprints: dict[str, str] | None,
              desc: str) -> dict[str, np.ndarray]:
        """Cached rows of ``ids``; a dual encoder's set the run's width or must match it."""
        if self.widths is None:
            return self.cache.load(key, ids, fingerprints)
        rows = self.cache.load(key, ids, fingerprints, width=self.widths.declared)
        if rows:
            self.widths.cached(key.modality, len(next(iter(rows.values()))), desc)
        return rows

    def _keep(self, key: CacheKey, ids: list[str], rows: np.ndarray, fingerprints: dict[str, str] | None,
              desc: str, width: int | None) -> int:
        """Cache a checked batch: a dual encoder's once its width is agreed (:class:`WidthCheck`),
        a cross-encoder's score rows at one width per key; returns that width."""
        if self.widths is None:
            width = check_width(rows, width, f"model {self.model.id} ({desc})").shape[1]
            self._save(key, ids, rows, fingerprints)
            return width
        self.widths.admit(key.modality, rows.shape[1], batch_label(desc, ids),
                          lambda: self._save(key, ids, rows, fingerprints))
        return rows.shape[1]

    def flush(self) -> None:
        """Cache what waits for a width to be agreed (at the end of a run, or when it fails)."""
        if self.widths is not None:
            self.widths.flush()

    def _fill(self, key: CacheKey, ids: Sequence[str], inputs: Callable[[list[int]], Iterator[Any]],
              encode: Callable[[list[Any]], np.ndarray], desc: str,
              fingerprints: dict[str, str] | None = None) -> np.ndarray:
        rows = self._load(key, ids, fingerprints, desc)
        width = None
        todo = [k for k, i in enumerate(ids) if i not in rows]
        if todo:
            with _bar(len(todo), desc, self.settings.progress) as bar:
                for batch in batched(zip(todo, inputs(todo)), self.settings.batch_size):
                    got = [ids[k] for k, _ in batch]
                    out = encode([x for _, x in batch])             # count and finiteness checked
                    width = self._keep(key, got, out, fingerprints, desc, width)   # the width, before caching
                    rows.update(zip(got, out))
                    bar.update(len(batch))
        out = np.stack([rows[i] for i in ids]).astype(np.float32, copy=False)
        self.progress["finished"].append(desc)
        return out

    def _clips(self, perturbation: str, severity: int | None) -> Callable[[list[int]], Iterator[np.ndarray]]:
        items, window = self.data.items, self.settings.batch_size + 2 * self.settings.workers
        return lambda todo: prefetch(lambda k: self.source.clip(items[k], perturbation, severity),
                                     todo, self.settings.workers, window)   # next batch made while encoding

    def captions(self, perturbation: str) -> list[str]:
        return self.source.captions(self.data.query_ids, self.data.captions, perturbation)

    def video_rows(self, configs: Sequence[Config], positions: Sequence[int]) -> dict[Config, dict[str, np.ndarray]]:
        """Video embeddings of ``configs`` for the items at ``positions``, by item id: cached rows,
        the rest rendered video-major and encoded in full batches (each batch checked and saved
        as it comes)."""
        ids = self.data.item_ids
        wanted = [ids[k] for k in positions]
        fps = {cfg: self.video_fingerprints(*cfg) for cfg in configs}
        rows = {cfg: self._load(self._key("video", *cfg), wanted, fps[cfg], _video_desc(cfg)) for cfg in configs}
        todo = {cfg: {k for k in positions if ids[k] not in rows[cfg]} for cfg in configs}
        total = sum(map(len, todo.values()))
        if total:
            spec = frame_spec_of(self.model.impl)
            with _bar(total, "videos", self.settings.progress, nested=False) as bar:
                for cfg, ks, frames in video_batches(self.source, self.data.items, configs, todo, spec,
                                                     self.settings.batch_size, self.settings.workers):
                    if not getattr(self.model.impl, "accepts_tensors", False):
                        frames = [_host(f) for f in frames]
                    got = [ids[k] for k in ks]
                    out = self.model.encode_videos(frames)                 # count and finiteness checked
                    self._keep(self._key("video", *cfg), got, out, fps[cfg], _video_desc(cfg), None)
                    rows[cfg].update(zip(got, out))
                    bar.update(len(ks))
        self.progress["finished"] += [_video_desc(cfg) for cfg in configs]
        return rows

    def prepare_videos(self, configs: Sequence[Config]) -> None:
        """Memoise the (N, D) video embeddings of every configuration, in one video-major pass."""
        configs = [c for c in dict.fromkeys(configs) if ("video", *c) not in self.memo]
        if not self.model.needs_media:
            for perturbation, severity in configs:
                self.memo[("video", perturbation, severity)] = self.model.impl.load_embeddings(
                    "video", perturbation, severity, self.data.item_ids)
            return
        rows = self.video_rows(configs, range(len(self.data.items)))
        self.merge_rows(rows)

    def merge_rows(self, rows: dict[Config, dict[str, np.ndarray]]) -> None:
        """Memoise complete per-configuration rows (e.g. gathered from shards)."""
        for (perturbation, severity), by_id in rows.items():
            self.memo[("video", perturbation, severity)] = np.stack(
                [by_id[i] for i in self.data.item_ids]).astype(np.float32, copy=False)

    def videos(self, perturbation: str, severity: int | None) -> np.ndarray:
        """(N, D) video embeddings under a video perturbation (``clean`` for none)."""
        memo_key = ("video", perturbation, severity)
        if memo_key not in self.memo:
            self.prepare_videos([(perturbation, severity)])
        return self.memo[memo_key]

    def texts(self, perturbation: str) -> np.ndarray:
        """(Q, D) caption embeddings under a text perturbation (``clean`` for none)."""
        memo_key = ("text", perturbation, None)
        if memo_key not in self.memo:
            ids = self.data.query_ids
            if not self.model.needs_media:
                emb = self.model.impl.load_embeddings("text", perturbation, None, ids)
            else:
                def inputs(todo: list[int]) -> Iterator[str]:
                    texts = self.source.captions([ids[k] for k in todo],
                                                 [self.data.captions[k] for k in todo], perturbation)
                    return iter(texts)
                fps = {i: text_fingerprint(c) for i, c in zip(ids, self.data.captions)}
                emb = self._fill(self._key("text", perturbation, None), ids, inputs,
                                 self.model.encode_texts, f"texts {perturbation}", fps)
            self.memo[memo_key] = emb
        return self.memo[memo_key]

    def release_texts(self, perturbation: str) -> None:
        """Forget a caption set's embeddings once no job needs them (they stay cached on disk)."""
        for memo in (self.memo, self.units):
            memo.pop(("text", perturbation, None), None)

    def _cross(self, job: Job) -> np.ndarray:
        texts = self.captions(job.text)
        key = self._key("cross", f"{job.video}|{job.text}", job.severity)

        def score_rows(clips: list[np.ndarray]) -> np.ndarray:
            return np.stack([self.model.score([c] * len(texts), texts) for c in clips])
        queries = digest(self.data.query_ids, [text_fingerprint(t) for t in texts])
        fps = {i: digest(fp, queries) for i, fp in self.video_fingerprints(job.video, job.severity).items()}
        rows = self._fill(key, self.data.item_ids, self._clips(job.video, job.severity), score_rows,
                          f"pairs {job.label()}", fps)
        return rows.T                                                   # (Q, N)

    def similarity(self, job: Job) -> np.ndarray:
        """(Q, N) text-to-video scores for a job: cosine for dual encoders, model scores for cross."""
        if self.model.kind == "cross":
            return self._cross(job)
        return self.unit_texts(job.text) @ self.unit_videos(job.video, job.severity).T

    def unit_videos(self, perturbation: str, severity: int | None) -> np.ndarray:
        """:meth:`videos` scaled to unit length, once per configuration."""
        key = ("video", perturbation, severity)
        if key not in self.units:
            self.units[key] = unit_rows(self.videos(perturbation, severity))
        return self.units[key]

    def unit_texts(self, perturbation: str) -> np.ndarray:
        """:meth:`texts` scaled to unit length, once per text perturbation."""
        key = ("text", perturbation, None)
        if key not in self.units:
            self.units[key] = unit_rows(self.texts(perturbation))
        return self.units[key]

    def rank(self, job: Job) -> Ranked:
        """The measured metrics' per-query values of a job, in both directions; a classifier's
        per-sample top-k correctness (``{"classify": {"top1": (N,), "top5": (N,)}}``)."""
        if self.model.kind == "classifier":
            logits = self.videos(job.video, job.severity)
            if self.data.labels is None:
                raise ValueError("classification needs a labelled dataset (each item's class)")
            return Ranked(job, {"classify": per_sample_correct(logits, self.data.labels, ties=self.settings.ties)})
        s, rel, ties = self.similarity(job), self.data.gains, self.settings.ties
        rankings = (Ranking(s, rel, ties), Ranking(s.T, rel.T, ties))
        return Ranked(job, {d: per_query_values(r, self.measured) for d, r in zip(DIRECTIONS, rankings)})

    def produced(self, job: Job) -> dict[tuple[str, str, int | None], np.ndarray]:
        """The memoised embeddings a job made, to hand back from a remote worker."""
        keys = [("video", job.video, job.severity), ("text", job.text, None)]
        return {k: self.memo[k] for k in keys if k in self.memo and CLEAN not in k}
