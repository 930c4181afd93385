"""``perturb bench --task classify``: a classifier (object, logit function, precomputed logits, a
dual encoder zero-shot) on labelled image and video folders, through the same runner as retrieval."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from perturb.bench.api import benchmark
from perturb.bench.options import BenchOptions
from perturb.bench.pipeline.data import make_labelled_data
from perturb.bench.pipeline.encoder import Settings
from perturb.cli import main
from perturb.dataset.labelled import read_labelled
from perturb.image import apply as image_apply
from perturb.results import validate

sys.path.insert(0, str(Path(__file__).parent))
from classify_models import COLOURS, MeanColour  # noqa: E402

# item (class folder, file) -> which channel is brightest; two items are drawn as another class
WRONG = {("red", "2.png"): 1, ("blue", "1.png"): 0}


def _image(channel: int, k: int) -> np.ndarray:
    img = np.full((24, 32, 3), 40 + 5 * k, np.uint8)
    img[..., channel] = 120 + 10 * k
    return img


@pytest.fixture()
def images(tmp_path: Path) -> Path:
    """3 classes x 4 images; 10 of 12 have their class's channel brightest (top-1 = 10/12)."""
    root = tmp_path / "imgs"
    for c, colour in enumerate(COLOURS):
        (root / colour).mkdir(parents=True)
        for k in range(4):
            channel = WRONG.get((colour, f"{k}.png"), c)
            Image.fromarray(_image(channel, k)).save(root / colour / f"{k}.png")
    return root


def _data(root: Path):
    return make_labelled_data(read_labelled(root), root.name, str(root))


def _run(root, model=None, **kwargs):
    options = BenchOptions(task="classify", bootstrap=kwargs.pop("bootstrap", 100),
                           settings=Settings(progress=False), **kwargs.pop("options", {}))
    return benchmark(model or MeanColour(), _data(root), options, **kwargs)


def test_clean_top1_and_top5_are_exact_and_validated(images):
    doc = _run(images, video=["brightness"], severities=[1])
    validate(doc)
    assert doc["task"] == "classify" and doc["metric"] == "top1"
    assert doc["clean"]["top1"] == pytest.approx(10 / 12)
    assert "top5" not in doc["clean"]                      # 3 classes: top-5 is always right
    lo, hi = doc["clean"]["ci"]["top1"]
    assert lo <= 10 / 12 <= hi and hi - lo > 0
    assert doc["dataset"] | {"path": None} == {"name": "imgs", "path": None, "n_items": 12, "subset": None, "seed": 0,
                                              "media": "image", "classes": 3, "recipe": None}
    assert doc["classification"] == {"labels": COLOURS, "zero_shot": None}
    assert doc["chance"] == {"top1": pytest.approx(1 / 3)}
    assert doc["model"]["kind"] == "classifier"


def test_a_run_is_the_image_api_on_each_image(images):
    """The runner perturbs an image as perturb.image.apply does, with the builder's seed rule."""
    from perturb.bench.pipeline.sources import OnTheFly

    data = _data(images)
    source = OnTheFly(seed=0)
    item = data.items[0]
    clip = source.clip(item, "gaussian_noise", 3)
    assert clip.shape == (1, 24, 32, 3)
    seed = source.seed_of(item, "gaussian_noise", 3)
    expected = image_apply(np.asarray(Image.open(item.video_path).convert("RGB")), "gaussian_noise", 3, seed=seed)
    np.testing.assert_array_equal(clip[0], expected)


def test_gamma_is_on_top1(images):
    doc = _run(images, video=["contrast"], severities=[5], bootstrap=0)
    run = doc["runs"][0]
    clean = doc["clean"]["top1"]
    assert run["modality"] == "image" and run["severity"] == 5
    assert run["gamma_a"] == pytest.approx(1 - (clean - run["top1"]))
    assert run["gamma_r"] == pytest.approx(run["top1"] / clean)


def test_a_cached_run_makes_no_forward_pass(images, tmp_path):
    stats1, stats2 = {}, {}
    kw = dict(video=["gaussian_noise"], severities=[1, 2], bootstrap=0,
              options={"cache_dir": str(tmp_path / "cache")})
    first = _run(images, stats=stats1, **dict(kw))
    second = _run(images, stats=stats2, **dict(kw))
    assert stats1["forward_passes"] > 0 and stats2["forward_passes"] == 0
    assert first["runs"] == second["runs"]


