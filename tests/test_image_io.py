"""Image files: read_image converts as ImageNet loaders do, write_image picks the format from the suffix."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from perturb.errors import ImageReadError
from perturb.image import read_image, write_image


@pytest.fixture(scope="module")
def rgb() -> np.ndarray:
    y, x = np.mgrid[0:30, 0:44]
    return np.stack([x * 5, y * 8, (x + y) * 3], axis=-1).astype(np.uint8)


def pillow_jpeg(img: np.ndarray, **options) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", **options)
    return buf.getvalue()


def test_png_is_lossless(tmp_path, rgb):
    path = write_image(tmp_path / "a.png", rgb)
    assert path == tmp_path / "a.png"
    out = read_image(path)
    assert out.dtype == np.uint8 and out.shape == (30, 44, 3)
    np.testing.assert_array_equal(out, rgb)
    assert [p.name for p in tmp_path.iterdir()] == ["a.png"]        # no temporary file left


@pytest.mark.parametrize("suffix", [".jpg", ".jpeg", ".JPEG"])
def test_jpeg_is_pillows_save_at_the_quality_given(tmp_path, rgb, suffix):
    path = write_image(tmp_path / f"a{suffix}", rgb, quality=85, optimize=True)
    assert path.read_bytes() == pillow_jpeg(rgb, quality=85, optimize=True)
    assert path.read_bytes() != pillow_jpeg(rgb, quality=85)        # optimize changes the Huffman tables
    np.testing.assert_array_equal(read_image(path), np.asarray(Image.open(io.BytesIO(pillow_jpeg(rgb, quality=85)))))
    write_image(tmp_path / "default.jpg", rgb)
    assert (tmp_path / "default.jpg").read_bytes() == pillow_jpeg(rgb)      # Pillow's default quality


def test_torch_images_are_written_as_their_levels(tmp_path, rgb):
    t = torch.from_numpy(rgb)
    write_image(tmp_path / "u8.png", t)
    write_image(tmp_path / "f.png", t.permute(2, 0, 1).double() / 255)
    np.testing.assert_array_equal(read_image(tmp_path / "u8.png"), rgb)
    np.testing.assert_array_equal(read_image(tmp_path / "f.png"), rgb)


@pytest.mark.parametrize("mode", ["L", "RGBA", "P", "CMYK", "I;16"])
def test_other_modes_are_converted_to_rgb_as_imagenet_loaders_do(tmp_path, rgb, mode):
    src = Image.fromarray(rgb).convert(mode) if mode != "I;16" else \
        Image.fromarray(rgb[..., 0].astype(np.uint16) * 257)
    path = tmp_path / ("a.jpg" if mode == "CMYK" else "a.png")
    src.save(path)
    out = read_image(path)
    assert out.shape == (30, 44, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.asarray(Image.open(path).convert("RGB")))
    if mode == "L":
        assert np.array_equal(out[..., 0], out[..., 1]) and np.array_equal(out[..., 1], out[..., 2])
    if mode == "RGBA":
        np.testing.assert_array_equal(out, rgb)


def test_unreadable_files_are_named_in_one_line(tmp_path):
    missing = tmp_path / "missing.png"
    with pytest.raises(ImageReadError, match=f"^cannot read image {str(missing)!r}: no such file$"):
        read_image(missing)
    with pytest.raises(ValueError, match=f"^cannot read image {str(tmp_path)!r}: it is a folder$"):
        read_image(tmp_path)
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image at all")
    with pytest.raises(ImageReadError, match=f"^cannot read image {str(junk)!r}: cannot identify image file"):
        read_image(junk)
    cut = tmp_path / "cut.png"
    cut.write_bytes((write_image(tmp_path / "whole.png", np.full((64, 64, 3), 9, np.uint8))).read_bytes()[:60])
    with pytest.raises(ImageReadError, match=f"^cannot read image {str(cut)!r}: ") as e:
        read_image(cut)
    assert "\n" not in str(e.value)


def test_bad_writes_are_refused_before_any_file(tmp_path, rgb):
    with pytest.raises(ValueError, match=r"^expected an image file name ending in \.png, \.jpg, \.jpeg; got '.*a\.bmp'$"):
        write_image(tmp_path / "a.bmp", rgb)
    with pytest.raises(ValueError, match="^quality applies to JPEG files; got quality=90 for PNG$"):
        write_image(tmp_path / "a.png", rgb, quality=90)
    for q in (0, 96, 85.0, True):
        with pytest.raises(ValueError, match=r"^quality must be an int in 1\.\.95; got"):
            write_image(tmp_path / "a.jpg", rgb, quality=q)
    with pytest.raises(ValueError, match="^optimize must be True or False; got 1$"):
        write_image(tmp_path / "a.jpg", rgb, optimize=1)
    with pytest.raises(ValueError, match=r"expected 3 RGB channels in a HWC image"):
        write_image(tmp_path / "a.png", rgb[..., :2])
    assert list(tmp_path.iterdir()) == []
