"""Visual perturbations: pixel noise (gaussian, shot, impulse, speckle), drawn anew for every frame.

Each kernel works on the whole clip at once; the noise field has the clip's full (T, H, W, 3)
shape, so every frame (and channel) gets its own independent draw.
"""
from __future__ import annotations

import numpy as np

from ..registry import Spec, register
from ._kernels import to_uint8
from .severities import table


def gaussian_noise(clip: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """x/255 + N(0, sigma), clipped to [0, 1]: sensor noise in low light."""
    noise = rng.standard_normal(clip.shape, dtype=np.float32)
    noise *= np.float32(255 * sigma)
    noise += clip                       # x + N(0, sigma) on the 0..255 scale
    return to_uint8(noise, 1)


def shot_noise(clip: np.ndarray, rng: np.random.Generator, photons: float) -> np.ndarray:
    """Poisson(x/255 · photons) / photons: photon-count noise, stronger with fewer photons."""
    counts = rng.poisson(clip * (photons / 255.0))
    return to_uint8(counts, 255.0 / photons)


def impulse_noise(clip: np.ndarray, rng: np.random.Generator, amount: float) -> np.ndarray:
    """Salt and pepper: a fraction ``amount`` of values is replaced, half by 0 and half by 255."""
    u = rng.random(clip.shape, dtype=np.float32)
    out = clip.copy()
    out[u < amount / 2] = 0
    out[(u >= amount / 2) & (u < amount)] = 255
    return out


def speckle_noise(clip: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """x + x·N(0, sigma), clipped: multiplicative noise, strongest on bright values."""
    factor = rng.standard_normal(clip.shape, dtype=np.float32)
    factor *= np.float32(sigma)
    factor += np.float32(1)
    factor *= clip                      # x·(1 + N(0, sigma)) on the 0..255 scale
    return to_uint8(factor, 1)


_COMMON = dict(modality="video", category="noise", random=True, temporal=False)

register(Spec(name="gaussian_noise", fn=gaussian_noise, aliases=("Gaussian", "Gaussian Noise"),
              summary="Additive Gaussian noise on [0, 1] values, drawn per frame",
              severities=table("gaussian_noise"), **_COMMON))
register(Spec(name="shot_noise", fn=shot_noise, aliases=("Shot", "Shot Noise", "poisson_noise"),
              summary="Poisson (photon count) noise, drawn per frame",
              severities=table("shot_noise"),
              deviation="The supplement's text describes shot noise with salt-and-pepper amounts "
                        "(a copy of the impulse paragraph); the reference code, followed here, "
                        "draws Poisson noise with 250, 100, 50, 30, 15 photons.",
              **_COMMON))
register(Spec(name="impulse_noise", fn=impulse_noise,
              aliases=("Impulse", "Impulse Noise", "salt_and_pepper"),
              summary="Salt-and-pepper noise: a fraction of values set to 0 or 255, drawn per frame",
              severities=table("impulse_noise"), **_COMMON))
register(Spec(name="speckle_noise", fn=speckle_noise, aliases=("Speckle", "Speckle Noise"),
              summary="Multiplicative Gaussian noise x + x·N(0, c), drawn per frame",
              severities=table("speckle_noise"), **_COMMON))
