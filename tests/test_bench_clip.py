"""The clip adapter end to end on a tiny randomly initialised CLIPConfig model saved to tmp_path."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tiny_models import build_clip  # noqa: E402

from perturb.bench.adapters.factory import load_model  # noqa: E402
from perturb.bench.adapters.model_options import ModelOptions  # noqa: E402
from perturb.bench.api import benchmark  # noqa: E402
from perturb.bench.options import BenchOptions  # noqa: E402
from bench_fixtures import tiny_data  # noqa: E402
from perturb.bench.pipeline.encoder import Settings  # noqa: E402


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    return build_clip(tmp_path_factory.mktemp("tiny-clip"))


def test_clip_adapter_embeds_and_runs_a_benchmark(tiny_clip):
    model = load_model(f"clip:{tiny_clip}", ModelOptions(device="cpu", frames=3, batch_size=2))
    assert model.kind == "dual" and model.id.endswith("@3f")
    clips = [np.full((7, 40, 50, 3), v, np.uint8) for v in (0, 128, 255)]
    v = model.encode_videos(clips)
    t = model.encode_texts(["a red car", "a dog", "something longer than the others here"])
    assert v.shape == (3, 16) and t.shape == (3, 16)
    # each video embedding is a mean of unit-norm frame embeddings of identical frames -> unit norm
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(v[0], v[2])
    doc = benchmark(model, tiny_data(3), BenchOptions(bootstrap=0, settings=Settings(progress=False, batch_size=2)),
                    video=["translate"], severities=[1], text=["Typos"])
    assert len(doc["runs"]) == 2 and 0.0 <= doc["clean"]["t2v"]["R@1"] <= 1.0
    # one direct call each above, then batches of 2: (clean + perturbed) x ceil(3/2) videos, x 3 texts
    assert model.calls["videos"] == 1 + 2 * 2 and model.calls["texts"] == 1 + 2 * 3


def test_clip_adapter_rejects_missing_cuda(tiny_clip):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="CUDA"):
        load_model(f"clip:{tiny_clip}", ModelOptions(device="cuda"))


def test_retrained_weights_at_the_same_path_are_not_served_from_the_cache(tmp_path, capsys):
    from bench_fixtures import write_tiny_dataset
    from perturb.cli import main

    captions = write_tiny_dataset(tmp_path, n=6, frames=4, fps=4.0)
    model, out = tmp_path / "m", tmp_path / "out"
    argv = ["bench", "--model", f"clip:{model}", "--dataset", str(captions), "--out", str(out),
            "--video-perturbations", "none", "--text-perturbations", "none", "--bootstrap", "0",
            "--no-progress", "--device", "cpu", "--frames", "2"]

    def run():
        assert main(argv) == 0
        passes = int(capsys.readouterr().out.split(" forward passes")[0].rsplit(" ", 1)[1])
        return json.loads((out / "results.json").read_text())["clean"], passes
    build_clip(model, seed=0)
    first, passes = run()
    assert passes > 0
    assert run() == (first, 0)                               # unchanged weights: all from the cache
    stats = {f.name: f.stat() for f in model.iterdir()}
    build_clip(model, seed=1)                            # "retrained", saved to the same path,
    for f in model.iterdir():                            # then every file's old mtime put back
        assert f.stat().st_size == stats[f.name].st_size     # (touch -r): only the bytes differ
        os.utime(f, ns=(stats[f.name].st_atime_ns, stats[f.name].st_mtime_ns))
    second, passes = run()
    assert passes > 0 and second != first
    fresh = tmp_path / "fresh"
    assert main([*argv[:argv.index("--out") + 1], str(fresh), *argv[argv.index("--out") + 2:]]) == 0
    assert json.loads((fresh / "results.json").read_text())["clean"] == second


def test_clip_adapter_declares_frames_and_takes_numpy_or_tensors_in_any_batching(tiny_clip):
    from perturb.bench.adapters.frames import FrameSpec

    rng = np.random.default_rng(0)
    clips = [rng.integers(0, 256, (5, 40, 50, 3), dtype=np.uint8) for _ in range(5)]
    small = load_model(f"clip:{tiny_clip}", ModelOptions(device="cpu", batch_size=2, frames=3))
    auto = load_model(f"clip:{tiny_clip}", ModelOptions(device="cpu", batch_size=0, frames=3))    # 0: automatic
    assert small.impl.frame_spec == FrameSpec(3, 32, "linspace") and small.impl.accepts_tensors
    a = small.encode_videos(clips)
    b = auto.encode_videos([torch.from_numpy(c) for c in clips])
    assert a.shape == (5, 16) and np.allclose(a, b, atol=1e-6)
    picked = [c[[0, 2, 4]] for c in clips]                     # linspace over 5 frames: what the runner sends
    assert np.allclose(small.encode_videos(picked), a, atol=1e-6)
    for bad in (-1, True):
        with pytest.raises(ValueError, match="batch_size"):
            load_model(f"clip:{tiny_clip}", ModelOptions(device="cpu", batch_size=bad))
