"""``perturb check`` and ``perturb compare`` on classification results: accuracy, error, γ and the
suites' figures as rules; two classification files compared; a retrieval file refused beside one."""
from __future__ import annotations

import pytest

from classify_fixtures import CELLS, LABELS, classification_doc, write
from gate_fixtures import make_results
from perturb.bench.scoring.baselines import load_baseline
from perturb.cli import main
from perturb.gate.compare import compare
from perturb.results import load_results
from perturb.metric_names import metric_names
from perturb.results import validate


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def results(tmp_path):
    return str(write(tmp_path / "results.json", classification_doc(baseline="alexnet", half=0.01)))


def test_the_rule_vocabulary_of_a_classification_file():
    names = metric_names(validate(classification_doc(baseline="alexnet")))
    assert names == ["gamma_a", "gamma_r", "top1", "top5", "top1_error", "top5_error", "clean.top1", "clean.top5",
                     "clean.top1_error", "clean.top5_error", "mCE", "relative_mCE"]
    kinetics = classification_doc({("fog:kinetics-c", s): 0.5 for s in range(1, 6)}, 0.8, None, modality="video")
    assert metric_names(validate(kinetics)) == ["gamma_a", "gamma_r", "top1", "top1_error", "clean.top1",
                                                "clean.top1_error", "mPC", "rPC"]


@pytest.mark.parametrize("argv, code", [
    (["--min", "clean.top1=0.76", "--max", "clean.top1_error=0.24"], 0),
    (["--min", "clean.top1=0.77"], 1),
    (["--min", "fog:top1=0.659"], 0),                   # fog (run as fog:imagenet-c): 0.66 over its severities
    (["--min", "fog:top1=0.661"], 1),
    (["--min", "gaussian_noise@5:top1=0.2", "--max", "gaussian_noise@5:top1_error=0.8"], 0),
    (["--min", "top1=0.4"], 0),                         # every corruption: the worst mean is 0.40
    (["--min", "top1=0.41"], 1),
    (["--min", "top5=0.6"], 0),
    (["--max", "mCE=0.55", "--max", "relative_mCE=0.53"], 0),     # mCE 54.59%, relative 52.86%
    (["--max", "mCE=0.54"], 1),
    (["--min", "image:gamma_r=0.69"], 0),
])
def test_check_classification_rules(capsys, results, argv, code):
    assert run(capsys, "check", results, *argv)[0] == code


def test_check_prints_the_values_it_judged(capsys, results):
    code, out, _ = run(capsys, "check", results, "--max", "mCE=0.54", "--min", "top1=0.41")
    assert code == 1
    assert "mCE <= 0.54" in out and "0.546" in out
    assert "1 of 2 fall short: gaussian_noise (0.400)" in out


@pytest.mark.parametrize("argv, words", [
    (["--min", "top1=76"], "top1 is a fraction in [0, 1]; got threshold 76 (did you mean 0.76?)"),
    (["--max", "fog:mCE=0.8"], "rule 'fog:mCE <= 0.8': a suite's figure takes no scope or severity; write 'mCE=0.8'"),
    (["--min", "t2v.R@5=0.5"], "unknown metric 't2v.R@5'"),
    (["--min", "mPC=0.5"],                                # this file has ImageNet-C's figures, not Kinetics-C's
     "metric 'mPC': this file holds no mean performance under corruption (Kinetics-C); it comes from a Kinetics-C run"),
    (["--max", "mCE=76.38"], "rule 'mCE <= 76.38': mCE is a ratio written as a fraction (0.7638 for the report's "
                             "76.38%); got threshold 76.38 (did you mean 0.7638?)"),
])
def test_check_refuses_bad_classification_rules_in_one_line(capsys, results, argv, words):
    code, out, err = run(capsys, "check", results, *argv)
    assert code == 2 and out == ""
    assert err.startswith("perturb check: error: ") and words in err and err.count("\n") == 1


def test_a_retrieval_file_knows_no_accuracy(capsys, tmp_path):
    path = str(write(tmp_path / "r.json", make_results()))
    code, _, err = run(capsys, "check", path, "--min", "top1=0.5")
    assert code == 2 and "unknown metric 'top1'" in err


