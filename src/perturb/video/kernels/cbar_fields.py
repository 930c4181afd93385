"""ImageNet-C-bar's procedural fields, computed on the host in float64 for an H x W frame.

Each function restates the maths of one class of the reference (Mintun, Kirillov & Xie 2021,
facebookresearch/augmentation-corruption, imagenet_c_bar/corrupt.py), which loops in Python
over the pixels of a square ``im_size`` image, as array expressions over every pixel at once.
Arguments are in pixels of the frame at hand; on a square frame of side S they are the
reference's arguments at im_size = S and the fields equal its fields up to float rounding.
Pixel (y, x) is row y, column x: the reference indexes ``image[y, x]``.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np


def pixel_grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column coordinates (float64), shaped (h, 1) and (1, w) to broadcast."""
    return np.arange(h, dtype=np.float64)[:, None], np.arange(w, dtype=np.float64)[None, :]


# -------------------------------------------------------------------- single frequency, rings
def single_frequency(h: int, w: int, freq: np.ndarray, phase: float) -> np.ndarray:
    """sin(x·freq[0] + y·freq[1] + phase): SingleFrequencyGreyscale's grating, (h, w)."""
    y, x = pixel_grid(h, w)
    return np.sin(x * float(freq[0]) + y * float(freq[1]) + float(phase))


def cocentric_rings(h: int, w: int, x0: float, y0: float, freq: float, amplitude: float,
                    ring_width: float) -> np.ndarray:
    """CocentricSineWaves' rings about (x0, y0), in [-1/2, 1/2): the distance to the centre,
    wobbled by amplitude·sin(freq·atan2(x - x0, y - y0)), modulo ring_width, over ring_width.
    A ring width of 0 (the reference divides by it) gives a flat field of 0."""
    y, x = pixel_grid(h, w)
    dx, dy = x - x0, y - y0
    if not ring_width > 0:
        return np.zeros((h, w))
    wobble = np.sin(np.arctan2(dx, dy) * freq) * amplitude
    return np.mod(np.sqrt(dx ** 2 + dy ** 2) + wobble, ring_width) / ring_width - 0.5


# ------------------------------------------------------------------------------------ plasma
def plasma(h: int, w: int, time: float, iterations: int, sharpness: float, scale: float) -> np.ndarray:
    """PlasmaNoise's field (h, w, 3) in RGB order: each pixel's (x, y) / scale is pushed
    ``iterations`` times along a rotated (cos, sin) flow whose frequency, speed and damping
    grow by fixed factors; the channels are sines of the end point. The state ``i`` is the same
    for every pixel, so it steps as four scalars while the points step as arrays."""
    y, x = pixel_grid(h, w)
    x, y = np.broadcast_to(x / scale, (h, w)).copy(), np.broadcast_to(y / scale, (h, w)).copy()
    i0, i1, i2, i3 = 1.0, 1.0, 1.0, 0.0
    for _ in range(int(iterations)):
        r0 = np.cos(y * i0 - i3 + time / i1) / i2
        r1 = np.sin(x * i0 - i3 + time / i1) / i2
        r0, r1 = r0 - r1 * 0.3, r1 + r0 * 0.3
        x += r0
        y += r1
        i0, i1, i2, i3 = i0 * 1.93, i1 * 1.15, i2 * (2.25 - sharpness), i3 * (time * i1)
    return np.stack([np.sin(x - time), np.sin((x + y + np.sin(time)) * 0.5), np.sin(y + time)], axis=2)


# ------------------------------------------------------------------------------------ perlin
PERLIN_B = 256                 # the reference's lattice period
PERLIN_N = 16 * 256            # its offset added to every coordinate (keeps them positive)


