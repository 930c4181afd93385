"""benchmarks/gpu.py end to end on the CPU at a tiny size: one JSON with every part's figures,
or the reason a part was skipped."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import gpu  # noqa: E402
from perturb.registry import REGISTRY  # noqa: E402

TINY = ["--device", "cpu", "--dry", "--frames", "2", "--size", "24"]


def test_dry_pass_writes_kernel_rates_and_pixel_differences_for_every_op(tmp_path) -> None:
    out = tmp_path / "gpu.json"
    assert gpu.main([*TINY, "--skip", "classify,runner,tests", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["dry"] is True and doc["machine"]["device"] == "cpu" and doc["pyav"] == "importable"
    assert doc["runner"] == {"skipped": "--skip"} and doc["tests"] == {"skipped": "--skip"}
    kernels = doc["kernels"]
    assert kernels["frames"] == 2 and kernels["size"] == [24, 24]
    assert [r["op"] for r in kernels["rows"]] == gpu.torch_ops()
    assert {"defocus_blur", "jumble", "glass_blur", "pixelate", "temporal_blur"} <= set(gpu.torch_ops())
    assert all(r["fps"] > 0 and r["ms"] > 0 for r in kernels["rows"])
    pixels = doc["pixels"]
    assert [r["op"] for r in pixels["rows"]] == [s.name for s in REGISTRY.select("video")]   # all 48 ops
    assert len(pixels["rows"]) == 48
    for r in pixels["rows"]:                        # the torch path on the CPU: the promised agreement
        assert r["max_level_diff"] <= 1 and r["share_over_1"] == 0, r
    assert doc["wall_s"] > 0


def test_without_pyav_the_parts_that_need_it_are_skipped_with_the_reason(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(gpu, "pyav_missing", lambda: "PyAV is not importable (test)")
    out = tmp_path / "gpu.json"
    assert gpu.main([*TINY, "--skip", "tests", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["pyav"] == "PyAV is not importable (test)"
    for part in ("kernels", "pixels", "classify", "runner"):
        assert doc[part] == {"skipped": "PyAV is not importable (test)"}


def test_a_spent_budget_skips_the_remaining_parts(tmp_path) -> None:
    out = tmp_path / "gpu.json"
    assert gpu.main([*TINY, "--budget", "-1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert all(doc[p]["skipped"].startswith("budget of") for p in ("kernels", "pixels", "classify", "runner", "tests"))


def test_an_empty_wheel_folder_is_refused(tmp_path) -> None:
    with pytest.raises(SystemExit, match="expected a folder holding .whl files"):
        gpu.main([*TINY, "--wheels", str(tmp_path)])


def test_a_missing_device_is_refused_before_any_work(tmp_path, capsys) -> None:
    out = tmp_path / "gpu.json"
    assert gpu.main(["--device", "nosuchdevice", "--out", str(out)]) == 2
    assert "nosuchdevice" in capsys.readouterr().err and not out.exists()


def test_the_classification_row_runs_a_classifier_against_its_floor(tmp_path) -> None:
    out = tmp_path / "gpu.json"
    assert gpu.main([*TINY, "--skip", "kernels,pixels,runner,tests", "--out", str(out)]) == 0
    row = json.loads(out.read_text())["classify"]
    assert row["model"] == "tiny VideoMAE" and row["floor"]["clips_per_s"] > 0
    assert [r["category"] for r in row["runs"]] == ["noise"] and row["runs"][0]["configs"] == 4   # 4 noise ops at severity 3
    assert row["non_codec_share_of_floor"] > 0
