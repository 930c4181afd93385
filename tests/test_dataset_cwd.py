"""A build with relative paths writes under the caller's directory even when the worker pool was
started in another one (loky reuses its workers, and they keep the directory they started in)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import datasets as ds  # noqa: E402

from perturb.dataset import BuildOptions, build, read_dataset  # noqa: E402


def test_relative_paths_with_workers_started_elsewhere(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        ds.msrvtt_dataset(folder / "data", n=2, frames=4)
    monkeypatch.chdir(first)                        # the pool's workers start here
    build("data", "out", video_perturbations="jpeg", severities="1", text_perturbations="none",
          options=BuildOptions(jobs=2, progress=False))
    monkeypatch.chdir(second)
    items = read_dataset("data")                    # relative video paths, as a reader gives them
    assert not Path(items[0].video_path).is_absolute()
    result = build(items, "out", video_perturbations="jumble", severities="3", text_perturbations="none",
                   options=BuildOptions(jobs=2, progress=False))
    assert result.done == 2 and not result.failed
    assert sorted(p.name for p in (second / "out" / "videos" / "jumble" / "3").iterdir()) == \
        ["video0.mkv", "video1.mkv"]
    assert not (first / "out" / "videos" / "jumble").exists()