@lru_cache(maxsize=8)
def perlin_tables(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The permutation p (2B + 2 ints) and unit gradients g (2B + 2, 2) that the reference's
    PerlinNoiseGenerator builds from ``RandomState(seed)``: the same draws in the same order
    (2B + 2 pairs of ints, then B swap targets), so the same seed gives the same tables.
    A gradient drawn as (0, 0) (the reference divides it by its norm, 0) is kept as (0, 0)."""
    b = PERLIN_B
    state = np.random.RandomState(seed)
    raw = (state.randint(low=0, high=2 ** 31, size=(2 * b + 2, 2)) % (2 * b) - b) / b
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    g = np.divide(raw, norms, out=np.zeros_like(raw), where=norms > 0)
    p = np.arange(2 * b + 2)
    targets = state.randint(low=0, high=2 ** 31, size=b) % b
    for i, j in zip(range(b - 1, -1, -1), targets.tolist()):
        p[i], p[j] = p[j], p[i]
    for table in (p, g):                   # the reference's copy runs in order: entries 2B, 2B + 1
        table[b:2 * b] = table[:b]         # repeat entries 0, 1 as already copied
        table[2 * b:] = table[:2]
    p.setflags(write=False)
    g.setflags(write=False)
    return p, g


def perlin_noise2(p: np.ndarray, g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The reference's 2-D gradient noise at points (x, y) (arrays, x and y >= 0)."""
    b = PERLIN_B
    tx, ty = x + PERLIN_N, y + PERLIN_N
    bx0 = tx.astype(np.int64) % b
    by0 = ty.astype(np.int64) % b
    bx1, by1 = (bx0 + 1) % b, (by0 + 1) % b
    rx0, ry0 = np.mod(tx, 1.0), np.mod(ty, 1.0)
    rx1, ry1 = rx0 - 1.0, ry0 - 1.0
    i, j = p[bx0], p[bx1]
    b00, b10, b01, b11 = p[i + by0], p[j + by0], p[i + by1], p[j + by1]
    sx = rx0 ** 2 * (3.0 - 2.0 * rx0)
    sy = ry0 ** 2 * (3.0 - 2.0 * ry0)
    u = rx0 * g[b00, 0] + ry0 * g[b00, 1]
    v = rx1 * g[b10, 0] + ry0 * g[b10, 1]
    a = u + sx * (v - u)
    u = rx0 * g[b01, 0] + ry1 * g[b01, 1]
    v = rx1 * g[b11, 0] + ry1 * g[b11, 1]
    c = u + sx * (v - u)
    return 1.5 * (a + sy * (c - a))


def perlin_turbulence(h: int, w: int, seed: int, period: float, octaves: float = 16.0) -> np.ndarray:
    """PerlinNoise's turbulence (h, w): the sum over f = 1, 2, 4, .. <= octaves of
    |noise(f·y/period, f·x/period)| / f (the reference passes the row first: its point is
    (y, x) times the matrix I / period)."""
    p, g = perlin_tables(int(seed))
    y, x = pixel_grid(h, w)
    y, x = np.broadcast_to(y / period, (h, w)), np.broadcast_to(x / period, (h, w))
    total, f = np.zeros((h, w)), 1.0
    while f <= octaves:
        total += np.abs(perlin_noise2(p, g, f * y, f * x)) / f
        f *= 2
    return total


# ------------------------------------------------------------------------------- FFT noises
def radial_distance(h: int, w: int) -> np.ndarray:
    """Each pixel's distance to the point (x, y) = (w/2, h/2): the reference's power spectra."""
    y, x = pixel_grid(h, w)
    return np.sqrt((x - w / 2) ** 2 + (y - h / 2) ** 2)


def fft_noise(state: np.random.RandomState, power: np.ndarray) -> np.ndarray:
    """One field of the reference's FFT noise (BrownishNoise, BlueNoiseSample) for the power
    spectrum ``power`` (h, w): random phases from ``state`` (h x w//2 of them, mirrored; an odd
    width adds a centre column of h//2 phases, 0, and those reversed, cut to h rows), the
    spectrum rolled by half the size on each axis, the real part of its inverse FFT, divided by
    its standard deviation. A field with no spread (a 1 x 1 frame) is 0 everywhere."""
    h, w = power.shape
    phases = state.uniform(low=0, high=2 * np.pi, size=(h, w // 2))
    if w % 2 == 0:
        phases = np.concatenate((phases, phases[::-1, ::-1]), axis=1)
    else:
        centre = state.uniform(low=0, high=2 * np.pi, size=(h // 2, 1))
        centre = np.concatenate((centre, np.zeros((1, 1)), centre[::-1]), axis=0)[:h]
        phases = np.concatenate((phases, centre, phases[::-1, ::-1]), axis=1)
    spectrum = np.roll(power * (np.cos(phases) + np.sin(phases) * 1j), (h // 2, w // 2), axis=(0, 1))
    noise = np.real(np.fft.ifft2(spectrum))
    spread = np.std(noise)
    return noise / spread if spread > 0 else np.zeros((h, w))


def brownish_noise(h: int, w: int, seed: int) -> np.ndarray:
    """BrownishNoise's three fields (h, w, 3), one per channel from one ``RandomState(seed)``:
    power 1 / (d² + 1) at distance d from the centre."""
    state = np.random.RandomState(int(seed))
    power = 1 / (radial_distance(h, w) ** 2 + 1)
    return np.stack([fft_noise(state, power) for _ in range(3)], axis=2)


def blue_noise(h: int, w: int, seed: int) -> np.ndarray:
    """BlueNoiseSample's field (h, w): power d at distance d from the centre."""
    return fft_noise(np.random.RandomState(int(seed)), radial_distance(h, w))
