"""``benchmark()``: one call from a model and a dataset to a results document."""
from __future__ import annotations

import sys
import time
from typing import Any, Sequence

from ..results import Metric, gamma_metric
from ..selection import SEVERITY_LEVELS
from .adapters.factory import load_model
from .adapters.frames import frame_spec_of
from .adapters.protocol import Model, wrap
from .cache import EmbeddingCache
from .contrast_eval import evaluate_entailment, evaluate_mc
from .data import BenchData
from .encoder import Encoder, Settings
from .plan import plan
from .results import build_results
from .shards import run_jobs
from .sources import OnTheFly
from .suite_summary import load_baseline, summarize_suites


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


def _two_stage(m: Model, k: int, first_stage: Any, encoder: Encoder, options: dict[str, Any] | None,
               backend: str | None) -> Encoder:
    from .rerank import RerankEncoder

    if first_stage is None:
        raise ValueError("--rerank needs --first-stage MODEL (a dual encoder that ranks first)")
    if backend:
        raise ValueError("--rerank runs in this process; drop --backend")
    first = load_model(first_stage, **(options or {})) if isinstance(first_stage, str) \
        else wrap(first_stage, _default_id(first_stage))
    first_encoder = Encoder(first, encoder.data, encoder.source, encoder.cache, encoder.settings)
    return RerankEncoder(m, first_encoder, k, encoder.data, encoder.source, encoder.cache, encoder.settings,
                         encoder.with_ap)


def benchmark(model: Model | Any | str, data: BenchData, *, video: Sequence[str] = (),
              text: Sequence[str] = (), severities: Sequence[int] = SEVERITY_LEVELS,
              pairs: Sequence[tuple[str, str]] = (), metric: str | Metric = "t2v.R@5",
              bootstrap: int = 1000, level: float = 0.95, source: OnTheFly | None = None,
              cache_dir: str | None = None, settings: Settings | None = None,
              backend: str | None = None, scheduler: str | None = None, n_workers: int = 2,
              model_options: dict[str, Any] | None = None,
              stats: dict[str, Any] | None = None, mc: str | None = None,
              entailment: str | None = None, cache_key: str | None = None, rerank: int | None = None,
              first_stage: Model | Any | str | None = None,
              baseline_errors: str | dict[str, Any] | None = None) -> dict[str, Any]:
    """Run clean + every configuration and return the results.json document.

    ``model`` is a :class:`Model`, any encoder object, or a spec string (``clip:...``,
    ``callable:MODULE:ATTR``...); sharding over ``backend="dask"`` needs the spec string.
    ``bootstrap=0`` turns confidence intervals off. ``mc`` / ``entailment`` name contrast-set
    files evaluated on the clean videos (top-level ``mc`` and ``entailment`` keys). ``rerank=K`` with a
    dual-encoder ``first_stage`` re-scores only each caption's top K videos with the cross-encoder
    ``model`` (see :mod:`perturb.bench.rerank`). ``stats``, if given, receives the run time and
    the number of forward passes made in this process, and (also when the run fails) under
    ``progress`` the configurations finished and rows cached. ``cache_key`` pins the version the
    embedding cache keys the model by (else its checkpoint, revision, ``cache_version`` or name).
    Video runs are also grouped by suite (top-level ``suites``, :mod:`perturb.bench.suite_summary`);
    ``baseline_errors`` (a JSON path or mapping of a baseline model's errors) adds ImageNet-C's mCE.
    """
    settings = settings or Settings(seed=data.seed)
    metric = gamma_metric(metric)            # parsed once, here (a Metric passes through)
    baseline = load_baseline(baseline_errors) if baseline_errors is not None else None
    spec = model if isinstance(model, str) else None
    m = load_model(model, **(model_options or {})) if spec else wrap(model, _default_id(model))
    if cache_key is not None:
        m.cache_key = cache_key
    if cache_dir is not None and m.needs_media:
        notice_unversioned(m)
    source = source or OnTheFly(seed=settings.seed)
    if hasattr(source, "fit_to"):
        source.fit_to(frame_spec_of(m.impl))
    jobs = plan(video, text, severities, pairs)
    with_ap = data.extra_positives > 0 or metric.key == "mAP"
    encoder = Encoder(m, data, source, EmbeddingCache(cache_dir), settings, with_ap=with_ap)
    if stats is not None:
        stats["progress"] = encoder.progress
    if rerank is not None:
        encoder = _two_stage(m, rerank, first_stage, encoder, model_options, backend)
    t0 = time.perf_counter()
    before = m.forward_passes()
    clean, runs, skipped = run_jobs(encoder, jobs, backend=backend, scheduler=scheduler, n_workers=n_workers,
                           model_spec=spec, model_options=model_options)
    boot = {"n": bootstrap, "seed": settings.seed, "level": level} if bootstrap else None
    extra: dict[str, Any] = {"skipped": skipped} if skipped else {}
    if mc:
        extra["mc"] = evaluate_mc(encoder, mc, {"n": bootstrap, "seed": settings.seed, "level": level}
                                  if bootstrap else None)
    if entailment:
        extra["entailment"] = evaluate_entailment(encoder, entailment)
    if rerank is not None:
        extra["rerank"] = encoder.describe()
    if hasattr(source, "describe"):
        extra["decode"] = source.describe()
    doc = build_results(model_record(m), data, metric, clean, runs, boot, extra=extra, ties=settings.ties)
    doc["suites"] = summarize_suites(doc, baseline)
    if stats is not None:
        stats.update(seconds=round(time.perf_counter() - t0, 2), forward_passes=m.forward_passes() - before,
                     configs=len(jobs))
    return doc
