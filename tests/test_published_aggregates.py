"""Published aggregates reproduced: RobustBench's per-cell ImageNet-C accuracies of 12 models
(tests/data/robustbench-imagenet-c, recorded once with their source) through perturb's scoring
give each model's published corruption accuracy and mCE to 0.01 points."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from perturb.bench.scoring.baselines import load_baseline
from perturb.bench.scoring.corruption import corruption_errors, corruption_summary
from perturb.bench.scoring.suite_summary import summarize_suites
from perturb.registry import REGISTRY

DATA = Path(__file__).parent / "data" / "robustbench-imagenet-c"


def _cells() -> dict[str, dict[tuple[str, int], float]]:
    """Model -> {(corruption, severity): top-1 accuracy}, read from RobustBench's CSV."""
    rows = list(csv.reader((DATA / "unaggregated_results.csv").read_text(encoding="utf-8").splitlines()))
    keys = list(zip(rows[0][1:], map(int, rows[1][1:])))
    return {row[0]: dict(zip(keys, map(float, row[1:]))) for row in rows[2:]}


CELLS = _cells()


def _published(model: str) -> dict[str, float]:
    doc = json.loads((DATA / f"{model}.json").read_text(encoding="utf-8"))
    return {k: float(doc[k]) for k in ("clean_acc", "corruptions_acc", "corruptions_mce")}


def test_the_recorded_table_holds_twelve_models_of_75_cells():
    assert len(CELLS) == 12 and all(len(cells) == 75 for cells in CELLS.values())
    assert {m for m in CELLS} == {p.stem for p in DATA.glob("*.json")}


def test_standard_r50_first():
    figures = corruption_summary(CELLS["Standard_R50"], 0.7672, load_baseline("alexnet-robustbench"))
    assert round(100 * figures["mPC"], 2) == 39.48
    assert round(100 * figures["mCE"], 2) == 76.38
    assert 100 * figures["mCE"] == pytest.approx(76.3774, abs=1e-4)
    assert len(figures["CE"]) == 15 and figures["without_baseline"] == figures["outside_mce"] == []


@pytest.mark.parametrize("model", sorted(CELLS))
def test_each_models_published_corruption_accuracy_and_mce(model):
    published = _published(model)
    figures = corruption_summary(CELLS[model], published["clean_acc"] / 100, load_baseline("alexnet-robustbench"))
    assert abs(100 * figures["mPC"] - published["corruptions_acc"]) <= 0.01
    assert abs(100 * figures["mCE"] - published["corruptions_mce"]) <= 0.01
    assert figures["rPC"] == pytest.approx(figures["mPC"] / (published["clean_acc"] / 100))


def test_the_baseline_is_robustbenchs_alexnet_row():
    base = load_baseline("alexnet-robustbench")
    alexnet = CELLS["AlexNet"]
    assert {(op, s): round(1 - e, 6) for op, errs in base.errors.items() for s, e in errs.items()} \
        == {(REGISTRY.get(op, "video").name, s): a for (op, s), a in alexnet.items()}
    assert base.clean == pytest.approx(1 - _published("AlexNet")["clean_acc"] / 100)
    figures = corruption_summary(alexnet, 0.5624, base)
    assert figures["mCE"] == pytest.approx(1.0) and figures["relative_mCE"] == pytest.approx(1.0)


def test_the_retrieval_suite_summary_gives_the_same_mce():
    """The suite summary of a results file and classification share one formula."""
    runs = [{"perturbation": REGISTRY.bind(REGISTRY.get(op, "video"), "imagenet-c").ref, "modality": "video",
             "category": REGISTRY.get(op, "video").category, "severity": s, "t2v": {"R@1": a},
             "gamma_a": None, "gamma_r": None}
            for (op, s), a in CELLS["Standard_R50"].items()]
    doc = {"metric": "t2v.R@1", "clean": {"t2v": {"R@1": 0.7672}}, "runs": runs}
    figures = summarize_suites(doc, load_baseline("alexnet-robustbench"))["imagenet-c"]["figures"]
    assert round(100 * figures["mCE"], 2) == 76.38
    assert figures == corruption_errors(CELLS["Standard_R50"], 0.7672, load_baseline("alexnet-robustbench"))
