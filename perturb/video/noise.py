"""Visual perturbations: pixel noise (gaussian, shot, impulse, speckle), drawn anew for every frame.

Every value of the clip (each frame, pixel and channel) gets its own independent draw. The draws
cost one 16-bit random word per value through small tables (:mod:`._fast_random`): Gaussian
quantiles for gaussian and speckle noise (tails cut at ±4.33σ), exact per-level alias tables
for shot noise; for impulse noise the word decides both whether a value is hit and its colour.
Each frame draws from its own child generator, so chunk-by-chunk application equals one call.
"""
from __future__ import annotations

import cv2
import numpy as np

from ..registry import Spec, register
from ._fast_random import hit_words, map_chunks, normal_table, sample_levels, words
from ._noise_rows import shot_tables
from .severity_params import table


def gaussian_noise(clip: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """x/255 + N(0, sigma), clipped to [0, 1]: sensor noise in low light."""
    # x is an integer level, so round(x + n) = x + round(n): add rounded N(0, 255·sigma) quantiles.
    table = np.rint(normal_table() * (255 * sigma)).clip(-256, 256).astype(np.int16)

    def add(x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        noise = np.take(table, words(gen, x.size), mode="clip")    # "clip": no bounds check
        return cv2.add(x, noise, dtype=cv2.CV_8U).reshape(-1)      # saturates to 0..255

    return map_chunks(clip, rng, add)


def shot_noise(clip: np.ndarray, rng: np.random.Generator, photons: float) -> np.ndarray:
    """Poisson(x/255 · photons) / photons: photon-count noise, stronger with fewer photons."""
    return sample_levels(clip, rng, shot_tables(float(photons)))


def impulse_noise(clip: np.ndarray, rng: np.random.Generator, amount: float) -> np.ndarray:
    """Salt and pepper: a fraction ``amount`` of values is replaced, half by 0 and half by 255.

    Every value is hit independently with probability ``amount``, one random word per value
    deciding both hit and colour (:func:`._fast_random.hit_words`).
    """
    return map_chunks(clip, rng, lambda x, gen: hit_words(x, words(gen, x.size), amount))


def speckle_noise(clip: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """x + x·N(0, sigma), clipped: multiplicative noise, strongest on bright values."""
    table = (1 + normal_table() * sigma).astype(np.float32)         # 1 + N(0, sigma) quantiles

    def scale(x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        factor = np.take(table, words(gen, x.size), mode="clip")
        # x·(1 + N(0, sigma)) on the 0..255 scale, rounded and saturated to uint8 in one pass
        return cv2.multiply(x, factor, dtype=cv2.CV_8U).reshape(-1)

    return map_chunks(clip, rng, scale)


_COMMON = dict(modality="video", category="noise", random=True, temporal=False)
_STREAMS = (" Every frame draws from its own child generator, seeded by one draw per frame from the "
            "clip's generator, so a clip perturbed chunk by chunk gives the whole-clip result.")
_NORMAL = ("Normal draws come from a table of 65,536 normal quantiles picked by one 16-bit random "
           "word per value: tails are cut at ±4.33σ (variance 0.99985 of the exact one).")

register(Spec(name="gaussian_noise", fn=gaussian_noise, aliases=("Gaussian", "Gaussian Noise"),
              summary="Additive Gaussian noise on [0, 1] values, drawn per frame",
              severities=table("gaussian_noise"), deviation=_NORMAL + _STREAMS, **_COMMON))
register(Spec(name="shot_noise", fn=shot_noise, aliases=("Shot", "Shot Noise", "poisson_noise"),
              summary="Poisson (photon count) noise, drawn per frame",
              severities=table("shot_noise"),
              deviation="The supplement's text describes shot noise with salt-and-pepper amounts "
                        "(a copy of the impulse paragraph); the reference code, followed here, "
                        "draws Poisson noise with 250, 100, 50, 30, 15 photons. Each output value is "
                        "drawn from the exact distribution of the clipped, rounded Poisson for its "
                        "input level through an alias table (one 16-bit random word per value, "
                        "probabilities resolved to 2^-16)." + _STREAMS,
              **_COMMON))
register(Spec(name="impulse_noise", fn=impulse_noise,
              aliases=("Impulse", "Impulse Noise", "salt_and_pepper"),
              summary="Salt-and-pepper noise: a fraction of values set to 0 or 255, drawn per frame",
              severities=table("impulse_noise"),
              deviation="One 16-bit random word per value decides both: below the amount "
                        "(resolved to 2^-15) it is a hit, and the lower half of the hits is pepper, "
                        "so salt and pepper are exactly even." + _STREAMS,
              **_COMMON))
register(Spec(name="speckle_noise", fn=speckle_noise, aliases=("Speckle", "Speckle Noise"),
              summary="Multiplicative Gaussian noise x + x·N(0, c), drawn per frame",
              severities=table("speckle_noise"), deviation=_NORMAL + _STREAMS, **_COMMON))
