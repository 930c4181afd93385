"""Running a benchmark's configurations: in this process, or on model replicas (one per GPU, see
:mod:`.replicas`) where the driver holds no model. Replicas embed video shards and caption sets
(dual encoders) or rank whole configurations (cross-encoders); their results are merged back into
one :class:`~perturb.bench.pipeline.encoder.Encoder`, which ranks.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

import numpy as np

from ...errors import MissingResourceError
from ..pipeline.encoder import Encoder, Ranked
from .placement import on_gpus, provenance, replica_record, shards
from ..pipeline.jobs import Job, caption_sets
from ..pipeline.schedule import Config
from ..pipeline.sources import CLEAN
from .replica_tasks import RemoteTask, Task, TextTask, VideoShard, WorkerContext, run_task, skip_record


def _video_configs(jobs: Sequence[Job]) -> list[Config]:
    return list(dict.fromkeys([(CLEAN, None)] + [(j.video, j.severity) for j in jobs
                                                  if j.modality in ("video", "both")]))


class Sharded:
    """A run's replicas and the context every task carries; it keeps where each task ran."""

    def __init__(self, pool: Any, ctx: WorkerContext) -> None:
        self.pool, self.ctx = pool, ctx
        self.ledger: list[dict[str, Any]] = []
        self.passes = 0
        self.retries: Counter[str] = Counter()   # the replicas' model retries, by cause
        self.finished: list[str] = []          # the run's progress list: shards done, for a failure's message

    def serve(self, tasks: Sequence[Task], desc: str, progress: bool) -> list[Any]:
        """Every task's result, in task order (they run in completion order, pulled by replicas)."""
        from ...progress import bar

        order = {t.label(): k for k, t in enumerate(tasks)}
        out: list[tuple[int, Any, dict[str, Any]]] = []
        for result, at in bar(self.pool.map(run_task, tasks), total=len(tasks), desc=desc, enabled=progress):
            out.append((order[at["shard"]], result, at))
            self.finished.append(at["shard"])
        out.sort(key=lambda r: r[0])
        for _, _, at in out:
            self.passes += at["passes"]
            self.retries.update(at.get("retries", {}))
            self.ledger.append({"shard": at["shard"], **replica_record(at)})
        return [result for _, result, _ in out]

    def call(self, task: Task) -> Any:
        return self.serve([task], task.label(), False)[0]

    def provenance(self) -> dict[str, Any]:
        return provenance(self.pool.engine, self.ledger)


def _dual_on_replicas(encoder: Encoder, jobs: Sequence[Job], run: Sharded) -> dict[str, str]:
    """Caption sets and video shards embedded on replicas, memoised here; text skips by name."""
    ctx, settings = run.ctx, encoder.settings
    texts = caption_sets(jobs) if encoder.model.kind == "dual" else []     # a classifier reads no text
    positions = shards(len(encoder.data.items), settings.batch_size, len(run.pool.replicas),
                       on_gpus(run.pool.replicas))
    configs = _video_configs(jobs)
    tasks: list[Task] = [TextTask(ctx, t) for t in texts] + [VideoShard(ctx, configs, p) for p in positions]
    results = run.serve(tasks, "shards", settings.progress)
    missing: dict[str, str] = {}
    merged: dict[Config, dict[str, np.ndarray]] = {cfg: {} for cfg in configs}
    for task, result in zip(tasks, results):
        if isinstance(task, TextTask) and isinstance(result, str):
            if task.perturbation == CLEAN:
                raise MissingResourceError(result)
            missing[task.perturbation] = result
        elif isinstance(task, TextTask):
            encoder.memo[("text", task.perturbation, None)] = result
        else:
            for cfg, by_id in result.items():
                merged[cfg].update(by_id)
    encoder.merge_rows(merged)
    return missing


