"""Scores ranked against judgements, the numbers every per-query metric of :mod:`.metric_names`
reads: first-positive ranks, average precision, nDCG@K, and what a random ranking would score.

Conventions. ``scores`` is (Q, C): one row per query, one column per candidate, higher = better.
``gains`` is (Q, C): 0 for a candidate that is not relevant, its grade for one that is (1 with
binary judgements, so a boolean relevance matrix is read as gains); a query may have several
relevant candidates (FIRE). Ties are broken *pessimistically* by default: within a tie, lower
gains are ranked first, so a model that gives every candidate the same score gets the worst
ranking, never the best; ``ties="optimistic"`` ranks higher gains first.
"""
from __future__ import annotations

from functools import cached_property
from math import comb

import numpy as np

from .results import TIES


def hit_chance(n_candidates: int, n_positives: int, k: int) -> float:
    """P(at least one of ``n_positives`` among ``n_candidates`` lands in a random top ``k``)."""
    n, m = int(n_candidates), int(n_positives)
    if m <= 0:
        return 0.0
    k = min(k, n)
    return 1.0 - comb(n - m, k) / comb(n, k)


def _discounts(k: int) -> np.ndarray:
    """DCG's position discounts 1 / log2(i + 1) for positions i = 1..k."""
    return 1.0 / np.log2(np.arange(2, k + 2))


class Judgements:
    """A (queries, candidates) gain matrix, checked, and the expected per-query scores of a random
    ranking of it (the chance levels of :mod:`.honesty`)."""

    def __init__(self, gains: np.ndarray) -> None:
        g = np.asarray(gains)
        if g.ndim != 2:
            raise ValueError(f"expected a (queries, candidates) relevance matrix; got shape {g.shape}")
        if g.dtype != bool:                          # grades; a boolean matrix is kept as it is
            g = g.astype(np.float64, copy=False)
            if not np.isfinite(g).all() or (g < 0).any():
                raise ValueError("relevance grades must be finite and >= 0")
        relevant = g if g.dtype == bool else g > 0
        if not relevant.any(axis=1).all():
            bad = np.flatnonzero(~relevant.any(axis=1))[:5].tolist()
            raise ValueError(f"every query needs at least one positive; queries {bad} have none")
        self.gains, self.relevant = g, relevant

    @property
    def n_candidates(self) -> int:
        return self.gains.shape[1]

    def ideal_dcg(self, k: int) -> np.ndarray:
        """DCG@k of the best possible ranking of each query (the gains sorted high to low)."""
        k = min(k, self.n_candidates)
        return np.sort(self.gains, axis=1)[:, ::-1][:, :k] @ _discounts(k)

    def hit_chance(self, k: int) -> np.ndarray:
        """Per query, P(a random top k holds a relevant candidate): R@K's chance level."""
        positives = self.relevant.sum(axis=1)
        level = {m: hit_chance(self.n_candidates, m, k) for m in np.unique(positives).tolist()}
        return np.array([level[m] for m in positives.tolist()])

    def positive_rate(self) -> np.ndarray:
        """Per query, the share of relevant candidates: about a random ranking's average precision."""
        return self.relevant.mean(axis=1)

    def ndcg_chance(self, k: int) -> np.ndarray:
        """Per query, the expected nDCG@k of a uniformly random ranking (exact: every position
        holds the mean gain on average)."""
        kk = min(k, self.n_candidates)
        return self.gains.mean(axis=1) * _discounts(kk).sum() / self.ideal_dcg(k)


class Ranking(Judgements):
    """One direction's (Q, C) scores ranked against its gains, with the tie convention ``ties``."""

    def __init__(self, scores: np.ndarray, gains: np.ndarray, ties: str = "pessimistic") -> None:
        if ties not in TIES:
            raise ValueError(f"ties must be one of {TIES}; got {ties!r}")
        super().__init__(gains)
        s = np.asarray(scores, dtype=np.float64)
        if s.shape != self.gains.shape:
            raise ValueError(f"expected scores and relevance of the same (queries, candidates) shape; "
                             f"got {s.shape} and {self.gains.shape}")
        if np.isnan(s).any():
            raise ValueError("scores contain NaN; expected finite similarity scores")
        self.scores, self.ties = s, ties

    @cached_property
    def first_ranks(self) -> np.ndarray:
        """1-based rank of the best-ranked relevant candidate of each query, shape (Q,)."""
        s, negatives = self.scores, ~self.relevant
        best = np.where(self.relevant, s, -np.inf).max(axis=1, keepdims=True)
        above = (negatives & (s > best)).sum(axis=1)
        if self.ties == "pessimistic":
            above += (negatives & (s == best)).sum(axis=1)
        return above + 1

    @cached_property
    def ranked_gains(self) -> np.ndarray:
        """(Q, C) gains in ranked order: by score, high to low, ties broken by the convention."""
        tie_key = self.gains if self.ties == "pessimistic" else ~self.gains if self.gains.dtype == bool \
            else -self.gains                                                 # smaller sorts first
        order = np.lexsort((tie_key, -self.scores), axis=1)
        return np.take_along_axis(self.gains, order, axis=1)

    def hits(self, k: int) -> np.ndarray:
        """1.0 where a relevant candidate is in the top k, else 0.0 (R@K; Correct@K with extra positives)."""
        return (self.first_ranks <= k).astype(np.float64)

    def average_precisions(self) -> np.ndarray:
        """Average precision of each query (FIRE eq. 2): mean of Precision@i over relevant positions i."""
        rel = self.ranked_gains > 0
        precision = np.cumsum(rel, axis=1) / np.arange(1, rel.shape[1] + 1)
        return (precision * rel).sum(axis=1) / rel.sum(axis=1)

    def ndcg(self, k: int) -> np.ndarray:
        """nDCG@k of each query: DCG of the top k (gain / log2(position + 1)) over the ideal DCG@k,
        as trec_eval's ndcg_cut computes it."""
        kk = min(k, self.n_candidates)
        return self.ranked_gains[:, :kk] @ _discounts(kk) / self.ideal_dcg(k)
