"""``benchmark()``: one call from a model and a dataset to a results document."""
from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from ..clusters import DEFAULT_CONNECT_TIMEOUT
from ..metric_names import Metric, gamma_metric, measured_names
from ..selection import SEVERITY_LEVELS
from .adapters.factory import load_model, parse_spec
from .adapters.frames import frame_spec_of
from .adapters.protocol import Model, wrap
from .pipeline.cache import EmbeddingCache
from .pipeline.contrast_eval import evaluate_entailment, evaluate_mc
from .pipeline.data import BenchData
from .pipeline.encoder import Encoder, Settings
from .distributed.placement import (IN_PROCESS_ENGINE, check_devices, default_engine, gpu_request, local_gpus, replica_options,
                        replica_perturb_device)
from .pipeline.plan import plan
from .distributed.replica_tasks import ContrastTask, Describe, WorkerContext, for_replicas
from .distributed.replicas import open_replicas
from .results import build_results
from .distributed.shards import Sharded, described_model, run_jobs
from .pipeline.sources import OnTheFly
from .scoring.suite_summary import load_baseline, summarize_suites


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


def _two_stage(m: Model, k: int, first_stage: Any, encoder: Encoder, options: dict[str, Any] | None) -> Encoder:
    from .pipeline.rerank import RerankEncoder

    if first_stage is None:
        raise ValueError("--rerank needs --first-stage MODEL (a dual encoder that ranks first)")
    first = load_model(first_stage, **(options or {})) if isinstance(first_stage, str) \
        else wrap(first_stage, _default_id(first_stage))
    first_encoder = Encoder(first, encoder.data, encoder.source, encoder.cache, encoder.settings)
    return RerankEncoder(m, first_encoder, k, encoder.data, encoder.source, encoder.cache, encoder.settings,
                         encoder.measured)


