"""What differs between the results files of the three tasks (docs/results-schema.md): a retrieval
file's scores are per direction (``t2v``, ``v2t``), a classification file's are its accuracies
(``top1``, ``top5``), an lmms-eval file's its task's metric as a fraction (``score``). One
:class:`TaskShape` per task checks its scores, its metric and its extra keys, and lists its tidy
measures; :mod:`perturb.results` checks the rest, the same for all.

Imports nothing above :mod:`.metric_names`, so reading results loads no runner, codec or model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping

from .errors import GateInputError
from .metric_names import (CLASSIFY, DIRECTIONS, GAMMAS, LMMS, MEASURES, RETRIEVAL, TASK_PHRASES, VISUAL,
                           gamma_kinds, gamma_metric, is_fraction, stored_scores)
from .shapes import COUNT, TEXT, Leaf, ListOf, MapOf, NUMBER, Nullable, Obj, Shape

RUN_TEXT_KEYS = ("modality", "perturbation", "category")


def require(mapping: Any, keys: tuple[str, ...], where: str) -> None:
    """An object holding ``keys``; GateInputError naming ``where`` and the missing ones otherwise."""
    if not isinstance(mapping, Mapping):
        raise GateInputError(f"{where}: expected an object; got {type(mapping).__name__}")
    missing = [k for k in keys if k not in mapping]
    if missing:
        raise GateInputError(f"{where}: missing key(s) {', '.join(map(repr, missing))}")


def number(value: Any, field: str, source: str, fraction: bool = False) -> None:
    """A finite number or null (undefined values are written as null, never as NaN); with
    ``fraction``, in [0, 1]."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GateInputError(f"{source}: {field} must be a number or null; got {value!r}")
    if not math.isfinite(value):
        raise GateInputError(f"{source}: {field} is {value!r}; an undefined value must be null")
    if fraction and not 0 <= value <= 1:
        raise GateInputError(f"{source}: {field} is {value!r}; expected a fraction in [0, 1]")


def intervals(record: Mapping[str, Any], field: str, source: str) -> None:
    """The optional ``ci`` object: name → [lo, hi]."""
    ci = record.get("ci")
    if ci is None:
        return
    require(ci, (), f"{source}: {field}.ci")
    for key, interval in ci.items():
        if not isinstance(interval, list) or len(interval) != 2:
            raise GateInputError(f"{source}: {field}.ci.{key} must be a list [lo, hi]; got {interval!r}")
        for i, bound in enumerate(interval):
            number(bound, f"{field}.ci.{key}[{i}]", source)


def _retrieval_scores(record: Any, field: str, source: str) -> None:
    """Per direction, metric name → number; the fraction kinds (R@K, mAP, ...) in [0, 1]."""
    require(record, DIRECTIONS, f"{source}: {field}" if field else source)
    for direction in DIRECTIONS:
        where = f"{field}.{direction}" if field else direction
        require(record[direction], (), f"{source}: {where}")
        for key, value in record[direction].items():
            number(value, f"{where}.{key}", source, fraction=is_fraction(key))


