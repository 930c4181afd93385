"""kill -9 a build at three points, or stop it with Ctrl-C or SIGTERM, re-run it, and get exactly an
uninterrupted build."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import datasets as ds  # noqa: E402

from perturb.dataset import BuildOptions, build  # noqa: E402
from perturb.dataset.manifest import read_rows  # noqa: E402
from perturb.fileio import sha256_file  # noqa: E402
from perturb.dataset.staging import TMP_MARK  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--video-perturbations", "gaussian_noise,mpeg1,freeze", "--severities", "1,3",
        "--text-perturbations", "Typos", "--jobs", "1", "--no-progress"]
N_ITEMS = 5
TOTAL = N_ITEMS * 6 + 1
ONE_JOB = BuildOptions(jobs=1, progress=False)


def checksums(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): sha256_file(p) for sub in ("videos", "captions")
            for p in sorted((out / sub).rglob("*")) if p.is_file()}


def manifest_lines(out: Path) -> int:
    try:
        return (out / "manifest.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def has_temporary(out: Path) -> bool:
    return any(TMP_MARK in p.name for p in (out / "videos").rglob("*")) if (out / "videos").exists() else False


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return ds.generic_dataset(tmp_path_factory.mktemp("data"), n=N_ITEMS, frames=40)


@pytest.fixture(scope="module")
def uninterrupted(dataset, tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("full")
    assert subprocess.run([sys.executable, "-m", "perturb", "build", str(dataset), "--out", str(out),
                           *ARGS], cwd=ROOT).returncode == 0
    return checksums(out)


# kill points: while the first outputs are being written (temporary files on disk), after the
# first manifest rows, and late in the build
POINTS = {"mid-write": lambda out: has_temporary(out),
          "early": lambda out: manifest_lines(out) >= 3,
          "late": lambda out: manifest_lines(out) >= TOTAL - 6}


@pytest.mark.parametrize("point", list(POINTS))
def test_kill_and_resume_equals_uninterrupted(dataset, uninterrupted, tmp_path, point):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "perturb", "build", str(dataset), "--out",
                             str(out), *ARGS], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and not POINTS[point](out):
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL, "the build finished before the kill point"
    assert manifest_lines(out) < TOTAL
    result = build(dataset, out, video_perturbations="gaussian_noise,mpeg1,freeze",
                   severities="1,3", text_perturbations="Typos", options=ONE_JOB)
    assert result.ok and result.done + result.skipped == TOTAL and result.done >= 1
    assert checksums(out) == uninterrupted
    rows = read_rows(out / "manifest.jsonl")
    assert len(rows) == len({r["key"] for r in rows}) == TOTAL
    assert all(r["status"] == "ok" and r["sha256"] == uninterrupted[r["path"]] for r in rows)
    leftovers = [p for p in out.rglob("*") if TMP_MARK in p.name or p.name.endswith(".tmp")]
    assert leftovers == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stopped_build_says_interrupted_quietly_and_resumes(dataset, uninterrupted, tmp_path, sig):
    """Ctrl-C or kill (a CI timeout) of a loky build: exit 130, dataset.json 'interrupted' (not
    'running'), no joblib warning about cancelled tasks; a re-run completes it."""
    import json

    out = tmp_path / "out"
    argv = [*ARGS[:ARGS.index("--jobs")], "--jobs", "2", "--no-progress"]            # loky workers
    proc = subprocess.Popen([sys.executable, "-m", "perturb", "build", str(dataset), "--out", str(out), *argv],
                            cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        while proc.poll() is None and not POINTS["early"](out):
            time.sleep(0.002)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err == ""                                # no joblib warning, no traceback
    info = json.loads((out / "dataset.json").read_text())
    assert info["status"] == "interrupted" and info["error"].startswith("KeyboardInterrupt")
    result = build(dataset, out, video_perturbations="gaussian_noise,mpeg1,freeze",
                   severities="1,3", text_perturbations="Typos", options=ONE_JOB)
    assert result.ok and checksums(out) == uninterrupted
    assert json.loads((out / "dataset.json").read_text())["status"] == "complete"