def test_imagenet_c_mce_against_alexnet_from_the_runs(images):
    from perturb.bench.scoring.baselines import load_baseline

    doc = _run(images, video=["suite:imagenet-c"], bootstrap=0, options={"baseline_errors": "alexnet"})
    figures = doc["suites"]["imagenet-c"]["figures"]
    base = load_baseline("alexnet")
    errors: dict[str, dict[int, float]] = {}
    for run in doc["runs"]:
        errors.setdefault(run["perturbation"].split(":")[0], {})[run["severity"]] = 1 - run["top1"]
    ce = {op: sum(e.values()) / sum(base.errors[op][s] for s in e) for op, e in errors.items()}
    assert figures["baseline"] == "alexnet" and set(figures["CE"]) == set(ce)
    assert figures["mCE"] == pytest.approx(np.mean([ce[op] for op in base.mce_over]))


@pytest.fixture()
def videos(tmp_path: Path) -> Path:
    """3 classes x 2 videos of 4 frames, each its class's channel brightest."""
    from perturb.video.io.encode import write

    root = tmp_path / "vids"
    for c, colour in enumerate(COLOURS):
        (root / colour).mkdir(parents=True)
        for k in range(2):
            write(root / colour / f"{k}.mkv", np.stack([_image(c, k)] * 4), fps=4)
    return root


def test_kinetics_c_mpc_and_rpc_on_videos(videos):
    doc = _run(videos, video=["suite:kinetics-c"], severities=[1, 5], bootstrap=0)
    validate(doc)
    figures = doc["suites"]["kinetics-c"]["figures"]
    top1 = [r["top1"] for r in doc["runs"]]
    assert doc["dataset"]["media"] == "video" and doc["runs"][0]["modality"] == "video"
    assert figures["mPC"] == pytest.approx(np.mean(top1))
    assert figures["rPC"] == pytest.approx(np.mean(top1) / doc["clean"]["top1"])


def test_callable_logit_function_needs_classes(images, tmp_path):
    classes = tmp_path / "classes.txt"
    classes.write_text("red\ngreen\nblue\n")
    out = tmp_path / "out"
    rc = main(["bench", "--task", "classify", "--model", "callable:classify_models:mean_colour", "--classes",
               str(classes), "--dataset", str(images), "--out", str(out), "--video-perturbations", "brightness",
               "--severities", "1", "--bootstrap", "0", "--no-progress"])
    assert rc == 0
    assert json.loads((out / "results.json").read_text())["clean"]["top1"] == pytest.approx(10 / 12)


def test_precomputed_logits(images, tmp_path):
    data = _data(images)
    folder = tmp_path / "logits"
    (folder / "videos" / "jpeg").mkdir(parents=True)
    logits = np.eye(3, dtype=np.float32)[[COLOURS.index(it.captions[0]) for it in data.items]]
    logits[0] = np.roll(logits[0], 1)                       # one wrong
    (folder / "video_ids.json").write_text(json.dumps(data.item_ids))
    (folder / "labels.json").write_text(json.dumps(COLOURS))
    np.save(folder / "videos" / "clean.npy", logits)
    np.save(folder / "videos" / "jpeg" / "2.npy", np.roll(logits, 1, axis=1))
    doc = _run(images, f"precomputed:{folder}", video=["jpeg"], severities=[2], bootstrap=0)
    assert doc["clean"]["top1"] == pytest.approx(11 / 12) and doc["runs"][0]["top1"] == 0


def test_a_dual_encoder_classifies_zero_shot(images, tmp_path):
    doc = _run(images, "toy:16", video=["brightness"], severities=[1], bootstrap=0,
               options={"templates": ("a photo of a {}.", "a picture of a {}."), "cache_dir": str(tmp_path / "c")})
    validate(doc)
    assert doc["model"]["id"].startswith("toy:16#zero-shot@")
    assert doc["classification"]["zero_shot"] == {"templates": ["a photo of a {}.", "a picture of a {}."],
                                                  "classes": 3}
    assert doc["classification"]["labels"] == ["blue", "green", "red"]       # the dataset's classes, sorted


def test_loky_replicas_give_the_in_process_numbers(images, tmp_path):
    here = _run(images, "callable:classify_models:MeanColour", video=["gaussian_noise"], severities=[2],
                bootstrap=0)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    there = _run(images, "callable:classify_models:MeanColour", video=["gaussian_noise"], severities=[2],
                 bootstrap=0, options={"backend": "loky", "n_workers": 2})
    assert there["runs"] == here["runs"] and there["clean"] == here["clean"]
    assert there["provenance"]["engine"] == "loky"


def _bench(capsys, images, tmp_path, *extra):
    rc = main(["bench", "--task", "classify", "--model", "callable:classify_models:MeanColour", "--dataset",
               str(images), "--out", str(tmp_path / "o"), "--bootstrap", "0", "--no-progress", *extra])
    return rc, capsys.readouterr().err.strip().splitlines()


