"""Retrieval metrics in pure numpy: ranks, R@K / Correct@K, MdR/MnR, mAP, MC accuracy, ROC-AUC.

Conventions. ``scores`` is (Q, C): one row per query, one column per candidate, higher = better.
``relevance`` is a boolean (Q, C) matrix; a query may have several positives (FIRE). The rank of
a query is the 1-based position of its best-ranked positive. Ties are broken *pessimistically*
by default: a negative that scores the same as a positive is ranked before it, so a model that
gives every candidate the same score gets the worst rank, never the best. ``ties="optimistic"``
ranks positives first within a tie.
"""
from __future__ import annotations

import numpy as np

from ..results import KS, TIES


def _check(scores: np.ndarray, relevance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64)
    r = np.asarray(relevance, dtype=bool)
    if s.ndim != 2 or s.shape != r.shape:
        raise ValueError(f"expected scores and relevance of the same (queries, candidates) shape; "
                         f"got {s.shape} and {r.shape}")
    if not r.any(axis=1).all():
        bad = np.flatnonzero(~r.any(axis=1))[:5].tolist()
        raise ValueError(f"every query needs at least one positive; queries {bad} have none")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN; expected finite similarity scores")
    return s, r


def _check_ties(ties: str) -> None:
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}; got {ties!r}")


def relevance_from_index(positive: np.ndarray, n_candidates: int) -> np.ndarray:
    """A (Q, C) boolean relevance matrix with one positive per query at ``positive[q]``."""
    positive = np.asarray(positive, dtype=np.int64)
    rel = np.zeros((len(positive), n_candidates), dtype=bool)
    rel[np.arange(len(positive)), positive] = True
    return rel


def first_positive_ranks(scores: np.ndarray, relevance: np.ndarray,
                         ties: str = "pessimistic") -> np.ndarray:
    """1-based rank of the best-ranked positive of each query, shape (Q,)."""
    _check_ties(ties)
    s, r = _check(scores, relevance)
    best = np.where(r, s, -np.inf).max(axis=1, keepdims=True)
    negatives = ~r
    above = (negatives & (s > best)).sum(axis=1)
    if ties == "pessimistic":
        above += (negatives & (s == best)).sum(axis=1)
    return above + 1


def recall_at_k(ranks: np.ndarray, k: int) -> float:
    """Share of queries whose first positive is in the top k (R@K; Correct@K with extra positives)."""
    return float(np.mean(np.asarray(ranks) <= k))


correct_at_k = recall_at_k


def rank_summary(ranks: np.ndarray, ks: tuple[int, ...] = KS) -> dict[str, float]:
    """``{"R@1", "R@5", "R@10", "MdR", "MnR"}`` from first-positive ranks; R@K are fractions."""
    ranks = np.asarray(ranks)
    out = {f"R@{k}": recall_at_k(ranks, k) for k in ks}
    out["MdR"] = float(np.median(ranks))
    out["MnR"] = float(np.mean(ranks))
    return out


def retrieval_metrics(scores: np.ndarray, relevance: np.ndarray,
                      ties: str = "pessimistic") -> dict[str, float]:
    """R@1/5/10, median and mean rank of a (Q, C) score matrix."""
    return rank_summary(first_positive_ranks(scores, relevance, ties))


def average_precisions(scores: np.ndarray, relevance: np.ndarray,
                       ties: str = "pessimistic") -> np.ndarray:
    """Average precision of each query (FIRE eq. 2): mean of Precision@i over positive positions i."""
    _check_ties(ties)
    s, r = _check(scores, relevance)
    tie_key = r if ties == "pessimistic" else ~r          # False sorts first within a tie
    out = np.empty(len(s))
    for q in range(len(s)):
        order = np.lexsort((tie_key[q], -s[q]))
        rel = r[q, order]
        hits = np.cumsum(rel)
        positions = np.flatnonzero(rel) + 1
        out[q] = float(np.mean(hits[rel] / positions))
    return out


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
