"""Images as first-class inputs: ``perturb.image.apply(img, "jpeg", severity=3, seed=0)``.

An image is a one-frame clip: it goes through the video registry, seed rule and kernels
(:mod:`perturb.video`), so ``apply(img, op, s, seed=x)`` equals
``perturb.video.apply(img[None], op, s, seed=x)[0]``. Ops with no meaning on one image (temporal
ops, and codec ops whose meaning needs a video stream) are refused; :func:`ops` lists the others.
Files are read and written in :mod:`.io` (Pillow), and the ImageNet-C recipe for one image is
in :mod:`.recipes`. Above :mod:`perturb.video` in the layering: the video package never imports it.
"""
from __future__ import annotations

from .api import IMAGE, Perturbation, apply, as_numpy, check_image, get, ops, refusal
from .io import read_image, write_image
from .recipes import RECIPES, Recipe, center_crop_box, imagenet_c_geometry, imagenet_c_recipe, resize_short_side, resized_size

__all__ = ["IMAGE", "Perturbation", "RECIPES", "Recipe", "apply", "as_numpy", "center_crop_box", "check_image",
           "get", "imagenet_c_geometry", "imagenet_c_recipe", "ops", "read_image", "refusal", "resize_short_side", "resized_size",
           "write_image"]
