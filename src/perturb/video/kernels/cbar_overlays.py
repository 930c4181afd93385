"""ImageNet-C-bar's overlays (Mintun, Kirillov & Xie 2021): checkerboard cut-outs and starbursts.

Each op draws, from the clip's Generator, the reference's parameters in size-free form (fractions
of the frame, angles, ``RandomState`` seeds): one draw per clip (the same pattern on every frame)
or, with ``per_frame``, one per frame (arrays of T rows). A frame's layer (a cut-out mask, the
bursts' blend weights) is built on the host in float64 from its row and the frame's size, the
reference's per-pixel maths vectorised; :mod:`.torch_cbar_overlays` composites the same layers.
Lengths given as a fraction of the reference's ``im_size`` scale with ``side = min(H, W)``;
positions scale per axis. Coordinates are float64 and seeds int64: nothing overflows int32.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

from .cbar_draws import by_draw_row, check_params, draw_count, groups, row_of, seeds
from .reference_forms import reference_form
from .twins import numpy_kernel

CUT_LEVEL = 128                   # checkerboard: a cut cell's grey
SCALES = (0.1, 0.25)              # checkerboard: a cell's side as a fraction of side
BURSTS = 5                        # sparkles: bursts per frame, each onto the previous result
SPARKLE_AMOUNT = 50               # sparkles: the reference's `amounts` (the falloff's exponent 1)
COLOR = (255, 255, 255)           # the bursts' colour, the reference's `color`
RANDOMNESS = 25                   # ray lengths: radius · (1 + RANDOMNESS/100 · N(0, 1))
RAYS = (50, 200)                  # rays per burst, an integer in [50, 200)
INVERSE_CENTRE = (0.25, 0.75)     # inverse_sparkles: the centre's fraction of each axis
INVERSE_RADIUS = 0.25             # inverse_sparkles: the burst's radius as a fraction of side


# ------------------------------------------------------------------------------------ draws
def draw_checkerboard(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The reference's draw: angle in [0, 2π), the cell's fraction of side, the grid's seed."""
    check_params("checkerboard_cutout", params)
    k = draw_count(n_frames, params)
    angle = rng.uniform(0, 2 * np.pi, k)
    scale = rng.uniform(*SCALES, k)
    return {"angle": angle, "scale": scale, "seed": seeds(rng, k)}


