"""``perturb bench`` end to end: a CLIP checkpoint fed 320x240 videos gets CLIPImageProcessor's
pixel values, and ``--frame-sampling`` is honoured, recorded and part of the cache key."""
from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from conformance_cases import CASES, build, video  # noqa: E402
from perturb.cli import main  # noqa: E402
from perturb.fileio import write_jsonl  # noqa: E402
from perturb.video.io import read, write  # noqa: E402

N_VIDEOS, N_FRAMES = 3, 12


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-pixels")
    model = build(CASES["clip"], root)
    rows = []
    for i in range(N_VIDEOS):
        write(root / f"v{i}.mkv", video(320, 240, N_FRAMES, np.arange(N_FRAMES), seed=i), fps=6.0)
        rows.append({"video_id": f"v{i}", "video_path": f"v{i}.mkv", "caption": f"a scene number {i}"})
    return model, write_jsonl(root / "captions.jsonl", rows), root


def _bench(model, captions, out, *extra):
    return main(["bench", "--model", f"clip:{model}", "--dataset", str(captions), "--out", str(out),
                 "--video-perturbations", "none", "--text-perturbations", "none", "--bootstrap", "0",
                 "--no-progress", "--device", "cpu", "--frames", "4", *extra])


def test_bench_feeds_clip_the_processors_pixel_values(setup, monkeypatch):
    model, captions, root = setup
    seen = []
    original = transformers.CLIPModel.get_image_features

    def spy(self, pixel_values=None, **kw):
        seen.append(pixel_values.detach().clone())
        return original(self, pixel_values=pixel_values, **kw)
    monkeypatch.setattr(transformers.CLIPModel, "get_image_features", spy)
    assert _bench(model, captions, root / "out-pixels", "--no-cache") == 0
    got = torch.cat(seen)
    proc = transformers.CLIPImageProcessorPil(**CASES["clip"].preprocessor)
    idx = np.linspace(0, N_FRAMES - 1, 4).round().astype(int)             # CLIP's default: linspace
    want = torch.cat([proc(images=list(read(root / f"v{i}.mkv")[0][idx]), return_tensors="pt")["pixel_values"]
                      for i in range(N_VIDEOS)])
    assert got.shape == want.shape == (N_VIDEOS * 4, 3, 224, 224)
    std = torch.tensor(CASES["clip"].preprocessor["image_std"]).view(1, 3, 1, 1)
    levels = ((got - want) * std * 255).abs()
    assert (levels <= 1 + 1e-4).float().mean() >= 0.999 and levels.max() <= 3 + 1e-4


def test_frame_sampling_is_honoured_recorded_and_keys_the_cache(setup, capsys):
    model, captions, root = setup
    out = root / "out-sampling"

    def run(*extra):
        assert _bench(model, captions, out, *extra) == 0
        passes = int(capsys.readouterr().out.split(" forward passes")[0].rsplit(" ", 1)[1])
        return json.loads((out / "results.json").read_text()), passes
    doc, passes = run()
    assert doc["model"]["card"]["frame_sampling"] == "linspace" and passes > 0
    assert doc["decode"]["model_input_changed_by_size"] is False
    again, passes = run()
    assert passes == 0                                           # same sampling: from the cache
    start, passes = run("--frame-sampling", "start")
    assert start["model"]["card"]["frame_sampling"] == "start" and passes > 0     # a new cache key
    report = "".join(p.read_text() for p in out.glob("*.md"))
    assert "frame_sampling" in report and "| start |" in report


def test_a_bad_frame_sampling_is_a_usage_error(setup, capsys):
    model, captions, root = setup
    assert _bench(model, captions, root / "out-bad", "--frame-sampling", "middle") == 2
    err = capsys.readouterr().err
    assert "frame sampling must be one of centre, start, linspace or fps:N" in err