def test_a_figure_the_file_lacks_says_where_it_comes_from(capsys, tmp_path):
    path = str(write(tmp_path / "c.json", classification_doc()))        # ImageNet-C without a baseline: no mCE
    code, _, err = run(capsys, "check", path, "--max", "mce=0.8")
    assert code == 2 and err == ("perturb check: error: metric 'mCE': this file holds no mean corruption error "
                                 "against a baseline (ImageNet-C); it comes from an ImageNet-C run scored with "
                                 "--baseline-errors (perturb bench or perturb report)\n")


def _worse(drop: float, on: str = "gaussian_noise") -> dict:
    return {k: round(v - drop, 6) if k[0] == on else v for k, v in CELLS.items()}


def test_compare_two_classification_files(capsys, tmp_path):
    base = str(write(tmp_path / "base.json", classification_doc(baseline="alexnet")))
    same = str(write(tmp_path / "same.json", classification_doc(baseline="alexnet")))
    worse = str(write(tmp_path / "worse.json", classification_doc(_worse(0.1), baseline="alexnet")))
    assert run(capsys, "compare", base, same)[0] == 0
    assert run(capsys, "compare", base, worse)[0] == 1
    assert run(capsys, "compare", base, worse, "--metric", "clean.top1")[0] == 0
    assert run(capsys, "compare", base, worse, "--metric", "mCE")[0] == 1
    verdicts = {(o.cells["scope"], o.cells["name"], o.cells["metric"]): (o.cells["drop"], o.cells["verdict"])
                for o in compare(load_results(base), load_results(worse), ["top1", "top1_error", "mCE"]).outcomes}
    assert verdicts[("perturbation", "gaussian_noise", "top1")] == ("+0.100", "regression")
    assert verdicts[("perturbation", "gaussian_noise", "top1_error")] == ("+0.100", "regression")
    assert verdicts[("perturbation", "fog:imagenet-c", "top1")] == ("+0.000", "ok")
    assert verdicts[("clean", "", "clean.top1_error")] == ("+0.000", "ok")
    mce = verdicts[("figure", "", "mCE")]
    assert mce[1] == "regression" and float(mce[0]) == pytest.approx(0.1 * 5 / sum(
        e for e in load_baseline("alexnet").errors["gaussian_noise"].values()) / 2, abs=1e-3)


def test_compare_notes_files_that_score_different_classes(capsys, tmp_path):
    base = str(write(tmp_path / "base.json", classification_doc()))
    renamed = str(write(tmp_path / "renamed.json", classification_doc(labels=["tench", "carp", *LABELS[2:]])))
    fewer = str(write(tmp_path / "fewer.json", classification_doc(labels=LABELS[:4])))
    assert compare(load_results(base), load_results(base)).notes == []
    assert compare(load_results(base), load_results(renamed)).notes == [
        "the files score different classes: label 1 is 'goldfish' in the baseline, 'carp' in the current run; "
        "their accuracies are not over the same choice"]
    code, out, _ = run(capsys, "compare", base, fewer)
    assert code == 0 and "baseline 6, current 4 labels" in out


def test_compare_is_noise_aware_with_the_accuracy_cis(capsys, tmp_path):
    base = str(write(tmp_path / "base.json", classification_doc(half=0.2)))
    worse = str(write(tmp_path / "worse.json", classification_doc(_worse(0.05), half=0.2)))
    code, out, _ = run(capsys, "compare", base, worse, "--metric", "top1", "--significance", "0.05")
    assert code == 0 and "noise" in out
    code, out, _ = run(capsys, "compare", base, worse, "--metric", "top1_error", "--significance", "0.05")
    assert code == 0 and "noise" in out


def test_compare_refuses_a_retrieval_file_beside_a_classification_file(capsys, tmp_path):
    classify = str(write(tmp_path / "c.json", classification_doc()))
    retrieval = str(write(tmp_path / "r.json", make_results()))
    for pair in ((retrieval, classify), (classify, retrieval)):
        code, out, err = run(capsys, "compare", *pair)
        assert code == 2 and out == "" and err.count("\n") == 1
    assert err == ("perturb compare: error: the baseline is a classification results file and the current one a "
                   "retrieval file; they measure different tasks and are not comparable\n")
