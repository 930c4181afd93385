"""Visual perturbations of category texture: ImageNet-C-bar's procedural fields laid over the picture.

Registrations only; the kernels are in :mod:`..kernels` (cbar_fields, cbar_texture,
torch_cbar_texture), registered there under each op's name."""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels.cbar_texture import draw_texture
from ..kernels.twins import kernels_of
from ..render import Renderer
from ..severity_params import table

SOURCE = "Mintun, Kirillov & Xie 2021, facebookresearch/augmentation-corruption imagenet_c_bar/corrupt.py "
_COMMON = ("Severities are the reference's levels (imagenet_c_bar.csv). For video one draw serves the "
           "clip (the same pattern on every frame); per_frame=True draws anew for every frame, as the "
           "reference does per image. The field is computed in float64 over all pixels at once (the "
           "reference loops per pixel) and composited in float32; output is rounded to the nearest "
           "level (the reference truncates).")


def texture(name: str, cls: str, summary: str, departs: str) -> None:
    """Register C-bar texture op ``name`` (the reference's class ``cls``)."""
    register(Spec(name=name, modality="video", category="texture",
                  render=Renderer(draw=draw_texture(name), kernels=kernels_of(name)),
                  severities=table(name), extra={"per_frame": True}, summary=summary,
                  deviation=f"Source: {SOURCE}{cls}. {departs} {_COMMON}"))


texture("single_frequency_greyscale", "SingleFrequencyGreyscale",
        "A grey sine grating of one random frequency and direction added to the picture",
        "Frequencies are radians per pixel, as in the reference, on frames of any size.")