def draw_sparkles(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Five burst centres (y, x fractions of the frame), the ray lengths' seed, rays per burst."""
    check_params("sparkles", params)
    k = draw_count(n_frames, params)
    centres = rng.uniform(0, 1, (k, BURSTS, 2))
    return {"centres": centres, "seed": seeds(rng, k), "rays": rng.integers(*RAYS, (k, BURSTS))}


def draw_inverse_sparkles(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """One burst's centre (y, x fractions in [0.25, 0.75)), the ray lengths' seed, its rays."""
    check_params("inverse_sparkles", params)
    k = draw_count(n_frames, params)
    centre = rng.uniform(*INVERSE_CENTRE, (k, 2))
    return {"centre": centre, "seed": seeds(rng, k), "rays": rng.integers(*RAYS, k)}


# ------------------------------------------------------------------------------ checkerboard
def cell_side(scale: float, side: int) -> float:
    """A checker cell's side in px: the reference's max(scale · im_size, 1)."""
    return max(float(scale) * side, 1.0)


@lru_cache(maxsize=8)
def cutout_mask(angle: float, scale: float, seed: int, fraction: float, h: int, w: int) -> np.ndarray:
    """(h, w) bool, True where the picture is cut to grey (read-only, cached per clip draw).

    Pixel (y, x) lies in cell (⌊nx⌋, ⌊ny⌋) of a grid rotated by ``angle``, nx = (y·cos + x·sin)/s,
    ny = (x·cos - y·sin)/s; it is cut where the cell's parities agree and the reference's grid
    (RandomState(seed) uniforms below ``fraction``, 4·side // s cells a side) says so. The grid
    is read at int(nx), int(ny) (truncated) modulo its size: on a square frame that is the
    reference's own negative-index wrap-around; beyond the grid (non-square frames) it repeats."""
    s, side = cell_side(scale, min(h, w)), min(h, w)
    n = int(4 * side // s)
    grid = np.random.RandomState(seed).uniform(size=(n, n)) < fraction
    y, x = np.arange(h, dtype=np.float64)[:, None], np.arange(w, dtype=np.float64)[None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    nx, ny = (cos * y + sin * x) / s, (-sin * y + cos * x) / s
    same = np.remainder(nx, 2).astype(np.int64) == np.remainder(ny, 2).astype(np.int64)
    cut = same & grid[np.trunc(nx).astype(np.int64) % n, np.trunc(ny).astype(np.int64) % n]
    cut.setflags(write=False)
    return cut


def checkerboard_mask(drawn: Mapping[str, np.ndarray], params: Mapping[str, Any], row: int, h: int, w: int) -> np.ndarray:
    """Draw row ``row``'s cut-out mask for h x w frames."""
    return cutout_mask(float(drawn["angle"][row]), float(drawn["scale"][row]), int(drawn["seed"][row]),
                       float(params["fraction"]), h, w)


@numpy_kernel("checkerboard_cutout")
def checkerboard_frames(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, np.ndarray],
                        params: Mapping[str, Any]) -> np.ndarray:
    """The frames with the cut cells set to grey 128 (one mask per draw row, built once)."""
    _, h, w, _ = frames.shape
    out = frames.copy()
    for row, at in groups(ids, params):
        out[at][:, checkerboard_mask(drawn, params, row, h, w)] = CUT_LEVEL
    return out


@reference_form("checkerboard_cutout")
def checkerboard_reference(drawn: Mapping[str, Any], params: Mapping[str, Any], t: int, side: int) -> dict[str, Any]:
    row = row_of(params, t)
    s = cell_side(drawn["scale"][row], side)
    return {"scales": (s, s), "angle": float(drawn["angle"][row]), "fraction": float(params["fraction"]),
            "seed": int(drawn["seed"][row])}


# ------------------------------------------------------------------------------ starbursts
def ray_lengths(random_state: np.random.RandomState, radius: float, rays: int, at_least: float | None) -> np.ndarray:
    """``rays`` lengths radius · (1 + RANDOMNESS/100 · N(0, 1)) from the reference's RandomState,
    in its order; sparkles keep them at least 1 px (``at_least``), inverse_sparkles do not."""
    lengths = radius + RANDOMNESS / 100.0 * radius * random_state.randn(rays)
    return lengths if at_least is None else np.maximum(at_least, lengths)


def starburst(h: int, w: int, centre: tuple[float, float], lengths: np.ndarray, amount: float) -> np.ndarray:
    """(h, w) float64 in [0, 1]: one starburst's weight at every pixel, the reference's kernel
    vectorised. From the centre (y, x) a pixel lies at distance r and angle arctan2(dx, dy); its
    ray length L is interpolated between the two nearest of the rays spread evenly over the circle
    (fraction f between them); weight = (1 - (f - 1/2)²) · (L² / (r² + 1e-4))^((100 - amount)/50)."""
    rays = len(lengths)
    dy = np.arange(h, dtype=np.float64)[:, None] - centre[0]
    dx = np.arange(w, dtype=np.float64)[None, :] - centre[1]
    dist = np.sqrt(dy * dy + dx * dx)
    d = (np.arctan2(dx, dy) + np.pi) / (2 * np.pi) * rays
    i = d.astype(np.int64)
    f = d - i
    near = lengths[i % rays]
    length = near + f * (lengths[(i + 1) % rays] - near)
    g = (length ** 2 / (dist ** 2 + 1e-4)) ** ((100 - amount) / 50.0)
    return np.clip((1 - (f - 0.5) ** 2) * g, 0, 1)


@lru_cache(maxsize=8)
def burst_weights(centres: tuple[tuple[float, float], ...], rays: tuple[int, ...], seed: int, radius: float,
                  amount: float, inverse: bool, h: int, w: int) -> np.ndarray:
    """(bursts, h, w) float64 (read-only, cached per clip draw): each burst's weight towards white,
    applied in order. Sparkles: the starburst itself (rays at least 1 px). inverse_sparkles:
    1 - the starburst, so white everywhere but at the burst (the reference's
    ``color + f·(value - color)``)."""
    random_state = np.random.RandomState(seed)
    made = []
    for centre, n in zip(centres, rays):
        lengths = ray_lengths(random_state, radius, n, None if inverse else 1.0)
        burst = starburst(h, w, centre, lengths, amount)
        made.append(1 - burst if inverse else burst)
    weights = np.stack(made)
    weights.setflags(write=False)
    return weights


def sparkle_weights(name: str, drawn: Mapping[str, np.ndarray], params: Mapping[str, Any], row: int,
                    h: int, w: int) -> np.ndarray:
    """Draw row ``row``'s burst weights for h x w frames: centres scale per axis, radii with the
    shorter side."""
    side, scale = min(h, w), np.array([h, w], np.float64)
    if name == "sparkles":
        centres = drawn["centres"][row] * scale
        return burst_weights(tuple(map(tuple, centres.tolist())), tuple(drawn["rays"][row].tolist()),
                             int(drawn["seed"][row]), float(params["radius"]) * side, float(SPARKLE_AMOUNT),
                             False, h, w)
    centre = drawn["centre"][row] * scale
    return burst_weights((tuple(centre.tolist()),), (int(drawn["rays"][row]),), int(drawn["seed"][row]),
                         INVERSE_RADIUS * side, float(params["amount"]), True, h, w)


def blend_bursts(frames: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """uint8 frames blended towards white by each burst in turn, v + w·(255 - v): float32 values
    into every burst, float64 arithmetic (the reference's), rounded to the nearest level."""
    out = frames.astype(np.float32)
    for k, weight in enumerate(weights):
        blended = out + weight[..., None] * (255.0 - out)
        out = blended if k == len(weights) - 1 else blended.astype(np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def sparkle_kernel(name: str) -> Callable[..., np.ndarray]:
    def kernel(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, np.ndarray],
               params: Mapping[str, Any]) -> np.ndarray:
        return by_draw_row(frames, ids, params, lambda row, h, w: sparkle_weights(name, drawn, params, row, h, w),
                           blend_bursts)
    kernel.__doc__ = f"{name}: the frames blended towards white by the draw's bursts."
    kernel.__qualname__ = kernel.__name__ = f"{name}_frames"
    return kernel


numpy_kernel("sparkles")(sparkle_kernel("sparkles"))
numpy_kernel("inverse_sparkles")(sparkle_kernel("inverse_sparkles"))


@reference_form("sparkles")
def sparkles_reference(drawn: Mapping[str, Any], params: Mapping[str, Any], t: int, side: int) -> dict[str, Any]:
    row = row_of(params, t)
    return {"centers": drawn["centres"][row] * side, "radii": np.full(BURSTS, float(params["radius"]) * side),
            "nrays": drawn["rays"][row].copy(), "amounts": np.full(BURSTS, SPARKLE_AMOUNT),
            "color": np.array(COLOR), "randomness": RANDOMNESS, "seed": int(drawn["seed"][row])}


@reference_form("inverse_sparkles")
def inverse_sparkles_reference(drawn: Mapping[str, Any], params: Mapping[str, Any], t: int, side: int) -> dict[str, Any]:
    row = row_of(params, t)
    return {"center": drawn["centre"][row] * side, "radius": INVERSE_RADIUS * side,
            "rays": int(drawn["rays"][row]), "amount": float(params["amount"]), "color": np.array(COLOR),
            "randomness": RANDOMNESS, "seed": int(drawn["seed"][row])}
