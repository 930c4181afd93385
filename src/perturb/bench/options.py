"""A benchmark's options object (:class:`BenchOptions`, holding the model's
:class:`~.adapters.model_options.ModelOptions`), built once by the caller or, from the command
line, by :func:`bench_options`, and passed whole to ``benchmark()``."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..clusters import DEFAULT_CONNECT_TIMEOUT
from ..options import options_object
from .adapters.model_options import ModelOptions

if TYPE_CHECKING:
    from .pipeline.encoder import Settings
    from .pipeline.built import Source
    from ..transforms.trained import TrainedWith


@dataclass(frozen=True, kw_only=True)
class BenchOptions:
    """Everything ``benchmark()`` takes beyond the run's selection:

    - ``model``: how a spec-string model is loaded (and ``first_stage`` with it);
    - ``bootstrap`` resamples (0: no confidence intervals) at confidence ``level``;
    - ``source`` of the clips (default: rendered on the fly from ``settings.seed``), ``cache_dir``
      of the embeddings (None: no cache), ``settings`` (seed, batch size, workers, ties, progress);
    - ``backend``: the engine, ``"loky"``, ``"dask"`` or ``"ray"``, ``"in-process"`` (this
      process), or None to choose (:func:`~.distributed.placement.default_engine`); ``scheduler``
      an existing cluster to join within ``connect_timeout`` seconds; ``n_workers`` caps replicas;
    - ``mc`` / ``entailment``: contrast-set files evaluated on the clean videos;
    - ``rerank`` K re-scores each caption's top K videos of the dual encoder ``first_stage``;
    - ``baseline_errors``: a JSON path or mapping of a baseline model's errors (ImageNet-C's mCE),
      read and checked once, here (a ValueError in one line);
    - ``task``: ``"retrieve"`` or ``"classify"`` (a labelled dataset; the model a classifier, or a
      dual encoder classifying zero-shot with ``templates`` over the class names); ``classes``: the
      model's labels by position (a classes file), a logit function's labels, or zero-shot's names;
    - ``trained_with``: the ops the model was trained with, a selection (``suite:imagenet-c``) or a
      transforms log's path (:mod:`perturb.transforms.trained`), read once, here: results then hold
      the seen/held-out ``split`` (:mod:`.scoring.held_out`).
    """

    model: ModelOptions = ModelOptions()
    bootstrap: int = 1000
    level: float = 0.95
    source: Source | None = None
    cache_dir: str | None = None
    settings: Settings | None = None
    backend: str | None = None
    scheduler: str | None = None
    n_workers: int | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    mc: str | None = None
    entailment: str | None = None
    rerank: int | None = None
    first_stage: Any = None
    baseline_errors: str | Path | Mapping[str, Any] | None = None
    task: str = "retrieve"
    templates: tuple[str, ...] | None = None
    classes: tuple[str, ...] | None = None
    trained_with: str | TrainedWith | None = None

    def __post_init__(self) -> None:
        from .scoring.baselines import load_baseline

        from .pipeline.classify import check_task

        options_object(self.model, ModelOptions, "BenchOptions(model=...)")
        check_task(self.task)
        if self.baseline_errors is not None:
            object.__setattr__(self, "baseline_errors", load_baseline(self.baseline_errors))
        if self.trained_with is not None:
            from ..transforms.trained import trained_with
            object.__setattr__(self, "trained_with", trained_with(self.trained_with))


def model_options(args: argparse.Namespace) -> ModelOptions:
    """The model options of ``perturb bench``'s command line."""
    return ModelOptions(device=args.device, frames=args.frames, timeout=args.timeout,
                        batch_size=args.batch_size if args.model_batch is None else args.model_batch,
                        dtype=args.dtype, precision=args.precision, device_map=args.device_map,
                        cache_key=args.cache_key, frame_sampling=args.frame_sampling)


def bench_options(args: argparse.Namespace, built: Any, engine: str | None) -> BenchOptions:
    """The options of ``perturb bench``'s command line, on the ``engine`` chosen for it (None: this
    process), benched from ``built`` when given, else rendered on the fly; a ValueError in one line
    for a ``--baseline-errors`` file that does not hold a baseline."""
    from .distributed.placement import IN_PROCESS_ENGINE
    from .pipeline.encoder import Settings
    from .pipeline.sources import OnTheFly
    from ..dataset.classes import read_classes

    source = built if built is not None else OnTheFly(
        seed=args.seed, size=args.size, fps=args.fps, max_frames=args.max_frames, device=args.perturb_device,
        per_frame=args.per_frame)
    return BenchOptions(
        model=model_options(args), bootstrap=args.bootstrap, level=args.level, source=source,
        cache_dir=None if args.no_cache else (args.cache or str(Path(args.out) / "cache")),
        settings=Settings(seed=args.seed, batch_size=args.batch_size, workers=args.workers, ties=args.ties,
                          progress=not args.no_progress),
        backend=engine or IN_PROCESS_ENGINE, scheduler=args.scheduler, n_workers=args.jobs,
        connect_timeout=args.connect_timeout, mc=args.mc, entailment=args.entailment, rerank=args.rerank,
        first_stage=args.first_stage, baseline_errors=args.baseline_errors, task=args.task,
        templates=_templates(args.prompt), classes=tuple(read_classes(args.classes)) if args.classes else None,
        trained_with=args.trained_with)


def _templates(prompt: str | None) -> tuple[str, ...] | None:
    """--prompt's templates (a one-line ValueError for one without {})."""
    if prompt is None:
        return None
    from .adapters.zero_shot import read_templates
    return read_templates(prompt)
