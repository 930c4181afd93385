"""The nearest albumentations 2.0.8 and kornia 0.9.0 op to each perturb video op, as data.

Each entry builds the peer's contenders from our severity's parameters (the peer's own knob
set to our value where it has one, its defaults otherwise) and says how the peer draws:
``frame`` (a new draw per frame: a loop of single-image calls, where ours draw per frame),
``clip`` (one draw for the clip: albumentations' ``images=`` target, kornia's
``same_on_batch``, where ours are clip-coherent) or ``either`` (deterministic: both ways are
timed and the faster counts). Ops without an entry (frost, the temporal ops, the codecs other
than jpeg, temporal_blur) have no nearest peer op. Benchmark-only: perturb never imports these
libraries (``pip install -e .[bench-peers]``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

Params = Mapping[str, Any]


@dataclass(frozen=True)
class Peer:
    """A peer op: its name as shown in the tables, how it draws, and a builder of its transform
    (albumentations) or of a function of the clip tensor (kornia) from our parameters."""

    name: str
    draws: str
    build: Callable[[Params], Any]


def _pair(x: float) -> tuple[float, float]:
    return (float(x), float(x))


def _albumentations() -> dict[str, Peer]:
    import albumentations as A
    import cv2

    def colour(**kw):
        return A.ColorJitter(brightness=(1, 1), contrast=(1, 1), hue=(0, 0), p=1, **kw)

    return {
        "gaussian_noise": Peer("GaussNoise", "frame", lambda p: A.GaussNoise(std_range=_pair(p["sigma"]), p=1)),
        "shot_noise": Peer("ShotNoise", "frame", lambda p: A.ShotNoise(scale_range=_pair(1 / p["photons"]), p=1)),
        "impulse_noise": Peer("SaltAndPepper", "frame",
                              lambda p: A.SaltAndPepper(amount=_pair(p["amount"]), salt_vs_pepper=(0.5, 0.5), p=1)),
        "speckle_noise": Peer("MultiplicativeNoise(elementwise)", "frame", lambda p: A.MultiplicativeNoise(
            multiplier=(1 - p["sigma"], 1 + p["sigma"]), per_channel=True, elementwise=True, p=1)),
        "defocus_blur": Peer("Defocus", "either", lambda p: A.Defocus(
            radius=(p["radius"], p["radius"]), alias_blur=_pair(p["alias_blur"]), p=1)),
        "motion_blur": Peer("MotionBlur", "frame", lambda p: A.MotionBlur(
            blur_limit=(2 * p["radius"] + 1,) * 2, angle_range=(0, 90), allow_shifted=False, p=1)),   # a 90° spread
        "zoom_blur": Peer("ZoomBlur", "either", lambda p: A.ZoomBlur(
            max_factor=_pair(p["zooms"][1]), step_factor=_pair(p["zooms"][2]), p=1)),
        "jpeg": Peer("ImageCompression", "either",
                     lambda p: A.ImageCompression(quality_range=(p["quality"], p["quality"]), p=1)),
        "gaussian_blur": Peer("GaussianBlur", "either", lambda p: A.GaussianBlur(sigma_limit=_pair(p["sigma"]), p=1)),
        "glass_blur": Peer("GlassBlur(fast)", "frame", lambda p: A.GlassBlur(
            sigma=p["sigma"], max_delta=p["max_delta"], iterations=p["iterations"], mode="fast", p=1)),
        "elastic_transform": Peer("ElasticTransform", "frame",
                                  lambda p: A.ElasticTransform(alpha=p["alpha"], sigma=4.0, p=1)),
        "brightness": Peer("RandomBrightnessContrast(brightness)", "either", lambda p: A.RandomBrightnessContrast(
            brightness_limit=_pair(p["shift"]), contrast_limit=(0, 0), p=1)),
        "contrast": Peer("RandomBrightnessContrast(contrast)", "either", lambda p: A.RandomBrightnessContrast(
            brightness_limit=(0, 0), contrast_limit=_pair(p["factor"] - 1), p=1)),
        "saturate": Peer("ColorJitter(saturation)", "either", lambda p: colour(saturation=_pair(p["factor"]))),
        "fog": Peer("RandomFog", "clip", lambda p: A.RandomFog(fog_coef_range=_pair(min(1.0, p["strength"] / 3)), p=1)),
        "snow": Peer("RandomSnow(bleach)", "clip", lambda p: A.RandomSnow(
            snow_point_range=_pair(min(1.0, p["mean"])), method="bleach", p=1)),
        "spatter": Peer("Spatter", "clip", lambda p: A.Spatter(
            mean=_pair(p["mean"]), std=_pair(p["std"]), gauss_sigma=_pair(p["sigma"]),
            cutout_threshold=_pair(p["threshold"]), intensity=_pair(min(1.0, p["smear"])),
            mode="mud" if p["mud"] else "rain", p=1)),
        "rain": Peer("RandomRain", "clip", lambda p: A.RandomRain(
            drop_length=p["length"], brightness_coefficient=p["darken"], p=1)),
        "static_rotate": Peer("Rotate", "either", lambda p: A.Rotate(
            limit=_pair(p["degrees"]), border_mode=cv2.BORDER_REFLECT_101, p=1)),
        "rotate": Peer("Rotate", "frame", lambda p: A.Rotate(
            limit=(-p["max_degrees"], p["max_degrees"]), border_mode=cv2.BORDER_REFLECT_101, p=1)),
        "translate": Peer("Affine(translate_px)", "frame", lambda p: A.Affine(
            translate_px=(-p["max_shift"], p["max_shift"]), border_mode=cv2.BORDER_REFLECT_101, p=1)),
    }


def _pillow_pixelate(p: Params) -> Callable[[np.ndarray], Any]:
    """ImageNet-C's own pixelate: Pillow's BOX shrink and NEAREST enlargement, frame by frame."""
    from PIL import Image

    def run(clip: np.ndarray) -> list:
        h, w = clip.shape[1:3]
        size = (max(1, int(w * p["scale"])), max(1, int(h * p["scale"])))
        return [Image.fromarray(f).resize(size, Image.BOX).resize((w, h), Image.NEAREST) for f in clip]
    return run


def albumentations_contenders(name: str, params: Params, clip: np.ndarray) -> tuple[str, dict[str, Callable]]:
    """The peer op's name and its callables on the uint8 clip (one per way of drawing), or
    ("", {}) where there is none. pixelate's peer is Pillow (exactness to its boxes is kept)."""
    if name == "pixelate":
        run = _pillow_pixelate(params)
        return "Pillow BOX + NEAREST", {"frame": lambda: run(clip)}
    peer = _albumentations().get(name)
    if peer is None:
        return "", {}
    t = peer.build(params)
    ways = {"frame": lambda: [t(image=f)["image"] for f in clip], "clip": lambda: t(images=clip)["images"]}
    keep = ("frame", "clip") if peer.draws == "either" else (peer.draws,)
    return peer.name, {k: ways[k] for k in keep}


