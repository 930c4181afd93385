"""Reading a corrupted tree (``<tree>/<corruption>/<severity>/<class>/<file>``) as the runner's
source: a --recipe build, and a published ImageNet-C copy without a clean folder."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from PIL import Image

from test_recipe_build import photo_folder, quiet
from perturb.bench.pipeline.built import BuiltOutputError
from perturb.bench.pipeline.tree import read_tree, tree_source
from perturb.dataset.recipe_build import build_recipe
from perturb.image import imagenet_c_geometry, read_image


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    src = photo_folder(root / "src")
    build_recipe(src, root / "out", "imagenet-c", video_perturbations="jpeg,shot_noise", severities="1,2",
                 options=quiet())
    return root


def test_a_recipe_build_reads_back_as_its_items_corruptions_and_files(built):
    items, ops, sevs = read_tree(built / "out")
    assert [it.item_id for it in items] == ["cat/a.JPEG", "cat/b.JPEG", "dog/c.JPEG"]
    assert [it.label for it in items] == ["cat", "cat", "dog"]
    assert (ops, sevs) == (["shot_noise:imagenet-c", "jpeg"], [1, 2])
    items, source = tree_source(built / "out")
    assert source.recipe == "imagenet-c" and source.selection() == (ops, [], sevs)
    clip = source.clip(items[2], "jpeg_compression", 2)
    assert clip.shape == (1, 224, 224, 3) and clip.dtype == np.uint8
    assert np.array_equal(clip[0], read_image(built / "out/jpeg_compression/2/dog/c.JPEG"))
    assert np.array_equal(source.clip(items[2], "jpeg:imagenet-c", 2), clip)        # any spelling
    assert np.array_equal(source.clip(items[0], "clean", None)[0], read_image(built / "out/clean/cat/a.JPEG"))
    assert source.missing(items[:1], [("jpeg", 1), ("jpeg", 3), ("clean", None)], []) == ["jpeg@3 of cat/a.JPEG"]
    with pytest.raises(BuiltOutputError, match="no file for 'cat/a.JPEG' under fog severity 1"):
        source.clip(items[0], "fog", 1)
    assert source.identity(items[0], "jpeg", 1) != source.identity(items[0], "jpeg", 2) != ""
    with pytest.raises(ValueError, match="holds no captions for the text perturbation 'typos'"):
        source.captions(["x#0"], ["a cat"], "typos")


def test_a_published_copy_needs_clean_and_is_detected_as_imagenet_c(built, tmp_path):
    copy = tmp_path / "imagenet-c"
    for sub in ("jpeg_compression", "shot_noise"):
        shutil.copytree(built / "out" / sub, copy / sub)
    (tmp_path / "val" / "cat").mkdir(parents=True)      # the originals, under the names the copy holds
    for original, name in (("a.png", "a.JPEG"), ("b.JPEG", "b.JPEG")):
        Image.open(built / "src" / "cat" / original).save(tmp_path / "val" / "cat" / name, quality=95)
    with pytest.raises(ValueError) as no_clean:
        read_tree(copy)
    assert str(no_clean.value) == (f"{copy} has no clean/ folder (a published copy): pass the clean images' "
                                   "folder (--clean DIR, e.g. the ImageNet validation folder, root/<class>/<file>)")
    items, source = tree_source(copy, clean=tmp_path / "val")
    assert source.recipe == "imagenet-c" and [it.item_id for it in items] == ["cat/a.JPEG", "cat/b.JPEG"]
    clean = source.clip(items[1], "clean", None)        # resized and cropped as the source's clean eval
    assert np.array_equal(clean[0], imagenet_c_geometry(read_image(tmp_path / "val/cat/b.JPEG")))
    assert source.describe()["clean_resized"] is True


def test_a_folder_that_is_no_tree_is_a_one_line_error(built, tmp_path):
    with pytest.raises(ValueError) as err:
        read_tree(built / "src")
    assert str(err.value) == (f"{built / 'src'}: not a corrupted tree (cat/ is not a corruption's name); expected "
                              "<corruption>/<severity>/<class>/<file> (ImageNet-C's layout), or pass a dataset folder")
    (tmp_path / "fog" / "heavy").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"\(fog/ holds heavy, not severities 1..5\)"):
        read_tree(tmp_path)
    with pytest.raises(ValueError, match="clean folder '/nope' does not exist"):
        read_tree(built / "out", clean="/nope")


def test_a_kinetics_c_tree_reads_videos_with_the_clean_videos_given(tmp_path):
    from datasets import write_video

    from perturb.bench.adapters.frames import FrameSpec

    for cls in ("abseiling", "bowling"):
        write_video(tmp_path / "src" / cls / f"{cls}.mp4", frames=6)
    build_recipe(tmp_path / "src", tmp_path / "out", "kinetics-c", video_perturbations="temporal_blur",
                 severities="2", options=quiet(format="npy"))
    items, source = tree_source(tmp_path / "out", clean=tmp_path / "src")
    assert source.recipe == "kinetics-c" and source.selection() == (["temporal_blur:kinetics-c"], [], [2])
    clip = source.clip(items[1], "temporal_blur", 2)          # our name for the folder motion_blur
    assert np.array_equal(clip, np.load(tmp_path / "out/motion_blur/2/bowling/bowling.npy"))
    assert source.clip(items[1], "clean", None).shape == clip.shape == (6, 48, 64, 3)
    clean = source.clean(items[1], [("clean", None)], None)
    picked = source.frames(items[1], clean, "temporal_blur:kinetics-c", 2, FrameSpec(2))
    assert np.array_equal(picked, clip[FrameSpec(2).indices(6, None)])
