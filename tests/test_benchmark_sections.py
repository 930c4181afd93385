"""benchmarks/__main__.py without the ffmpeg command-line tool: the sections that declare it are
skipped up front with the install hint, the others run, and the results file is written."""
from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402
from benchmarks.__main__ import SECTIONS, TITLES, main  # noqa: E402

HINT = "install Debian's ffmpeg (apt-get install ffmpeg) to run this section"


def test_every_section_that_runs_the_ffmpeg_cli_declares_it() -> None:
    runs_it = {k for k, m in SECTIONS.items() if '"ffmpeg"' in inspect.getsource(m)}
    assert runs_it == {"codecs", "kinetics", "kinetics-codecs"}
    assert {k for k, m in SECTIONS.items() if "ffmpeg" in getattr(m, "NEEDS", ())} == runs_it


def test_without_ffmpeg_its_sections_are_skipped_up_front_and_the_rest_is_written(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))                 # no ffmpeg, whatever this machine has
    monkeypatch.setattr(harness, "RESULTS", tmp_path / "results")
    code = main(["--sections", "kinetics,temporal,codecs,kinetics-codecs", "--frames", "2", "--repeats", "1",
                 "--warmup", "0", "--budget", "0", "--no-readme"])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:5] == [f"== {TITLES['kinetics']}: skipped, ffmpeg not found: {HINT}",
                          f"== {TITLES['codecs']}: skipped, ffmpeg not found: {HINT}",
                          f"== {TITLES['kinetics-codecs']}: skipped, ffmpeg/ffprobe not found: {HINT}",
                          f"== {TITLES['temporal']}"]           # before any timing
    written, = (tmp_path / "results").iterdir()
    doc = json.loads(written.read_text())
    assert doc["kinetics"] == {"skipped": f"ffmpeg not found: {HINT}", "rows": []}
    assert doc["codecs"] == {"skipped": f"ffmpeg not found: {HINT}", "rows": []}
    assert doc["kinetics-codecs"] == {"skipped": f"ffmpeg/ffprobe not found: {HINT}", "rows": []}
    assert {r["op"] for r in doc["temporal"]["rows"]} >= {"rotate", "translate"}
    assert f"### {TITLES['kinetics']}\n\nskipped: ffmpeg not found: {HINT}" in "\n".join(lines)
