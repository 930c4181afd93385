"""perturb.image: one image through the video registry, seed rule and kernels as a one-frame clip."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
import torch

import perturb.image as image
import perturb.video as video
from perturb.errors import UnknownPerturbationError
from perturb.registry import REGISTRY
from perturb.video.sample import sample_clip

IMAGE_OPS = ["gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise", "defocus_blur", "motion_blur",
             "zoom_blur", "gaussian_blur", "glass_blur", "jpeg", "elastic_transform", "pixelate", "brightness",
             "contrast", "saturate", "static_rotate", "rotate", "translate", "fog", "frost", "snow", "spatter",
             "rain", "single_frequency_greyscale", "cocentric_sine_waves", "plasma_noise", "perlin_noise",
             "brownish_noise", "blue_noise_sample", "checkerboard_cutout", "sparkles", "inverse_sparkles",
             "caustic_refraction"]
TEMPORAL = ["temporal_blur", "jumble", "box_jumble", "sampling", "reverse_sampling", "freeze", "frame_rate"]
STREAM = ["mpeg1", "mpeg2", "h264_crf", "h264_abr", "h265_crf", "h265_abr", "bit_error", "packet_loss"]


@pytest.fixture(scope="module")
def img() -> np.ndarray:
    """The sample clip's first frame at 40x56: real content, not square, fast."""
    return cv2.resize(sample_clip(1)[0], (56, 40), interpolation=cv2.INTER_AREA)


def test_the_ops_that_apply_to_images_are_a_registry_property():
    assert image.ops() == IMAGE_OPS
    assert image.ops() == [s.name for s in REGISTRY.select("video") if s.applies_to_images]
    refused = sorted(s.name for s in REGISTRY.select("video") if not s.applies_to_images)
    assert refused == sorted(TEMPORAL + STREAM)
    assert sorted(s.name for s in REGISTRY.select("video") if s.stream) == sorted(STREAM)


@pytest.mark.parametrize("name", IMAGE_OPS)
def test_an_image_is_a_one_frame_clip(name, img):
    """Same op, severity and seed: the image's result is the one-frame clip's frame, in every kind."""
    out = image.apply(img, name, 3, seed=7)
    assert out.shape == img.shape and out.dtype == np.uint8
    np.testing.assert_array_equal(out, video.apply(img[None], name, 3, seed=7)[0])
    t = torch.from_numpy(img)                                        # torch uint8 (H, W, 3) on the CPU
    got = image.apply(t, name, 3, seed=7)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.uint8 and got.shape == t.shape
    np.testing.assert_array_equal(got.numpy(), out)
    f = t.permute(2, 0, 1).float() / 255                             # torch float (3, H, W)
    fout = image.apply(f, name, 3, seed=7)
    assert fout.dtype == torch.float32 and fout.shape == f.shape
    assert torch.equal(fout, video.apply(f[None], name, 3, seed=7)[0])


def test_the_seed_rule_is_the_clips(img):
    a = image.apply(img, "gaussian_noise", 2, seed=np.random.default_rng(11))
    b = video.apply(img[None], "gaussian_noise", 2, seed=np.random.default_rng(11))[0]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, image.apply(img, "gaussian_noise", 2, seed=12))
    before = img.copy()
    image.apply(img, "rotate", 5, seed=1)
    np.testing.assert_array_equal(img, before)                      # the input is never modified


def test_jpeg_compresses_one_image_as_opencv_does(img):
    """jpeg at severity 3 is quality 15: OpenCV's encode and decode of the image."""
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 15])
    expected = cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    out = image.apply(img, "jpeg", 3)
    np.testing.assert_array_equal(out, expected)
    assert not np.array_equal(out, img)


def test_a_suite_table_applies_to_images(img):
    """imagenet-c's saturate is the source's order: its severity 1 (x0.3) is not ours (x2)."""
    theirs = image.apply(img, "saturate", 1, suite="imagenet-c")
    np.testing.assert_array_equal(theirs, video.apply(img[None], "saturate", 1, suite="imagenet-c")[0])
    assert not np.array_equal(theirs, image.apply(img, "saturate", 1))
    np.testing.assert_array_equal(theirs, image.apply(img, "saturate:imagenet-c", 1))
    with pytest.raises(UnknownPerturbationError, match="rotate is not in suite imagenet-c"):
        image.apply(img, "rotate", 1, suite="imagenet-c")


