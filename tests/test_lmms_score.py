"""``perturb lmms-score`` on recorded lmms-eval 0.7.3 output (tests/data/lmms) and on logs made from
it: the harness's own numbers per variant, paired bootstrap intervals equal to a direct computation,
suite figures, the newest of several runs, one-line errors before anything is written, and the
written results.json read by report, check and compare."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from perturb.cli import main
from perturb.lmms.harness import newest_run, per_sample, results_files, task_value
from perturb.lmms.manifest import Manifest, TaskEntry, Variant, tag_name, variant_name, write_manifest
from perturb.errors import GateInputError
from perturb.results import load_results, validate

DATA = Path(__file__).parent / "data" / "lmms"
COLOUR, DUMMY = DATA / "colour", DATA / "dummy"
YAML = DATA / "task" / "colourmc" / "colourmc.yaml"
OPS = (("gaussian_noise", 1), ("gaussian_noise", 3), ("saturate", 1), ("saturate", 2))
HARNESS = json.loads(next(COLOUR.glob("*_results.json")).read_text())["results"]


def write_folder(folder: Path, ops=OPS, task: str = "colourmc", more: tuple[TaskEntry, ...] = ()) -> Path:
    """A task folder's manifest as perturb lmms-tasks writes it, for the recorded colour task."""
    folder.mkdir(parents=True, exist_ok=True)
    variants = tuple(Variant(variant_name(task, op, s), op, s, str(folder / "copy"), "0" * 64) for op, s in ops)
    entry = TaskEntry(task, str(YAML), hashlib.sha256(YAML.read_bytes()).hexdigest(), tag_name(task),
                      variant_name(task), variants)
    write_manifest(folder, Manifest("0.3.0", 0, (entry, *more)))
    return folder


def edited_logs(dst: Path, results: Callable[[dict], None] | None = None,
                samples: dict[str, Callable[[list[dict]], list[dict]]] | None = None, src: Path = COLOUR) -> Path:
    """A copy of recorded logs with the results JSON and some samples logs edited."""
    shutil.copytree(src, dst)
    path = next(dst.glob("*_results.json"))
    doc = json.loads(path.read_text())
    if results:
        results(doc)
    path.write_text(json.dumps(doc))
    for task, edit in (samples or {}).items():
        log = next(dst.glob(f"*_samples_{task}.jsonl"))
        rows = edit([json.loads(line) for line in log.read_text().splitlines()])
        log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dst


def score(tmp_path: Path, *results: Path, folder: Path | None = None, extra=()) -> tuple[int, dict | None]:
    out = tmp_path / "out" / "results.json"
    argv = ["lmms-score", str(folder or write_folder(tmp_path / "folder"))]
    for r in results or (COLOUR,):
        argv += ["--results", str(r)]
    code = main([*argv, "--out", str(out), *extra])
    return code, (json.loads(out.read_text()) if out.exists() else None)


def logged(task: str, src: Path = COLOUR) -> np.ndarray:
    """A task's per-sample accuracies in doc_id order, read straight from its samples log."""
    rows = [json.loads(line) for line in next(src.glob(f"*_samples_{task}.jsonl")).read_text().splitlines()]
    return np.array([r["accuracy"] for r in sorted(rows, key=lambda r: r["doc_id"])])


def test_per_variant_scores_are_the_harness_numbers(tmp_path, capsys):
    code, doc = score(tmp_path)
    assert code == 0
    assert doc["task"] == "lmms" and doc["schema_version"] == "1.5" and doc["metric"] == "score"
    assert doc["model"] == {"id": "lmms-eval:colour", "kind": "lmms-eval"}
    assert doc["dataset"] == {"name": "colourmc", "n_items": 8, "seed": 0}
    assert doc["clean"]["score"] == HARNESS["colourmc_perturb_clean"]["accuracy,none"] == 0.875
    runs = {(r["perturbation"], r["severity"]): r for r in doc["runs"]}
    for op, s in OPS:
        assert runs[op, s]["score"] == HARNESS[variant_name("colourmc", op, s)]["accuracy,none"]
    assert [runs[k]["score"] for k in OPS] == [0.875, 0.875, 1.0, 0.375]
    assert runs["saturate", 2]["gamma_a"] == 0.5 and runs["saturate", 2]["gamma_r"] == pytest.approx(0.375 / 0.875)
    assert (runs["saturate", 2]["category"], runs["gaussian_noise", 1]["category"]) == ("digital", "noise")
    assert doc["lmms"]["metric"] == "accuracy,none" and doc["lmms"]["scale"] == 1.0
    assert [(v["task"], v["value"]) for v in doc["lmms"]["variants"]][:2] == [
        ("colourmc_perturb_clean", 0.875), ("colourmc_perturb_gaussian_noise_1", 0.875)]
    assert doc["summary"]["perturbation"]["saturate"]["gamma_a_mean"] == pytest.approx((1.125 + 0.5) / 2)
    assert "read colourmc_perturb_saturate_2: " in capsys.readouterr().out
    validate(doc, "results.json")


