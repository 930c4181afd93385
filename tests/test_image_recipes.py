"""The ImageNet-C recipe for one image: torchvision's Resize(256) and CenterCrop(224) arithmetic,
the corruption under the suite's table, and the JPEG quality 85 optimize=True save."""
from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
from PIL import Image

import perturb.image as image
from perturb.errors import UnknownPerturbationError
from perturb.image.recipes import center_crop
from perturb.image import RECIPES, center_crop_box, imagenet_c_recipe, resize_short_side, resized_size


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    """375 rows x 500 columns, ImageNet's commonest size, with structure at every scale."""
    y, x = np.mgrid[0:375, 0:500]
    return np.stack([(x * 7 + y) % 256, (y * 5) % 256, ((x // 9 + y // 11) % 2) * 200], -1).astype(np.uint8)


@pytest.mark.parametrize("size, resized", [
    ((500, 375), (341, 256)),      # landscape: int(256 * 500 / 375) = int(341.33)
    ((375, 500), (256, 341)),      # portrait
    ((256, 256), (256, 256)),      # already the size
    ((300, 300), (256, 256)),      # square
    ((333, 500), (256, 384)),      # odd: int(384.38)
    ((3, 7), (256, 597)),          # int(597.33)
    ((1000, 256), (1000, 256)),    # the short side is already 256
    ((640, 480), (341, 256)),
])
def test_resize_is_torchvisions_short_side_arithmetic(size, resized):
    assert resized_size(*size) == resized


@pytest.mark.parametrize("size, box", [
    ((341, 256), (58, 16, 282, 240)),      # (341 - 224) / 2 = 58.5 rounds half to even: 58
    ((343, 256), (60, 16, 284, 240)),      # 59.5 -> 60
    ((256, 384), (16, 80, 240, 304)),
    ((257, 257), (16, 16, 240, 240)),      # 16.5 -> 16
    ((224, 224), (0, 0, 224, 224)),
])
def test_center_crop_is_torchvisions_rounding(size, box):
    assert center_crop_box(*size) == box


def test_sizes_are_checked():
    with pytest.raises(ValueError, match="^a 224x224 centre crop needs an image at least that large; got 300x200$"):
        center_crop_box(300, 200)
    with pytest.raises(ValueError, match="^width must be a positive int; got 0$"):
        resized_size(0, 10)


def test_the_resize_is_pillows_bilinear_with_antialiasing(photo):
    out = resize_short_side(photo)
    assert out.shape == (256, 341, 3) and out.dtype == np.uint8
    expected = np.asarray(Image.fromarray(photo).resize((341, 256), Image.Resampling.BILINEAR))
    np.testing.assert_array_equal(out, expected)
    # antialiased: OpenCV's bilinear (two taps whatever the scale) is another resize
    naive = cv2.resize(photo, (341, 256), interpolation=cv2.INTER_LINEAR)
    assert np.abs(naive.astype(int) - expected).max() > 20
    square = photo[:256, :256]
    np.testing.assert_array_equal(resize_short_side(square), square)


def test_the_recipe_is_resize_crop_then_the_suites_op(photo):
    out = imagenet_c_recipe(photo, "saturate", 1, seed=4)
    assert out.shape == (224, 224, 3) and out.dtype == np.uint8
    resized = np.asarray(Image.fromarray(photo).resize((341, 256), Image.Resampling.BILINEAR))
    cropped = resized[16:240, 58:282]
    np.testing.assert_array_equal(center_crop(resized), cropped)
    np.testing.assert_array_equal(out, image.apply(cropped, "saturate", 1, seed=4, suite="imagenet-c"))
    assert not np.array_equal(out, image.apply(cropped, "saturate", 1, seed=4))      # the suite's table, not ours
    noisy = imagenet_c_recipe(photo, "gaussian_noise", 3, seed=4)
    np.testing.assert_array_equal(noisy, imagenet_c_recipe(photo, "gaussian_noise", 3, seed=4))
    assert not np.array_equal(noisy, imagenet_c_recipe(photo, "gaussian_noise", 3, seed=5))


def test_the_recipe_takes_only_the_suites_ops(photo):
    with pytest.raises(UnknownPerturbationError, match="^rotate is not in suite imagenet-c"):
        imagenet_c_recipe(photo, "rotate", 3, seed=0)
    with pytest.raises(UnknownPerturbationError, match="^jumble is not in suite imagenet-c"):
        imagenet_c_recipe(photo, "jumble", 3, seed=0)


def test_the_recipe_saves_jpeg_quality_85_optimized(tmp_path, photo):
    recipe = RECIPES["imagenet-c"]
    assert (recipe.name, recipe.suite, recipe.format, dict(recipe.options)) == \
        ("imagenet-c", "imagenet-c", "JPEG", {"quality": 85, "optimize": True})
    assert recipe.corrupt is imagenet_c_recipe
    pixels = recipe.corrupt(photo, "contrast", 2, 0)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=85, optimize=True)
    assert recipe.encode(pixels) == buf.getvalue()
    path = recipe.write(tmp_path / recipe.file_name("n01440764_10026.JPEG"), pixels)
    assert path.name == "n01440764_10026.JPEG" and path.read_bytes() == buf.getvalue()
    assert [recipe.file_name(n) for n in ("a.jpg", "b.png", "dir/c.PNG")] == ["a.jpg", "b.JPEG", "c.JPEG"]
