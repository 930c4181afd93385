"""Multiple-choice sets: Random MC and Contrast MC, in the published TSV layout and as JSONL.

TSV columns: ``clip, ending0, ending1, ending2, ending3, ending4, label`` (``ending{label}`` is
the true caption). The JSONL form also keeps what each ending is ("true", "random" or a
contrast type) and the contrast's span and rule.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..fileio import read_jsonl, write_jsonl
from ..rng import SeedLike, as_generator, derive_generator
from .types import Contrast

N_ENDINGS = 5
TSV_COLUMNS = ("clip", *(f"ending{k}" for k in range(N_ENDINGS)), "label")


@dataclass(frozen=True)
class Entry:
    """One captioned clip: id, caption and an optional group (movie, recipe)."""

    clip: str
    caption: str
    group: str | None = None


@dataclass
class MCRow:
    """One MC question: the clip, its endings, the index of the true one, and what each ending is."""

    clip: str
    endings: list[str]
    label: int
    kinds: list[str] = field(default_factory=list)      # "true", "random" or a contrast type
    contrast: dict[str, Any] | None = None              # Contrast.to_dict() of the hard negative

    def to_dict(self) -> dict[str, Any]:
        return {"clip": self.clip, "endings": self.endings, "label": self.label,
                "kinds": self.kinds, "contrast": self.contrast}


@dataclass
class MCSet:
    """MC rows plus how many clips were filtered out for want of a valid contrast."""

    rows: list[MCRow]
    filtered: int = 0
    filtered_clips: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[MCRow]:
        """The rows, so a set goes straight to :func:`write_mc_tsv` / :func:`write_mc_jsonl`."""
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def entries(items: Iterable[Any]) -> list[Entry]:
    """Entries from (clip, caption[, group]) tuples, dicts, Entry objects or dataset Items
    (``read_dataset``: the item id, its first caption and its group; items without captions are
    left out). A caption must be a non-empty string: None or a number would otherwise become an
    ending such as 'None'."""
    out = []
    for k, it in enumerate(items):
        if isinstance(it, Entry):
            clip, caption, group = it.clip, it.caption, it.group
        elif hasattr(it, "item_id") and hasattr(it, "captions"):      # a dataset Item
            if not it.captions:
                continue
            clip, caption, group = it.item_id, it.captions[0], it.group
        elif isinstance(it, dict):
            clip, caption, group = it["clip"], it["caption"], it.get("group")
        else:
            clip, caption, group = it[0], it[1], (it[2] if len(it) > 2 else None)
        if not isinstance(caption, str) or not caption.strip():
            raise ValueError(f"item {k} ({clip!r}): expected the caption as a non-empty string; got {caption!r}")
        if clip is None or isinstance(clip, bool) or not isinstance(clip, (str, int)):
            raise ValueError(f"item {k}: expected the clip id as a string; got {clip!r}")
        out.append(it if isinstance(it, Entry) else Entry(str(clip), caption, group))
    return out


def _negatives(entry: Entry, pool: Sequence[Entry], by_group: dict[Any, list[int]],
               rng: np.random.Generator, k: int) -> list[str]:
    """k distinct captions of other clips (same group when groups are given)."""
    idx = by_group.get(entry.group, []) if entry.group is not None else None
    candidates = idx if idx is not None else range(len(pool))
    order = rng.permutation(len(candidates))
    out: list[str] = []
    for j in order:
        other = pool[candidates[int(j)]]
        if other.clip == entry.clip or other.caption == entry.caption or other.caption in out:
            continue
        out.append(other.caption)
        if len(out) == k:
            return out
    raise ValueError(f"not enough distinct captions of other clips for {entry.clip!r}"
                     + (f" in group {entry.group!r}" if entry.group is not None else "")
                     + f"; expected {k} (one per wrong ending), found {len(out)}")


def _balanced_labels(n: int, rng: np.random.Generator) -> np.ndarray:
    """n label positions, each position used n/5 times (±1), in a seeded random order."""
    return rng.permutation(np.arange(n) % N_ENDINGS)


def _rows(selected: list[Entry], negatives: list[list[str]], kinds: list[list[str]],
          contrasts: list[dict[str, Any] | None], seed: SeedLike) -> list[MCRow]:
    labels = _balanced_labels(len(selected), derive_generator(seed, "mc-labels", len(selected)))
    rows = []
    for e, negs, ks, con, lab in zip(selected, negatives, kinds, contrasts, labels):
        lab = int(lab)
        endings = negs[:lab] + [e.caption] + negs[lab:]
        row_kinds = ks[:lab] + ["true"] + ks[lab:]
        rows.append(MCRow(e.clip, endings, lab, row_kinds, con))
    return rows


def _grouping(pool: Sequence[Entry]) -> dict[Any, list[int]]:
    by_group: dict[Any, list[int]] = {}
    for i, e in enumerate(pool):
        by_group.setdefault(e.group, []).append(i)
    return by_group


def random_mc(items: Iterable[Any], *, seed: SeedLike = 0) -> MCSet:
    """Random MC: each clip's caption with 4 captions of other clips (of its group, if given)."""
    pool = entries(items)
    by_group = _grouping(pool)
    negs = [_negatives(e, pool, by_group, derive_generator(seed, "mc", e.clip), N_ENDINGS - 1)
            for e in pool]
    kinds = [["random"] * (N_ENDINGS - 1) for _ in pool]
    return MCSet(_rows(pool, negs, kinds, [None] * len(pool), seed))


