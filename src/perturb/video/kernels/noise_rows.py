"""Shot noise's exact per-level output distributions, as alias tables for the shot noise kernels.

``round(clip(Poisson(x · photons / 255) · 255 / photons, 0, 255))`` depends on the uint8 input
x only, and every count of ``ceil(photons)`` or more gives 255, so each level has a finite
output distribution computed here in closed form.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .fast_random import level_tables
from .opencv_frames import to_uint8


def clipped_poisson_pmf(rate: float, top: int) -> np.ndarray:
    """P(K = k) for k < top and P(K >= top) at k = top, K ~ Poisson(rate)."""
    k = np.arange(top + 1, dtype=np.float64)
    if rate == 0:
        return (k == 0).astype(np.float64)
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
    pmf = np.exp(k * math.log(rate) - rate - log_fact)
    pmf[top] = max(0.0, 1.0 - pmf[:top].sum())
    return pmf


def shot_rows(photons: float) -> np.ndarray:
    """Row x: the distribution of the uint8 shot-noise output for input x."""
    if not photons > 0:
        raise ValueError(f"photons must be > 0; got {photons!r}")
    top = int(math.ceil(photons))
    values = to_uint8(np.arange(top + 1, dtype=np.float32), 255.0 / photons)
    return np.stack([np.bincount(values, weights=clipped_poisson_pmf(x * photons / 255.0, top),
                                 minlength=256) for x in range(256)])


@lru_cache(maxsize=16)
def shot_tables(photons: float) -> tuple[np.ndarray, np.ndarray]:
    """Alias tables of :func:`shot_rows`, cached per photon count."""
    return level_tables(shot_rows(photons))
