"""Published aggregates reproduced: RobustBench's per-cell ImageNet-C accuracies of 12 models
(tests/data/robustbench-imagenet-c, recorded once with their source), written as classification
results files and read back through ``perturb report --baseline-errors alexnet-robustbench``, give
each model's published corruption accuracy and mCE to 0.01 points."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from classify_fixtures import classification_doc, write
from perturb.bench.scoring.baselines import load_baseline
from perturb.bench.scoring.corruption import corruption_errors, corruption_summary
from perturb.bench.scoring.suite_summary import summarize_suites
from perturb.cli import main
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


def _bound(op: str) -> str:
    """A corruption as a classification run names it: ImageNet-C's own table (``fog:imagenet-c``)."""
    return REGISTRY.bind(REGISTRY.get(op, "video"), "imagenet-c").ref


IMAGENET_CLASSES = [f"class {i}" for i in range(1000)]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    """Every model's cells as a classification results.json, then one ``perturb report`` of the
    twelve with RobustBench's AlexNet as the baseline, into the folder returned."""
    folder = tmp_path_factory.mktemp("robustbench")
    files = []
    for model, cells in CELLS.items():
        doc = classification_doc({(_bound(op), s): a for (op, s), a in cells.items()},
                                 _published(model)["clean_acc"] / 100, None, model=model, labels=IMAGENET_CLASSES)
        files.append(str(write(folder / f"{model}.json", doc)))
    assert main(["report", *files, "--out", str(folder / "report"), "--baseline-errors", "alexnet-robustbench"]) == 0
    return folder / "report"


@pytest.fixture(scope="module")
def reported(report_dir) -> dict[str, dict]:
    """Model -> its entry of the report's report.json."""
    reports = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))["reports"]
    return {entry["model"]: entry for entry in reports}


@pytest.mark.parametrize("model", sorted(CELLS))
def test_each_models_published_corruption_accuracy_and_mce_through_the_report(reported, model):
    published = _published(model)
    figures = reported[model]["suites"]["imagenet-c"]
    assert figures["baseline"] == "alexnet-robustbench" and len(figures["CE"]) == 15
    assert abs(100 * figures["corruption_accuracy"] - published["corruptions_acc"]) <= 0.01
    assert abs(100 * figures["mCE"] - published["corruptions_mce"]) <= 0.01
    assert reported[model]["clean"]["top1"] == pytest.approx(published["clean_acc"] / 100)
    assert len(reported[model]["corruptions"]) == 15


def test_the_report_leads_with_the_published_figures(report_dir):
    text = (report_dir / "report.md").read_text(encoding="utf-8")
    assert "**clean top-1: 76.72% (chance 0.10%)**" in text
    assert "**ImageNet-C: mCE 76.38%, relative mCE" in text and "corruption accuracy 39.48%**" in text


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
