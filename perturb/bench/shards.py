"""Running configurations across workers: video shards and remote jobs on dask or ray, merged
back into one :class:`~perturb.bench.encoder.Encoder`."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from ..errors import MissingResourceError
from .adapters.factory import load_model
from .adapters.protocol import Model
from .cache import EmbeddingCache
from .data import BenchData
from .encoder import Encoder, Ranked, Settings
from .plan import Job
from .schedule import Config
from .sources import CLEAN, OnTheFly

@dataclass
class WorkerContext:
    """What every worker process needs: the model (rebuilt from its spec), data, source, cache."""

    model_spec: str
    model_options: dict[str, Any]
    data: BenchData
    source: OnTheFly
    cache_root: str | None
    settings: Settings


@dataclass
class RemoteTask(WorkerContext):
    """Everything a worker process needs to run one job."""

    with_ap: bool
    job: Job
    preset: dict[tuple[str, str, int | None], np.ndarray]


@dataclass
class VideoShard(WorkerContext):
    """Everything a worker needs to embed some videos under every video configuration."""

    configs: list[Config]
    positions: list[int]


def run_video_shard(task: VideoShard) -> dict[Config, dict[str, np.ndarray]]:
    """Embed one shard of videos (video-major, cached as it goes) in a worker."""
    model = _worker_model(task.model_spec, tuple(sorted(task.model_options.items())))
    settings = Settings(**{**task.settings.__dict__, "progress": False})
    enc = Encoder(model, task.data, task.source, EmbeddingCache(task.cache_root), settings)
    return enc.video_rows(task.configs, task.positions)


def _shards(n: int, batch_size: int, workers: int) -> list[list[int]]:
    """Item positions in contiguous shards of whole batches, about two per worker."""
    per = max(1, -(-n // max(1, 2 * workers)))
    per = -(-per // batch_size) * batch_size
    return [list(range(i, min(i + per, n))) for i in range(0, n, per)]


def _uses_cuda(options: dict[str, Any] | None) -> bool:
    device = str((options or {}).get("device", "auto"))
    if device.startswith("cuda"):
        return True
    if device != "auto":
        return False
    try:
        import torch
        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def _video_configs(jobs: Sequence[Job]) -> list[Config]:
    return list(dict.fromkeys([(CLEAN, None)] + [(j.video, j.severity) for j in jobs
                                                  if j.modality in ("video", "both")]))


def shard_videos(encoder: Encoder, configs: Sequence[Config], *, backend: str, scheduler: str | None,
                 n_workers: int, model_spec: str, model_options: dict[str, Any] | None) -> None:
    """Embed the videos under every configuration sharded over videos on ``backend``, then merge."""
    from ..engines import run as run_engine
    from ..progress import bar
    root = str(encoder.cache.root) if encoder.cache.root is not None else None
    configs = list(configs)
    tasks = [VideoShard(model_spec, model_options or {}, encoder.data, encoder.source, root,
                        encoder.settings, configs, shard)
             for shard in _shards(len(encoder.data.items), encoder.settings.batch_size, n_workers)]
    gpus = 1 if backend == "ray" and _uses_cuda(model_options) else 0
    merged: dict[Config, dict[str, np.ndarray]] = {cfg: {} for cfg in configs}
    results = run_engine(run_video_shard, tasks, backend=backend, jobs=n_workers, scheduler=scheduler,
                         gpus=gpus)
    for rows in bar(results, total=len(tasks), desc="video shards", enabled=encoder.settings.progress):
        for cfg, by_id in rows.items():
            merged[cfg].update(by_id)
    encoder.merge_rows(merged)


@lru_cache(maxsize=4)
def _worker_model(spec: str, options: tuple[tuple[str, Any], ...]) -> Model:
    return load_model(spec, **dict(options))


def skip_record(job: Job, error: Exception) -> dict[str, Any]:
    """Why a job was skipped (e.g. a text perturbation whose model is not installed)."""
    return {"modality": job.modality, "perturbation": job.perturbation, "severity": job.severity,
            "reason": str(error)}


def run_remote(task: RemoteTask) -> tuple[Job, Ranked | dict[str, Any], dict[tuple[str, str, int | None], np.ndarray]]:
    """Run one job in a worker: its ranks (or why it was skipped) and the embeddings it made."""
    model = _worker_model(task.model_spec, tuple(sorted(task.model_options.items())))
    settings = Settings(**{**task.settings.__dict__, "progress": False})
    enc = Encoder(model, task.data, task.source, EmbeddingCache(task.cache_root), settings, task.with_ap)
    enc.memo.update(task.preset)
    try:
        return task.job, enc.rank(task.job), enc.produced(task.job)
    except MissingResourceError as e:
        return task.job, skip_record(task.job, e), {}


def run_jobs(encoder: Encoder, jobs: Sequence[Job], *, backend: str | None = None,
             scheduler: str | None = None, n_workers: int = 2, model_spec: str | None = None,
             model_options: dict[str, Any] | None = None) -> tuple[Ranked, list[Ranked], list[dict[str, Any]]]:
    """Clean ranks, one :class:`Ranked` per job (job order), and the skipped jobs with reasons.

    A dual encoder's videos are embedded first, for every configuration at once (video-major),
    locally or sharded over videos on ``backend`` ("dask", "ray", "loky": the builder's engines);
    a cross-encoder's jobs are sharded by configuration. A job whose perturbation lacks an
    optional resource (MissingResourceError) is skipped.
    """
    from ..progress import bar

    dual = encoder.model.kind == "dual" and encoder.model.needs_media
    if backend and model_spec is None:
        raise ValueError("sharding needs the model as a spec string (e.g. callable:MODULE:ATTR)")
    if dual:
        encoder.texts(CLEAN)     # cheap, and fixes the embedding width before any video row is cached
    if dual and backend:
        shard_videos(encoder, _video_configs(jobs), backend=backend, scheduler=scheduler,
                     n_workers=n_workers, model_spec=model_spec, model_options=model_options)
    elif dual:
        encoder.prepare_videos(_video_configs(jobs))
    clean = encoder.rank(Job(CLEAN))
    singles = [j for j in jobs if j.modality != "both"]
    done: dict[Job, Ranked] = {}
    skipped: dict[Job, dict[str, Any]] = {}
    if backend and singles and not dual:
        if model_spec is None:
            raise ValueError("sharding needs the model as a spec string (e.g. callable:MODULE:ATTR)")
        from ..engines import run as run_engine
        preset = {k: v for k, v in encoder.memo.items() if CLEAN in k}
        root = str(encoder.cache.root) if encoder.cache.root is not None else None
        tasks = [RemoteTask(model_spec, model_options or {}, encoder.data, encoder.source, root,
                            encoder.settings, encoder.with_ap, j, preset) for j in singles]
        results = run_engine(run_remote, tasks, backend=backend, jobs=n_workers, scheduler=scheduler)
        for job, ranked, produced in bar(results, total=len(tasks), desc="configs",
                                         enabled=encoder.settings.progress):
            if isinstance(ranked, Ranked):
                done[job] = ranked
            else:
                skipped[job] = ranked
            encoder.memo.update(produced)
    rest = [j for j in jobs if j not in done and j not in skipped]
    for job in bar(rest, total=len(rest), desc="configs", enabled=encoder.settings.progress and bool(rest)):
        try:
            done[job] = encoder.rank(job)
        except MissingResourceError as e:
            skipped[job] = skip_record(job, e)
    return clean, [done[j] for j in jobs if j in done], [skipped[j] for j in jobs if j in skipped]