def test_temporal_and_stream_ops_are_refused_in_one_line(img):
    with pytest.raises(ValueError) as e:
        image.apply(img, "jumble", 3, seed=0)
    assert str(e.value) == ("jumble is temporal (shuffle frames inside consecutive segments; longer segments "
                            "move frames further): it has no meaning on one image; perturb.image.ops() lists "
                            "the ops that apply to images")
    with pytest.raises(ValueError) as e:
        image.apply(img, "MPEG1", 3)
    assert str(e.value) == ("mpeg1 needs a video stream (whole clip re-encoded with the mpeg2video encoder at a "
                            "fixed quantiser): it has no meaning on one image; perturb.image.ops() lists the ops "
                            "that apply to images")
    for name in TEMPORAL + STREAM:
        with pytest.raises(ValueError, match=f"^{name} (is temporal|needs a video stream) .*no meaning on one image"):
            image.apply(img, name, 3)
        with pytest.raises(ValueError, match="no meaning on one image"):
            image.Perturbation(name, 3)


def test_a_text_op_is_named_as_one(img):
    with pytest.raises(ValueError, match="'Typos' is a text perturbation, not a video one"):
        image.apply(img, "Typos", 3)


@pytest.mark.parametrize("bad, message", [
    (np.zeros((2, 8, 8, 3), np.uint8), r"expected an image: numpy uint8 \(H, W, 3\) RGB, torch uint8 \(H, W, 3\) "
     r"or torch float \(3, H, W\) in \[0, 1\]; got numpy uint8 array with 4 dimensions \(2, 8, 8, 3\) \(a clip "
     r"\(T, H, W, 3\) goes through perturb.video.apply\)$"),
    (np.zeros((8, 8), np.uint8), r"got numpy uint8 array with 2 dimensions \(8, 8\)"),
    (np.zeros((8, 8, 4), np.uint8), r"^expected 3 RGB channels in a HWC image; got 4 channels in shape \(8, 8, 4\)"),
    (np.zeros((0, 8, 3), np.uint8), r"^expected images of non-zero size; got shape \(0, 8, 3\)$"),
    (np.zeros((8, 8, 3), np.float32), r"got a numpy float32 array: numpy images must be uint8 levels, "
     r"e.g. np.rint\(image \* 255\)"),
    (np.zeros((8, 8, 3), np.int16), r"got numpy int16 array$"),
    ([[[0, 0, 0]]], r"got list$"),
    (torch.zeros(3, 8, 8, dtype=torch.uint8), r"laid out \(H, W, 3\) channels-last; got shape \(3, 8, 8\), which "
     r"has its channels on the other axis \(use image.permute\(1, 2, 0\)\)$"),
    (torch.zeros(8, 8, 3), r"laid out \(3, H, W\) channels-first; got shape \(8, 8, 3\), which has its channels "
     r"on the other axis \(use image.permute\(2, 0, 1\)\)$"),
    (torch.full((3, 8, 8), 2.0), r"expected float values in \[0, 1\] in torch.float32 tensor; "
     r"found range \[2.0, 2.0\] \(it looks like \[0, 255\]"),
])
def test_bad_images_get_one_line_errors(bad, message):
    with pytest.raises(ValueError, match=message) as e:
        image.apply(bad, "contrast", 3)
    assert "\n" not in str(e.value)


def test_a_bad_severity_is_named(img):
    with pytest.raises(ValueError, match="severity must be an int in 1..5 for jpeg; got 6"):
        image.apply(img, "jpeg", 6)


def test_perturbation_is_apply_at_a_fixed_severity(img):
    p = image.Perturbation("Motion Blur", 4, seed=3)
    assert repr(p) == "Perturbation('motion_blur', severity=4)"
    np.testing.assert_array_equal(p(img), image.apply(img, "motion_blur", 4, seed=3))
    np.testing.assert_array_equal(p(img, seed=9), image.apply(img, "motion_blur", 4, seed=9))
    q = image.Perturbation("fog", 2, suite="imagenet-c", seed=1)
    np.testing.assert_array_equal(q(img), image.apply(img, "fog", 2, suite="imagenet-c", seed=1))
