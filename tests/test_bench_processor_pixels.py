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
