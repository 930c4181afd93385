"""Classification scoring: top-k with pessimistic ties, accuracy with CIs, γ on accuracy; the
baselines by name; ImageNet-C's CE, mCE and relative mCE and Kinetics-C's mPC and rPC on known cells."""
from __future__ import annotations

import json

import numpy as np
import pytest

from perturb.bench.scoring.baselines import builtin_baselines, load_baseline
from perturb.bench.scoring.bootstrap import bootstrap_ci, paired_bootstrap
from perturb.bench.scoring.classification import (accuracy_summary, per_sample_correct, robustness_summary,
                                                  top_k_correct, true_class_ranks)
from perturb.bench.scoring.corruption import corruption_errors, corruption_summary
from perturb.cli import main

LOGITS = np.array([[3.0, 1.0, 2.0, 0.0, 0.0, 0.0],     # label 0: rank 1
                   [3.0, 1.0, 2.0, 0.0, 0.0, 0.0],     # label 2: rank 2
                   [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],     # all tied, label 4: rank 6 (pessimistic)
                   [0.0, 5.0, 5.0, 0.0, 0.0, 0.0]])    # tie with class 2, label 1: rank 2
LABELS = np.array([0, 2, 4, 1])


def test_true_class_ranks_break_ties_pessimistically_like_retrieval():
    assert true_class_ranks(LOGITS, LABELS).tolist() == [1, 2, 6, 2]
    assert true_class_ranks(LOGITS, LABELS, ties="optimistic").tolist() == [1, 2, 1, 1]
    assert top_k_correct(LOGITS, LABELS, 1).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert top_k_correct(LOGITS, LABELS, 5).tolist() == [1.0, 1.0, 0.0, 1.0]


def test_ranks_are_the_same_in_chunks(monkeypatch):
    from perturb.bench.scoring import classification
    rng = np.random.default_rng(0)
    logits, labels = rng.integers(0, 4, size=(50, 10)).astype(float), rng.integers(0, 10, size=50)
    whole = true_class_ranks(logits, labels)
    monkeypatch.setattr(classification, "CHUNK", 7)
    assert np.array_equal(true_class_ranks(logits, labels), whole)


def test_per_sample_correct_leaves_out_top_k_over_every_class():
    assert set(per_sample_correct(LOGITS, LABELS)) == {"top1", "top5"}
    assert set(per_sample_correct(LOGITS[:, :5], LABELS % 5)) == {"top1"}


def test_accuracy_and_error_with_the_bootstraps_seed_rule():
    correct = per_sample_correct(LOGITS, LABELS)
    got = accuracy_summary(correct, bootstrap=200, seed=3)
    assert got["top1"]["accuracy"] == 0.25 and got["top1"]["error"] == 0.75
    assert got["top5"]["accuracy"] == 0.75 and got["top5"]["error"] == 0.25
    assert got["top1"]["ci"] == bootstrap_ci(correct["top1"], 200, 3)
    assert "ci" not in accuracy_summary(correct, bootstrap=0)["top1"]


def test_gamma_on_accuracy():
    clean = {"top1": np.array([1.0, 1.0, 1.0, 0.0]), "top5": np.ones(4)}
    perturbed = {"top1": np.array([1.0, 0.0, 0.0, 0.0]), "top5": np.array([1.0, 1.0, 0.0, 1.0])}
    got = robustness_summary(clean, perturbed, bootstrap=100, seed=1)
    assert got["top1"]["gamma_a"] == pytest.approx(0.5) and got["top1"]["gamma_r"] == pytest.approx(1 / 3)
    assert got["top5"]["gamma_a"] == pytest.approx(0.75) and got["top5"]["gamma_r"] == pytest.approx(0.75)
    assert got["top1"]["ci"] == paired_bootstrap(clean["top1"], perturbed["top1"], 100, 1)
    zero = robustness_summary({"top1": np.zeros(2)}, {"top1": np.zeros(2)}, bootstrap=0)
    assert zero["top1"]["gamma_r"] is None and zero["top1"]["gamma_a"] == 1.0


@pytest.mark.parametrize("logits, labels, message", [
    (np.zeros((3, 4)), np.array([0, 1]), r"expected logits \(N, classes\) and labels \(N,\); got \(3, 4\) and \(2,\)"),
    (np.zeros((2, 4)), np.array([0, 4]), "label 4 is outside the model's 4 classes"),
    (np.zeros((2, 4)), np.array([0.0, 1.0]), "labels must be class indices"),
    (np.full((1, 3), np.nan), np.array([0]), "scores contain NaN"),
])
def test_bad_logits_or_labels(logits, labels, message):
    with pytest.raises(ValueError, match=message):
        true_class_ranks(logits, labels)


# ------------------------------------------------------------------------------ baselines
def test_builtin_baselines_by_name():
    assert builtin_baselines() == ["alexnet", "alexnet-robustbench"]
    alexnet = load_baseline("alexnet")
    assert len(alexnet.errors) == 19 and len(alexnet.mce_over) == 15 and alexnet.clean == 0.43478
    assert alexnet.errors["jpeg"] == {1: 0.51002, 2: 0.54718, 3: 0.57294, 4: 0.65458, 5: 0.74778}
    assert alexnet.errors["gaussian_noise"][1] == 0.69528 and "Hendrycks" in alexnet.source
    assert "speckle_noise" in alexnet.errors and "speckle_noise" not in alexnet.mce_over
    rb = load_baseline("alexnet-robustbench")
    assert rb.errors["shot_noise"][1] == pytest.approx(1 - 0.2944) and rb.clean == pytest.approx(0.4376)


