"""The Makefile's set-up: Chromium only for `make test`; system packages installed with apt as root,
the one apt command printed for anyone else (make goes on). Nothing is installed: apt is a stand-in."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)


def test_chromium_is_set_up_by_make_test_only() -> None:
    """`make -n` prints the recipes without running them."""
    demo, test = make("-n", "demo"), make("-n", "test")
    assert demo.returncode == 0 and test.returncode == 0
    assert "chromium" not in demo.stdout.lower() and "wordnet-base" in demo.stdout
    assert "chromium" in test.stdout and "wordnet-base" in test.stdout


def test_a_user_without_root_is_shown_the_apt_command(tmp_path) -> None:
    apt = tmp_path / "apt-get"                       # would record any call: none may happen
    apt.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'calls'}\n")
    apt.chmod(0o755)
    run = make("system-data", "browser", "USER_ID=1000", f"APT={apt}",
               f"WORDNET={tmp_path / 'absent'}", "CHROMIUM=no-such-browser-here")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "WordNet is missing; to install it run: sudo apt-get install -y --no-install-recommends "
        "wordnet-base wordnet-sense-index",
        "Chromium (for the report screenshot test) is missing; to install it run: sudo apt-get "
        "install -y --no-install-recommends chromium"]
    assert not (tmp_path / "calls").exists()


def test_root_installs_with_apt_and_present_packages_are_left_alone(tmp_path) -> None:
    apt = tmp_path / "apt-get"
    apt.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'calls'}\n")
    apt.chmod(0o755)
    run = make("browser", "USER_ID=0", f"APT={apt}", "CHROMIUM=no-such-browser-here")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "calls").read_text().splitlines() == [
        "update -qq", "install -y -qq --no-install-recommends chromium"]
    present = make("system-data", "browser", "USER_ID=0", f"APT={apt}", f"WORDNET={apt}", "CHROMIUM=sh")
    assert present.returncode == 0 and present.stdout == ""
    assert len((tmp_path / "calls").read_text().splitlines()) == 2       # no further apt call


def test_make_test_builds_the_lmms_environment_once(tmp_path) -> None:
    """`make test` builds .venv-lmms (lmms-eval beside the CPU torch, torchvision and timm removed);
    its stamp makes it once; `make clean` removes it."""
    venv = tmp_path / "lmms-env"
    recipe = [line for line in make("-n", "test", f"LMMS_VENV={venv}").stdout.splitlines() if str(venv) in line]
    assert recipe == [
        f"python3 -m venv {venv}",
        f"{venv}/bin/python -m pip install -q --upgrade pip wheel",
        f"{venv}/bin/python -m pip install -q torch==2.13.0",
        f'{venv}/bin/python -m pip install -q -e ".[lmms]" torch==2.13.0',
        f"{venv}/bin/python -m pip uninstall -q -y torchvision timm",
        f"touch {venv}/.installed"]
    venv.mkdir()
    (venv / ".installed").touch()
    assert str(venv) not in make("-n", "lmms", f"LMMS_VENV={venv}").stdout
    assert f"rm -rf .venv {venv} " in make("-n", "clean", f"LMMS_VENV={venv}").stdout
