"""Regenerate examples/ci/baseline.json, or check that it is current.

The baseline is the results.json of the workflow's own benchmark (the "Demo data" and "Benchmark a
fixed subset" steps of examples/ci/robustness.yml) on unchanged code. This runs those two steps in
a temporary folder and writes the results beside this script (run it without arguments, then
commit the file); with --check it only compares and exits 1, naming every value that moved, when
the committed file has drifted:

    python examples/ci/make_baseline.py --check
"""
from __future__ import annotations

import argparse
import json
import math
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import yaml

HERE = Path(__file__).resolve().parent
WORKFLOW = HERE / "robustness.yml"
BASELINE = HERE / "baseline.json"
STEPS = ("Demo data", "Benchmark a fixed subset")     # the workflow steps that make the results
NOT_COMPARED = ("perturb_version",)                    # a release alone does not move the numbers


def workflow_commands(workflow: Path = WORKFLOW) -> list[str]:
    """The shell commands of STEPS, in order, as the workflow runs them."""
    steps = yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"]["robustness"]["steps"]
    runs = {step.get("name"): step.get("run") for step in steps}
    missing = [name for name in STEPS if not runs.get(name)]
    if missing:
        raise SystemExit(f"{workflow}: no step named {', '.join(missing)}")
    return [" ".join(runs[name].split()) for name in STEPS]


def run_benchmark(workdir: Path, workflow: Path = WORKFLOW) -> Path:
    """Run the workflow's data and benchmark steps in ``workdir``; returns the results.json path."""
    out = None
    for command in workflow_commands(workflow):
        argv = shlex.split(command)
        if argv[0] == "perturb":
            argv = [sys.executable, "-m", "perturb", *argv[1:]]
            out = argv[argv.index("--out") + 1]
        elif argv[0] == "python":
            argv = [sys.executable, *argv[1:]]
        subprocess.run(argv, cwd=workdir, check=True)
    if out is None:
        raise SystemExit(f"{workflow}: no `perturb bench` command in the steps {STEPS}")
    return workdir / out / "results.json"


def differences(baseline: Any, current: Any, path: str = "") -> Iterator[str]:
    """Every value that differs between two results documents, as ``path: baseline -> current``."""
    if isinstance(baseline, dict) and isinstance(current, dict):
        for key in sorted(set(baseline) | set(current)):
            if not path and key in NOT_COMPARED:
                continue
            where = f"{path}.{key}" if path else key
            if key not in current or key not in baseline:
                yield f"{where}: {'missing now' if key not in current else 'new'}"
            else:
                yield from differences(baseline[key], current[key], where)
    elif isinstance(baseline, list) and isinstance(current, list) and len(baseline) == len(current):
        for k, (a, b) in enumerate(zip(baseline, current)):
            yield from differences(a, b, f"{path}[{k}]")
    elif isinstance(baseline, float) and isinstance(current, (int, float)) and not isinstance(current, bool):
        if not math.isclose(baseline, current, rel_tol=1e-9, abs_tol=1e-12):
            yield f"{path}: {baseline!r} -> {current!r}"
    elif baseline != current:
        yield f"{path}: {baseline!r} -> {current!r}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when the baseline drifted")
    parser.add_argument("--baseline", type=Path, default=BASELINE, help="the file to write or check")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="perturb-baseline-") as tmp:
        results = run_benchmark(Path(tmp))
        if not args.check:
            shutil.copyfile(results, args.baseline)
            print(f"wrote {args.baseline}")
            return 0
        current = json.loads(results.read_text(encoding="utf-8"))
    committed = json.loads(args.baseline.read_text(encoding="utf-8"))
    drift = list(differences(committed, current))
    if drift:
        print(f"{args.baseline} is stale ({len(drift)} value(s) moved); regenerate it with "
              f"`python examples/ci/make_baseline.py` and commit it:", file=sys.stderr)
        for line in drift:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"{args.baseline} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
