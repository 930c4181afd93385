"""Retrieval metrics in pure numpy: ranks, R@K / Correct@K, MdR/MnR, mAP, MC accuracy, ROC-AUC.

The per-query numbers come from :class:`perturb.ranking.Ranking` (its module states the
conventions: (Q, C) scores, higher = better; relevance a boolean or graded (Q, C) matrix; ties
broken pessimistically unless ``ties="optimistic"``); these are its functional forms.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...metric_names import kind_of, reported_names
from ...ranking import Ranking


def relevance_from_index(positive: np.ndarray, n_candidates: int) -> np.ndarray:
    """A (Q, C) boolean relevance matrix with one positive per query at ``positive[q]``."""
    positive = np.asarray(positive, dtype=np.int64)
    rel = np.zeros((len(positive), n_candidates), dtype=bool)
    rel[np.arange(len(positive)), positive] = True
    return rel


def first_positive_ranks(scores: np.ndarray, relevance: np.ndarray,
                         ties: str = "pessimistic") -> np.ndarray:
    """1-based rank of the best-ranked positive of each query, shape (Q,)."""
    return Ranking(scores, relevance, ties).first_ranks


def recall_at_k(ranks: np.ndarray, k: int) -> float:
    """Share of queries whose first positive is in the top k (R@K; Correct@K with extra positives)."""
    return float(np.mean(np.asarray(ranks) <= k))


correct_at_k = recall_at_k


def per_query_values(ranking: Ranking, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Each named metric's (Q,) per-query values, by its kind's function in the metric table."""
    out = {}
    for name in names:
        kind, k = kind_of(name) or (None, None)
        if kind is None:
            raise ValueError(f"unknown retrieval metric {name!r}")
        out[name] = kind.per_query(ranking, k)
    return out


def summarise(values: dict[str, np.ndarray]) -> dict[str, float]:
    """Each metric from its per-query values: their mean, or their median where its kind says so (MdR)."""
    return {name: float(np.median(v) if kind_of(name)[0].median else np.mean(v)) for name, v in values.items()}


def retrieval_metrics(scores: np.ndarray, relevance: np.ndarray,
                      ties: str = "pessimistic") -> dict[str, float]:
    """R@1/5/10, median and mean rank of a (Q, C) score matrix."""
    return summarise(per_query_values(Ranking(scores, relevance, ties), reported_names()))


def average_precisions(scores: np.ndarray, relevance: np.ndarray,
                       ties: str = "pessimistic") -> np.ndarray:
    """Average precision of each query (FIRE eq. 2): mean of Precision@i over positive positions i."""
    return Ranking(scores, relevance, ties).average_precisions()


def mean_average_precision(scores: np.ndarray, relevance: np.ndarray,
                           ties: str = "pessimistic") -> float:
    """mAP: the mean of per-query average precision."""
    return float(np.mean(average_precisions(scores, relevance, ties)))


def mc_correct(option_scores: np.ndarray, answer: np.ndarray) -> np.ndarray:
    """Per-question 0/1: the true option scores strictly highest (a tie counts as wrong)."""
    s = np.asarray(option_scores, dtype=np.float64)
    a = np.asarray(answer, dtype=np.int64)
    if s.ndim != 2 or a.shape != (len(s),):
        raise ValueError(f"expected option scores (Q, options) and answers (Q,); got {s.shape}, {a.shape}")
    if ((a < 0) | (a >= s.shape[1])).any():
        raise ValueError(f"answer indices must be in 0..{s.shape[1] - 1}")
    true = s[np.arange(len(s)), a]
    others = s.copy()
    others[np.arange(len(s)), a] = -np.inf
    return (true > others.max(axis=1)).astype(np.float64)


def mc_accuracy(option_scores: np.ndarray, answer: np.ndarray) -> float:
    """Multiple-choice accuracy (Park et al. §4.2): share of questions whose true option wins."""
    return float(np.mean(mc_correct(option_scores, answer)))


def _midranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    ranks = np.empty(len(x))
    start = 0
    for end in range(1, len(x) + 1):
        if end == len(x) or xs[end] != xs[start]:
            ranks[order[start:end]] = (start + end + 1) / 2.0
            start = end
    return ranks


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U with mid-ranks for ties); labels are 0/1."""
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ValueError(f"expected 1-D labels and scores of equal length; got {y.shape}, {s.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    y = y.astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("ROC-AUC needs at least one positive and one negative label")
    ranks = _midranks(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))
