"""``perturb report`` of classification results: the headline (clean top-1 and top-5 with CIs, then
mCE and relative mCE or mPC and rPC), RobustBench's corruption × severity table, report.json, and
the suite summary of a classification file."""
from __future__ import annotations

import json

import pytest

from classify_fixtures import CELLS, classification_doc, write
from perturb.bench.reporting.report import headline, html_report, markdown, summary_lines
from perturb.bench.scoring.baselines import load_baseline
from perturb.bench.scoring.corruption import corruption_errors
from perturb.bench.scoring.suite_summary import summarize_suites
from perturb.cli import main

TABLE = ["| corruption | 1 | 2 | 3 | 4 | 5 | mean |",
         "|---|---|---|---|---|---|---|",
         "| gaussian_noise | 60.00 | 50.00 | 40.00 | 30.00 | 20.00 | 40.00 |",
         "| fog | 70.00 | 68.00 | 66.00 | 64.00 | 62.00 | 66.00 |",
         "| mean | 65.00 | 59.00 | 53.00 | 47.00 | 41.00 | 53.00 |"]


def test_the_suite_summary_reads_top1_of_a_classification_file():
    doc = classification_doc(baseline="alexnet")
    figures = summarize_suites(doc, load_baseline("alexnet"))["imagenet-c"]["figures"]
    cells = {("gaussian_noise", s): a for (op, s), a in CELLS.items() if op == "gaussian_noise"}
    cells |= {("fog", s): a for (op, s), a in CELLS.items() if op.startswith("fog")}
    assert figures == corruption_errors(cells, 0.76, load_baseline("alexnet"))
    assert summarize_suites(doc)["imagenet-c"]["configurations"] == 10
    kinetics = classification_doc({("fog:kinetics-c", s): 0.5 for s in range(1, 6)}, 0.8, None, modality="video")
    assert kinetics["suites"]["kinetics-c"]["figures"] == {"mPC": 0.5, "rPC": 0.625}


def test_the_markdown_leads_with_clean_accuracy_then_mce_then_the_corruption_table():
    text = markdown([classification_doc(baseline="alexnet", half=0.01)])
    head = text.split("| modality | mean γa")[0].splitlines()
    assert head[4:] == [
        "**clean top-1: 76.00% [75.00, 77.00] (chance 16.67%); top-5: 93.00% [92.00, 94.00]**", "",
        "**ImageNet-C: mCE 54.59%, relative mCE 52.86% against alexnet; corruption accuracy 53.00%**", "",
        "Accuracy under corruption (top-1 accuracy, %):", "", *TABLE, ""]
    assert "Metric: `top1` (top-1 accuracy)" in text
    assert "CIs: percentile bootstrap over samples: 1000 resamples of the samples" in text
    assert "| top-1 accuracy | 76.00 | [75.00, 77.00] | 24.00 |" in text      # the clean table


def test_kinetics_c_leads_with_mpc_and_rpc():
    doc = classification_doc({("fog:kinetics-c", s): 0.5 for s in range(1, 6)}, 0.8, None, modality="video")
    assert summary_lines(doc)[:2] == ["clean top-1: 80.00% (chance 16.67%)", "Kinetics-C: mPC 50.00%, rPC 62.50%"]
    assert headline(doc)["tables"][0][2] == [["fog", *["50.00"] * 6], ["mean", *["50.00"] * 6]]


def test_without_a_baseline_the_headline_says_what_mce_needs():
    assert headline(classification_doc())["side"] == [
        "ImageNet-C: corruption accuracy 53.00%; mCE needs a baseline model's errors (--baseline-errors)"]


def test_the_html_headline_holds_the_table():
    page = html_report([classification_doc(baseline="alexnet")])
    section = page.split("<section class='headline' id='headline'>")[1].split("</section>")[0]
    assert "clean top-1: 76.00% (chance 16.67%); top-5: 93.00%" in section
    assert "<h3>Accuracy under corruption (top-1 accuracy, %)</h3>" in section
    assert "<tr><td>fog</td><td>70.00</td><td>68.00</td><td>66.00</td><td>64.00</td><td>62.00</td><td>66.00</td></tr>" \
        in section


def test_perturb_report_recomputes_the_figures_with_a_baseline_and_writes_report_json(tmp_path, capsys):
    path = write(tmp_path / "results.json", classification_doc())          # no baseline: no mCE in the file
    assert main(["report", str(path), "--out", str(tmp_path / "out"), "--baseline-errors", "alexnet"]) == 0
    assert "ImageNet-C: mCE 54.59%" in capsys.readouterr().out
    entry = json.loads((tmp_path / "out" / "report.json").read_text())["reports"][0]
    assert entry["task"] == "classify" and entry["metric"] == "top1" and entry["clean"] == {"top1": 0.76, "top5": 0.93}
    figures = entry["suites"]["imagenet-c"]
    assert figures["mCE"] == pytest.approx(0.545925, abs=1e-6) and figures["baseline"] == "alexnet"
    assert figures["corruption_accuracy"] == pytest.approx(0.53)
    assert entry["corruptions"]["gaussian_noise"] == {"1": 0.6, "2": 0.5, "3": 0.4, "4": 0.3, "5": 0.2,
                                                      "mean": pytest.approx(0.4)}


def test_a_baseline_for_a_file_without_imagenet_c_runs_says_why_there_is_no_mce(tmp_path, capsys):
    """fog under its own table is not ImageNet-C's fog: no mCE, and the report says so."""
    path = write(tmp_path / "results.json", classification_doc({("fog", s): 0.5 for s in range(1, 6)}))
    assert main(["report", str(path), "--out", str(tmp_path / "out"), "--baseline-errors", "alexnet"]) == 0
    assert capsys.readouterr().err == (f"note: {path}: no run is an ImageNet-C corruption under ImageNet-C's own "
                                       "table (e.g. gaussian_noise, fog:imagenet-c), so --baseline-errors gives it "
                                       "no mCE\n")
    assert json.loads((tmp_path / "out" / "report.json").read_text())["reports"][0]["suites"] == {}


def test_perturb_report_refuses_a_bad_classification_file_in_one_line(tmp_path, capsys):
    doc = classification_doc()
    doc["runs"][0]["top1"] = 60
    path = write(tmp_path / "results.json", doc)
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"perturb report: error: {path}: runs[0].top1 is 60; expected a fraction in [0, 1]\n"