def benchmark(model: Model | Any | str, data: BenchData, *, video: Sequence[str] = (),
              text: Sequence[str] = (), severities: Sequence[int] = SEVERITY_LEVELS,
              pairs: Sequence[tuple[str, str]] = (), metric: str | Metric = "t2v.R@5",
              bootstrap: int = 1000, level: float = 0.95, source: OnTheFly | None = None,
              cache_dir: str | None = None, settings: Settings | None = None,
              backend: str | None = None, scheduler: str | None = None, n_workers: int | None = None,
              model_options: dict[str, Any] | None = None,
              stats: dict[str, Any] | None = None, mc: str | None = None,
              entailment: str | None = None, cache_key: str | None = None, rerank: int | None = None,
              first_stage: Model | Any | str | None = None,
              baseline_errors: str | dict[str, Any] | None = None,
              connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> dict[str, Any]:
    """Run clean + every configuration and return the results.json document.

    ``model`` is a :class:`Model`, any encoder object, or a spec string (``clip:...``,
    ``callable:MODULE:ATTR``...); sharding over ``backend`` ("loky", "dask", "ray") needs the spec
    string: the model then lives only on replicas, one per GPU (``n_workers`` caps them; on CPUs
    ``n_workers`` replicas, default 2), and the driver holds none (:mod:`perturb.bench.distributed.replicas`).
    Without ``backend``, a spec string whose model goes on ``device`` cuda or auto runs on local
    loky replicas where several GPUs are usable here (:func:`~.placement.default_engine`); with
    one GPU, or on the CPU, it runs in this process.
    ``bootstrap=0`` turns confidence intervals off. ``mc`` / ``entailment`` name contrast-set
    files evaluated on the clean videos (top-level ``mc`` and ``entailment`` keys). ``rerank=K`` with a
    dual-encoder ``first_stage`` re-scores only each caption's top K videos with the cross-encoder
    ``model`` (see :mod:`perturb.bench.pipeline.rerank`). ``stats``, if given, receives the run time, the
    number of forward passes and the model's retries by cause (here and on replicas), and (also
    when the run fails) under ``progress`` the configurations finished and rows cached. ``cache_key`` pins the version the
    embedding cache keys the model by (else its checkpoint, revision, ``cache_version`` or name).
    Video runs are also grouped by suite (top-level ``suites``, :mod:`perturb.bench.scoring.suite_summary`);
    ``baseline_errors`` (a JSON path or mapping of a baseline model's errors) adds ImageNet-C's mCE.
    The device options (``model_options["device"]``, ``source.device``) are checked before any work
    against the GPUs where it runs (:func:`~.devices.check_devices`): a PlacementError (a ValueError)
    in one line, as is a ``scheduler`` that does not answer within ``connect_timeout`` seconds.
    """
    settings = settings or Settings(seed=data.seed)
    metric = gamma_metric(metric)            # parsed once, here (a Metric passes through)
    baseline = load_baseline(baseline_errors) if baseline_errors is not None else None
    spec = model if isinstance(model, str) else None
    source = source or OnTheFly(seed=settings.seed)
    options = model_options or {}
    perturb_device = getattr(source, "device", None)
    request = gpu_request(options.get("device"), perturb_device)
    if backend and spec is None:
        raise ValueError("sharding needs the model as a spec string (e.g. callable:MODULE:ATTR)")
    if backend is None and spec is not None:           # several GPUs here: one local replica each
        backend = default_engine(parse_spec(spec)[0], options.get("device"), n_workers,
                                 device_map=options.get("device_map"),
                                 rerank=rerank is not None)[0]
    if backend and rerank is not None:
        raise ValueError("--rerank runs in this process; drop --backend")
    run = Run(data, metric, baseline, source, cache_dir, settings,
              measured_names(metric.key, judged=data.extra_positives > 0), stats)
    kw = dict(mc=mc, entailment=entailment, bootstrap=bootstrap, level=level, cache_key=cache_key)
    if not backend or parse_spec(spec)[0] == "precomputed":      # embeddings read from files: no replicas
        check_devices(request, IN_PROCESS_ENGINE, local_gpus() if request.needs_count else None)
        m = load_model(model, **options) if spec else wrap(model, _default_id(model))
        return run.execute(m, plan(video, text, severities, pairs), rerank=rerank, first_stage=first_stage,
                           model_options=model_options, **kw)
    with open_replicas(backend, scheduler, n_workers, options.get("device"), perturb_device, connect_timeout) as pool:
        ctx = for_replicas(WorkerContext(spec, {}, data, source, cache_dir, settings, run.measured),
                           replica_options(options, pool.replicas),
                           replica_perturb_device(perturb_device, pool.replicas))
        sharded = Sharded(pool, ctx)
        m = described_model(sharded.call(Describe(ctx)))
        ctx.source.fit_to(frame_spec_of(m.impl))
        return run.execute(m, plan(video, text, severities, pairs), sharded=sharded, **kw)


@dataclass
class Run:
    """One benchmark's inputs, run with a model held here or described by its replicas."""

    data: BenchData
    metric: Metric
    baseline: dict[str, Any] | None
    source: Any
    cache_dir: str | None
    settings: Settings
    measured: tuple[str, ...]                # metric names, per direction
    stats: dict[str, Any] | None

    def execute(self, m: Model, jobs: list[Any], *, mc: str | None, entailment: str | None, bootstrap: int,
                level: float, cache_key: str | None, rerank: int | None = None, first_stage: Any = None,
                model_options: dict[str, Any] | None = None, sharded: Sharded | None = None) -> dict[str, Any]:
        settings, stats, source = self.settings, self.stats, self.source
        retried = m.retries()                # GET /info's included: it is asked below
        if cache_key is not None:
            m.cache_key = cache_key
        if self.cache_dir is not None and m.needs_media:
            notice_unversioned(m)
        if hasattr(source, "fit_to"):
            source.fit_to(frame_spec_of(m.impl))
        encoder = Encoder(m, self.data, source, EmbeddingCache(self.cache_dir), settings, self.measured)
        if stats is not None:
            stats["progress"] = encoder.progress
        if rerank is not None:
            encoder = _two_stage(m, rerank, first_stage, encoder, model_options)
        t0 = time.perf_counter()
        before = m.forward_passes()
        boot = {"n": bootstrap, "seed": settings.seed, "level": level} if bootstrap else None
        try:
            clean, runs, skipped = run_jobs(encoder, jobs, sharded=sharded)
            extra: dict[str, Any] = {"skipped": skipped} if skipped else {}
            for kind, path in (("mc", mc), ("entailment", entailment)):
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
        if rerank is not None:
            extra["rerank"] = encoder.describe()
        if hasattr(source, "describe"):
            extra["decode"] = source.describe()
        if sharded is not None:
            extra["provenance"] = sharded.provenance()
        doc = build_results(model_record(m), self.data, self.metric, clean, runs, boot, extra=extra,
                            ties=settings.ties)
        doc["suites"] = summarize_suites(doc, self.baseline)
        if stats is not None:
            passes = m.forward_passes() - before + (sharded.passes if sharded is not None else 0)
            retries = m.retries() - retried + (sharded.retries if sharded is not None else Counter())
            stats.update(seconds=round(time.perf_counter() - t0, 2), forward_passes=passes, configs=len(jobs),
                         retries=dict(retries))
        return doc
