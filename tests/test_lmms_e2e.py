"""The lmms-eval bridge end to end in the real harness: perturb builds the corrupted copies and writes
the task variants (saturate and jumble at severities 2 and 4), lmms-eval 0.7.3 runs them in its own
environment (.venv-lmms, `make lmms`) with its dummy model and with a plugin model that reads the
pixels, and the scores are read back from the harness's files (never its exit status)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_fixtures import (HARNESS, MC_COLOURS, MC_TASK, PLUGIN_MODEL, VMME_TASK, build_copy,
                           dominant_colour_task, harness_env, vmme_task)
from perturb.cli import main

ROOT = Path(__file__).resolve().parents[1]
LMMS_PYTHON = ROOT / ".venv-lmms" / "bin" / "python"
OPS, SEVERITIES = "saturate,jumble", "2,4"
VARIANTS = ("clean", "jumble_2", "jumble_4", "saturate_2", "saturate_4")
METRIC = {MC_TASK: "accuracy", VMME_TASK: "vmme_perception_score"}
SCORED = (("reader", MC_TASK), ("reader", VMME_TASK), ("dummy", MC_TASK))
# one worker runs the whole module (`make test` distributes with --dist loadgroup): the harness runs once
pytestmark = pytest.mark.xdist_group("lmms-harness")
needs_harness = pytest.mark.skipif(not LMMS_PYTHON.is_file(),
                                   reason=f"no lmms-eval environment at {LMMS_PYTHON} (`make lmms` builds it)")


def tasks_of(task: str) -> list[str]:
    """The stock task and its perturb variants' names."""
    return [task] + [f"{task}_perturb_{v}" for v in VARIANTS]


def lmms_eval(root: Path, name: str, model: str, tasks: list[str], model_args: str = "") -> dict:
    """Run ``python -m lmms_eval`` in the lmms environment; its results JSON (with each task's logged
    samples under "samples"), which must hold every task asked for: lmms-eval exits 0 when it fails."""
    out = root / f"out-{name}"
    argv = [str(LMMS_PYTHON), "-m", "lmms_eval", "--model", model, "--tasks", ",".join(tasks),
            "--include_path", str(root / "tasks"), "--output_path", str(out), "--log_samples", "--batch_size", "1"]
    run = subprocess.run(argv + (["--model_args", model_args] if model_args else []), cwd=root,
                         env=harness_env(root / "hf"), capture_output=True, text=True, timeout=400)
    (root / f"{name}.log").write_text(run.stdout + run.stderr)
    found = sorted(out.rglob("*_results.json"))
    assert run.returncode == 0 and len(found) == 1, f"lmms-eval {name} failed:\n{run.stderr[-3000:]}"
    results = json.loads(found[0].read_text())
    assert sorted(results["results"]) == sorted(tasks), run.stderr[-3000:]
    results["samples"] = {task: [json.loads(line) for line in next(out.rglob(f"*_samples_{task}.jsonl")).open()]
                          for task in tasks}
    return results


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> dict:
    """Everything run once: the copies, the variant folders, and lmms-eval with both models."""
    root = tmp_path_factory.mktemp("lmms-e2e")
    mc = dominant_colour_task(root / "tasks")
    _, vmme_videos = vmme_task(root / "tasks", root / "hf", local_docs=True)
    for task, videos, extra in ((MC_TASK, sorted((mc / "videos").iterdir()), []),
                                (VMME_TASK, sorted(vmme_videos.iterdir()), ["--videos", str(vmme_videos)])):
        copy = build_copy(videos, root / f"copy-{task}", OPS, SEVERITIES)
        assert main(["lmms-tasks", "--task", task, "--include-path", str(root / "tasks"), "--perturbations", OPS,
                     "--severities", SEVERITIES, "--copy", str(copy), "--out", str(root / "tasks" / f"perturb-{task}"),
                     *extra]) == 0
    runs = {"reader": lmms_eval(root, "reader", PLUGIN_MODEL, tasks_of(MC_TASK) + tasks_of(VMME_TASK)),
            "dummy": lmms_eval(root, "dummy", "dummy", tasks_of(MC_TASK), "decode_num_frames=4")}
    scored = {}
    for model, task in SCORED:
        out = root / f"scored-{model}-{task}.json"
        assert main(["lmms-score", str(root / "tasks" / f"perturb-{task}"), "--results", str(root / f"out-{model}"),
                     "--out", str(out), "--bootstrap", "200"]) == 0
        scored[model, task] = out
    return {"root": root, **runs, "scored": scored}


