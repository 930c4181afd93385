"""Named recipes: a clean image made into a corrupted one as a suite's source built its set.

``imagenet-c`` is Hendrycks & Dietterich's ``make_imagenet_c.py``: the image (loaded as RGB)
goes through torchvision's ``Resize(256)`` and ``CenterCrop(224)`` on a PIL image, is corrupted,
converted with ``np.uint8`` and saved by Pillow as JPEG quality 85 with ``optimize=True``. The
resize and crop arithmetic is torchvision's, restated here (torchvision does not install beside
the CPU torch wheel): see :func:`resized_size` and :func:`center_crop_box`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from ..fileio import write_atomic
from ..rng import SeedLike
from .api import apply, as_numpy
from .io import encode_image

RESIZE, CROP = 256, 224          # make_imagenet_c.py: trn.Resize(256), trn.CenterCrop(224)


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}")
    return int(value)


def resized_size(width: int, height: int, short: int = RESIZE) -> tuple[int, int]:
    """(width, height) after torchvision's ``Resize(short)``: the shorter side becomes ``short``
    and the longer ``int(short * long / shorter)`` (truncated, in floating point); a square or
    a tie keeps the width as the short side."""
    width, height, short = (_positive(n, v) for n, v in (("width", width), ("height", height), ("short", short)))
    if width <= height:
        return short, int(short * height / width)
    return int(short * width / height), short


def resize_short_side(img: Any, short: int = RESIZE) -> np.ndarray:
    """``img`` (anything :func:`perturb.image.apply` takes) resized as torchvision's
    ``Resize(short)`` resizes a PIL image: Pillow's bilinear filter with its antialiasing (its
    support widens with the downscale factor) to :func:`resized_size`. uint8 (H, W, 3)."""
    from PIL import Image

    x = as_numpy(img)
    size = resized_size(x.shape[1], x.shape[0], short)
    return np.asarray(Image.fromarray(x, "RGB").resize(size, Image.Resampling.BILINEAR))


def center_crop_box(width: int, height: int, size: int = CROP) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of torchvision's ``CenterCrop(size)`` of a width x height image:
    ``top = int(round((height - size) / 2.0))`` (Python's round: half to even), the same for left.
    An image smaller than the crop is a ValueError (torchvision would pad it; the recipe's resize
    makes both sides at least 256)."""
    width, height, size = (_positive(n, v) for n, v in (("width", width), ("height", height), ("size", size)))
    if size > width or size > height:
        raise ValueError(f"a {size}x{size} centre crop needs an image at least that large; got {width}x{height}")
    left, top = int(round((width - size) / 2.0)), int(round((height - size) / 2.0))
    return left, top, left + size, top + size


def center_crop(img: Any, size: int = CROP) -> np.ndarray:
    """The centre ``size`` x ``size`` of ``img`` as uint8 (H, W, 3) (:func:`center_crop_box`)."""
    x = as_numpy(img)
    left, top, right, bottom = center_crop_box(x.shape[1], x.shape[0], size)
    return np.ascontiguousarray(x[top:bottom, left:right])


def imagenet_c_geometry(img: Any) -> np.ndarray:
    """``make_imagenet_c.py``'s geometry before the corruption: resize the short side to 256
    (:func:`resize_short_side`), centre crop 224 (:func:`center_crop`); uint8 (224, 224, 3).
    The recipe's clean image is this, saved as the corrupted ones are."""
    return center_crop(resize_short_side(img, RESIZE), CROP)


def imagenet_c_recipe(img: Any, name: str, severity: int, seed: SeedLike) -> np.ndarray:
    """The pixels ImageNet-C's ``make_imagenet_c.py`` saves for ``img``, before the JPEG save:
    :func:`imagenet_c_geometry`, then the corruption by :func:`perturb.image.apply` under the
    ``imagenet-c`` suite's table (``name`` must be a member), as uint8 (224, 224, 3).

    The source converts its float output with ``np.uint8`` (truncation). Our kernels return
    uint8 levels rounded to the nearest level, so where the source's output is a float (every
    op but jpeg and pixelate, which return Pillow images in both) a pixel here is the same or
    one level brighter: half a level on average, about 51-52 dB of PSNR between the two.
    The resize is the installed Pillow's (Pillow 13 resizes rows first where the height shrinks
    more, and can then differ by a level from older Pillow).
    """
    return apply(imagenet_c_geometry(img), name, severity, seed=seed, suite="imagenet-c")


IMAGENET_C_15 = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur",
                 "zoom_blur", "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate",
                 "jpeg")                 # the 15 of mCE, in the source's order; its 4 extras only when named


@dataclass(frozen=True)
class Recipe:
    """A named way to build a corrupted image set: the pixels (``corrupt(img, name, severity,
    seed)``), then how each is saved (Pillow ``format`` and its options)."""

    name: str
    corrupt: Callable[[Any, str, int, SeedLike], np.ndarray]
    suite: str                                   # the suite whose ops and tables it takes
    format: str = "JPEG"
    options: Mapping[str, Any] = field(default_factory=dict)     # encode_image's keywords
    suffixes: tuple[str, ...] = (".jpeg", ".jpg")  # file names kept as they are; others get the first
    source: str = ""
    prepare: Callable[[Any], np.ndarray] | None = None   # the geometry before corrupting (the clean image)
    default: tuple[str, ...] = ()                # the ops built unless named (empty: the whole suite)
    folders: Mapping[str, str] = field(default_factory=dict)   # op -> the source's folder name

    def clean(self, img: Any) -> np.ndarray:
        """The recipe's clean image: :attr:`prepare` of ``img`` (``img`` as uint8 when none)."""
        return self.prepare(img) if self.prepare is not None else as_numpy(img)

    def render(self, prepared: Any, name: str, severity: int, seed: SeedLike) -> np.ndarray:
        """:attr:`corrupt` from an image already through :meth:`clean` (the build prepares each
        image once for all its outputs): the same pixels as ``corrupt(img, ...)``."""
        return apply(prepared, name, severity, seed=seed, suite=self.suite)

    def folder(self, name: str) -> str:
        """The folder an op's files go in: the source's name for it (``jpeg_compression``), else
        the op's registry name."""
        return self.folders.get(name, name)

    def encode(self, pixels: Any) -> bytes:
        """The bytes of the saved file for ``pixels`` (the output of :attr:`corrupt`)."""
        return encode_image(pixels, self.format, **self.options)

    def file_name(self, name: str) -> str:
        """The saved file's name for a source file ``name``: kept when its suffix is the format's
        (ImageNet's ``.JPEG`` stays), else the format's suffix replaces it."""
        p = Path(name)
        return p.name if p.suffix.lower() in self.suffixes else p.stem + self.suffixes[0].upper()

    def write(self, path: str | os.PathLike, pixels: Any) -> Path:
        """Save ``pixels`` at ``path`` atomically, as :meth:`encode` gives them."""
        return write_atomic(path, self.encode(pixels))


RECIPES: dict[str, Recipe] = {
    "imagenet-c": Recipe("imagenet-c", imagenet_c_recipe, "imagenet-c", "JPEG",
                         {"quality": 85, "optimize": True},
                         source="Hendrycks & Dietterich 2019, hendrycks/robustness ImageNet-C/create_c/make_imagenet_c.py",
                         prepare=imagenet_c_geometry, default=IMAGENET_C_15, folders={"jpeg": "jpeg_compression"}),
}
