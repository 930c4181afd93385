"""``benchmark()``: one call from a model and a dataset to a results document."""
from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Sequence

from ..metric_names import Metric, gamma_metric, measured_names
from ..options import options_object
from ..registry import REGISTRY
from ..selection import SEVERITY_LEVELS
from .adapters.factory import load_model, parse_spec
from .adapters.frames import frame_spec_of
from .adapters.protocol import Model, wrap
from .adapters.cache import EmbeddingCache
from .pipeline.contrast_eval import evaluate_entailment, evaluate_mc
from .pipeline.data import BenchData
from .pipeline.encoder import Encoder, Settings
from .distributed.devices import check_devices, gpu_request
from .distributed.placement import (IN_PROCESS_ENGINE, default_engine, local_gpus, replica_options,
                                    replica_perturb_device)
from .distributed.replica_tasks import ContrastTask, Describe, WorkerContext
from .distributed.replicas import open_replicas
from .distributed.shards import Sharded, described_model, run_jobs
from .options import BenchOptions
from .pipeline.jobs import jobs_of
from .pipeline.sources import OnTheFly
from .pipeline.classify import RETRIEVAL_DEFAULT, check_jobs, classifier, classify_metric, with_prompts
from .results import build_classification_results, build_results, metric_values
from .scoring.held_out import split_summary
from .scoring.suite_summary import summarize_suites


def _default_id(obj: Any) -> str:
    """An object's ``id`` attribute, else ``callable:module.Class`` (the cache key: set ``id``!)."""
    if isinstance(obj, Model):
        return obj.id
    ident = getattr(obj, "id", None)
    if isinstance(ident, str) and ident:
        return ident
    kind = obj if callable(obj) and not hasattr(obj, "encode_videos") else type(obj)
    return f"callable:{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', type(obj).__name__)}"


_NOTICED: set[str] = set()


def notice_unversioned(m: Model) -> None:
    """Say once per model that its cache entries are keyed by its name only (no version known)."""
    if m.cache_version is not None or m.id in _NOTICED:
        return
    _NOTICED.add(m.id)
    print(f"perturb bench: note: {m.id} reports no version (a cache_version attribute, or GET /info "
          f"for an http model), so its cached embeddings are keyed by its name only; after changing "
          f"the model pass --cache-key STRING (or a new --cache) to pin which numbers are reused",
          file=sys.stderr)


def model_record(m: Model) -> dict[str, Any]:
    """results.json's ``model``: id, kind and, for adapters that state one, the model card."""
    record: dict[str, Any] = {"id": m.id, "kind": m.kind}
    card = getattr(m.impl, "card", None)
    if callable(card):
        record["card"] = card()
    return record


def warn_nothing_seen(trained: Any, jobs: Sequence[Any]) -> None:
    """Say, before the run, when ``--trained-with`` names none of the ops run: every op is then held out."""
    ran = {REGISTRY.get(j.video, "video").name for j in jobs if j.modality == "video"}
    if ran and not ran & set(trained.operations):
        print(f"perturb bench: warning: --trained-with {trained.given} names none of the ops run; every op is "
              f"held out and the seen part is empty", file=sys.stderr)


def _two_stage(m: Model, encoder: Encoder, options: BenchOptions) -> Encoder:
    from .pipeline.rerank import RerankEncoder

    first_stage = options.first_stage
    if first_stage is None:
        raise ValueError("--rerank needs --first-stage MODEL (a dual encoder that ranks first)")
    first = load_model(first_stage, options.model) if isinstance(first_stage, str) \
        else wrap(first_stage, _default_id(first_stage))
    first_encoder = Encoder(first, encoder.data, encoder.source, encoder.cache, encoder.settings)
    return RerankEncoder(m, first_encoder, options.rerank, encoder.data, encoder.source, encoder.cache,
                         encoder.settings, encoder.measured)