def _interval(values: np.ndarray) -> list[float]:
    values = values[np.isfinite(values)]
    return [float(x) for x in np.quantile(values, [0.025, 0.975])]


@pytest.mark.parametrize("n, seed", [(500, 0), (300, 7)])
def test_paired_intervals_equal_a_direct_paired_bootstrap_over_doc_ids(tmp_path, n, seed):
    code, doc = score(tmp_path, extra=["--bootstrap", str(n), "--seed", str(seed)])
    assert code == 0 and doc["bootstrap"] == {"n": n, "seed": seed, "level": 0.95}
    clean = logged("colourmc_perturb_clean")
    idx = np.random.default_rng(seed).integers(0, len(clean), size=(n, len(clean)))   # doc ids drawn once
    a_c = clean[idx].mean(axis=1)
    assert doc["clean"]["ci"]["score"] == _interval(a_c)
    for run in doc["runs"]:
        a_p = logged(variant_name("colourmc", run["perturbation"], run["severity"]))[idx].mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = {"score": _interval(a_p), "gamma_a": _interval(1 - (a_c - a_p)),
                        "gamma_r": _interval(np.where(a_c == 0, np.nan, a_p / a_c))}
        assert {k: pytest.approx(v, abs=1e-12) for k, v in expected.items()} == run["ci"]
    assert doc["runs"][3]["ci"]["gamma_a"] != doc["runs"][3]["ci"]["score"]        # γ's interval is its own


def test_without_bootstrap_there_are_no_intervals(tmp_path):
    code, doc = score(tmp_path, extra=["--bootstrap", "0"])
    assert code == 0 and doc["bootstrap"] is None and "ci" not in doc["clean"] and "ci" not in doc["runs"][0]


def _percent(doc: dict) -> None:
    for values in doc["results"].values():
        values["accuracy,none"] *= 100


def _as_dicts(rows: list[dict]) -> list[dict]:
    return [{**r, "accuracy": {"score": r["accuracy"], "videoID": f"v{r['doc_id']}"}} for r in rows]


def test_a_percent_metric_with_per_sample_objects_scores_the_same_fractions(tmp_path):
    """Video-MME's shape: the harness reports percent, each sample logs an object holding its 0/1 score."""
    tasks = ["colourmc_perturb_clean", *(variant_name("colourmc", op, s) for op, s in OPS)]
    logs = edited_logs(tmp_path / "pct", _percent, {t: _as_dicts for t in tasks})
    _, plain = score(tmp_path / "a")
    code, doc = score(tmp_path / "b", logs)
    assert code == 0 and doc["lmms"]["scale"] == 100.0
    assert [v["value"] for v in doc["lmms"]["variants"]] == [87.5, 87.5, 87.5, 100.0, 37.5]
    assert [r["score"] for r in doc["runs"]] == [r["score"] for r in plain["runs"]]
    assert [r["ci"] for r in doc["runs"]] == [r["ci"] for r in plain["runs"]]


def _kinetics(doc: dict) -> None:
    for key in ("results", "configs", "n-samples"):
        for s in (1, 2):
            doc[key][f"colourmc_perturb_saturate-kinetics-c_{s}"] = doc[key].pop(f"colourmc_perturb_saturate_{s}")


def test_a_suite_the_ops_select_gets_its_mpc_and_rpc(tmp_path):
    logs = edited_logs(tmp_path / "k", _kinetics)
    for s in (1, 2):
        old = next(logs.glob(f"*_samples_colourmc_perturb_saturate_{s}.jsonl"))
        old.rename(old.with_name(old.name.replace("saturate_", "saturate-kinetics-c_")))
    folder = write_folder(tmp_path / "folder", (("saturate:kinetics-c", 1), ("saturate:kinetics-c", 2)))
    code, doc = score(tmp_path, logs, folder=folder)
    assert code == 0 and [r["perturbation"] for r in doc["runs"]] == ["saturate:kinetics-c"] * 2
    figures = doc["suites"]["kinetics-c"]["figures"]
    assert figures["mPC"] == (1.0 + 0.375) / 2 and figures["rPC"] == pytest.approx(0.6875 / 0.875)
    assert doc["suites"]["kinetics-c"]["operations"] == ["saturate"]


