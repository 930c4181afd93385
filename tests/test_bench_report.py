"""`perturb bench` and `perturb report` from the command line, and the report contents."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bench_fixtures import write_tiny_dataset
from perturb.bench.reporting.report import markdown, rich_summary
from perturb.bench.scoring.robustness import summarize
from perturb.cli import main


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_tiny_dataset(tmp_path_factory.mktemp("ds"))


ARGS = ["--video-perturbations", "translate,jumble", "--severities", "1,2", "--text-perturbations", "Typos",
        "--pairs", "translate@Typos", "--bootstrap", "30", "--no-progress", "--size", "32", "--batch-size", "3"]


def test_bench_cli_writes_everything_and_resumes(dataset, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["bench", "--model", "toy:16", "--dataset", str(dataset), "--out", str(out), *ARGS]) == 0
    for name in ("results.json", "results.csv", "report.md", "report.html"):
        assert (out / name).stat().st_size > 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["dataset"]["n_items"] == 4 and len(doc["runs"]) == 4 + 1 + 2
    assert doc["bootstrap"] == {"n": 30, "seed": 0, "level": 0.95}
    first = capsys.readouterr().out
    assert "γa mean ± std" in first and "video" in first
    assert main(["bench", "--model", "toy:16", "--dataset", str(dataset), "--out", str(out), *ARGS]) == 0
    assert " 0 forward passes" in capsys.readouterr().out
    assert json.loads((out / "results.json").read_text())["runs"] == doc["runs"]
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3           # severity curves, γ bars, text bars


def test_subset_from_cli_is_stable(dataset, tmp_path):
    picks = []
    for run in ("a", "b"):
        out = tmp_path / run
        assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), "--subset", "2",
                     "--seed", "3", "--video-perturbations", "none", "--text-perturbations", "Typos",
                     "--bootstrap", "0", "--no-progress", "--no-cache", "--size", "32"]) == 0
        picks.append(json.loads((out / "results.json").read_text()))
    assert picks[0]["dataset"]["subset"] == 2 and picks[0]["dataset"]["n_items"] == 2
    assert picks[0]["clean"] == picks[1]["clean"]


def test_report_combines_models_with_heatmap(dataset, tmp_path, capsys):
    out = tmp_path / "run"
    main(["bench", "--model", "toy:16", "--dataset", str(dataset), "--out", str(out), *ARGS])
    doc = json.loads((out / "results.json").read_text())
    other = dict(doc, model={"id": "toy:other", "kind": "dual"})
    other["runs"] = [dict(r, gamma_r=None if r["gamma_r"] is None else r["gamma_r"] * 0.5) for r in doc["runs"]]
    other["summary"] = summarize(other["runs"])
    (tmp_path / "other.json").write_text(json.dumps(other))
    combined = tmp_path / "combined"
    assert main(["report", str(out / "results.json"), str(tmp_path / "other.json"), "--out", str(combined)]) == 0
    html = (combined / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2 + 2 * 3      # two heatmaps + 3 plots per model
    md = (combined / "report.md").read_text()
    assert "toy:other" in md and "Robustness per category" in md and "| video |" in md


def test_usage_errors_exit_2(dataset, tmp_path, capsys):
    base = ["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(tmp_path / "x"), "--no-progress"]
    assert main([*base, "--metric", "MnR"]) == 2
    for size in ("0", "big"):
        assert main([*base, "--size", size]) == 2              # argparse: exit 2 with one line
    assert "expected a positive number of pixels or 'model'" in capsys.readouterr().err
    assert main([*base, "--video-perturbations", "gausian_noise"]) == 2
    assert "did you mean" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": "9.0"}))
    assert main(["report", str(bad), "--out", str(tmp_path / "r")]) == 2


@pytest.mark.parametrize("model, words", [
    ("nosuch:x", "unknown model kind 'nosuch' in 'nosuch:x'; expected one of "
                 "hf:NAME_OR_PATH[@REVISION][#MODE], clip:NAME_OR_PATH, "
                 "precomputed:DIR, callable:MODULE:ATTR, http:URL, toy:DIM"),
    ("callable:perturb.bench.adapters.toy:Nope", "'perturb.bench.adapters.toy' has no attribute 'Nope'"),
])
def test_an_unknown_model_is_a_usage_error_listing_the_kinds(dataset, tmp_path, capsys, model, words):
    code = main(["bench", "--model", model, "--dataset", str(dataset), "--out", str(tmp_path / "x"),
                 "--video-perturbations", "translate", "--severities", "1", "--text-perturbations", "none",
                 "--bootstrap", "0", "--no-progress", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("perturb bench: error: ") and words in err
    assert "Traceback" not in err


def test_report_names_the_file_it_cannot_read(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": "1.1", "runs": [')
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"schema_version": "1.1", "metric": "t2v.R@5", "runs": [], "clean": {
        "t2v": {"R@5": "high"}, "v2t": {"R@5": 0.5}}}))
    for path, words in ((broken, f"{broken}: not valid JSON ("), (listed, f"{listed}: expected a JSON object"),
                        (wrong, f"{wrong}: clean.t2v.R@5 must be a number or null; got 'high'"),
                        (tmp_path / "absent.json", f"cannot read results file '{tmp_path / 'absent.json'}'")):
        assert main(["report", str(path), "--out", str(tmp_path / "r")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("perturb report: error: ") and words in err, err


def test_markdown_and_terminal_tables_show_nulls():
    doc = {"model": {"id": "m", "kind": "dual"}, "metric": "t2v.R@5",
           "dataset": {"name": "d", "path": "p", "n_items": 2, "subset": None, "seed": 0},
           "clean": {d: {"R@1": 0.0, "R@5": 0.0, "R@10": 1.0, "MdR": 6.0, "MnR": 6.0} for d in ("t2v", "v2t")},
           "runs": [{"modality": "video", "perturbation": "jpeg", "category": "digital", "severity": 1,
                     "t2v": {"R@1": 0.0, "R@5": 0.0, "R@10": 1.0, "MdR": 6.0, "MnR": 6.0},
                     "v2t": {"R@1": 0.0, "R@5": 0.0, "R@10": 1.0, "MdR": 6.0, "MnR": 6.0},
                     "gamma_a": 1.0, "gamma_r": None}],
           "summary": {"perturbation": {}, "category": {"digital": {"modality": "video", "gamma_a_mean": 1.0,
                                                                    "gamma_a_std": 0.0, "gamma_r_mean": None,
                                                                    "gamma_r_std": None}},
                       "modality": {"video": {"gamma_a_mean": 1.0, "gamma_a_std": 0.0, "gamma_r_mean": None,
                                              "gamma_r_std": None}}}}
    md = markdown([doc])
    assert "| video | digital | 1.00 ± 0.00 | — ± — |" in md
    assert rich_summary(doc).row_count == 2
    assert np.isfinite(doc["runs"][0]["gamma_a"])


def test_built_directory_gives_the_on_the_fly_results(dataset, tmp_path):
    """build + bench --built equals bench on the fly, for every kind of renderer: per frame
    (noise keys, drawn offsets), index maps (temporal) and whole-clip codecs."""
    from perturb.dataset import BuildOptions, build

    built = tmp_path / "built"
    ops = ["translate", "gaussian_noise", "shot_noise", "mpeg2", "jumble", "freeze"]
    result = build(str(dataset), built, video_perturbations=ops, severities=[1, 2],
                   text_perturbations=["Typos"], options=BuildOptions(jobs=1, progress=False))
    assert result.ok
    common = ["--model", "toy:16", "--video-perturbations", ",".join(ops), "--severities", "1,2",
              "--text-perturbations", "Typos", "--bootstrap", "0", "--no-progress", "--no-cache"]
    assert main(["bench", "--built", str(built), "--out", str(tmp_path / "a"), *common]) == 0
    assert main(["bench", "--dataset", str(dataset), "--out", str(tmp_path / "b"), *common]) == 0
    a, b = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("a", "b"))
    assert a["runs"] == b["runs"] and a["clean"] == b["clean"]


def test_bench_built_runs_what_was_built_and_names_what_is_missing(dataset, tmp_path, capsys):
    """No selection: what the build holds. A selection it lacks: exit 2 naming the outputs. An output
    gone at run time: the directory is blamed, not the model, and no resume hint."""
    from perturb.dataset import BuildOptions, build

    built = tmp_path / "built"
    assert build(str(dataset), built, video_perturbations=["translate"], severities=[2],
                 text_perturbations=["Typos"], options=BuildOptions(jobs=1, progress=False)).ok
    quiet = ["--model", "toy:8", "--bootstrap", "0", "--no-progress", "--no-cache"]
    assert main(["bench", "--built", str(built), "--out", str(tmp_path / "a"), *quiet]) == 0
    runs = json.loads((tmp_path / "a" / "results.json").read_text())["runs"]
    assert [(r["perturbation"], r["severity"]) for r in runs] == [("translate", 2), ("Typos", None)]
    capsys.readouterr()
    assert main(["bench", "--built", str(built), "--out", str(tmp_path / "b"), *quiet,
                 "--video-perturbations", "translate,jpeg", "--severities", "2",
                 "--text-perturbations", "Typos,DropFirst"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"perturb bench: error: --built {built} lacks 5 requested output(s): "
                          "jpeg@2 of item00, jpeg@2 of item01, jpeg@2 of item02, jpeg@2 of item03 and 1 more; "
                          "build them with `perturb build`")
    assert "model" not in err and "resume" not in err and not (tmp_path / "b" / "results.json").exists()
    from perturb.bench.cli import failure_message
    from perturb.bench.pipeline.built import Built, BuiltOutputError
    with pytest.raises(BuiltOutputError) as gone:
        Built(built).clip(read_items(dataset)[0], "jpeg", 2)
    said = failure_message(gone.value, "toy:8", {}, str(tmp_path / "cache"))
    assert said.startswith(f"--built {built}: no finished output for 'item00' jpeg severity 2")
    assert "toy:8" not in said and "resume" not in said


def read_items(path):
    from perturb.dataset.readers import read_dataset
    return read_dataset(str(path))