def _kornia() -> dict[str, Peer]:
    import kornia
    import kornia.augmentation as K
    import torch

    geo, enhance, filters = kornia.geometry.transform, kornia.enhance, kornia.filters

    def per_frame_angles(x, d):
        return torch.empty(len(x)).uniform_(-d, d)

    def enhanced(fn, value):
        return lambda x: getattr(enhance, fn)(x, float(value))

    def gaussian(p):
        k = 2 * math.ceil(4 * p["sigma"]) + 1                   # the support of scipy's truncate=4
        return lambda x: filters.gaussian_blur2d(x, (k, k), _pair(p["sigma"]))

    def elastic(p):
        return lambda x: geo.elastic_transform2d(x, torch.rand(len(x), 2, *x.shape[-2:]) * 2 - 1,
                                                 alpha=_pair(p["alpha"] / x.shape[-1]))

    def translate(p):
        return lambda x: geo.translate(x, torch.empty(len(x), 2).uniform_(-p["max_shift"], p["max_shift"]))

    def rain(p):
        made: dict = {}

        def run(x):
            if "op" not in made:                        # one streak per `area` px, as ours
                drops = x.shape[-2] * x.shape[-1] // p["area"]
                made["op"] = K.RandomRain(number_of_drops=(drops, drops), drop_height=(p["length"], p["length"]),
                                          drop_width=(1, 1), same_on_batch=True, p=1)
            return made["op"](x)
        return run

    return {
        "gaussian_noise": Peer("RandomGaussianNoise", "frame", lambda p: K.RandomGaussianNoise(std=p["sigma"], p=1)),
        "impulse_noise": Peer("RandomSaltAndPepperNoise", "frame", lambda p: K.RandomSaltAndPepperNoise(
            amount=_pair(p["amount"]), salt_vs_pepper=(0.5, 0.5), p=1)),
        "motion_blur": Peer("RandomMotionBlur", "frame", lambda p: K.RandomMotionBlur(
            kernel_size=2 * p["radius"] + 1, angle=(-45.0, 45.0), direction=(0.0, 0.0), p=1)),
        "gaussian_blur": Peer("filters.gaussian_blur2d", "either", gaussian),
        "jpeg": Peer("enhance.jpeg_codec_differentiable", "either",
                     lambda p: lambda x: enhance.jpeg_codec_differentiable(x, torch.tensor([float(p["quality"])]))),
        "brightness": Peer("enhance.adjust_brightness", "either", lambda p: enhanced("adjust_brightness", p["shift"])),
        "contrast": Peer("enhance.adjust_contrast", "either", lambda p: enhanced("adjust_contrast", p["factor"])),
        "saturate": Peer("enhance.adjust_saturation", "either", lambda p: enhanced("adjust_saturation", p["factor"])),
        "static_rotate": Peer("geometry.rotate", "either",
                              lambda p: lambda x: geo.rotate(x, torch.full((len(x),), float(p["degrees"])))),
        "rotate": Peer("geometry.rotate", "frame",
                       lambda p: lambda x: geo.rotate(x, per_frame_angles(x, p["max_degrees"]))),
        "translate": Peer("geometry.translate", "frame", translate),
        "elastic_transform": Peer("geometry.elastic_transform2d", "frame", elastic),
        "snow": Peer("RandomSnow", "clip", lambda p: K.RandomSnow(
            snow_coefficient=_pair(min(1.0, p["mean"])), brightness=(2.0, 2.0), same_on_batch=True, p=1)),
        "rain": Peer("RandomRain", "clip", rain),
    }


def kornia_contender(name: str, params: Params, x: Any) -> tuple[str, Callable | None]:
    """The kornia op's name and a callable on the float (T, C, H, W) tensor, or ("", None)."""
    peer = _kornia().get(name)
    if peer is None:
        return "", None
    fn = peer.build(params)
    return peer.name, lambda: fn(x)