def _retrieval_document(data: Mapping[str, Any], source: str) -> None:
    """The headline metric, written in full (``t2v.R@5``), and measured on the clean run."""
    metric = data["metric"]
    try:
        parsed = gamma_metric(metric) if isinstance(metric, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.name != metric:
        raise GateInputError(f"{source}: metric must be t2v. or v2t. followed by one of "
                             f"{', '.join(gamma_kinds())}; got {metric!r}")
    if not isinstance(parsed.of(data["clean"]), (int, float)):
        raise GateInputError(f"{source}: metric is {metric!r} but clean.{metric} is missing or null")


def _stored(task: str, record: Any, field: str, source: str) -> None:
    """What a classification run stores, ``top1`` (required) and ``top5`` (absent with 5 classes or
    fewer), or an lmms-eval run, ``score``: fractions in [0, 1], and their bootstrap intervals, [lo, hi]
    within [0, 1] with lo <= hi."""
    keys = stored_scores(task)
    require(record, keys[:1], f"{source}: {field}")
    for key in keys:
        if key in record:
            number(record[key], f"{field}.{key}", source, fraction=True)
        interval = (record.get("ci") if isinstance(record.get("ci"), Mapping) else {}).get(key)
        if isinstance(interval, list) and len(interval) == 2:
            for i, bound in enumerate(interval):
                number(bound, f"{field}.ci.{key}[{i}]", source, fraction=True)
            if None not in interval and interval[0] > interval[1]:
                raise GateInputError(f"{source}: {field}.ci.{key} is {interval!r}; expected [lo, hi] with lo <= hi")


def _visual_document(task: str, data: Mapping[str, Any], source: str) -> None:
    """The metric is one of what the task's runs store (``top1`` or ``top5``; ``score``), measured on the
    clean run and on every run (γ is computed on it); every run perturbed images or video (a classifier,
    or an lmms-eval task through its variants, reads no perturbed text)."""
    metric, words = data["metric"], TASK_PHRASES[task]
    if metric not in stored_scores(task):
        raise GateInputError(f"{source}: metric of {words} file must be {' or '.join(stored_scores(task))}; "
                             f"got {metric!r}")
    for where, record in [("clean", data["clean"])] + [(f"runs[{i}]", r) for i, r in enumerate(data["runs"])]:
        if not isinstance(record.get(metric), (int, float)):
            raise GateInputError(f"{source}: metric is {metric!r} but {where}.{metric} is missing or null")
    for i, run in enumerate(data["runs"]):
        if run["modality"] not in VISUAL:
            raise GateInputError(f"{source}: runs[{i}].modality of {words} file must be "
                                 f"{' or '.join(VISUAL)}; got {run['modality']!r}")


def _classification_document(data: Mapping[str, Any], source: str) -> None:
    """A visual document (above) with one label per class."""
    _visual_document(CLASSIFY, data, source)
    labels, classes = data["classification"]["labels"], data["dataset"].get("classes")
    if classes is not None and len(labels) != classes:
        raise GateInputError(f"{source}: classification.labels holds {len(labels)} name(s) but dataset.classes "
                             f"is {classes}; expected one label per class")


def _retrieval_measures(record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [(f"{d}.{m}", v) for d in DIRECTIONS for m, v in record[d].items()]


def _stored_measures(task: str, record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The task's measures the record has: top1, top5, top1_error, top5_error (errors are 1 - accuracy);
    score."""
    return [(m.key, m.read(record)) for m in MEASURES if m.task == task and m.stored in record]


SUBSET_COUNT = Nullable(COUNT)
SUBSET_FILE = Nullable(Leaf("a file name (--subset FILE)", lambda v: isinstance(v, str)))


@dataclass(frozen=True)
class TaskShape:
    """One task's part of the results contract."""

    task: str
    score_keys: tuple[str, ...]                          # what clean and every run hold besides γ
    scores: Callable[[Any, str, str], None]              # (record, field, source): clean's or a run's scores
    document: Callable[[Mapping[str, Any], str], None]   # (document, source): its metric, cross-field rules
    fields: Shape                                        # the keys only this task has, in their shapes
    measures: Callable[[Mapping[str, Any]], list[tuple[str, Any]]]   # a record's tidy measures, γ aside

    @property
    def run_keys(self) -> tuple[str, ...]:
        return (*RUN_TEXT_KEYS, "severity", *self.score_keys, *GAMMAS)


SHAPES = {
    RETRIEVAL: TaskShape(RETRIEVAL, DIRECTIONS, _retrieval_scores, _retrieval_document,
                         Obj({"dataset": Obj(optional={"subset": SUBSET_COUNT})},
                             {"chance": Nullable(MapOf(MapOf(NUMBER)))}),
                         _retrieval_measures),
    CLASSIFY: TaskShape(CLASSIFY, ("top1",), partial(_stored, CLASSIFY), _classification_document,
                        Obj({"dataset": Obj(optional={"subset": SUBSET_FILE, "classes": COUNT, "media": TEXT,
                                                      "recipe": Nullable(TEXT)}),
                             "classification": Obj({"labels": ListOf(TEXT)},
                                                   {"zero_shot": Nullable(Obj({"templates": ListOf(TEXT)},
                                                                              {"classes": COUNT}))})},
                            {"chance": Nullable(MapOf(NUMBER))}),
                        partial(_stored_measures, CLASSIFY)),
    LMMS: TaskShape(LMMS, ("score",), partial(_stored, LMMS), partial(_visual_document, LMMS),
                    Obj({"lmms": Obj({"task": TEXT, "metric": TEXT, "scale": NUMBER,
                                      "variants": ListOf(Obj({"task": TEXT, "value": NUMBER, "results": TEXT}))})}),
                    partial(_stored_measures, LMMS)),
}


def shape_of(data: Mapping[str, Any], source: str) -> TaskShape:
    """The shape of a document's ``task`` (none: retrieval); GateInputError for an unknown task."""
    task = data.get("task", RETRIEVAL)
    if task not in SHAPES:
        raise GateInputError(f"{source}: task must be one of {', '.join(SHAPES)}; got {task!r}")
    return SHAPES[task]
