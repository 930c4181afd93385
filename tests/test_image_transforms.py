"""RandomImagePerturbation: the training transform's draws over image batches, each image a one-frame clip."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
import torch

import perturb.image as image
from perturb.transforms import RandomImagePerturbation, RandomPerturbation
from perturb.video.sample import sample_clip

KEYS = [101, 102, "a/b.JPEG", 104, 105, 106]


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    """Six different frames of the sample clip at 24x32: (B, H, W, 3) uint8."""
    return np.stack([cv2.resize(f, (32, 24), interpolation=cv2.INTER_AREA) for f in sample_clip(12)[::2]])


def test_an_image_draws_what_a_clip_with_its_key_draws():
    ours, clips = RandomImagePerturbation(seed=5), RandomPerturbation("suite:imagenet-c", seed=5)
    for epoch in (0, 3):
        ours.set_epoch(epoch)
        clips.set_epoch(epoch)
        assert ours.params(KEYS) == clips.params(KEYS)
    assert ours.ops == clips.ops and len(ours.ops) == 19


@pytest.mark.parametrize("kind", ["numpy", "torch uint8", "torch float"])
def test_each_image_renders_as_perturb_image_apply(images, kind):
    t = RandomImagePerturbation(severity=(1, 5), p=0.8, seed=2)
    batch = {"numpy": images, "torch uint8": torch.from_numpy(images),
             "torch float": torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255}[kind]
    out = t(batch, keys=KEYS)
    assert type(out) is type(batch) and out.shape == batch.shape and out.dtype == batch.dtype
    draws = t.params(KEYS)
    assert None in draws and sum(d is not None for d in draws) >= 4      # p skips some, not all
    for i, d in enumerate(draws):
        expected = batch[i] if d is None else image.apply(batch[i], d["op"], d["severity"], seed=d["seed"])
        got = out[i]
        assert np.array_equal(np.asarray(got), np.asarray(expected)), (i, d)
    alone = t(batch[2], keys=KEYS[2])                                   # one image takes one key
    assert np.array_equal(np.asarray(alone), np.asarray(out[2]))
    if kind == "torch uint8":
        np.testing.assert_array_equal(out.numpy(), t(images, keys=KEYS))


def test_without_keys_an_image_is_keyed_as_its_one_frame_clip(images):
    t = RandomImagePerturbation(seed=0)
    assert t.content_keys(images) == RandomPerturbation(seed=0).content_keys(images[:, None])
    np.testing.assert_array_equal(t(images), t(images, keys=t.content_keys(images)))


def test_p_zero_returns_an_unchanged_copy(images):
    out = RandomImagePerturbation(p=0.0)(images, keys=KEYS)
    np.testing.assert_array_equal(out, images)
    assert not np.may_share_memory(out, images)


def test_ops_without_a_meaning_on_one_image_are_refused():
    with pytest.raises(ValueError) as e:
        RandomImagePerturbation("jpeg,jumble,h264_crf")
    assert str(e.value) == ("ops 'jpeg,jumble,h264_crf' select jumble, h264_crf, which have no meaning on one "
                            "image (temporal or stream ops); perturb.image.ops() lists the ops that apply to images")
    with pytest.raises(ValueError, match=r"^ops \['mpeg1'\] select mpeg1, which has no meaning"):
        RandomImagePerturbation(["mpeg1"])
    with pytest.raises(ValueError, match="^ops 'blur' select temporal_blur, which has no meaning"):
        RandomImagePerturbation("blur")                     # a category holding a temporal op too
    assert RandomImagePerturbation("noise,jpeg").ops == ("gaussian_noise", "shot_noise", "impulse_noise",
                                                         "speckle_noise", "jpeg")


@pytest.mark.parametrize("bad, message", [
    (np.zeros((2, 1, 8, 8, 3), np.uint8), r"^expected an image batch \(B, H, W, 3\) uint8 .*; got numpy uint8 with "
     r"shape \(2, 1, 8, 8, 3\)$"),
    (np.zeros((0, 8, 8, 3), np.uint8), r"^expected a batch of at least one image; got shape \(0, 8, 8, 3\)$"),
    (np.zeros((2, 8, 8, 3), np.float32), r"numpy images must be uint8 levels, e.g. np.rint\(batch \* 255\)"),
    (torch.zeros(2, 8, 8, 3), r"laid out \(B, 3, H, W\) channels-first; got shape \(2, 8, 8, 3\), which has its "
     r"channels on the other axis \(use batch.permute\(0, 3, 1, 2\)\)$"),
    (torch.zeros(8, 8, 3), r"laid out \(3, H, W\) channels-first; .*\(use image.permute\(2, 0, 1\)\)$"),
    ([1, 2], r"got list$"),
])
def test_bad_image_batches_get_one_line_errors(bad, message):
    with pytest.raises(ValueError, match=message) as e:
        RandomImagePerturbation()(bad, keys=None)
    assert "\n" not in str(e.value)
