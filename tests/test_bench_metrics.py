"""Metrics, bootstrap and robustness scores against hand-computed values."""
from __future__ import annotations

import math

import numpy as np
import pytest

from perturb.bench.scoring import metrics as M
from perturb.bench.scoring.bootstrap import bootstrap_ci, paired_bootstrap
from perturb.bench.scoring.robustness import gamma_a, gamma_r, summarize


def test_ranks_single_positive_by_hand():
    s = np.array([[0.9, 0.1, 0.5], [0.2, 0.3, 0.8], [0.7, 0.6, 0.1]])
    rel = M.relevance_from_index([0, 0, 2], 3)
    # q0: positive 0.9 is top -> 1; q1: positive 0.2 below 0.3, 0.8 -> 3; q2: 0.1 below both -> 3
    assert M.first_positive_ranks(s, rel).tolist() == [1, 3, 3]
    out = M.retrieval_metrics(s, rel)
    assert out == {"R@1": pytest.approx(1 / 3), "R@5": 1.0, "R@10": 1.0, "MdR": 3.0, "MnR": pytest.approx(7 / 3)}


def test_ties_are_pessimistic_by_default_and_optimistic_on_request():
    s = np.array([[0.5, 0.5, 0.5, 0.1]])
    rel = M.relevance_from_index([1], 4)
    assert M.first_positive_ranks(s, rel).tolist() == [3]          # both tied negatives go first
    assert M.first_positive_ranks(s, rel, "optimistic").tolist() == [1]
    const = np.zeros((4, 4))                                        # a model that says nothing
    assert M.retrieval_metrics(const, np.eye(4, dtype=bool))["R@1"] == 0.0
    with pytest.raises(ValueError, match="ties"):
        M.first_positive_ranks(s, rel, "random")


def test_multiple_positives_correct_at_k_uses_best_positive():
    s = np.array([[0.2, 0.9, 0.5, 0.7, 0.1]])
    rel = np.array([[False, False, True, True, False]])
    ranks = M.first_positive_ranks(s, rel)
    assert ranks.tolist() == [2]               # best positive 0.7, only 0.9 (a negative) above it
    assert M.correct_at_k(ranks, 1) == 0.0 and M.correct_at_k(ranks, 2) == 1.0


def test_average_precision_fire_eq2_by_hand():
    s = np.array([[0.9, 0.8, 0.7, 0.6, 0.5], [0.1, 0.2, 0.3, 0.4, 0.5]])
    rel = np.array([[1, 0, 1, 0, 0], [1, 1, 0, 0, 0]], dtype=bool)
    # q0: positives at positions 1 and 3 -> (1/1 + 2/3) / 2; q1: positions 4 and 5 -> (1/4 + 2/5) / 2
    ap = M.average_precisions(s, rel)
    assert ap == pytest.approx([(1 + 2 / 3) / 2, (1 / 4 + 2 / 5) / 2])
    assert M.mean_average_precision(s, rel) == pytest.approx(np.mean(ap))


def test_average_precision_with_ties():
    s = np.array([[0.5, 0.5, 0.1]])
    rel = np.array([[False, True, False]])
    assert M.average_precisions(s, rel)[0] == pytest.approx(0.5)
    assert M.average_precisions(s, rel, "optimistic")[0] == pytest.approx(1.0)
    s2 = np.array([[0.5, 0.5, 0.5]])
    rel2 = np.array([[True, False, True]])          # pessimistic order: neg, pos, pos -> (1/2 + 2/3)/2
    assert M.average_precisions(s2, rel2)[0] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_query_without_positive_is_an_error():
    with pytest.raises(ValueError, match="at least one positive"):
        M.first_positive_ranks(np.zeros((2, 2)), np.array([[True, False], [False, False]]))


def test_mc_accuracy_strict_winner():
    scores = np.array([[0.9, 0.1, 0.2], [0.3, 0.3, 0.1], [0.1, 0.2, 0.8]])
    answer = np.array([0, 0, 1])
    # q0 right; q1 tie for the top counts as wrong; q2 wrong
    assert M.mc_correct(scores, answer).tolist() == [1.0, 0.0, 0.0]
    assert M.mc_accuracy(scores, answer) == pytest.approx(1 / 3)


