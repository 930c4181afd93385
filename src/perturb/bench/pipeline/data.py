"""What a benchmark runs on: items (videos), caption queries, relevance, and the --subset choice."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ...dataset.items import Item, LabelledItem
from ...fileio import read_jsonl
from ...rng import derive_seed

CAPTION_MODES = ("all", "first")


@dataclass
class BenchData:
    """Items, one query per kept caption, and the (queries x items) relevance matrix."""

    name: str
    path: str
    items: list[Item]
    query_ids: list[str]
    captions: list[str]
    query_item: np.ndarray                       # item index of each query's own video
    relevance: np.ndarray                        # bool (Q, N), own video plus extra positives
    subset: int | None = None
    seed: int = 0
    extra_positives: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    grades: np.ndarray | None = None             # float (Q, N) when judgements carry grades (else 1 per positive)
    labels: np.ndarray | None = None             # a labelled dataset's class of each item, as a model label index
    media: str = "video"                         # "image" or "video": what the items are

    @property
    def class_names(self) -> list[str]:
        """A labelled dataset's class of each item, as the dataset names it (its one caption)."""
        return [it.captions[0] for it in self.items]

    @property
    def item_ids(self) -> list[str]:
        return [it.item_id for it in self.items]

    @property
    def gains(self) -> np.ndarray:
        """What each candidate is worth to each query: its grade, or 1 for a positive without grades."""
        return self.relevance if self.grades is None else self.grades

    def fingerprint(self) -> str:
        """A short stable id of the dataset (name and location), used in cache keys."""
        return hashlib.sha256(f"{self.name}|{self.path}".encode()).hexdigest()[:16]


def select_subset(items: Sequence[Item], n: int | None, seed: int = 0) -> list[Item]:
    """The same ``n`` items for the same (items, seed), whatever their order; all when n is None."""
    ordered = sorted(items, key=lambda it: it.item_id)
    if n is None or n >= len(ordered):
        return ordered
    if n < 1:
        raise ValueError(f"--subset must be >= 1; got {n}")
    rng = np.random.default_rng(derive_seed(seed, "subset"))
    keep = np.sort(rng.choice(len(ordered), size=n, replace=False))
    return [ordered[i] for i in keep]


def _queries(items: Sequence[Item], captions: str) -> tuple[list[str], list[str], list[int]]:
    if captions not in CAPTION_MODES:
        raise ValueError(f"captions must be one of {CAPTION_MODES}; got {captions!r}")
    ids, texts, owner = [], [], []
    for i, it in enumerate(items):
        if not it.captions:
            raise ValueError(f"item {it.item_id!r} has no caption; every item needs at least one")
        chosen = it.captions[:1] if captions == "first" else it.captions
        for k, cap in enumerate(chosen):
            ids.append(f"{it.item_id}#{k}")
            texts.append(cap)
            owner.append(i)
    return ids, texts, owner


def _judgement_grade(row: dict[str, Any]) -> Any:
    """What a judgement row's positive is worth: its ``grade``, or 1 when the row carries none."""
    return row.get("grade", 1)


def read_judgements(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Extra positives, JSONL: ``{"query_id" | "caption": ..., "item_id" | "video_id": ..., "relevant": true}``,
    optionally graded (``"grade": 2``, a number >= 0; a positive without one is worth 1)."""
    rows = read_jsonl(path)
    for n, row in enumerate(rows, 1):
        if (not isinstance(row, dict) or not ({"query_id", "caption"} & row.keys())
                or not ({"item_id", "video_id"} & row.keys())):
            got = sorted(row) if isinstance(row, dict) else type(row).__name__
            raise ValueError(f"{path}: row {n}: expected an object with query_id or caption, and "
                             f"item_id or video_id; got {got}")
        grade = _judgement_grade(row)
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not 0 <= grade < float("inf"):
            raise ValueError(f"{path}: row {n}: grade must be a finite number >= 0; got {grade!r}")
    return rows


def _apply_judgements(data: BenchData, rows: list[dict[str, Any]]) -> int:
    by_query = {q: i for i, q in enumerate(data.query_ids)}
    by_caption: dict[str, list[int]] = {}
    for i, c in enumerate(data.captions):
        by_caption.setdefault(c, []).append(i)
    by_item = {it.item_id: j for j, it in enumerate(data.items)}
    by_video: dict[str, list[int]] = {}
    for j, it in enumerate(data.items):
        by_video.setdefault(it.video_id, []).append(j)
    if any("grade" in row for row in rows):
        data.grades = data.relevance.astype(np.float64)
    added = 0
    for row in rows:
        if not row.get("relevant", True) or _judgement_grade(row) == 0:
            continue
        qs = [by_query[row["query_id"]]] if row.get("query_id") in by_query else by_caption.get(row.get("caption"), [])
        js = [by_item[row["item_id"]]] if row.get("item_id") in by_item else by_video.get(row.get("video_id"), [])
        for q in qs:
            for j in js:
                added += int(not data.relevance[q, j])
                data.relevance[q, j] = True
                if data.grades is not None:        # a pair judged twice takes its last row's grade
                    data.grades[q, j] = _judgement_grade(row)
    return added


def make_data(items: Sequence[Item], name: str, path: str, *, subset: int | None = None,
              seed: int = 0, captions: str = "all", judgements: str | None = None) -> BenchData:
    """A :class:`BenchData` from reader items (subset applied, extra positives merged)."""
    chosen = select_subset(items, subset, seed)
    if not chosen:
        raise ValueError(f"dataset {name!r} at {path} has no items")
    ids, texts, owner = _queries(chosen, captions)
    rel = np.zeros((len(ids), len(chosen)), dtype=bool)
    rel[np.arange(len(ids)), owner] = True
    data = BenchData(name, str(path), chosen, ids, texts, np.asarray(owner), rel, subset, seed)
    if judgements:
        data.extra_positives = _apply_judgements(data, read_judgements(judgements))
    return data


def labelled_item(it: LabelledItem) -> Item:
    """A labelled item as the runner's item: its class name is its one caption, and an image is
    marked so that it is read as a one-frame clip."""
    return Item(it.item_id, it.item_id, it.path, (it.label,), it.start, it.end,
                meta={**it.meta, "media": it.kind})


def make_labelled_data(items: Sequence[LabelledItem], name: str, path: str, *, subset: int | None = None,
                       seed: int = 0) -> BenchData:
    """A :class:`BenchData` of a labelled dataset (images or videos, not both); its ``labels`` are
    set once the model's label order is known (:func:`set_labels`)."""
    kinds = sorted({it.kind for it in items})
    if len(kinds) > 1:
        raise ValueError(f"dataset {name!r} at {path} mixes images and videos; expected one kind")
    data = make_data([labelled_item(it) for it in items], name, path, subset=subset, seed=seed, captions="first")
    data.media = kinds[0] if kinds else "video"
    return data


def set_labels(data: BenchData, model_labels: Sequence[str], classes: Sequence[str] | None = None) -> None:
    """Each item's class as the model's label index (:func:`perturb.dataset.classes.label_index`;
    ``classes`` names the model's labels by position); a ValueError naming the classes that do not map."""
    from ...dataset.classes import label_index

    names = data.class_names
    index = label_index(names, list(model_labels), classes)
    data.labels = np.asarray([index[n] for n in names], dtype=np.int64)
