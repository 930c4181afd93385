"""The package as installed: its version, and every bundled asset in the wheel without setuptools warnings."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_version_matches_the_changelog_release():
    from perturb import __version__

    released = re.findall(r"^## (\d+\.\d+\.\d+)", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert __version__ == "0.2.0" and __version__ == released[0]


def test_wheel_holds_every_asset_without_warnings(tmp_path):
    pytest.importorskip("setuptools")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "src" / "perturb", src / "src" / "perturb", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "perturb.assets" not in done.stdout + done.stderr          # "Package would be ignored" warnings
    wheel = next((tmp_path / "dist").glob("perturb-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assets = {str(p.relative_to(ROOT / "src")) for p in (ROOT / "src" / "perturb" / "assets").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    assert assets and assets <= names


def test_install_commands_never_name_the_pypi_project():
    """The project named 'perturb' on PyPI is another one: docs and error hints install from a clone."""
    said = re.compile(r"pip install\s+(?:-U\s+)?['\"]?perturb\b")
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "src" / "perturb").rglob("*.py")]
    assert [str(p.relative_to(ROOT)) for p in files if said.search(p.read_text(encoding="utf-8"))] == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'installed from a clone of this repository (`pip install -e ".[text]"`' in readme


def test_a_clone_folder_named_perturb_does_not_shadow_the_package(tmp_path):
    """Python run from a clone's parent sees the clone folder as a namespace package named perturb;
    the src layout puts the real package on the path as a regular one, which wins."""
    (tmp_path / "perturb").symlink_to(ROOT, target_is_directory=True)
    done = subprocess.run([sys.executable, "-c", "import perturb; print(perturb.__file__); print(len(perturb.list()))"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    where, count = done.stdout.split()
    assert Path(where).resolve() == ROOT / "src" / "perturb" / "__init__.py" and int(count) > 0


def test_the_package_lives_under_src_only():
    assert (ROOT / "src" / "perturb" / "__init__.py").is_file() and not (ROOT / "perturb").exists()
