"""What a model replica runs: one task at a time (a video shard, a text configuration, a
cross-encoder configuration, a contrast set, the model's description), with the model it built
once and keeps in its process. Every task returns ``(result, where)``: where it ran (replica, host,
device) and how many forward passes it made.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import MissingResourceError
from ...metric_names import reported_names
from ..adapters.factory import load_model
from ..adapters.frames import frame_spec_of
from ..adapters.model_options import ModelOptions
from ..adapters.protocol import Model
from ..adapters.cache import EmbeddingCache
from ..pipeline.data import BenchData
from ..pipeline.encoder import Encoder, Settings
from .placement import this_host
from ..pipeline.jobs import Job
from ..pipeline.schedule import Config
from ..pipeline.built import Source


@dataclass
class WorkerContext:
    """What every task carries: the model (rebuilt from its spec and options, once per replica), data,
    the driver's source with the device replicas perturb on, the cache."""

    model_spec: str
    model_options: ModelOptions                      # as a replica builds with (:func:`~.placement.replica_options`)
    data: BenchData
    source: Source
    perturb_device: str | None                       # the source's device on a replica
    cache_root: str | None
    settings: Settings
    measured: tuple[str, ...] = reported_names()     # metric names, per direction

    def encoder(self) -> Encoder:
        model = _worker_model(self.model_spec, self.model_options)
        settings = Settings(**{**self.settings.__dict__, "progress": False})
        return Encoder(model, self.data, self.source_here(), EmbeddingCache(self.cache_root), settings,
                       self.measured)

    def source_here(self) -> Source:
        """The source on this replica's perturb device (a shallow copy: its clip cache is shared)."""
        if self.perturb_device == getattr(self.source, "device", None):
            return self.source
        source = copy.copy(self.source)
        source.device = self.perturb_device
        return source

    def on_gpu(self) -> bool:
        return self.model_options.device.startswith("cuda") or (self.perturb_device or "").startswith("cuda")


@lru_cache(maxsize=4)
def _worker_model(spec: str, options: ModelOptions) -> Model:
    """The replica's model: built on its first task, then kept for every later one."""
    return load_model(spec, options)


def where(ctx: WorkerContext) -> dict[str, Any]:
    """The replica, host and device this process serves from (a GPU by its host's number)."""
    from .replicas import REPLICA_ENV, worker_gpu

    name = os.environ.get(REPLICA_ENV)
    if name is None:
        try:
            from distributed import get_worker
            name = str(get_worker().name)
        except (ImportError, ValueError):
            name = str(os.getpid())
    return {"replica": name, "host": this_host(), "device": worker_gpu() if ctx.on_gpu() else "cpu"}


def skip_record(job: Job, error: Exception | str) -> dict[str, Any]:
    """Why a job was skipped (e.g. a text perturbation whose model is not installed)."""
    return {"modality": job.modality, "perturbation": job.perturbation, "severity": job.severity,
            "reason": str(error)}


@dataclass
class Task:
    """One unit of a replica's work."""

    ctx: WorkerContext

    def label(self) -> str:
        raise NotImplementedError

    def compute(self, enc: Encoder) -> Any:
        raise NotImplementedError


@dataclass
class VideoShard(Task):
    """Embed some videos under every video configuration (video-major, cached as it goes)."""

    configs: list[Config]
    positions: list[int]

    def label(self) -> str:
        return f"videos {self.positions[0]}-{self.positions[-1]}"

    def compute(self, enc: Encoder) -> dict[Config, dict[str, np.ndarray]]:
        return enc.video_rows(self.configs, self.positions)


@dataclass
class TextTask(Task):
    """Embed every caption under one text perturbation; a missing resource is a skip reason (str)."""

    perturbation: str

    def label(self) -> str:
        return f"texts {self.perturbation}"

    def compute(self, enc: Encoder) -> np.ndarray | str:
        try:
            return enc.texts(self.perturbation)
        except MissingResourceError as e:
            return str(e)


@dataclass
class RemoteTask(Task):
    """Rank one configuration (a cross-encoder's): its ranks, or why it was skipped."""

    job: Job

    def label(self) -> str:
        return self.job.label()

    def compute(self, enc: Encoder) -> tuple[Job, Any]:
        try:
            return self.job, enc.rank(self.job)
        except MissingResourceError as e:
            return self.job, skip_record(self.job, e)


@dataclass
class ContrastTask(Task):
    """A contrast set (``mc`` or ``entailment``) evaluated on the clean videos."""

    kind: str
    path: str
    bootstrap: dict[str, Any] | None = None

    def label(self) -> str:
        return self.kind

    def compute(self, enc: Encoder) -> dict[str, Any]:
        from ..pipeline.contrast_eval import evaluate_entailment, evaluate_mc

        if self.kind == "mc":
            return evaluate_mc(enc, self.path, self.bootstrap)
        return evaluate_entailment(enc, self.path)


@dataclass
class Describe(Task):
    """What the driver needs to know of the model, which it never loads itself."""

    def label(self) -> str:
        return "model"

    def compute(self, enc: Encoder) -> dict[str, Any]:
        m, card = enc.model, getattr(enc.model.impl, "card", None)
        return {"id": m.id, "kind": m.kind, "needs_media": m.needs_media, "cache_version": m.cache_version,
                "frame_spec": frame_spec_of(m.impl), "card": card() if callable(card) else None,
                "accepts_tensors": bool(getattr(m.impl, "accepts_tensors", False)), "labels": m.labels}


def run_task(task: Task) -> tuple[Any, dict[str, Any]]:
    """Run ``task`` in this replica: its result, and where it ran with the forward passes and
    retries it made."""
    enc = task.ctx.encoder()
    before, retried = enc.model.forward_passes(), enc.model.retries()
    try:
        result = task.compute(enc)
    finally:
        enc.flush()
    return result, {**where(task.ctx), "shard": task.label(), "passes": enc.model.forward_passes() - before,
                    "retries": dict(enc.model.retries() - retried)}