def _later(doc: dict) -> None:
    doc["date"] = "20261129_090000"
    doc["results"]["colourmc_perturb_saturate_2"]["accuracy,none"] = 0.25


def _one_more_wrong(rows: list[dict]) -> list[dict]:
    return [{**r, "accuracy": 0.0} if r["doc_id"] == 0 else r for r in rows]


def test_the_newest_run_of_a_variant_is_read_and_named(tmp_path, capsys):
    newer = edited_logs(tmp_path / "newer", _later, {"colourmc_perturb_saturate_2": _one_more_wrong})
    next(newer.glob("*_results.json")).rename(newer / "20261129_090000_results.json")
    for log in newer.glob("20261128_184901_samples_*.jsonl"):
        log.rename(newer / log.name.replace("20261128_184901", "20261129_090000"))
    code, doc = score(tmp_path, COLOUR, newer)
    assert code == 0
    assert {r["severity"]: r["score"] for r in doc["runs"] if r["perturbation"] == "saturate"} == {1: 1.0, 2: 0.25}
    assert doc["lmms"]["variants"][-1]["runs_found"] == 2
    assert f"read colourmc_perturb_saturate_2: {newer}/20261129_090000_results.json (the newest of 2 runs)" \
        in capsys.readouterr().out


def test_the_clean_variant_logs_the_stock_tasks_score_and_answers():
    files = results_files([DUMMY])
    stock, clean = newest_run(files, "colourmc", [DUMMY]), newest_run(files, "colourmc_perturb_clean", [DUMMY])
    assert task_value(files[stock.results], stock, "accuracy") == task_value(files[clean.results], clean, "accuracy") \
        == ("accuracy,none", 0.375)
    assert per_sample(stock, "accuracy") == per_sample(clean, "accuracy")


def _drop(task: str) -> Callable[[dict], None]:
    return lambda doc: doc["results"].pop(task)


def _set(value) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        doc["results"]["colourmc_perturb_saturate_2"]["accuracy,none"] = value
    return edit


@pytest.mark.parametrize("results, samples, message", [
    (_drop("colourmc_perturb_saturate_2"), None,
     "colourmc_perturb_saturate_2: no lmms-eval results for this task under {logs} (looked for *_results.json "
     "holding it; lmms-eval writes none when the evaluation fails)"),
    (_set("N/A"), None, "colourmc_perturb_saturate_2: accuracy,none is 'N/A' in {results}; expected a number "
                        "(the run failed)"),
    (_set(float("nan")), None, "colourmc_perturb_saturate_2: accuracy,none is nan in {results}; expected a number "
                               "(the run failed)"),
    (lambda doc: doc["results"]["colourmc_perturb_saturate_2"].pop("accuracy,none"), None,
     "colourmc_perturb_saturate_2: {results} holds no 'accuracy' for the task (it holds no metric; "
     "the run failed or the metric is another)"),
    (None, {"colourmc_perturb_saturate_2": lambda rows: rows[:-1]},
     "colourmc_perturb_saturate_2: its samples log misses doc_id 7 ({logs}/20261128_184901_samples_colourmc_perturb_"
     "saturate_2.jsonl against {logs}/20261128_184901_samples_colourmc_perturb_clean.jsonl)"),
    (None, {"colourmc_perturb_saturate_2": lambda rows: rows + [{**rows[0], "doc_id": 8}]},
     "colourmc_perturb_saturate_2: its samples log holds doc_id 8 the clean run has not ({logs}/20261128_184901_"
     "samples_colourmc_perturb_saturate_2.jsonl against {logs}/20261128_184901_samples_colourmc_perturb_clean.jsonl)"),
    (None, {"colourmc_perturb_saturate_2": lambda rows: rows + [rows[0]]},
     "colourmc_perturb_saturate_2: {logs}/20261128_184901_samples_colourmc_perturb_saturate_2.jsonl line 9: "
     "doc_id 0 is logged twice"),
    (None, {"colourmc_perturb_saturate_2": _one_more_wrong},
     "colourmc_perturb_saturate_2: the harness's accuracy,none is 0.375 but its 8 per-sample values average 0.25; "
     "perturb scores a metric that is their mean (or 100 times it)"),
])
def test_a_missing_or_failed_run_is_one_line_naming_the_task_and_nothing_is_written(tmp_path, capsys, results,
                                                                                      samples, message):
    logs = edited_logs(tmp_path / "logs", results, samples)
    code, doc = score(tmp_path, logs)
    err = capsys.readouterr().err
    assert code == 2 and doc is None
    assert err == f"perturb lmms-score: error: {message.format(logs=logs, results=next(logs.glob('*_results.json')))}\n"


