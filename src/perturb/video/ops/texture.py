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
texture("cocentric_sine_waves", "CocentricSineWaves",
        "Concentric rings with a wavy edge, brightening and darkening the picture in a sawtooth",
        "The centre is drawn as a fraction of the frame's width (x) and height (y); the amplitude and "
        "ring width as fractions of the shorter side (the reference: of im_size). A ring width of "
        "exactly 0 (the reference divides by it) adds nothing.")
texture("plasma_noise", "PlasmaNoise",
        "Swirling colour plasma blended over the picture",
        "The scale is drawn as a fraction of the frame's shorter side (the reference: of im_size).")
texture("perlin_noise", "PerlinNoise",
        "Grey Perlin turbulence clouds blended over the picture",
        "The noise's period is 32·side/224 px for the frame's shorter side (the reference: its "
        "im_size); its gradient and permutation tables are built from the drawn seed as the "
        "reference builds them, except that a gradient drawn as (0, 0), which the reference divides "
        "by its norm (NaN), stays (0, 0).")
texture("brownish_noise", "BrownishNoise",
        "Coloured low-frequency (brownish) noise added to the picture",
        "The FFT noise is built for H x W (power about the point (W/2, H/2); an odd width's centre "
        "column of phases is cut to H rows), equal to the reference's on a square frame; a field "
        "with no spread (1 x 1) is 0, not 0/0.")
texture("blue_noise_sample", "BlueNoiseSample",
        "Pixels where a blue-noise field falls at or below a threshold turn black",
        "The FFT noise is built for H x W (power about the point (W/2, H/2); an odd width's centre "
        "column of phases is cut to H rows), equal to the reference's on a square frame; a field "
        "with no spread (1 x 1) is 0, not 0/0.")
