"""Image files: read any image Pillow decodes as RGB uint8, write PNG (lossless) or JPEG.

Pillow is imported inside the functions, so importing :mod:`perturb.image` does not load it.
Reading converts as ImageNet loaders do (torchvision's ``pil_loader``: ``Image.convert("RGB")``
on grayscale, palette, RGBA, CMYK...; EXIF orientation is not applied, as there). Writing is
atomic (:func:`perturb.fileio.write_atomic`): a reader sees the whole file or none.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from ..errors import ImageReadError
from ..fileio import write_atomic
from .api import as_numpy

PathLike = str | os.PathLike
FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG"}     # suffix (any case) -> Pillow format


def read_image(path: PathLike) -> np.ndarray:
    """The image at ``path`` as uint8 (H, W, 3) RGB; an ImageReadError (a ValueError) in one line
    naming the file when it is missing, a folder, or not an image Pillow decodes."""
    from PIL import Image, UnidentifiedImageError

    where = repr(os.fspath(path))
    p = Path(path)
    if not p.exists():
        raise ImageReadError(f"cannot read image {where}: no such file")
    if p.is_dir():
        raise ImageReadError(f"cannot read image {where}: it is a folder")
    try:
        with Image.open(p) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8).copy()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:   # Pillow's decode errors
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ImageReadError(f"cannot read image {where}: {reason}") from None


def image_format(path: PathLike) -> str:
    """The Pillow format a file name asks for, from its suffix; a ValueError naming the suffixes."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise ValueError(f"expected an image file name ending in {', '.join(FORMATS)}; got {os.fspath(path)!r}")
    return fmt


def encode_image(img: object, fmt: str, *, quality: int | None = None, optimize: bool = False) -> bytes:
    """The bytes of an image (anything :func:`perturb.image.apply` takes) saved by Pillow as ``fmt``
    ("PNG" or "JPEG"; JPEG at ``quality`` 1..95, Pillow's default 75 when None)."""
    from PIL import Image

    if quality is not None:
        if fmt != "JPEG":
            raise ValueError(f"quality applies to JPEG files; got quality={quality!r} for {fmt}")
        if isinstance(quality, bool) or not isinstance(quality, (int, np.integer)) or not 1 <= quality <= 95:
            raise ValueError(f"quality must be an int in 1..95; got {quality!r}")
    if not isinstance(optimize, (bool, np.bool_)):
        raise ValueError(f"optimize must be True or False; got {optimize!r}")
    options = {"optimize": bool(optimize)}
    if quality is not None:
        options["quality"] = int(quality)
    buf = io.BytesIO()
    Image.fromarray(as_numpy(img), "RGB").save(buf, format=fmt, **options)
    return buf.getvalue()


def write_image(path: PathLike, img: object, *, quality: int | None = None, optimize: bool = False) -> Path:
    """Write ``img`` to ``path`` atomically, its format from the suffix: ``.png`` lossless,
    ``.jpg``/``.jpeg`` at ``quality`` (Pillow's default 75 when None), Pillow's ``optimize`` as
    given. The folder must exist. Returns the path."""
    return write_atomic(path, encode_image(img, image_format(path), quality=quality, optimize=optimize))
