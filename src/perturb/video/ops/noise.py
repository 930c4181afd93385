"""Visual perturbations: pixel noise (gaussian, shot, impulse, speckle), drawn anew for every frame.

Every value of the clip (each frame, pixel and channel) gets its own independent draw: one
16-bit counter-based word per value, a function of one key per clip, the frame index and the
value's position (:mod:`..kernels.keyed_words`), through small tables (:mod:`..kernels.fast_random`). The
kernels live in :mod:`..kernels.noise` (numpy and torch, bit-identical); this module registers
the four ops.
"""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels.noise import draw_clip_key
from ..kernels.twins import kernels_of
from ..render import FRAME, Renderer
from ..severity_params import table


def renderer(name: str) -> Renderer:
    """Noise op ``name`` in the draw/render model: one key per clip, frames rendered per (key, index)."""
    return Renderer(FRAME, draw_clip_key, kernels_of(name), torch_frames="clip")


_COMMON = dict(modality="video", category="noise", random=True, temporal=False)

_STREAMS = (" One 64-bit key is drawn per clip from its generator; each value's word is a counter-based "
            "hash of (key, frame index, position), so any subset of frames renders as in the whole "
            "clip, and numpy, torch-CPU and CUDA give bit-identical output.")
_NORMAL = ("Normal draws come from a table of 65,536 normal quantiles picked by one 16-bit random "
           "word per value: tails are cut at ±4.33σ (variance 0.99985 of the exact one).")

register(Spec(name="gaussian_noise", render=renderer("gaussian_noise"),
              aliases=("Gaussian", "Gaussian Noise"),
              summary="Additive Gaussian noise on [0, 1] values, drawn per frame",
              severities=table("gaussian_noise"), deviation=_NORMAL + _STREAMS, **_COMMON))
register(Spec(name="shot_noise", render=renderer("shot_noise"),
              aliases=("Shot", "Shot Noise", "poisson_noise"),
              summary="Poisson (photon count) noise, drawn per frame",
              severities=table("shot_noise"),
              deviation="The supplement's text describes shot noise with salt-and-pepper amounts "
                        "(a copy of the impulse paragraph); the reference code, followed here, "
                        "draws Poisson noise with 250, 100, 50, 30, 15 photons. Each output value is "
                        "drawn from the exact distribution of the clipped, rounded Poisson for its "
                        "input level through an alias table (one 16-bit random word per value, "
                        "probabilities resolved to 2^-16)." + _STREAMS,
              **_COMMON))
register(Spec(name="impulse_noise", render=renderer("impulse_noise"),
              aliases=("Impulse", "Impulse Noise", "salt_and_pepper"),
              summary="Salt-and-pepper noise: a fraction of values set to 0 or 255, drawn per frame",
              severities=table("impulse_noise"),
              deviation="One 16-bit random word per value decides both: below the amount "
                        "(resolved to 2^-15) it is a hit, and the lower half of the hits is pepper, "
                        "so salt and pepper are exactly even." + _STREAMS,
              **_COMMON))
register(Spec(name="speckle_noise", render=renderer("speckle_noise"),
              aliases=("Speckle", "Speckle Noise"),
              summary="Multiplicative Gaussian noise x + x·N(0, c), drawn per frame",
              severities=table("speckle_noise"),
              deviation=_NORMAL + " Factors 1 + σz are rounded to multiples of 2^-14 (finer for small "
                        "σ), so x·(1 + σz) is exact in float32 and rounds alike on numpy and torch."
                        + _STREAMS, **_COMMON))
