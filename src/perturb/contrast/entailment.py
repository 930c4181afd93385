"""Entailment sets in VideoCon's form: (video, caption, label), 1 = true caption, 0 = contrast."""
from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from ..fileio import read_jsonl
from ..rng import SeedLike
from .mc import entries


@dataclass(frozen=True)
class Pair:
    """One entailment example; ``type`` and ``span`` are empty for true captions."""

    video: str
    caption: str
    label: int
    type: str = ""
    rule: str = ""
    explanation: str = ""


def entailment_set(items: Iterable[Any], types: str | Iterable[str], *, seed: SeedLike = 0,
                   **context: Any) -> list[Pair]:
    """For each clip: its true caption (1) and one contrast per type that applies (0)."""
    from .api import generate_batch
    pool = entries(items)
    types = [types] if isinstance(types, str) else list(types)
    found = {t: generate_batch([e.caption for e in pool], t, seed=seed, n=1, **context) for t in types}
    out: list[Pair] = []
    for k, e in enumerate(pool):
        out.append(Pair(e.clip, e.caption, 1))
        for t in types:
            for c in found[t][k]:
                out.append(Pair(e.clip, c.text, 0, c.type, c.rule, c.explanation))
    return out


def write_entailment(pairs: Iterable[Pair], path: str | Path) -> Path:
    """TSV (video, caption, label, type) or, for a .jsonl path, JSON lines with every field."""
    path = Path(path)
    with open(path, "w", encoding="utf-8", newline="") as f:
        if path.suffix == ".jsonl":
            for p in pairs:
                f.write(json.dumps(asdict(p), ensure_ascii=False) + "\n")
        else:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            w.writerow(("video", "caption", "label", "type"))
            for p in pairs:
                w.writerow((p.video, p.caption, p.label, p.type))
    return path


def read_entailment(path: str | Path) -> list[dict[str, Any]]:
    """Rows ``{"video", "caption", "label"}`` from a TSV (with header) or JSONL file."""
    path = Path(path)
    if path.suffix == ".jsonl":
        rows = read_jsonl(path)
    else:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    for n, r in enumerate(rows, 1):
        if not {"video", "caption", "label"} <= r.keys():
            raise ValueError(f"{path}:{n}: expected video, caption and label; got {sorted(r)}")
    return [{"video": str(r["video"]), "caption": str(r["caption"]), "label": int(r["label"])} for r in rows]
