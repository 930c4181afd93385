"""A second demo run does no model work: the demo's data are written only where they differ (the
files keep their identity), and a video's cache key follows its bytes, not its mtime."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("skimage")

from perturb.fingerprint import file_identity  # noqa: E402
from perturb.cli import main  # noqa: E402
from perturb.demo.data import write_dataset  # noqa: E402


def _files(root: Path) -> dict[str, tuple[int, int, str]]:
    """Each file's (mtime, inode, cache identity)."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_ino, file_identity(p))
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_writing_the_demo_data_again_leaves_every_file_as_it_was(tmp_path):
    captions = write_dataset(tmp_path / "data")
    before = _files(tmp_path / "data")
    assert len(before) == 41 and captions == tmp_path / "data" / "captions.jsonl"
    assert write_dataset(tmp_path / "data") == captions
    assert _files(tmp_path / "data") == before
    write_dataset(tmp_path / "data", seed=2)                  # other clips and captions: written anew
    after = _files(tmp_path / "data")
    assert all(after[name][2] != before[name][2] for name in before)


def test_a_second_bench_on_the_demo_data_written_again_does_no_model_work(tmp_path, capsys):
    captions = write_dataset(tmp_path / "data")
    cache = tmp_path / "cache"

    def bench(out: str) -> str:
        assert main(["bench", "--model", "toy:16", "--dataset", str(captions), "--out", str(tmp_path / out),
                     "--cache", str(cache), "--video-perturbations", "gaussian_noise", "--severities", "1",
                     "--text-perturbations", "Typos", "--bootstrap", "0", "--no-progress"]) == 0
        return capsys.readouterr().out

    first = bench("first")
    parts = sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file())
    write_dataset(tmp_path / "data")                           # as a second demo run does
    second = bench("second")
    assert re.search(r"configurations in [\d.]+ s, [1-9]\d* forward passes", first)
    assert re.search(r"configurations in [\d.]+ s, 0 forward passes", second)
    assert sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file()) == parts


def test_a_video_rewritten_with_the_same_bytes_keeps_its_identity(tmp_path):
    from perturb import fingerprint

    path = tmp_path / "v.mkv"
    path.write_bytes(b"a" * 1000)
    first = file_identity(path)
    path.unlink()
    path.write_bytes(b"a" * 1000)                              # another inode and mtime, same bytes
    os.utime(path, ns=(10**18, 10**18))
    assert file_identity(path) == first
    path.write_bytes(b"b" * 1000)
    assert file_identity(path) != first
    big = tmp_path / "big.mkv"                                 # sampled, not hashed whole: mtime counts
    big.write_bytes(bytes(fingerprint.VIDEO_SAMPLES * fingerprint.VIDEO_BLOCK + 1))
    before = file_identity(big)
    os.utime(big, ns=(10**18, 10**18))
    assert file_identity(big) != before


def test_the_trained_demo_model_is_saved_and_loaded_not_trained_again(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from perturb.demo import model as demo

    path = tmp_path / "model" / "seed0.npz"
    first = demo.trained(path, seed=0)
    clips = [np.random.default_rng(1).integers(0, 256, (12, 32, 32, 3), dtype=np.uint8)]
    monkeypatch.setattr(demo, "train", lambda **_: pytest.fail("trained again"))
    again = demo.trained(path, seed=0)
    assert again.cache_version == first.cache_version and again.id == first.id
    assert np.array_equal(again.encode_videos(clips), first.encode_videos(clips))
    assert np.array_equal(again.encode_texts(["a dog runs"]), first.encode_texts(["a dog runs"]))
    monkeypatch.setattr(demo, "recipe", lambda seed: "another recipe")
    with pytest.raises(pytest.fail.Exception, match="trained again"):   # a saved model of another recipe
        demo.trained(path, seed=0)