def test_an_unknown_name_lists_the_names(tmp_path):
    with pytest.raises(ValueError, match=r"^baseline errors 'alexnett': no such file or built-in baseline; "
                                         r"expected a JSON file or one of alexnet, alexnet-robustbench$"):
        load_baseline("alexnett")
    path = tmp_path / "alexnet"                                 # a path still works, even one named like a built-in
    path.write_text(json.dumps({"fog": [0.5] * 5}))
    assert load_baseline(str(path)).errors == {"fog": dict.fromkeys(range(1, 6), 0.5)}


@pytest.mark.parametrize("bad, message", [
    ({"fog": 0.5, "clean": 1.5}, "'clean' must be the baseline's clean error in \\[0, 1\\]"),
    ({"fog": 0.5, "mce_over": "fog"}, "'mce_over' must be a list of operation names"),
    ({"fog": 0.0}, "'fog' has mean error 0"),
    ({"fog": 0.5, "source": 3}, "'source' must be a string"),
])
def test_bad_baseline_extras(bad, message):
    with pytest.raises(ValueError, match=message):
        load_baseline(bad)


def test_ce_mce_and_relative_mce_on_known_cells():
    base = load_baseline({"fog": [0.5, 0.6, 0.7, 0.8, 0.9], "snow": [0.4] * 5, "frost": [0.5] * 5,
                          "clean": 0.3, "mce_over": ["fog", "snow"]})
    cells = {("fog", 1): 0.8, ("fog", 2): 0.7, ("snow", 1): 0.7, ("frost", 1): 0.9, ("rain", 1): 0.5}
    got = corruption_errors(cells, 0.9, base)
    assert got["CE"] == {"fog": pytest.approx(0.5 / 1.1), "snow": pytest.approx(0.75), "frost": pytest.approx(0.2)}
    assert got["mCE"] == pytest.approx((0.5 / 1.1 + 0.75) / 2)                  # frost is outside mce_over
    assert got["relative_CE"]["fog"] == pytest.approx((0.5 - 2 * 0.1) / (1.1 - 2 * 0.3))
    assert got["relative_CE"]["snow"] == pytest.approx((0.3 - 0.1) / (0.4 - 0.3))
    assert got["relative_mCE"] == pytest.approx(((0.3 / 0.5) + 2.0) / 2)
    assert got["without_baseline"] == ["rain"] and got["outside_mce"] == ["frost"] and got["notes"] == []
    no_clean = corruption_errors(cells, 0.9, load_baseline({"fog": [0.5] * 5}))
    assert no_clean["relative_mCE"] is None and no_clean["relative_CE"] == {"fog": None}


def test_a_baseline_of_means_needs_all_five_severities():
    base = load_baseline({"fog": 0.6, "snow": 0.5})
    cells = {**{("fog", s): 0.4 for s in range(1, 6)}, ("snow", 1): 0.5, ("snow", 3): 0.5}
    got = corruption_errors(cells, 0.8, base)
    assert got["CE"] == {"fog": pytest.approx(1.0)} and got["without_baseline"] == ["snow"]
    assert got["notes"] == ["baseline given holds only snow's mean error over severities 1..5, so its CE "
                            "needs all five run; got 1, 3"]


def test_mpc_and_rpc_on_top1():
    got = corruption_summary({("fog", 1): 0.6, ("fog", 2): 0.4, ("contrast", 1): 0.2}, 0.8)
    assert got == {"mPC": pytest.approx(0.4), "rPC": pytest.approx(0.5)}
    assert corruption_summary({("fog", 1): 0.0}, 0.0)["rPC"] is None


def test_report_takes_a_builtin_baseline_name(tmp_path, capsys):
    """`perturb report --baseline-errors alexnet` resolves the name; an unknown one is exit 2, one line."""
    from bench_fixtures import write_tiny_dataset
    data = write_tiny_dataset(tmp_path / "ds", n=3, frames=6, size=32)
    assert main(["bench", "--model", "toy:8", "--dataset", str(data), "--out", str(tmp_path / "r"),
                 "--video-perturbations", "jpeg", "--text-perturbations", "none", "--severities", "1,2",
                 "--bootstrap", "0", "--no-progress", "--baseline-errors", "alexnet"]) == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    figures = doc["suites"]["imagenet-c"]["figures"]
    jpeg = [1 - r["t2v"]["R@5"] for r in doc["runs"] if r["perturbation"] == "jpeg"]
    assert figures["CE"] == {"jpeg": pytest.approx(sum(jpeg) / (0.51002 + 0.54718))}
    assert figures["baseline"] == "alexnet"
    assert main(["report", str(tmp_path / "r" / "results.json"), "--out", str(tmp_path / "rep"),
                 "--baseline-errors", "alexnet"]) == 0
    assert "over 1 corruptions with baseline errors, relative mCE" in (tmp_path / "rep" / "report.md").read_text()
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r" / "results.json"), "--out", str(tmp_path / "rep2"),
                 "--baseline-errors", "resnet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "one of alexnet, alexnet-robustbench" in err[0]