def test_roc_auc_by_hand_and_against_sklearn():
    y = np.array([1, 0, 1, 0])
    s = np.array([0.8, 0.4, 0.4, 0.1])
    # pairs (pos, neg): (0.8>0.4) 1, (0.8>0.1) 1, (0.4=0.4) 0.5, (0.4>0.1) 1 -> 3.5/4
    assert M.roc_auc(y, s) == pytest.approx(0.875)
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    s = np.round(rng.normal(size=200) + y, 1)               # rounding makes many ties
    assert M.roc_auc(y, s) == pytest.approx(sklearn.roc_auc_score(y, s))
    with pytest.raises(ValueError, match="positive and one negative"):
        M.roc_auc(np.ones(3), np.arange(3.0))


def test_bootstrap_covers_point_estimate_and_narrows_with_n():
    rng = np.random.default_rng(0)
    widths = []
    for n in (50, 500, 5000):
        hits = (rng.random(n) < 0.6).astype(float)
        lo, hi = bootstrap_ci(hits, n=500, seed=1)
        assert lo <= hits.mean() <= hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    assert bootstrap_ci(hits, n=200, seed=4) == bootstrap_ci(hits, n=200, seed=4)   # seeded


def test_paired_bootstrap_of_gamma():
    rng = np.random.default_rng(1)
    clean = (rng.random(400) < 0.8).astype(float)
    pert = clean * (rng.random(400) < 0.75)
    ci = paired_bootstrap(clean, pert, n=500, seed=0)
    g = gamma_r(clean.mean(), pert.mean())
    assert ci["gamma_r"][0] <= g <= ci["gamma_r"][1]
    assert ci["gamma_a"][0] <= gamma_a(clean.mean(), pert.mean()) <= ci["gamma_a"][1]
    assert ci["metric"][0] <= pert.mean() <= ci["metric"][1]
    # paired: identical runs give a degenerate interval at exactly 1
    same = paired_bootstrap(clean, clean, n=100, seed=0)
    assert same["gamma_a"] == [1.0, 1.0] and same["gamma_r"] == [1.0, 1.0]


def test_gamma_constructed_case():
    assert gamma_a(0.80, 0.60) == pytest.approx(0.80)
    assert gamma_r(0.80, 0.60) == pytest.approx(0.75)
    assert math.isnan(gamma_r(0.0, 0.0))            # A_c = 0: undefined, NaN (null in JSON)
    assert gamma_a(0.0, 0.0) == 1.0


def test_summary_mean_and_std_per_level():
    runs = [{"modality": "video", "perturbation": "a", "category": "noise", "severity": 1, "gamma_a": 0.9, "gamma_r": 0.8},
            {"modality": "video", "perturbation": "a", "category": "noise", "severity": 2, "gamma_a": 0.7, "gamma_r": None},
            {"modality": "video", "perturbation": "b", "category": "blur", "severity": 1, "gamma_a": 1.0, "gamma_r": 1.0},
            {"modality": "text", "perturbation": "T", "category": "ChangeChar", "severity": None, "gamma_a": 0.5, "gamma_r": 0.5}]
    s = summarize(runs)
    assert s["perturbation"]["a"]["gamma_a_mean"] == pytest.approx(0.8)
    assert s["perturbation"]["a"]["gamma_a_std"] == pytest.approx(0.1)
    assert s["perturbation"]["a"]["gamma_r_mean"] == pytest.approx(0.8)     # null ignored
    assert s["category"]["noise"]["modality"] == "video"
    assert s["modality"]["video"]["gamma_a_mean"] == pytest.approx((0.9 + 0.7 + 1.0) / 3)
    assert s["modality"]["text"]["gamma_a_std"] == 0.0


def test_gamma_record_is_what_results_json_holds():
    from perturb.bench.scoring.robustness import gamma_record

    assert gamma_record(0.8, 0.6) == pytest.approx({"gamma_a": 0.8, "gamma_r": 0.75})
    assert gamma_record(0.0, 0.2) == {"gamma_a": pytest.approx(1.2), "gamma_r": None}   # γr undefined at A_c = 0