def test_a_variant_run_by_another_model_is_refused(tmp_path, capsys):
    other = edited_logs(tmp_path / "other", lambda doc: (_drop("colourmc_perturb_clean")(doc),
                                                        doc["config"].update(model_args="pretrained=other")))
    only_clean = edited_logs(tmp_path / "clean", lambda doc: [doc["results"].pop(t) for t in list(doc["results"])
                                                              if t != "colourmc_perturb_clean"])
    code, doc = score(tmp_path, only_clean, other)
    assert code == 2 and doc is None
    assert ("colourmc_perturb_gaussian_noise_1: ran lmms-eval:colour,pretrained=other but colourmc_perturb_clean "
            "ran lmms-eval:colour; score runs of one model") in capsys.readouterr().err


def test_a_missing_samples_log_names_the_task_and_the_file(tmp_path, capsys):
    logs = edited_logs(tmp_path / "logs")
    log = next(logs.glob("*_samples_colourmc_perturb_gaussian_noise_3.jsonl"))
    log.unlink()
    code, _ = score(tmp_path, logs)
    assert code == 2
    assert f"colourmc_perturb_gaussian_noise_3: no samples log {log} (run lmms-eval with --log_samples)" \
        in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--bootstrap", "-1"], "--bootstrap must be >= 0; got -1"),
    (["--task", "videomme"], "'videomme' is not a task of this manifest (it has colourmc)"),
    (["--results", "/nonexistent/runs"], "--results /nonexistent/runs: not a folder"),
])
def test_bad_options_are_one_line_exit_2(tmp_path, capsys, argv, message):
    code, doc = score(tmp_path, extra=argv)
    assert code == 2 and doc is None and message in capsys.readouterr().err


def test_a_manifest_of_several_tasks_needs_task(tmp_path, capsys):
    other = TaskEntry("tempcompass", str(YAML), "0" * 64, "tempcompass_perturb", "tempcompass_perturb_clean", ())
    folder = write_folder(tmp_path / "folder", more=(other,))
    code, _ = score(tmp_path, folder=folder)
    assert code == 2 and ("the manifest holds 2 tasks (colourmc, tempcompass); choose one with --task"
                          in capsys.readouterr().err)
    code, doc = score(tmp_path, folder=folder, extra=["--task", "colourmc"])
    assert code == 0 and doc["dataset"]["name"] == "colourmc"


@pytest.fixture
def written(tmp_path) -> Path:
    code, _ = score(tmp_path)
    assert code == 0
    return tmp_path / "out" / "results.json"


@pytest.mark.parametrize("rules, status", [
    (["--min", "gamma_r=0.5"], 0),             # per op: saturate's mean γr 0.786
    (["--min", "gamma_r=0.8"], 1),
    (["--min", "saturate@2:gamma_r=0.5"], 1),  # 0.429
    (["--min", "clean.score=0.8", "--min", "noise:score=0.85"], 0),
    (["--min", "top1=0.5"], 2),
])
def test_check_gates_on_the_written_file(written, rules, status):
    assert main(["check", str(written), *rules]) == status


def test_compare_and_report_read_the_written_file(written, tmp_path, capsys):
    assert main(["compare", str(written), str(written)]) == 0
    logs = edited_logs(tmp_path / "worse", lambda doc: doc["results"]["colourmc_perturb_gaussian_noise_3"].update(
        {"accuracy,none": 0.5}), {"colourmc_perturb_gaussian_noise_3": lambda rows: [
            {**r, "accuracy": 0.0} if r["doc_id"] in (0, 1, 2) else r for r in rows]})
    code, worse = score(tmp_path / "w", logs)
    assert code == 0 and worse["runs"][1]["score"] == 0.5
    assert main(["compare", str(written), str(tmp_path / "w" / "out" / "results.json")]) == 1
    assert main(["report", str(written), "--out", str(tmp_path / "report")]) == 0
    md = (tmp_path / "report" / "report.md").read_text()
    assert "**clean score: 87.50% [" in md
    assert "| saturate | 100.00 | 37.50 | — | — | — | 68.75 |" in md


def test_an_lmms_file_off_its_schema_is_refused_in_one_line(written):
    doc = json.loads(written.read_text())
    assert load_results(written).task == "lmms"
    doc["runs"][0]["score"] = 1.5
    with pytest.raises(GateInputError, match=r"^r.json: runs\[0\].score is 1.5; expected a fraction in \[0, 1\]$"):
        validate(doc, "r.json")
    doc["runs"][0]["score"] = 0.875
    doc.pop("lmms")
    with pytest.raises(GateInputError, match=r"^r.json: missing key\(s\) 'lmms'$"):
        validate(doc, "r.json")
