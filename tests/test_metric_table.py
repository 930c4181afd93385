"""The metric table (perturb.metric_names.KINDS) and the kind that proves it, nDCG@K: equal to
pytrec_eval's ndcg_cut on recorded runs, its chance level exact, and end to end through bench,
check, compare and report."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from perturb.bench.pipeline.data import make_data
from perturb.cli import main
from perturb.metric_names import KINDS, Metric, gamma_metric, kind_of, measured_names, parse_metric, reported_names
from perturb.ranking import Judgements, Ranking
from perturb.results import validate

# Recorded once with pytrec_eval (pytrec-eval-terrier 0.5.11, in a throwaway virtualenv outside the
# repository; perturb never imports it):
#   qrels = {f"q{q}": {f"d{c}": GAINS[q][c] for c in range(8)} for q in range(6)}
#   run = {f"q{q}": {f"d{c}": SCORES[q][c] for c in range(8)} for q in range(6)}
#   pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.1,3,5,10"}).evaluate(run)[f"q{q}"][f"ndcg_cut_{k}"]
# rounded to 12 digits. No two scores of a query tie, so pytrec_eval's tie rule (score, then doc id
# descending) never applies. Row 0 is binary, row 1 has one positive, the rest are graded 0..3; K = 10
# is above the 8 candidates.
SCORES = [[0.3642, 0.7183, 0.5725, 0.2808, 0.5308, 0.1142, 0.51, 0.8433],
          [0.4683, 0.4892, 0.1558, 0.9683, 0.4267, 0.3225, 0.0517, 0.6767],
          [0.2183, 0.76, 0.0725, 0.6975, 0.8017, 0.6142, 0.5933, 0.2392],
          [0.9058, 0.0933, 0.8642, 0.7808, 0.9267, 0.26, 0.9892, 0.1975],
          [0.8225, 0.885, 0.01, 0.135, 0.385, 0.3433, 0.0308, 0.635],
          [0.7392, 0.5517, 0.4475, 0.9475, 0.4058, 0.1767, 0.3017, 0.6558]]
GAINS = [[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 0, 0], [0, 0, 1, 0, 0, 0, 3, 3],
         [0, 0, 2, 3, 0, 2, 2, 2], [3, 0, 1, 0, 1, 1, 0, 0], [1, 0, 1, 2, 0, 0, 1, 1]]
PYTREC_EVAL_NDCG_CUT = {
    1: [1.0, 0.0, 0.0, 0.666666666667, 0.0, 1.0],
    3: [0.469278726023, 0.0, 0.0, 0.380093766716, 0.458199333716, 1.0],
    5: [0.709527204491, 0.0, 0.215205595026, 0.583146181991, 0.594158820568, 0.890925410367],
    10: [0.832678398861, 0.356207187108, 0.471860615498, 0.783102306355, 0.663315353428, 0.975346528403],
}


@pytest.mark.parametrize("k", sorted(PYTREC_EVAL_NDCG_CUT))
def test_ndcg_equals_pytrec_eval_ndcg_cut_on_recorded_runs(k):
    ranking = Ranking(np.array(SCORES), np.array(GAINS))
    assert ranking.ndcg(k) == pytest.approx(PYTREC_EVAL_NDCG_CUT[k], abs=1e-12)
    kind, parsed_k = kind_of(f"nDCG@{k}")
    assert parsed_k == k and kind.per_query(ranking, k) == pytest.approx(PYTREC_EVAL_NDCG_CUT[k], abs=1e-12)


def test_ndcg_binary_by_hand_and_ties_broken_by_the_convention():
    one = Ranking(np.array([[0.9, 0.8, 0.7, 0.1]]), np.array([[False, False, True, False]]))
    assert one.ndcg(10)[0] == pytest.approx(1 / np.log2(4))            # the positive at rank 3
    assert one.ndcg(2)[0] == 0.0                                      # ... is cut off at K = 2
    two = Ranking(np.array([[0.9, 0.8, 0.7]]), np.array([[True, False, True]]))
    assert two.ndcg(3)[0] == pytest.approx((1 + 1 / 2) / (1 + 1 / np.log2(3)))
    tied, gains = np.array([[0.5, 0.5, 0.5]]), np.array([[1.0, 0.0, 2.0]])
    assert Ranking(tied, gains).ndcg(3)[0] == pytest.approx(                 # 0, 1, 2: lowest gains first
        (1 / np.log2(3) + 2 / 2) / (2 + 1 / np.log2(3)))
    assert Ranking(tied, gains, "optimistic").ndcg(3)[0] == pytest.approx(1.0)


def test_ndcg_chance_is_the_mean_over_every_ranking():
    gains = np.array([[0.0, 2.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    every = [Ranking(np.array([list(p)] * 2, dtype=float), gains).ndcg(2)
             for p in itertools.permutations(range(4))]
    assert Judgements(gains).ndcg_chance(2) == pytest.approx(np.mean(every, axis=0))


def test_every_kind_is_named_parsed_and_bounded_on_random_rankings():
    rng = np.random.default_rng(0)
    gains = (rng.random((20, 30)) < 0.1) * rng.integers(1, 4, (20, 30))
    gains[np.arange(20), rng.integers(0, 30, 20)] = 1
    ranking = Ranking(rng.random((20, 30)), gains)
    for kind in KINDS:
        k = 7 if kind.takes_k else None
        name = kind.name(k)
        assert kind_of(name) == (kind, k) and Metric(name, "v2t").lower_is_better == kind.lower_is_better
        if not kind.fraction:                                   # γ is defined on fractions only
            with pytest.raises(ValueError, match="so γ is defined"):
                gamma_metric(name)
        values = np.asarray(kind.per_query(ranking, k), dtype=float)
        assert values.shape == (20,)
        if kind.fraction:
            assert ((0 <= values) & (values <= 1)).all()
            assert 0 < np.mean(kind.chance(ranking, k)) < 1
    assert [kind_of(n) for n in ("R@0", "R@05", "R@K", "nDCG@", "gamma_r", "MdR@3")] == [None] * 6


def test_a_new_k_needs_no_edit_and_ndcg_is_measured_only_when_asked():
    assert reported_names() == ("R@1", "R@5", "R@10", "MdR", "MnR")
    assert reported_names(judged=True)[-1] == "mAP"
    assert measured_names("nDCG@10", judged=False) == reported_names() + ("nDCG@10",)
    assert gamma_metric("R@20").name == "t2v.R@20" and gamma_metric("v2t.nDCG@3").words == \
        "normalised discounted cumulative gain at 3, video→text"
    with pytest.raises(ValueError, match=r"\[t2v\.\|v2t\.\]R@K\|mAP\|nDCG@K"):
        gamma_metric("MdR")


def test_judgement_grades_become_gains(tmp_path):
    from bench_fixtures import tiny_items

    items = tiny_items(3, frames=2, size=16, captions=1)
    path = tmp_path / "judgements.jsonl"
    rows = [{"query_id": "item00#0", "item_id": "item01", "grade": 2},
            {"query_id": "item00#0", "item_id": "item00", "grade": 3},
            {"query_id": "item01#0", "item_id": "item02", "grade": 0}]        # grade 0: not relevant
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = make_data(items, "tiny", "memory", judgements=str(path))
    assert data.gains.tolist() == [[3, 2, 0], [0, 1, 0], [0, 0, 1]] and data.extra_positives == 1
    assert make_data(items, "tiny", "memory").gains.dtype == bool            # no grades: binary
    path.write_text(json.dumps({"query_id": "item00#0", "item_id": "item01", "grade": -1}) + "\n")
    with pytest.raises(ValueError, match="row 1: grade must be a finite number >= 0; got -1"):
        make_data(items, "tiny", "memory", judgements=str(path))


@pytest.fixture(scope="module")
def ndcg_results(tmp_path_factory):
    from bench_fixtures import write_tiny_dataset

    root = tmp_path_factory.mktemp("ndcg")
    captions = write_tiny_dataset(root / "tiny")
    judgements = root / "grades.jsonl"
    judgements.write_text(json.dumps({"query_id": "item00#0", "item_id": "item00", "grade": 3}) + "\n"
                          + json.dumps({"query_id": "item00#0", "item_id": "item01", "grade": 1}) + "\n")
    code = main(["bench", "--model", "toy:8", "--dataset", str(captions), "--out", str(root / "out"),
                 "--video-perturbations", "none", "--text-perturbations", "Typos", "--metric", "nDCG@10",
                 "--judgements", str(judgements), "--bootstrap", "20", "--no-progress", "--no-cache",
                 "--size", "32"])
    assert code == 0
    return root / "out"


def test_bench_measures_ndcg_as_its_metric(ndcg_results):
    doc = validate(json.loads((ndcg_results / "results.json").read_text()))
    assert doc["metric"] == "t2v.nDCG@10"
    for block in (doc["clean"], *doc["runs"]):
        assert list(block["t2v"]) == [*reported_names(judged=True), "nDCG@10"]
        assert 0 < block["t2v"]["nDCG@10"] <= 1
    assert 0 < doc["chance"]["t2v"]["nDCG@10"] < 1 and doc["runs"][0]["gamma_a"] is not None
    assert "t2v.nDCG@10" in (ndcg_results / "results.csv").read_text()
    assert parse_metric("clean.ndcg@10", doc).name == "clean.t2v.nDCG@10"


def test_check_compare_and_report_read_ndcg(ndcg_results, tmp_path, capsys):
    path = str(ndcg_results / "results.json")
    clean = json.loads((ndcg_results / "results.json").read_text())["clean"]["t2v"]["nDCG@10"]
    assert main(["check", path, "--min", f"clean.t2v.nDCG@10={clean - 1e-4:.6f}", "--min", "gamma_a=0"]) == 0
    assert main(["check", path, "--min", f"clean.t2v.nDCG@10={clean + 1e-4:.6f}"]) == 1
    assert main(["check", path, "--min", "clean.t2v.nDCG@10=40"]) == 2                # a fraction: refused
    assert "nDCG@10 is a fraction in [0, 1]; got threshold 40" in capsys.readouterr().err
    assert main(["compare", path, path, "--metric", "t2v.nDCG@10", "--metric", "gamma_r"]) == 0
    assert "clean.t2v.nDCG@10" in capsys.readouterr().out
    assert main(["report", path, "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| direction | R@1 | R@5 | R@10 | MdR | MnR | mAP | nDCG@10 |" in md
    assert "Metric: `t2v.nDCG@10` (normalised discounted cumulative gain at 10, text→video)" in md
