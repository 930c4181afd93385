"""``perturb build --recipe``: ImageNet-C's layout and bytes as make_imagenet_c.py saved them
(clean copies beside), byte-identical across engines and runs, resumable; Kinetics-C's layout."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from datasets import write_video
from perturb.cli import main
from perturb.dataset import BuildOptions
from perturb.dataset.recipe_build import build_recipe, recipe_specs
from perturb.dataset.resume import BuildConflictError
from perturb.image import RECIPES, imagenet_c_geometry, imagenet_c_recipe, read_image
from perturb.image.recipes import IMAGENET_C_15
from perturb.rng import item_seed

RECIPE = RECIPES["imagenet-c"]
OPS = "gaussian_noise,jpeg,fog"


def photo_folder(root: Path) -> Path:
    """Two classes, three images of odd sizes (a PNG, a JPEG, a landscape and a portrait one)."""
    rng = np.random.default_rng(7)
    for cls, name, (h, w) in (("cat", "a.png", (300, 260)), ("cat", "b.JPEG", (270, 400)),
                              ("dog", "c.png", (257, 257))):
        (root / cls).mkdir(parents=True, exist_ok=True)
        img = rng.integers(0, 256, (h // 8, w // 8, 3), dtype=np.uint8).repeat(8, 0).repeat(8, 1)
        Image.fromarray(np.ascontiguousarray(img[:h, :w])).save(root / cls / name)
    return root


def digests(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.suffix.lower() in (".jpeg", ".jpg")}


def quiet(jobs: int = 1, **kw) -> BuildOptions:
    return BuildOptions(jobs=jobs, progress=False, **kw)


def test_the_tree_is_imagenet_c_layout_with_the_recipe_bytes_and_clean_copies(tmp_path):
    src = photo_folder(tmp_path / "src")
    result = build_recipe(src, tmp_path / "out", "imagenet-c", video_perturbations=OPS, severities="1,5",
                          seed=3, options=quiet())
    assert (result.total, result.done, result.failed) == (3 * 3 * 2 + 3, 21, [])
    files = sorted(digests(tmp_path / "out"))
    assert files[:3] == ["clean/cat/a.JPEG", "clean/cat/b.JPEG", "clean/dog/c.JPEG"]
    assert "jpeg_compression/5/dog/c.JPEG" in files and "fog/1/cat/b.JPEG" in files and len(files) == 21
    img = read_image(src / "cat" / "a.png")
    assert (tmp_path / "out/clean/cat/a.JPEG").read_bytes() == RECIPE.encode(imagenet_c_geometry(img))
    seed = item_seed(3, "cat/a.png", "fog:imagenet-c", 5)
    assert (tmp_path / "out/fog/5/cat/a.JPEG").read_bytes() == \
        RECIPE.encode(imagenet_c_recipe(img, "fog", 5, seed))
    with Image.open(tmp_path / "out/fog/5/cat/a.JPEG") as saved:
        assert (saved.format, saved.size) == ("JPEG", (224, 224))
    info = json.loads((tmp_path / "out/dataset.json").read_text())
    assert info["recipe"] == {"name": "imagenet-c", "source": RECIPE.source, "suite": "imagenet-c",
                              "format": "JPEG", "options": {"quality": 85, "optimize": True}}
    assert info["layout"]["clean"] == "clean/<class>/<file>" and info["status"] == "complete"
    rows = [json.loads(line) for line in (tmp_path / "out/manifest.jsonl").read_text().splitlines()]
    assert {r["recipe"] for r in rows} == {"imagenet-c"} and rows[0]["label"] == "cat"


def test_bytes_are_the_same_in_process_on_loky_and_on_a_second_run(tmp_path):
    src = photo_folder(tmp_path / "src")
    runs = []
    for name, jobs in (("one", 1), ("loky", 2), ("again", 1)):
        build_recipe(src, tmp_path / name, "imagenet-c", video_perturbations=OPS, severities="2", options=quiet(jobs))
        runs.append(digests(tmp_path / name))
    assert len(runs[0]) == 12 and runs[0] == runs[1] == runs[2]


def test_a_rerun_redoes_only_a_lost_file_and_refuses_other_settings(tmp_path):
    src = photo_folder(tmp_path / "src")
    out = tmp_path / "out"
    build_recipe(src, out, "imagenet-c", video_perturbations="gaussian_noise", severities="1", options=quiet())
    before = digests(out)
    (out / "gaussian_noise/1/dog/c.JPEG").unlink()
    (out / "clean/cat/.a.JPEG.part-0123456789ab").write_bytes(b"torn")    # a killed worker's file
    again = build_recipe(src, out, "imagenet-c", video_perturbations="gaussian_noise", severities="1",
                         options=quiet())
    assert (again.done, again.skipped) == (1, 5) and digests(out) == before
    assert not list(out.rglob("*.part-*"))
    with pytest.raises(BuildConflictError, match="seed=0.*now seed=1"):
        build_recipe(src, out, "imagenet-c", severities="1", seed=1, options=quiet())


def test_the_default_is_the_15_and_the_extras_only_when_named():
    assert [s.name for s in recipe_specs(RECIPE, None)] == list(IMAGENET_C_15)
    assert [s.ref for s in recipe_specs(RECIPE, "speckle_noise,shot_noise")] == \
        ["shot_noise:imagenet-c", "speckle_noise:imagenet-c"]
    with pytest.raises(ValueError, match=r"^--recipe imagenet-c builds the imagenet-c suite's ops; rain is not"):
        recipe_specs(RECIPE, "rain")


def test_cli_builds_the_recipe_and_refuses_bad_input_in_one_line(tmp_path, capsys):
    src = photo_folder(tmp_path / "src")
    out = str(tmp_path / "out")
    assert main(["build", str(src), "--out", out, "--recipe", "imagenet-c", "--video-perturbations",
                 "brightness", "--severities", "3", "--jobs", "1", "--no-progress"]) == 0
    assert sorted(digests(Path(out))) == ["brightness/3/cat/a.JPEG", "brightness/3/cat/b.JPEG",
                                          "brightness/3/dog/c.JPEG", "clean/cat/a.JPEG", "clean/cat/b.JPEG",
                                          "clean/dog/c.JPEG"]
    capsys.readouterr()
    assert main(["build", str(src), "--out", out, "--recipe", "kinetics-c", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"perturb build: error: {src}: this recipe builds videos; "
                                        "'cat/a.png' is not one (3 such)"]
    assert main(["build", str(tmp_path / "nope"), "--out", out, "--recipe", "imagenet-c"]) == 2
    assert capsys.readouterr().err.strip() == f"perturb build: error: dataset path {str(tmp_path / 'nope')!r} does not exist"


def test_kinetics_c_writes_yi_et_al_layout(tmp_path):
    for cls, name in (("abseiling", "v1.mp4"), ("bowling", "v2.mp4")):
        write_video(tmp_path / "src" / cls / name, frames=6)
    result = build_recipe(tmp_path / "src", tmp_path / "out", "kinetics-c",
                          video_perturbations="temporal_blur,brightness", severities="1",
                          options=quiet(format="npy"))
    assert (result.done, result.failed) == (4, [])
    files = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.npy"))
    assert files == ["brightness/1/abseiling/v1.npy", "brightness/1/bowling/v2.npy",
                     "motion_blur/1/abseiling/v1.npy", "motion_blur/1/bowling/v2.npy"]
    info = json.loads((tmp_path / "out/dataset.json").read_text())
    assert info["recipe"]["name"] == "kinetics-c" and info["recipe"]["format"] == "npy"
    assert [v["folder"] for v in info["video_perturbations"]] == ["motion_blur", "brightness"]
    assert np.load(tmp_path / "out/motion_blur/1/abseiling/v1.npy").shape == (6, 48, 64, 3)


def test_a_recipe_build_does_not_resume_into_a_plain_build(tmp_path):
    src = photo_folder(tmp_path / "src")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "dataset.json").write_text(json.dumps({"seed": 0, "status": "complete"}))
    with pytest.raises(BuildConflictError, match=r"other settings \(recipe=None; now recipe=\{'name': 'imagenet-c'"):
        build_recipe(src, tmp_path / "out", "imagenet-c", severities="1", options=quiet())
