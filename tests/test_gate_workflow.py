"""The example CI workflow is valid YAML, its commands are the documented ones, and they run here."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from perturb.cli import main

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "examples" / "ci" / "robustness.yml"
DOC = REPO / "docs" / "ci.md"


def steps() -> list[dict]:
    doc = yaml.safe_load(WORKFLOW.read_text())
    return doc["jobs"]["robustness"]["steps"]


def runnable(step: dict) -> bool:
    """Steps that make sense offline: not the install, not the pull-request comment."""
    return ("run" in step and "pip install" not in step["run"]
            and "pull_request" not in str(step.get("if", "")))


def commands() -> list[str]:
    return [" ".join(step["run"].split()) for step in steps() if runnable(step)]


def test_workflow_is_valid_github_actions_yaml():
    doc = yaml.safe_load(WORKFLOW.read_text())
    triggers = doc.get("on", doc.get(True))            # YAML 1.1 reads a bare `on` as True
    assert set(triggers) == {"pull_request", "push"}
    names = [s.get("name") or s.get("uses") for s in steps()]
    assert names[:3] == ["actions/checkout@v4", "actions/setup-python@v5", "Install"]
    assert names[-1] == "actions/upload-artifact@v4"
    assert "robustness-out/report.html" in steps()[-1]["with"]["path"]
    install = next(s["run"] for s in steps() if s.get("name") == "Install")
    assert 'pip install -e ".[bench,models]"' in install


def test_workflow_commands_are_the_documented_ones():
    documented = {" ".join(line.split()) for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
                  for line in block.splitlines() if line.strip()}
    ran = [c for c in commands() if not c.startswith("cat ")]
    assert [c.split()[:2] for c in ran] == [["python", "-c"], ["perturb", "bench"], ["perturb", "check"],
                                            ["perturb", "compare"]]
    assert set(ran) <= documented
    bench = shlex.split(ran[1])
    assert bench[bench.index("--subset") + 1] == "16" and bench[bench.index("--seed") + 1] == "0"


def test_workflow_runs_locally(tmp_path, monkeypatch, capsys):
    """Every offline step, in order, from a scratch checkout-like folder; `perturb` lines in-process."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "step-summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command in commands():
        assert "${{" not in command, command
        if command.startswith("perturb "):
            code = main(shlex.split(command)[1:])
        else:
            code = subprocess.run(["bash", "-ec", command], env=env, cwd=tmp_path).returncode
        out = capsys.readouterr().out
        assert code == 0, (f"{command}\n{out}\n(if the baseline is stale, regenerate "
                           f"examples/ci/baseline.json with the bench command of docs/ci.md)")
    artefacts = next(s for s in steps() if s.get("uses", "").startswith("actions/upload-artifact"))
    for path in artefacts["with"]["path"].split():
        assert (tmp_path / path).is_file(), path
    text = summary.read_text()
    assert "### Robustness check of `robustness-out/results.json`: ✅ passed" in text
    assert ("### Robustness of `robustness-out/results.json` against `examples/ci/baseline.json`: "
            "✅ passed") in text