def benchmark(model: Model | Any | str, data: BenchData, options: BenchOptions | None = None, *,
              video: Sequence[str] = (), text: Sequence[str] = (), severities: Sequence[int] = SEVERITY_LEVELS,
              pairs: Sequence[tuple[str, str]] = (), metric: str | Metric = "t2v.R@5",
              stats: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run clean + every configuration and return the results.json document.

    ``model`` is a :class:`Model`, any encoder object, or a spec string (``clip:...``,
    ``callable:MODULE:ATTR``...) loaded with ``options.model``; the run's other options are
    ``options`` (:class:`~.options.BenchOptions`; default: its defaults). Sharding over
    ``options.backend`` ("loky", "dask", "ray") needs the spec string: the model then lives only on
    replicas, one per GPU (``n_workers`` caps them; on CPUs ``n_workers`` replicas, default 2), and
    the driver holds none (:mod:`perturb.bench.distributed.replicas`). With ``backend`` None, a spec
    string whose model goes on ``device`` cuda or auto runs on local loky replicas where several
    GPUs are usable here (:func:`~.placement.default_engine`); with one GPU, or on the CPU, it runs
    in this process, as it does with ``backend="in-process"``.
    ``stats``, if given, receives the run time, the number of forward passes and the model's
    retries by cause (here and on replicas), and (also when the run fails) under ``progress`` the
    configurations finished and rows cached. Video runs are also grouped by suite (top-level
    ``suites``, :mod:`perturb.bench.scoring.suite_summary`), with ImageNet-C's mCE where
    ``options.baseline_errors`` is given; ``mc`` and ``entailment`` results are top-level keys.
    The device options (``options.model.device``, ``source.device``) are checked before any work
    against the GPUs where it runs (:func:`~.devices.check_devices`): a PlacementError (a ValueError)
    in one line, as is a ``scheduler`` that does not answer within ``connect_timeout`` seconds.
    """
    o = options_object(options, BenchOptions, "benchmark")
    settings = o.settings or Settings(seed=data.seed)
    jobs = jobs_of(video, text, severities, pairs)
    if o.trained_with is not None:
        warn_nothing_seen(o.trained_with, jobs)
    if o.task == "classify":
        metric = classify_metric("top1" if metric == RETRIEVAL_DEFAULT else metric)   # the default: top-1
        check_jobs(jobs, data.media)
        o = replace(o, model=with_prompts(o.model, data, o.templates, o.classes, o.cache_dir))
    else:
        metric = gamma_metric(metric)            # parsed once, here (a Metric passes through)
    spec = model if isinstance(model, str) else None
    source = o.source or OnTheFly(seed=settings.seed)
    perturb_device = getattr(source, "device", None)
    request = gpu_request(o.model.device, perturb_device)
    backend = o.backend
    if backend not in (None, IN_PROCESS_ENGINE) and spec is None:
        raise ValueError("sharding needs the model as a spec string (e.g. callable:MODULE:ATTR)")
    if backend is None and spec is not None:           # several GPUs here: one local replica each
        backend = default_engine(parse_spec(spec)[0], o.model.device, o.n_workers, device_map=o.model.device_map,
                                 rerank=o.rerank is not None)[0]
    backend = None if backend == IN_PROCESS_ENGINE else backend
    if backend and o.rerank is not None:
        raise ValueError("--rerank runs in this process; drop --backend")
    measured = measured_names(metric.key, judged=data.extra_positives > 0) if o.task == "retrieve" else ()
    run = Run(data, metric, o, source, settings, measured, stats)
    if not backend or parse_spec(spec)[0] == "precomputed":      # embeddings read from files: no replicas
        check_devices(request, IN_PROCESS_ENGINE, local_gpus() if request.needs_count else None)
        m = load_model(model, o.model) if spec else wrap(model, _default_id(model))
        return run.execute(m, jobs)
    with open_replicas(backend, o.scheduler, o.n_workers, o.model.device, perturb_device, o.connect_timeout) as pool:
        ctx = WorkerContext(spec, replica_options(o.model, pool.replicas), data, source,
                            replica_perturb_device(perturb_device, pool.replicas), o.cache_dir, settings, run.measured)
        sharded = Sharded(pool, ctx)
        m = described_model(sharded.call(Describe(ctx)))
        return run.execute(m, jobs, sharded=sharded)


@dataclass
class Run:
    """One benchmark's inputs, run with a model held here or described by its replicas."""

    data: BenchData
    metric: Metric | str                     # a classification run's: "top1" or "top5"
    options: BenchOptions
    source: Any
    settings: Settings
    measured: tuple[str, ...]                # metric names, per direction
    stats: dict[str, Any] | None

    def execute(self, m: Model, jobs: list[Any], sharded: Sharded | None = None) -> dict[str, Any]:
        """The results document of ``jobs`` run with ``m``; the source is fitted to it here, once
        (on replicas, before any task that reads clips is sent)."""
        o, settings, stats, source = self.options, self.settings, self.stats, self.source
        bootstrap, level = o.bootstrap, o.level
        if o.task == "classify":
            m = classifier(m, self.data, o.model, o.classes)
        retried = m.retries()                # GET /info's included: it is asked below
        if o.model.cache_key is not None:
            m.cache_key = o.model.cache_key
        if o.cache_dir is not None and m.needs_media:
            notice_unversioned(m)
        if hasattr(source, "fit_to"):
            source.fit_to(frame_spec_of(m.impl))
        encoder = Encoder(m, self.data, source, EmbeddingCache(o.cache_dir), settings, self.measured)
        if stats is not None:
            stats["progress"] = encoder.progress
        if o.rerank is not None:
            encoder = _two_stage(m, encoder, o)
        t0 = time.perf_counter()
        before = m.forward_passes()
        boot = {"n": bootstrap, "seed": settings.seed, "level": level} if bootstrap else None
        try:
            clean, runs, skipped = run_jobs(encoder, jobs, sharded=sharded)
            extra: dict[str, Any] = {"skipped": skipped} if skipped else {}
            for kind, path in (("mc", o.mc), ("entailment", o.entailment)):
                if not path:
                    continue
                boot_mc = boot if kind == "mc" else None
                if sharded is not None:
                    extra[kind] = sharded.call(ContrastTask(sharded.ctx, kind, path, boot_mc))
                else:
                    extra[kind] = evaluate_mc(encoder, path, boot_mc) if kind == "mc" else \
                        evaluate_entailment(encoder, path)
        finally:
            encoder.flush()                  # a batch still waiting for its width to be agreed
        if o.rerank is not None:
            extra["rerank"] = encoder.describe()
        if hasattr(source, "describe"):
            extra["decode"] = source.describe()
        if sharded is not None:
            extra["provenance"] = sharded.provenance()
        if o.task == "classify":
            doc = build_classification_results(
                model_record(m), self.data, clean.values["classify"], [(r.job, r.values["classify"]) for r in runs],
                boot, extra, settings.ties, str(self.metric), m.labels, getattr(source, "recipe", None))
        else:
            doc = build_results(model_record(m), self.data, self.metric, clean, runs, boot, extra=extra,
                                ties=settings.ties)
        doc["suites"] = summarize_suites(doc, o.baseline_errors)
        if o.trained_with is not None:
            values = metric_values(clean, runs, self.metric, o.task)
            doc["split"] = {"trained_with": o.trained_with.record(),
                            **split_summary(doc, o.trained_with.operations, *values, o.baseline_errors)}
        if stats is not None:
            passes = m.forward_passes() - before + (sharded.passes if sharded is not None else 0)
            retries = m.retries() - retried + (sharded.retries if sharded is not None else Counter())
            stats.update(seconds=round(time.perf_counter() - t0, 2), forward_passes=passes, configs=len(jobs),
                         retries=dict(retries))
        return doc
