"""Classification metrics from logits: per-sample top-k correctness, top-1/top-5 accuracy and error
with bootstrap intervals over samples, and γa, γr on accuracy.

``logits`` is (N, C), higher = more likely; ``labels`` (N,) are class indices in 0..C-1. The true
class's rank follows :class:`perturb.ranking.Ranking` (a sample is a query, a class a candidate):
ties are broken pessimistically unless ``ties="optimistic"``, so a model that gives every class the
same logit is never counted right. Intervals use :mod:`.bootstrap` with the run's seed, the same
resamples of samples for every run, as retrieval resamples queries.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...ranking import Ranking
from .bootstrap import bootstrap_ci, paired_bootstrap
from .metrics import relevance_from_index
from .robustness import gamma_record

TOP_K = (1, 5)
CHUNK = 4096          # rows ranked at once: bounds the (rows, C) float64 copy Ranking makes


def _checked(logits: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(logits)
    y = np.asarray(labels)
    if scores.ndim != 2 or y.shape != (len(scores),):
        raise ValueError(f"expected logits (N, classes) and labels (N,); got {scores.shape} and {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"labels must be class indices (integers); got dtype {y.dtype}")
    if len(y) and ((y < 0) | (y >= scores.shape[1])).any():
        bad = int(y[(y < 0) | (y >= scores.shape[1])][0])
        raise ValueError(f"label {bad} is outside the model's {scores.shape[1]} classes (0..{scores.shape[1] - 1})")
    return scores, y.astype(np.int64)


def true_class_ranks(logits: Any, labels: Any, ties: str = "pessimistic") -> np.ndarray:
    """1-based rank of each sample's true class among the C classes, shape (N,)."""
    scores, y = _checked(logits, labels)
    out = np.empty(len(y), dtype=np.int64)
    for start in range(0, len(y), CHUNK):
        rows = slice(start, start + CHUNK)
        out[rows] = Ranking(scores[rows], relevance_from_index(y[rows], scores.shape[1]), ties).first_ranks
    return out


def top_k_correct(logits: Any, labels: Any, k: int, ties: str = "pessimistic") -> np.ndarray:
    """Per sample 1.0 where the true class is among the top ``k``, else 0.0, shape (N,)."""
    if k < 1:
        raise ValueError(f"top-k needs k >= 1; got {k}")
    return (true_class_ranks(logits, labels, ties) <= k).astype(np.float64)


def per_sample_correct(logits: Any, labels: Any, ks: Sequence[int] = TOP_K,
                       ties: str = "pessimistic") -> dict[str, np.ndarray]:
    """``{"top1": (N,), "top5": (N,)}`` 0/1 per sample, for each k below the number of classes (top-k
    over all C classes is always right, so it is left out; top-1 is always kept)."""
    ranks = true_class_ranks(logits, labels, ties)
    n_classes = np.asarray(logits).shape[1]
    return {f"top{k}": (ranks <= k).astype(np.float64) for k in ks if k == 1 or k < n_classes}


def accuracy_summary(correct: dict[str, np.ndarray], bootstrap: int = 1000, seed: int = 0,
                     level: float = 0.95) -> dict[str, Any]:
    """Per top-k: accuracy, error (1 − accuracy) and, with ``bootstrap`` resamples, the accuracy's
    percentile interval ``ci``, e.g. ``{"top1": {"accuracy": .8, "error": .2, "ci": [lo, hi]}}``."""
    out: dict[str, Any] = {}
    for name, values in correct.items():
        acc = float(np.mean(values))
        out[name] = {"accuracy": acc, "error": 1.0 - acc}
        if bootstrap:
            out[name]["ci"] = bootstrap_ci(values, bootstrap, seed, level)
    return out


def robustness_summary(clean: dict[str, np.ndarray], perturbed: dict[str, np.ndarray], bootstrap: int = 1000,
                       seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """Per top-k of a perturbed run: accuracy, error, γa = 1 − (A_c − A_p), γr = A_p / A_c (None where
    A_c = 0) and, with ``bootstrap`` resamples, paired intervals (the same samples clean and perturbed)
    of the accuracy, γa and γr under ``ci``."""
    out: dict[str, Any] = {}
    for name, values in perturbed.items():
        if name not in clean or np.shape(clean[name]) != np.shape(values):
            raise ValueError(f"{name}: expected the clean run's per-sample values for the same samples")
        a_c, a_p = float(np.mean(clean[name])), float(np.mean(values))
        out[name] = {"accuracy": a_p, "error": 1.0 - a_p, **gamma_record(a_c, a_p)}
        if bootstrap:
            out[name]["ci"] = paired_bootstrap(clean[name], values, bootstrap, seed, level)
    return out
