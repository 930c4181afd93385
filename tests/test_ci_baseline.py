"""The committed CI baseline is what the workflow's benchmark gives on this code, and the README's
`perturb compare` against it passes; examples/ci/make_baseline.py regenerates it."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from perturb.cli import main

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "ci" / "make_baseline.py"


def load_script():
    spec = importlib.util.spec_from_file_location("make_baseline", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script():
    return load_script()


@pytest.fixture(scope="module")
def current(script, tmp_path_factory) -> Path:
    return script.run_benchmark(tmp_path_factory.mktemp("baseline"))


def test_committed_baseline_has_not_drifted(script, current):
    drift = list(script.differences(json.loads(script.BASELINE.read_text()), json.loads(current.read_text())))
    assert drift == [], ("examples/ci/baseline.json is stale: run `python examples/ci/make_baseline.py`\n"
                         + "\n".join(drift))


def test_readme_compare_passes_on_unchanged_code(script, current, capsys):
    # README "Robustness in CI": compare against the committed baseline with a 0.02 budget,
    # without the significance test, so any drift beyond 0.02 fails here.
    assert main(["compare", str(script.BASELINE), str(current), "--max-drop", "0.02"]) == 0, capsys.readouterr().out


def test_differences_name_every_moved_value_and_ignore_the_version(script):
    base = {"perturb_version": "0.1.0", "metric": "t2v.R@1",
            "runs": [{"gamma_r": 0.806, "t2v": {"R@1": 0.75}}], "summary": {"x": None}}
    same = json.loads(json.dumps(base)) | {"perturb_version": "9.9.9"}
    assert list(script.differences(base, same)) == []
    moved = json.loads(json.dumps(base))
    moved["runs"][0]["gamma_r"] = 0.785
    moved["ties"] = "pessimistic"
    del moved["summary"]
    assert list(script.differences(base, moved)) == ["runs[0].gamma_r: 0.806 -> 0.785",
                                                     "summary: missing now", "ties: new"]
    assert list(script.differences({"runs": [1, 2]}, {"runs": [1]})) == ["runs: [1, 2] -> [1]"]
    assert list(script.differences({"a": 1.0}, {"a": 1.0 + 1e-15})) == []


def test_check_mode_exits_1_on_a_stale_file_and_rewrites_it(script, current, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(script, "run_benchmark", lambda workdir: current)     # the same run, made once
    stale = json.loads(script.BASELINE.read_text())
    stale["runs"][0]["gamma_r"] = 0.5
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(stale))
    assert script.main(["--check", "--baseline", str(path)]) == 1
    err = capsys.readouterr().err
    assert "is stale (1 value(s) moved)" in err and "runs[0].gamma_r: 0.5 -> " in err
    assert script.main(["--baseline", str(path)]) == 0
    assert script.main(["--check", "--baseline", str(path)]) == 0
    assert path.read_bytes() == script.BASELINE.read_bytes()


def test_workflow_commands_are_read_from_the_workflow(script):
    data, bench = script.workflow_commands()
    assert data.startswith("python -c") and "write_dataset('demo-data')" in data
    assert bench.startswith("perturb bench ") and "--subset 16 --seed 0" in bench