def contrast_mc(items: Iterable[Any], type: str, *, seed: SeedLike = 0,
                contrasts: Sequence[Contrast | None] | None = None, **context: Any) -> MCSet:
    """Contrast MC: Random MC with one negative replaced by a contrast of the true caption.

    Clips whose caption has no valid contrast (or whose contrast equals another ending) are
    filtered out and counted. ``contrasts`` may be given precomputed (one per item).
    """
    from .api import generate_batch
    pool = entries(items)
    if isinstance(seed, np.random.Generator):
        seed = int(as_generator(seed).integers(0, 2**63))
    if contrasts is None:
        found = generate_batch([e.caption for e in pool], type, seed=seed, n=1, **context)
        contrasts = [f[0] if f else None for f in found]
    by_group = _grouping(pool)
    selected, negs, kinds, cons, filtered = [], [], [], [], []
    for e, c in zip(pool, contrasts):
        rng = derive_generator(seed, "mc", e.clip)
        n = _negatives(e, pool, by_group, rng, N_ENDINGS - 1)
        if c is None or c.text == e.caption or c.text in n:
            filtered.append(e.clip)
            continue
        slot = int(rng.integers(N_ENDINGS - 1))
        n[slot] = c.text
        k = ["random"] * (N_ENDINGS - 1)
        k[slot] = c.type
        selected.append(e)
        negs.append(n)
        kinds.append(k)
        cons.append(c.to_dict())
    return MCSet(_rows(selected, negs, kinds, cons, seed), len(filtered), filtered)


def write_mc_tsv(rows: Iterable[MCRow], path: str | Path) -> Path:
    """Write the published layout (header + one row per question), tab-separated."""
    path = Path(path)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        w.writerow(TSV_COLUMNS)
        for r in rows:
            w.writerow([r.clip, *(e.replace("\t", " ").replace("\n", " ") for e in r.endings), r.label])
    return path


def read_mc_tsv(path: str | Path) -> list[MCRow]:
    """Read a TSV in the published layout (``clip, ending0..ending4, label``)."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != TSV_COLUMNS:
            raise ValueError(f"{path}: expected the header {' '.join(TSV_COLUMNS)}; got {header}")
        rows = []
        for n, rec in enumerate(reader, start=2):
            if not rec:
                continue
            if len(rec) != len(TSV_COLUMNS):
                raise ValueError(f"{path}:{n}: expected {len(TSV_COLUMNS)} columns, got {len(rec)}")
            label = int(rec[-1])
            if not 0 <= label < N_ENDINGS:
                raise ValueError(f"{path}:{n}: label {label} out of range")
            rows.append(MCRow(rec[0], list(rec[1:1 + N_ENDINGS]), label))
    return rows


def write_mc_jsonl(rows: Iterable[MCRow], path: str | Path) -> Path:
    """Write one JSON object per question, with ending kinds and the contrast's span."""
    return write_jsonl(path, (r.to_dict() for r in rows))


def read_mc_jsonl(path: str | Path) -> list[MCRow]:
    """Read the JSONL form written by :func:`write_mc_jsonl`."""
    return [MCRow(d["clip"], d["endings"], d["label"], d.get("kinds", []), d.get("contrast"))
            for d in read_jsonl(path)]
