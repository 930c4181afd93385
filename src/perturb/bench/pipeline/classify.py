"""A classification run's set-up: its metric, the jobs an image dataset can run, the prompts a
dual encoder classifies with zero-shot, and each item's class as the model's label index."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from ...registry import REGISTRY
from ..adapters.model_options import ModelOptions
from ..adapters.protocol import Model
from ..adapters.zero_shot import DEFAULT_TEMPLATES, Prompts, zero_shot
from .data import BenchData, set_labels
from .jobs import Job

TASKS = ("retrieve", "classify")
METRICS = ("top1", "top5")
RETRIEVAL_DEFAULT = "t2v.R@5"


class ClassMapError(ValueError):
    """A dataset's classes that do not map onto the model's labels (found before any work)."""


def check_task(task: str) -> str:
    """``task`` when it is one of :data:`TASKS`; else a one-line ValueError."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    return task


def classify_metric(metric: Any) -> str:
    """The metric γ is computed on in a classification run: ``top1`` or ``top5``."""
    name = getattr(metric, "name", metric)
    if name not in METRICS:
        raise ValueError(f"a classification run's metric is one of {', '.join(METRICS)}; got {name!r}")
    return name


def check_jobs(jobs: Sequence[Job], media: str) -> None:
    """Only visual perturbations classify, and on images only those that apply to one image."""
    text = [j.perturbation for j in jobs if j.modality != "video"]
    if text:
        raise ValueError(f"a classification run perturbs images or videos only; got the text "
                         f"perturbation(s) {', '.join(dict.fromkeys(text))}: drop --text")
    if media == "image":
        from ...image.api import refusal
        for job in jobs:
            why = refusal(REGISTRY.get(job.video, "video"))
            if why:
                raise ValueError(f"{why}; on an image dataset choose among perturb.image.ops()")


def class_names(data: BenchData, classes: Sequence[str] | None) -> list[str]:
    """The class names a zero-shot run scores: ``classes`` (a classes file) or the dataset's, sorted."""
    return list(classes) if classes else sorted(set(data.class_names))


def with_prompts(options: ModelOptions, data: BenchData, templates: Sequence[str] | None,
                 classes: Sequence[str] | None, cache_dir: str | None) -> ModelOptions:
    """``options`` with the prompts a dual encoder classifies with (default: one template per
    media kind), their label embeddings cached under ``cache_dir``, and a logit function's labels."""
    prompts = Prompts(tuple(templates or DEFAULT_TEMPLATES[data.media]), tuple(class_names(data, classes)))
    return replace(options, prompts=prompts, prompt_cache=cache_dir,
                   labels=tuple(classes) if classes else options.labels)


def classifier(m: Model, data: BenchData, options: ModelOptions, classes: Sequence[str] | None) -> Model:
    """``m`` as a classifier (a dual encoder wrapped zero-shot), with ``data.labels`` set: each item's
    class as its label index; a ValueError naming the classes that do not map, before any work."""
    if m.kind == "dual" and options.prompts is not None:
        m = zero_shot(m, options.prompts, options.prompt_cache)
    if m.kind != "classifier":
        raise ValueError(f"{m.id} is a {m.kind} model; classification needs a classifier (labels, "
                         f"classify) or a dual encoder (zero-shot over the class names)")
    own = classes and list(m.labels) != list(classes)      # a classes file naming the model's labels
    try:
        set_labels(data, m.labels, list(classes) if own else None)
    except ValueError as e:
        raise ClassMapError(f"{data.name}: {e}") from None
    return m


def image_selection(video: Sequence[str]) -> list[str]:
    """The ops of a default selection that apply to one image."""
    return [v for v in video if REGISTRY.get(v, "video").applies_to_images]
