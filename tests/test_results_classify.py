"""Classification results files (schema 1.3, ``"task": "classify"``): what validate accepts and
refuses (one line naming the file and the field), the accessors readers use, the tidy CSV rows."""
from __future__ import annotations

import copy

import pytest

from classify_fixtures import classification_doc
from perturb.errors import GateInputError
from perturb.metric_names import Metric, parse_metric
from perturb.results import tidy_rows, validate


def test_a_classification_file_validates_with_its_task_labels_and_headline():
    results = validate(classification_doc(half=0.01), "r.json")
    assert results.task == "classify" and results.metric == "top1"
    assert results.headline == Metric("top1") and results.headline.words == "top-1 accuracy"
    assert results.labels[:2] == ["tench", "goldfish"]
    assert results.ci_key(Metric("top1")) == "top1" and results.ci_key(Metric("top5_error")) == "top5"
    assert results.ci_key(Metric("gamma_r")) == "gamma_r" and results.ci_key(Metric("mCE")) is None


def test_a_file_without_task_is_retrieval():
    from gate_fixtures import make_results

    results = validate(make_results())
    assert results.task == "retrieval" and results.labels == []
    assert results.ci_key(Metric("R@5", "t2v", clean=True)) == "metric"


def test_the_suites_figures_are_read_from_the_file():
    results = validate(classification_doc(baseline="alexnet"))
    assert results.figure("mCE") == pytest.approx(0.5459, abs=1e-4)
    assert results.figure("mPC") is None
    assert parse_metric("mce", results) == Metric("mCE")


def _broken(change) -> dict:
    doc = copy.deepcopy(classification_doc())
    change(doc)
    return doc


@pytest.mark.parametrize("change, message", [
    (lambda d: d["runs"][2].update(top1=1.2), "r.json: runs[2].top1 is 1.2; expected a fraction in [0, 1]"),
    (lambda d: d["clean"].update(top5="0.9"), "r.json: clean.top5 must be a number or null; got '0.9'"),
    (lambda d: d["runs"][0].pop("top1"), "r.json: runs[0]: missing key(s) 'top1'"),
    (lambda d: d["clean"].pop("top1"), "r.json: clean: missing key(s) 'top1'"),
    (lambda d: d.update(metric="top3"), "r.json: metric of a classification file must be top1 or top5; got 'top3'"),
    (lambda d: d.update(metric="t2v.R@5"), "r.json: metric of a classification file must be top1 or top5; got 't2v.R@5'"),
    (lambda d: (d.update(metric="top5"), d["runs"][1].pop("top5")),
     "r.json: metric is 'top5' but runs[1].top5 is missing or null"),
    (lambda d: d["classification"].update(labels=["tench", 3]),
     "r.json: classification.labels[1] must be a string; got 3"),
    (lambda d: d.pop("classification"), "r.json: missing key(s) 'classification'"),
    (lambda d: d.update(task="detect"), "r.json: task must be one of retrieval, classify, lmms; got 'detect'"),
    (lambda d: d["runs"][0].update(ci={"top1": [0.5]}), "r.json: runs[0].ci.top1 must be a list [lo, hi]; got [0.5]"),
    (lambda d: d.update(chance={"top1": "x"}), "r.json: chance.top1 must be a finite number; got 'x'"),
    (lambda d: d["runs"][0].update(ci={"top1": [-0.1, 0.7]}),
     "r.json: runs[0].ci.top1[0] is -0.1; expected a fraction in [0, 1]"),
    (lambda d: d["clean"].update(ci={"top5": [0.95, 0.91]}),
     "r.json: clean.ci.top5 is [0.95, 0.91]; expected [lo, hi] with lo <= hi"),
    (lambda d: d["runs"][3].update(modality="text"),
     "r.json: runs[3].modality of a classification file must be video or image; got 'text'"),
    (lambda d: d["classification"].update(labels=["tench", "goldfish"]),
     "r.json: classification.labels holds 2 name(s) but dataset.classes is 6; expected one label per class"),
    (lambda d: d["summary"]["perturbation"]["gaussian_noise"].update(gamma_a_mean=0.9),
     "r.json: summary.perturbation.gaussian_noise.gamma_a_mean is 0.9 but its 5 run(s) give a mean of 0.64; "
     "the summary and the runs disagree"),
])
def test_a_bad_classification_file_is_refused_in_one_line(change, message):
    with pytest.raises(GateInputError) as e:
        validate(_broken(change), "r.json")
    assert str(e.value) == message


def test_a_subset_file_name_is_allowed_in_a_classification_file_only():
    validate(_broken(lambda d: d["dataset"].update(subset="robustbench_5000.txt")))
    from gate_fixtures import make_results

    doc = make_results()
    doc["dataset"]["subset"] = "list.txt"
    with pytest.raises(GateInputError, match="dataset.subset must be an integer >= 0; got 'list.txt'"):
        validate(doc)


def test_tidy_rows_of_a_classification_file():
    rows = tidy_rows(classification_doc({("gaussian_noise", 3): 0.41}, 0.76, 0.93))
    assert [(r["perturbation"], r["severity"], r["measure"], r["value"]) for r in rows] == [
        ("clean", None, "top1", 0.76), ("clean", None, "top5", 0.93),
        ("clean", None, "top1_error", 0.24), ("clean", None, "top5_error", 0.07),
        ("gaussian_noise", 3, "top1", 0.41), ("gaussian_noise", 3, "top5", 0.61),
        ("gaussian_noise", 3, "top1_error", 0.59), ("gaussian_noise", 3, "top5_error", 0.39),
        ("gaussian_noise", 3, "gamma_a", pytest.approx(0.65)), ("gaussian_noise", 3, "gamma_r", pytest.approx(0.41 / 0.76))]
    assert {r["modality"] for r in rows} == {"clean", "image"}


def test_without_top5_the_rows_leave_it_out():
    rows = tidy_rows(classification_doc({("fog:imagenet-c", 1): 0.5}, 0.8, None))
    assert [r["measure"] for r in rows if r["perturbation"] == "clean"] == ["top1", "top1_error"]