def test_fps_sampling_reads_a_count_that_follows_each_clip(setup, tmp_path, monkeypatch, capsys):
    """fps:2 on videos of 12 and 30 frames at 6 fps (2 s and 5 s): 4 and 10 frames, the
    ``start`` rule over them, and each video the mean of exactly its own frames."""
    model, _, root = setup
    rows = []
    for i, n in enumerate((12, 30)):
        write(tmp_path / f"w{i}.mkv", video(320, 240, n, np.arange(n), seed=10 + i), fps=6.0)
        rows.append({"video_id": f"w{i}", "video_path": f"w{i}.mkv", "caption": f"a scene number {i}"})
    captions = write_jsonl(tmp_path / "captions.jsonl", rows)
    seen = []
    original = transformers.CLIPModel.get_image_features

    def spy(self, pixel_values=None, **kw):
        seen.append(pixel_values.shape[0])
        return original(self, pixel_values=pixel_values, **kw)
    monkeypatch.setattr(transformers.CLIPModel, "get_image_features", spy)
    assert _bench(model, captions, tmp_path / "out", "--no-cache", "--frame-sampling", "fps:2") == 0
    assert sum(seen) == 4 + 10
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["model"]["card"]["frame_sampling"] == "fps:2" and doc["model"]["id"].endswith("@fps:2")

    from perturb.bench.adapters.factory import load_model
    from perturb.bench.adapters.model_options import ModelOptions
    from perturb.bench.adapters.frames import FrameSpec
    from perturb.bench.pipeline.sources import OnTheFly
    from perturb.dataset.readers import read_dataset

    m = load_model(f"clip:{model}", ModelOptions(device="cpu", frame_sampling="fps:2"))
    spec, src = m.impl.frame_spec, OnTheFly()
    assert spec.by_rate and spec.key != FrameSpec(8, sampling="start").key
    items = read_dataset(captions)
    picked = []
    for item, n in zip(items, (12, 30)):
        clean = src.clean(item, [("clean", None)], spec)
        frames = src.frames(item, clean, "clean", None, spec)
        want = read(item.video_path)[0][list(range(0, n, 3))]            # every third frame = 2 of 6 fps
        assert np.array_equal(frames, want)
        picked.append(frames)
    together = m.impl.encode_videos(picked)
    alone = np.concatenate([m.impl.encode_videos([p]) for p in picked])
    assert np.allclose(together, alone, atol=1e-6)                   # each video pools its own frames only


def test_fps_sampling_is_refused_where_every_clip_needs_the_same_count(tmp_path):
    from hf_models import build_llava_next_video, build_xclip

    from perturb.bench.adapters.factory import load_model
    from perturb.bench.adapters.model_options import ModelOptions
    from perturb.bench.adapters.protocol import ModelSpecError

    for make, name in ((build_xclip, "XCLIPModel"), (build_llava_next_video, "LlavaNextVideo")):
        path = make(tmp_path / name)
        with pytest.raises(ModelSpecError, match=f"{name}.*reads the same number of frames from every clip"):
            load_model(f"hf:{path}", ModelOptions(device="cpu", frame_sampling="fps:2"))


def test_qwen2_vl_under_fps_sampling_gives_each_clip_its_own_grid(tmp_path):
    from hf_models import build_qwen2_vl

    from perturb.bench.adapters.factory import load_model
    from perturb.bench.adapters.model_options import ModelOptions

    m = load_model(f"hf:{build_qwen2_vl(tmp_path / 'q')}", ModelOptions(device="cpu", frame_sampling="fps:2"))
    spec = m.impl.frame_spec
    assert spec.multiple == 2 and spec.count(30, fps=6.0) == 10 and spec.count(9, fps=6.0) == 2
    clips = [video(64, 48, k, np.arange(k), seed=k) for k in (10, 2)]
    inputs = m.impl.video_inputs(clips)
    assert inputs["video_grid_thw"][:, 0].tolist() == [5, 1]
    scores = m.impl.score(clips, ["a scene number 1", "a scene number 2"])
    assert scores.shape == (2,) and np.isfinite(scores).all()