def _rank_all(encoder: Encoder, jobs: Iterable[Job], done: dict[Job, Ranked],
              skipped: dict[Job, dict[str, Any]], missing: dict[str, str]) -> None:
    """Rank here every job not done or skipped yet (a missing resource skips its job)."""
    from ...progress import bar

    rest = [j for j in jobs if j not in done and j not in skipped]
    last = {j.text: k for k, j in enumerate(rest)}               # each caption set's last job
    for k, job in enumerate(bar(rest, total=len(rest), desc="configs",
                                enabled=encoder.settings.progress and bool(rest))):
        if job.text in missing:
            skipped[job] = skip_record(job, missing[job.text])
            continue
        try:
            done[job] = encoder.rank(job)
        except MissingResourceError as e:
            skipped[job] = skip_record(job, e)
        if last[job.text] == k and job.text != CLEAN:
            encoder.release_texts(job.text)      # held for the rest of the run, Q x D rows per set would add up


def run_jobs(encoder: Encoder, jobs: Sequence[Job], *,
             sharded: Sharded | None = None) -> tuple[Ranked, list[Ranked], list[dict[str, Any]]]:
    """Clean ranks, one :class:`Ranked` per job (job order), and the skipped jobs with reasons.

    In this process, a dual encoder's videos are embedded first, for every configuration at once
    (video-major). On replicas (``sharded``), a dual encoder's captions and video shards are
    embedded there and ranked here; a cross-encoder's configurations are ranked there, one task
    each. A job whose perturbation lacks an optional resource (MissingResourceError) is skipped.
    """
    done: dict[Job, Ranked] = {}
    skipped: dict[Job, dict[str, Any]] = {}
    missing: dict[str, str] = {}
    dual = encoder.model.kind in ("dual", "classifier") and encoder.model.needs_media   # video-major
    if sharded is not None:
        sharded.finished = encoder.progress["finished"]
    if sharded is not None and dual:
        missing = _dual_on_replicas(encoder, jobs, sharded)
    elif sharded is not None:
        tasks = [RemoteTask(sharded.ctx, j) for j in [Job(CLEAN), *jobs]]
        for job, ranked in sharded.serve(tasks, "configs", encoder.settings.progress):
            (done if isinstance(ranked, Ranked) else skipped)[job] = ranked
    elif dual:
        if encoder.model.kind == "dual":
            encoder.texts(CLEAN)     # cheap, and fixes the embedding width before any video row is cached
        encoder.prepare_videos(_video_configs(jobs))
    clean = done.pop(Job(CLEAN)) if Job(CLEAN) in done else encoder.rank(Job(CLEAN))
    _rank_all(encoder, jobs, done, skipped, missing)
    return clean, [done[j] for j in jobs if j in done], [skipped[j] for j in jobs if j in skipped]


class _Described:
    """The driver's stand-in for a model that lives on replicas: what it reads of it, nothing it runs."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.frame_spec, self.cache_version = info["frame_spec"], info["cache_version"]
        self.accepts_tensors = info["accepts_tensors"]
        if info["card"] is not None:
            self.card = lambda: info["card"]
        if not info["needs_media"]:
            self.load_embeddings = self._remote

    def _remote(self, *_: Any) -> Any:
        raise RuntimeError("this model runs on the replicas; the driver holds no copy of it")


class _DescribedDual(_Described):
    encode_videos = encode_texts = _Described._remote


class _DescribedCross(_Described):
    score = _Described._remote


class _DescribedClassifier(_Described):
    classify = _Described._remote

    def __init__(self, info: dict[str, Any]) -> None:
        super().__init__(info)
        self.labels = list(info["labels"])


def described_model(info: dict[str, Any]) -> Any:
    """A :class:`Model` the driver can key caches and write results with, built from a replica's
    description (:class:`~perturb.bench.distributed.replica_tasks.Describe`)."""
    from ..adapters.protocol import Model

    described = {"dual": _DescribedDual, "classifier": _DescribedClassifier}.get(info["kind"], _DescribedCross)
    impl = described(info)
    model = Model(impl, info["id"])
    return model
