"""Public image API: ``apply`` one visual op to one image, as a one-frame clip.

An image is numpy uint8 (H, W, 3) RGB, or a torch uint8 (H, W, 3) / float (3, H, W) tensor in
[0, 1] on any device (a clip of :mod:`perturb.video.clip` without its time axis); the result has
the same type, layout, dtype and device. Every op renders through :func:`perturb.video.apply` on
``img[None]``: the same registry entry, parameter table, seed rule and kernel as a clip's first
frame, with no second implementation of any op.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import video
from ..registry import REGISTRY, Spec
from ..rng import SeedLike
from ..video.clip import Form, validate
from ..video.layouts import host_frames

IMAGE = Form("image", "an image: numpy uint8 (H, W, 3) RGB, torch uint8 (H, W, 3) or torch float (3, H, W) "
                      "in [0, 1]", lead="", hint=" (a clip (T, H, W, 3) goes through perturb.video.apply)",
             plural="images")
ALTERNATIVE = "perturb.image.ops() lists the ops that apply to images"


def ops() -> list[str]:
    """The visual ops that apply to one image (:attr:`Spec.applies_to_images`), in listing order."""
    return [s.name for s in REGISTRY.select("video") if s.applies_to_images]


def refusal(spec: Spec) -> str:
    """Why ``spec`` has no meaning on one image, in a clause ("" when it has one)."""
    what = spec.summary.rstrip(".")
    what = what[:1].lower() + what[1:]
    if spec.temporal:
        return f"{spec.name} is temporal ({what}): it has no meaning on one image"
    if spec.stream:
        return f"{spec.name} needs a video stream ({what}): it has no meaning on one image"
    return ""


def get(name: str | Spec, suite: str | None = None) -> Spec:
    """The registry entry of an image op (aliases accepted), under ``suite``'s table when named;
    a one-line ValueError for an op with no meaning on one image."""
    spec = video.get(name, suite)
    why = refusal(spec)
    if why:
        raise ValueError(f"{why}; {ALTERNATIVE}")
    return spec


def check_image(img: Any) -> str | None:
    """Validate an image (a one-line ValueError naming what was expected); its torch layout as a
    clip's ("THWC" for uint8, "TCHW" for float), None for numpy."""
    return validate(img, IMAGE)


def as_numpy(img: Any) -> np.ndarray:
    """A validated image as uint8 (H, W, 3) numpy (a float image quantised as clips are)."""
    layout = check_image(img)
    return np.asarray(img) if layout is None else host_frames(img[None], layout)[0]


def apply(img: Any, name: str | Spec, severity: int = 3, *, seed: SeedLike = None,
          suite: str | None = None) -> Any:
    """Return a perturbed copy of ``img`` (the input is never modified): the image as a one-frame
    clip through :func:`perturb.video.apply` with the same op, severity, seed and suite.

    ``severity`` is 1..5; ``seed`` an int, a ``numpy.random.Generator`` or None; ``suite`` takes
    that suite's parameter table (``"imagenet-c"``; default: the op's own).
    """
    spec = get(name, suite)
    spec.params(severity)                   # a bad severity is named before the image is read
    check_image(img)
    return video.apply(img[None], spec, severity, seed=seed)[0]


class Perturbation(video.Perturbation):
    """An image op at a fixed severity, as a callable: ``Perturbation("jpeg", 3)(img)``."""

    def __init__(self, name: str | Spec, severity: int = 3, *, seed: SeedLike = None,
                 suite: str | None = None) -> None:
        super().__init__(get(name, suite), severity, seed=seed)

    def __call__(self, img: Any, *, seed: SeedLike = None) -> Any:
        return apply(img, self.spec, self.severity, seed=self.seed if seed is None else seed)
