"""Class lists and the mapping of a labelled dataset's class names onto a model's label indices.

Matching a dataset class to a model label, in order (the first tier with a match decides):

1. exactly as written (and, for a classes-file line ``n01440764 tench, Tinca tinca``, its wnid);
2. ignoring case, underscores for spaces and repeated whitespace (``Air_Drumming`` = ``air drumming``);
3. the same, against the first comma-separated name of the label (hf's ImageNet ``id2label``
   writes ``tench, Tinca tinca``: ``tench`` matches).

A class that matches two labels in its tier (ImageNet has two ``crane``) is an error.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .annotations import DatasetFormatError, first_few, read_lines
from .items import LabelledItem

WNID = re.compile(r"n\d{8}")
WNID_LINE = re.compile(r"(n\d{8})\s+(\S.*)")             # LOC_synset_mapping.txt's "n01440764 tench, ..."
MATCHING = ("matching is exact, then ignoring case, spaces and underscores, "
            "then by a label's first comma-separated name")


def read_classes(path: str | os.PathLike) -> list[str]:
    """One class a line, in the model's label order (line i is label i), each trimmed. A blank
    line, a class given twice or an empty file is a DatasetFormatError naming the line."""
    path = Path(path)
    lines = read_lines(path)
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        name = line.strip()
        if not name:
            raise DatasetFormatError(f"{path}:{n}: blank line; expected one class name a line")
        if name in seen:
            raise DatasetFormatError(f"{path}:{n}: class {name!r} is given twice (first on line {seen[name]}); "
                                     "expected each class once")
        seen[name] = n
    if not seen:
        raise DatasetFormatError(f"{path}: no classes; expected one class name a line")
    return list(seen)


def normalized(name: str) -> str:
    """A name with case, underscores and repeated whitespace ignored."""
    return " ".join(name.replace("_", " ").split()).casefold()


def label_keys(name: str) -> tuple[set[str], set[str], set[str]]:
    """The keys a label is found by in each matching tier."""
    exact = {name}
    line = WNID_LINE.fullmatch(name)
    if line:
        exact.add(line.group(1))
        name = line.group(2)
    return exact, {normalized(name)}, {normalized(name.split(",")[0])}


def model_names(model_labels: Mapping[int | str, str] | Sequence[str]) -> list[tuple[int, str]]:
    """(index, name) of an hf ``id2label`` (keys may be JSON strings) or a list in label order."""
    if isinstance(model_labels, Mapping):
        try:
            names = sorted((int(k), str(v)) for k, v in model_labels.items())
        except (TypeError, ValueError):
            raise ValueError(f"id2label keys must be label indices; got {first_few(model_labels)}") from None
    else:
        names = [(i, str(v)) for i, v in enumerate(model_labels)]
    if not names:
        raise ValueError("the model has no labels; expected an id2label or a class list")
    return names


def label_index(labels: Iterable[str], model_labels: Mapping[int | str, str] | Sequence[str],
                classes: Sequence[str] | None = None) -> dict[str, int]:
    """Each dataset class name -> the model's label index (module docstring: the matching).

    ``model_labels`` is the model's ``id2label`` or class list; ``classes`` (read_classes), when
    given, names the model's labels by position instead and must be as long. A class that maps
    to no label is a ValueError naming the first five and how many; one that maps to two, too.
    """
    names = model_names(model_labels)
    target = "the model's labels"
    if classes is not None:
        if len(classes) != len(names):
            raise ValueError(f"the classes file lists {len(classes)} classes but the model has "
                             f"{len(names)} labels; expected one line per model label, in its order")
        names, target = [(i, c) for (i, _), c in zip(names, classes)], "the classes file"
    tiers: list[dict[str, set[int]]] = [{}, {}, {}]
    for index, name in names:
        for tier, keys in zip(tiers, label_keys(name)):
            for key in keys:
                tier.setdefault(key, set()).add(index)
    found, unmapped = {}, []
    for label in dict.fromkeys(labels):
        for tier, key in zip(tiers, (label, normalized(label), normalized(label.split(",")[0]))):
            hits = tier.get(key)
            if hits and len(hits) > 1:
                shown = ", ".join(f"{i} ({dict(names)[i]!r})" for i in sorted(hits))
                raise ValueError(f"dataset class {label!r} matches {len(hits)} of {target}: {shown}; "
                                 "pass a classes file to name each label once")
            if hits:
                found[label] = next(iter(hits))
                break
        else:
            unmapped.append(label)
    if unmapped:
        hint = ("; they look like ImageNet wnids: pass a classes file listing the wnids in the model's "
                "label order" if classes is None and all(WNID.fullmatch(u) for u in unmapped) else "")
        raise ValueError(f"{len(unmapped)} of {len(found) + len(unmapped)} dataset classes do not map onto "
                         f"{target} ({len(names)}): {first_few(map(repr, unmapped))} ({MATCHING}){hint}")
    return found


def map_labels(items: Iterable[LabelledItem], model_labels: Mapping[int | str, str] | Sequence[str],
               classes: Sequence[str] | None = None) -> list[int]:
    """The model's label index of each item's class, in item order (see :func:`label_index`)."""
    items = list(items)
    index = label_index((it.label for it in items), model_labels, classes)
    return [index[it.label] for it in items]
