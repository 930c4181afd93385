"""Clean-data side tasks on the benchmark's model: MC accuracy (Park et al.) and entailment ROC-AUC.

MC files are the contrast-set layout (``perturb.contrast.mc``: TSV ``clip, ending0..4, label`` or
JSONL); entailment files are TSV ``video, caption, label[, type]`` or JSONL with those keys.
``clip``/``video`` name an item id (or a video id) of the benchmark's dataset.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..adapters.protocol import unit_rows
from ..scoring.bootstrap import bootstrap_ci
from ..scoring.metrics import mc_correct, roc_auc
from .prefetch import batched
from .encoder import Encoder
from .sources import CLEAN


def _index(encoder: Encoder) -> dict[str, int]:
    index = {it.video_id: i for i, it in enumerate(encoder.data.items)}
    index.update({it.item_id: i for i, it in enumerate(encoder.data.items)})
    return index


def pair_scores(encoder: Encoder, videos: Sequence[int], texts: Sequence[str]) -> np.ndarray:
    """Model scores of (clean video index, text) pairs: cosine for dual encoders, ``score`` for cross."""
    model = encoder.model
    if model.kind == "cross":
        items = encoder.data.items
        out = [model.score([encoder.source.clip(items[v], CLEAN, None) for v in vs], list(ts))
               for vs, ts in zip(batched(videos, encoder.settings.batch_size),
                                 batched(texts, encoder.settings.batch_size))]
        return np.concatenate(out) if out else np.zeros(0)
    vid = encoder.unit_videos(CLEAN, None)
    txt = np.concatenate([model.encode_texts(b) for b in batched(texts, encoder.settings.batch_size)])
    return np.einsum("ij,ij->i", unit_rows(txt), vid[list(videos)])


def evaluate_mc(encoder: Encoder, path: str | Path, bootstrap: dict[str, Any] | None) -> dict[str, Any]:
    """MC accuracy on the clean videos: correct when the true ending scores strictly highest."""
    from ...contrast.mc import read_mc_jsonl, read_mc_tsv

    rows = read_mc_jsonl(path) if str(path).endswith(".jsonl") else read_mc_tsv(path)
    index = _index(encoder)
    known = [r for r in rows if r.clip in index]
    if not known:
        raise ValueError(f"{path}: none of its clips is an item of the dataset (e.g. {rows[0].clip if rows else '-'})")
    videos = [index[r.clip] for r in known for _ in r.endings]
    scores = pair_scores(encoder, videos, [e for r in known for e in r.endings]).reshape(len(known), -1)
    correct = mc_correct(scores, np.array([r.label for r in known]))
    out: dict[str, Any] = {"file": str(path), "n": len(known), "missing": len(rows) - len(known),
                           "accuracy": float(correct.mean()),
                           "chance": float(np.mean([1 / len(r.endings) for r in known]))}   # 1/options
    if bootstrap:
        out["ci"] = bootstrap_ci(correct, bootstrap["n"], bootstrap["seed"], bootstrap["level"])
    return out


def evaluate_entailment(encoder: Encoder, path: str | Path) -> dict[str, Any]:
    """ROC-AUC of the model's score of each (video, caption) pair against its 0/1 label (VideoCon)."""
    from ...contrast.entailment import read_entailment

    rows = read_entailment(path)
    index = _index(encoder)
    known = [r for r in rows if r["video"] in index]
    if not known:
        raise ValueError(f"{path}: none of its videos is an item of the dataset")
    scores = pair_scores(encoder, [index[r["video"]] for r in known], [r["caption"] for r in known])
    return {"file": str(path), "n": len(known), "missing": len(rows) - len(known),
            "roc_auc": roc_auc(np.array([r["label"] for r in known]), scores), "chance": 0.5}
