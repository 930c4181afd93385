"""benchmarks/floors.py on a tiny clip: one row per floor with ours, the floor (named, positive)
and the peer or the reason it was skipped, as strict JSON; never a speed assertion."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import floors  # noqa: E402
from benchmarks.__main__ import SECTIONS  # noqa: E402
from benchmarks.floor_steps import FLOORS  # noqa: E402
from benchmarks.harness import Settings, finite  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

ONCE = Settings(repeats=1, warmup=0, min_repeats=1)


@pytest.fixture(scope="module")
def tiny() -> np.ndarray:
    return np.ascontiguousarray(sample_clip(2)[:, :32, :48])


def test_every_floor_is_timed_named_and_positive_beside_ours_in_strict_json(tiny) -> None:
    pytest.importorskip("torch")
    threads = cv2.getNumThreads()
    section = floors.run(tiny, ONCE, log=lambda _: None)
    assert cv2.getNumThreads() == threads                       # the torch rows' one thread is undone
    doc = json.loads(json.dumps(finite(section), allow_nan=False))
    assert doc["frames"] == 2 and doc["size"] == [32, 48] and doc["severity"] == 3
    assert [(r["op"], r["path"]) for r in doc["rows"]] == [(f.op, f.path) for f in FLOORS]
    assert {(r["op"], r["path"]) for r in doc["rows"]} >= {
        ("brightness", "numpy"), ("contrast", "numpy"), ("saturate", "numpy"), ("pixelate", "numpy"),
        ("zoom_blur", "numpy"), ("rain", "numpy"), ("brightness", "torch"), ("contrast", "torch"), ("rain", "torch")}
    for r in doc["rows"]:
        assert r["ours_s"] > 0 and r["floor_s"] > 0, r
        assert r["floor_steps"] and all(isinstance(s, str) and s for s in r["floor_steps"]), r
        assert r["floor_why"], r
        assert r["ours_over_floor"] == pytest.approx(r["ours_s"] / r["floor_s"])
        if "peer_s" in r:                                       # timed, or skipped with its reason
            assert r["peer_op"] and r["peer_s"] > 0
            assert r["peer_over_ours"] == pytest.approx(r["peer_s"] / r["ours_s"])
            assert r["peer_over_floor"] == pytest.approx(r["peer_s"] / r["floor_s"])
        else:
            assert isinstance(r["peer_missing"], str) and r["peer_missing"], r
    text = floors.render(section)
    assert text.count("\n| ") == len(FLOORS) + 1                # a header and a line per floor
    assert all(" + ".join(r["floor_steps"]) in text for r in doc["rows"])


def test_a_peer_that_cannot_be_imported_is_skipped_and_said_so(tiny, monkeypatch) -> None:
    def absent(*_):
        raise ImportError("No module named 'albumentations'")

    monkeypatch.setattr(floors, "albumentations_contenders", absent)
    section = floors.run(tiny, ONCE, log=lambda _: None, ops=["contrast", "zoom_blur"])
    rows = [r for r in section["rows"] if r["path"] == "numpy"]
    assert [r["op"] for r in rows] == ["contrast", "zoom_blur"]
    for r in rows:
        assert "peer_s" not in r and "albumentations" in r["peer_missing"] and r["floor_s"] > 0
    assert "peer skipped, ImportError: No module named 'albumentations'" in floors.render(section)


def test_the_section_is_registered_with_the_benchmark_runner() -> None:
    assert SECTIONS["floors"] is floors