def scores(results: dict, task: str, metric: str = "accuracy") -> dict[str, float]:
    """The harness's own score of ``task`` and of each of its variants."""
    return {t: results["results"][t][f"{metric},none"] for t in tasks_of(task)}


def test_the_plugin_model_reads_each_clean_clip_right(tmp_path) -> None:
    """In the main environment: the plugin's colour table is the fixture's, and its reading of every
    clean clip gives the right letter (so the harness runs below test the variants, not the model)."""
    sys.path.insert(0, str(HARNESS))
    try:
        from colour_plugin.reading import COLOURS, answer
    finally:
        sys.path.remove(str(HARNESS))
    assert COLOURS == MC_COLOURS
    folder = dominant_colour_task(tmp_path)
    docs = json.loads((folder / "data.json").read_text())
    assert [answer("\n".join(d["options"]), [str(folder / d["video"])]) for d in docs] == [d["answer"] for d in docs]
    assert [d["answer"] for d in docs] == ["A", "B", "C", "D", "A", "B"]


@needs_harness
def test_the_pixel_model_drops_under_saturate_and_holds_under_jumble(harness) -> None:
    """The variants read the corrupted files: desaturated clips drift to a neighbouring colour, and
    shuffled frames keep every clip's colour."""
    assert scores(harness["reader"], MC_TASK) == {
        **{t: 1.0 for t in tasks_of(MC_TASK)}, f"{MC_TASK}_perturb_saturate_2": 0.5,
        f"{MC_TASK}_perturb_saturate_4": 0.5}


@needs_harness
def test_the_path_building_task_reads_the_copy_through_its_generated_doc_to_visual(harness) -> None:
    """vmme_mini's own doc_to_visual joins HF_HOME and its cache_dir; the generated one swaps in the copy."""
    assert scores(harness["reader"], VMME_TASK, "vmme_perception_score") == {
        **{t: 1.0 for t in tasks_of(VMME_TASK)}, f"{VMME_TASK}_perturb_saturate_2": 0.0,
        f"{VMME_TASK}_perturb_saturate_4": 0.0}


@needs_harness
@pytest.mark.parametrize("model, task", SCORED)
def test_the_clean_variant_reproduces_the_stock_task(harness, model, task) -> None:
    results = harness[model]
    stock, clean = results["results"][task], results["results"][f"{task}_perturb_clean"]
    assert {k: v for k, v in clean.items() if k != "alias"} == {k: v for k, v in stock.items() if k != "alias"}
    answers = {t: [(s["doc_id"], s["target"], s["filtered_resps"]) for s in results["samples"][t]]
               for t in (task, f"{task}_perturb_clean")}
    assert answers[task] == answers[f"{task}_perturb_clean"] and len(answers[task]) == len(results["samples"][task])


@needs_harness
def test_the_dummy_model_decodes_every_variant_and_answers_a(harness) -> None:
    """lmms-eval's dummy model (decode_num_frames=4) decodes each variant's files (a missing one
    fails the run) and always answers "A": right on the two questions whose answer is A."""
    assert scores(harness["dummy"], MC_TASK) == {t: pytest.approx(2 / 6) for t in tasks_of(MC_TASK)}
    assert {s["filtered_resps"] for t in tasks_of(MC_TASK) for s in harness["dummy"]["samples"][t]} == {"A"}


@needs_harness
@pytest.mark.parametrize("model, task", SCORED)
def test_perturb_scores_each_variant_as_the_harness_did(harness, model, task) -> None:
    """``perturb lmms-score`` over the harness's files: each variant's score is the harness's own number."""
    doc = json.loads(harness["scored"][model, task].read_text())
    own = scores(harness[model], task, METRIC[task])
    assert doc["clean"]["score"] == own[f"{task}_perturb_clean"]
    assert {f"{task}_perturb_{r['perturbation']}_{r['severity']}": r["score"] for r in doc["runs"]} == {
        t: s for t, s in own.items() if t not in (task, f"{task}_perturb_clean")}


@needs_harness
def test_report_and_check_read_the_scored_harness_run(harness, tmp_path) -> None:
    """The gate fails on the desaturated variant and passes on the shuffled one; the report renders."""
    scored = str(harness["scored"]["reader", MC_TASK])
    assert main(["check", scored, "--min", "jumble@4:score=0.9"]) == 0
    assert main(["check", scored, "--min", "saturate@4:score=0.9"]) == 1
    assert main(["report", scored, "--out", str(tmp_path / "report")]) == 0
    assert "**clean score: 100.00% [" in (tmp_path / "report" / "report.md").read_text()