def test_dry_run_lists_the_image_ops(capsys, images, tmp_path):
    rc = main(["bench", "--task", "classify", "--model", "callable:classify_models:MeanColour", "--dataset",
               str(images), "--out", str(tmp_path / "o"), "--dry-run", "--json"])
    assert rc == 0
    plan = json.loads(capsys.readouterr().out)
    assert not (tmp_path / "o" / "results.json").exists() and plan


@pytest.mark.parametrize("extra, message", [
    (("--video-perturbations", "jumble"), "jumble is temporal"),
    (("--text-perturbations", "Typos"), "perturbs images or videos only"),
    (("--prompt", "a photo of a"), "neither a template with exactly one '{}'"),
    (("--subset", "NAMES"), "no file names"),
    (("--metric", "t2v.R@5"), "metric is one of top1, top5"),
])
def test_bad_input_is_one_line_exit_2(capsys, images, tmp_path, extra, message):
    extra = tuple(str(tmp_path / "names.txt") if e == "NAMES" else e for e in extra)
    (tmp_path / "names.txt").write_text("\n")
    rc, err = _bench(capsys, images, tmp_path, *extra)
    assert rc == 2 and len(err) == 1 and message in err[0], err


def test_unknown_classes_are_exit_2_before_any_work(capsys, images, tmp_path):
    (images / "purple").mkdir()
    Image.fromarray(_image(0, 0)).save(images / "purple" / "0.png")
    rc, err = _bench(capsys, images, tmp_path, "--video-perturbations", "brightness")
    assert rc == 2 and len(err) == 1
    assert "1 of 4 dataset classes do not map onto the model's labels" in err[0] and "'purple'" in err[0]
    assert not (tmp_path / "o" / "results.json").exists()


def test_a_subset_file_keeps_the_named_images(capsys, images, tmp_path):
    names = tmp_path / "keep.txt"
    names.write_text("red/0.png\nblue/1.png\n")
    rc, _ = _bench(capsys, images, tmp_path, "--subset", str(names), "--video-perturbations", "brightness",
                   "--severities", "1")
    doc = json.loads((tmp_path / "o" / "results.json").read_text())
    assert rc == 0 and doc["dataset"]["n_items"] == 2 and doc["dataset"]["subset"] == str(names)
    assert doc["clean"]["top1"] == 0.5                     # blue/1.png is drawn red


def test_classify_options_need_the_task(capsys, images, tmp_path):
    rc = main(["bench", "--model", "toy:8", "--dataset", str(images), "--out", str(tmp_path / "o"),
               "--prompt", "a {}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == ["perturb bench: error: --prompt apply to --task classify (a labelled dataset); "
                               "add --task classify or drop them"]


def test_assert_robust_takes_a_classifier(images):
    from perturb.testing import RobustnessError, assert_robust

    results = assert_robust(MeanColour(), str(images), perturbations=["brightness"], min_gamma_r=0.5)
    assert results.task == "classify" and results.metric == "top1"
    with pytest.raises(RobustnessError, match="top1"):
        assert_robust(MeanColour(), str(images), perturbations=["brightness"], rules=["top1=0.99"])


def test_a_corrupted_tree_is_benched_as_built(capsys, images, tmp_path):
    """`perturb build --recipe imagenet-c`, then bench reads the tree: its ops and severities, its
    recipe recorded; without its clean/ folder (a published copy) --clean is asked for, exit 2."""
    import shutil

    tree = tmp_path / "tree"
    assert main(["build", str(images), "--recipe", "imagenet-c", "--out", str(tree), "--video-perturbations",
                 "gaussian_noise,fog", "--severities", "2", "--no-progress"]) == 0
    rc = main(["bench", "--task", "classify", "--model", "callable:classify_models:MeanColour", "--dataset",
               str(tree), "--out", str(tmp_path / "o"), "--bootstrap", "0", "--no-progress"])
    doc = json.loads((tmp_path / "o" / "results.json").read_text())
    assert rc == 0 and doc["dataset"]["recipe"] == "imagenet-c" and doc["dataset"]["n_items"] == 12
    assert [(r["perturbation"], r["severity"]) for r in doc["runs"]] == [("gaussian_noise", 2), ("fog:imagenet-c", 2)]
    shutil.move(str(tree / "clean"), str(tmp_path / "val"))
    capsys.readouterr()
    rc = main(["bench", "--task", "classify", "--model", "callable:classify_models:MeanColour", "--dataset",
               str(tree), "--out", str(tmp_path / "o2"), "--bootstrap", "0", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--clean DIR" in err[0]
    rc = main(["bench", "--task", "classify", "--model", "callable:classify_models:MeanColour", "--dataset",
               str(tree), "--clean", str(images), "--out", str(tmp_path / "o3"), "--bootstrap", "0", "--no-progress"])
    assert rc == 0 and json.loads((tmp_path / "o3" / "results.json").read_text())["dataset"]["n_items"] == 12
