"""End to end for each new family, on tiny random models of the real classes: an hf image classifier
(ViT) with ImageNet-C's mCE, an hf video classifier (VideoMAE) with Kinetics-C's mPC/rPC, and a dual
encoder (CLIP) zero-shot, each through `perturb bench --task classify`, then `check`, `compare` and
`report` on the results file."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from perturb.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from hf_classifiers import IMAGE_LABELS, VIDEO_LABELS, build  # noqa: E402
from tiny_models import build_clip  # noqa: E402


def _folder(root: Path, labels, video: bool) -> Path:
    rng = np.random.default_rng(0)
    for c, name in enumerate(labels[:3]):
        (root / name).mkdir(parents=True)
        for k in range(2):
            frame = rng.integers(0, 255, (32, 40, 3), dtype=np.uint8)
            if video:
                from perturb.video.io.encode import write
                write(root / name / f"{k}.mkv", np.stack([frame] * 4), fps=4)
            else:
                Image.fromarray(frame).save(root / name / f"{k}.png")
    return root


def _bench(tmp_path: Path, model: str, data: Path, out: str, *extra: str) -> dict:
    rc = main(["bench", "--task", "classify", "--model", model, "--dataset", str(data), "--out", str(tmp_path / out),
               "--bootstrap", "50", "--no-progress", "--device", "cpu", *extra])
    assert rc == 0
    return json.loads((tmp_path / out / "results.json").read_text())


def _gate(tmp_path: Path, out: str, doc: dict, capsys) -> None:
    """check passes at the clean top-1 and fails above it; compare passes against itself; the report
    leads with the clean top-1."""
    results = str(tmp_path / out / "results.json")
    top1 = doc["clean"]["top1"]
    assert main(["check", results, "--min", f"clean.top1={top1:.6f}"]) == 0
    assert main(["check", results, "--min", f"clean.top1={min(1.0, top1 + 0.01):.6f}"]) == 1
    assert main(["compare", results, results]) == 0
    capsys.readouterr()
    assert main(["report", results, "--out", str(tmp_path / f"{out}-report")]) == 0
    report = (tmp_path / f"{out}-report" / "report.md").read_text()
    assert f"clean top-1: {100 * top1:.2f}%" in report


def _top(doc: dict) -> None:
    assert set(doc["clean"]) >= {"top1", "ci"} and len(doc["clean"]["ci"]["top1"]) == 2
    assert all("top1" in r and "ci" in r for r in doc["runs"])


def test_an_hf_image_classifier_with_imagenet_c_mce(tmp_path, capsys):
    model = build("vit", tmp_path / "vit")
    data = _folder(tmp_path / "imgs", IMAGE_LABELS, video=False)
    doc = _bench(tmp_path, f"hf:{model}", data, "vit", "--video-perturbations", "suite:imagenet-c",
                 "--severities", "1,2,3,4,5", "--baseline-errors", "alexnet")
    _top(doc)
    assert doc["model"]["card"]["frames"] == 1 and doc["model"]["id"].endswith("#classify@1f")
    figures = doc["suites"]["imagenet-c"]["figures"]
    assert figures["mCE"] is not None and figures["relative_mCE"] is not None and len(figures["CE"]) == 19
    _gate(tmp_path, "vit", doc, capsys)


def test_an_hf_video_classifier_with_kinetics_c_mpc(tmp_path, capsys):
    model = build("videomae", tmp_path / "videomae")
    data = _folder(tmp_path / "vids", VIDEO_LABELS, video=True)
    doc = _bench(tmp_path, f"hf:{model}", data, "videomae", "--video-perturbations", "suite:kinetics-c",
                 "--severities", "3")
    _top(doc)
    assert doc["model"]["card"]["frames"] == 16 and doc["dataset"]["media"] == "video"
    figures = doc["suites"]["kinetics-c"]["figures"]
    assert figures["mPC"] == pytest.approx(np.mean([r["top1"] for r in doc["runs"]]))
    _gate(tmp_path, "videomae", doc, capsys)


def test_a_dual_encoder_zero_shot(tmp_path, capsys):
    clip = build_clip(tmp_path / "clip")
    data = _folder(tmp_path / "imgs", IMAGE_LABELS, video=False)
    doc = _bench(tmp_path, f"clip:{clip}", data, "clip", "--video-perturbations", "gaussian_noise",
                 "--severities", "3", "--prompt", "a photo of a {}.")
    _top(doc)
    assert doc["classification"]["zero_shot"] == {"templates": ["a photo of a {}."], "classes": 3}
    assert "#zero-shot@" in doc["model"]["id"]
    _gate(tmp_path, "clip", doc, capsys)
