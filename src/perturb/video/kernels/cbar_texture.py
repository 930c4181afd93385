"""ImageNet-C-bar's texture ops: a procedural field laid over every frame.

Each op draws its reference's parameters from the clip's Generator (size-free: fractions of the
frame, angles, RandomState seeds), builds its field on the host from them (:mod:`.cbar_fields`)
and composites ``out = round(clip(x·scale + add))`` per frame, where the layer (scale, add) is
float32: numpy here, torch in :mod:`.torch_cbar_texture`. By default one draw serves the whole
clip (the same pattern on every frame, its layer built once); ``per_frame=True`` draws anew for
every frame. Frame t's layer is a function of its draw and the frame size only, so any subset of
frames renders as in the whole clip. :func:`reference` gives a draw in the reference's terms.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

from . import cbar_fields as fields
from .cbar_draws import check_params, draw_count, seeds
from .reference_forms import reference_form
from .twins import register_kernel

PERLIN_TURBULENCE, PERLIN_GAIN, PERLIN_BIAS = 16.0, 0.5, 0.5     # PerlinNoise's constants
# Each op's severity parameter and its allowed range (inclusive).
PARAM_RANGES: dict[str, tuple[str, float, float]] = {
    "single_frequency_greyscale": ("intensity", 0.0, np.inf),
    "cocentric_sine_waves": ("intensity", 0.0, np.inf),
    "plasma_noise": ("intensity", 0.0, 255.0),
    "perlin_noise": ("alpha", 0.0, 1.0),
    "brownish_noise": ("intensity", 0.0, np.inf),
    "blue_noise_sample": ("threshold", -np.inf, np.inf),
}
Layer = tuple[np.ndarray | None, np.ndarray | None]          # (scale, add), float32, or None: 1, 0


# ------------------------------------------------------------------------------------ draws
def _single_frequency(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """freq_mag ~ U(-pi, pi), freq_2 ~ U(-|freq_mag|, |freq_mag|), the pair in random order;
    phase ~ U(0, 2pi). Frequencies are radians per pixel, as in the reference."""
    mag = rng.uniform(-np.pi, np.pi, n)
    other = rng.uniform(-np.abs(mag), np.abs(mag))
    swap = rng.integers(0, 2, n).astype(bool)
    freq = np.where(swap[:, None], np.stack([other, mag], 1), np.stack([mag, other], 1))
    return {"freq": freq, "phase": rng.uniform(0, 2 * np.pi, n)}


def _cocentric(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """The centre (x, y) as fractions of the frame's width and height, freq ~ U(0, 10), the
    amplitude and ring width as fractions of its shorter side, each ~ U(0, 1/10)."""
    return {"offset": rng.uniform(0, 1, (n, 2)), "freq": rng.uniform(0, 10, n),
            "amplitude": rng.uniform(0, 0.1, n), "ring_width": rng.uniform(0, 0.1, n)}


def _plasma(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """time ~ U(0, 6pi), iterations in {4, 5, 6}, sharpness ~ U(0.5, 1), scale ~ U(0.075, 0.2)
    as a fraction of the shorter side."""
    return {"time": rng.uniform(0, 6 * np.pi, n), "iterations": rng.integers(4, 7, n),
            "sharpness": rng.uniform(0.5, 1.0, n), "scale": rng.uniform(0.075, 0.2, n)}


def _seeded(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """A RandomState seed in [0, 2**32), as the reference draws one for its field."""
    return {"seed": seeds(rng, n)}


DRAWS: dict[str, Callable[[np.random.Generator, int], dict[str, np.ndarray]]] = {
    "single_frequency_greyscale": _single_frequency, "cocentric_sine_waves": _cocentric,
    "plasma_noise": _plasma, "perlin_noise": _seeded, "brownish_noise": _seeded,
    "blue_noise_sample": _seeded,
}


def draw_texture(name: str) -> Callable[[np.random.Generator, int, Mapping[str, Any]], dict[str, np.ndarray]]:
    """The drawer of op ``name``: arrays with one row per frame, all rows the same (one draw)
    unless ``per_frame``."""
    def draw(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
        key, low, high = PARAM_RANGES[name]
        check_params(name, params, {key: (low, high)})
        count = draw_count(n_frames, params)
        return {k: np.broadcast_to(v, (n_frames, *v.shape[1:])).copy() for k, v in DRAWS[name](rng, count).items()}
    return draw


def frame_draw(drawn: Mapping[str, np.ndarray], t: int) -> dict[str, Any]:
    """Frame t's draw: Python floats and ints, or a float array for a vector."""
    return {k: (v[t].item() if v[t].ndim == 0 else v[t].astype(np.float64)) for k, v in drawn.items()}


# ----------------------------------------------------------------------------------- layers
def _grey(field: np.ndarray, gain: float) -> np.ndarray:
    return (gain * field)[..., None]


def _layer_single_frequency(d: Mapping[str, Any], p: Mapping[str, Any], h: int, w: int) -> Layer:
    return None, _grey(fields.single_frequency(h, w, d["freq"], d["phase"]), p["intensity"])


def _layer_cocentric(d: Mapping[str, Any], p: Mapping[str, Any], h: int, w: int) -> Layer:
    side = min(h, w)
    rings = fields.cocentric_rings(h, w, d["offset"][0] * w, d["offset"][1] * h, d["freq"],
                                   d["amplitude"] * side, d["ring_width"] * side)
    return None, _grey(rings, p["intensity"])


def _layer_plasma(d: Mapping[str, Any], p: Mapping[str, Any], h: int, w: int) -> Layer:
    intensity = p["intensity"]
    field = fields.plasma(h, w, d["time"], d["iterations"], d["sharpness"], d["scale"] * min(h, w))
    return np.array(1 - intensity / 255), intensity * field


def _layer_perlin(d: Mapping[str, Any], p: Mapping[str, Any], h: int, w: int) -> Layer:
    turbulence = fields.perlin_turbulence(h, w, d["seed"], 32 * min(h, w) / 224, PERLIN_TURBULENCE)
    alpha = p["alpha"]
    return np.array(1 - alpha), _grey(np.clip(PERLIN_GAIN * turbulence + PERLIN_BIAS, 0, 1), 255 * alpha)


def _layer_brownish(d: Mapping[str, Any], p: Mapping[str, Any], h: int, w: int) -> Layer:
    return None, p["intensity"] * fields.brownish_noise(h, w, d["seed"])


def _layer_blue(d: Mapping[str, Any], p: Mapping[str, Any], h: int, w: int) -> Layer:
    return (fields.blue_noise(h, w, d["seed"]) > p["threshold"])[..., None], None


LAYERS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], int, int], Layer]] = {
    "single_frequency_greyscale": _layer_single_frequency, "cocentric_sine_waves": _layer_cocentric,
    "plasma_noise": _layer_plasma, "perlin_noise": _layer_perlin, "brownish_noise": _layer_brownish,
    "blue_noise_sample": _layer_blue,
}


@lru_cache(maxsize=8)
def _layer(name: str, row: tuple, h: int, w: int, frozen: tuple) -> Layer:
    """One frame's layer as read-only float32 arrays, cached: a clip's frames share it."""
    made = LAYERS[name]({k: (np.array(v) if isinstance(v, tuple) else v) for k, v in row},
                        dict(frozen), h, w)
    out = tuple(None if a is None else np.asarray(a, np.float32) for a in made)
    for a in out:
        if a is not None:
            a.setflags(write=False)
    return out


def frame_layers(name: str, drawn: Mapping[str, np.ndarray], params: Mapping[str, Any],
                 ids: np.ndarray, h: int, w: int) -> list[tuple[Layer, np.ndarray]]:
    """The layers of output frames ``ids`` for h x w frames, each once with the positions (in
    ``ids``) of the frames it goes on: one group for a clip-wide draw, one per frame otherwise."""
    frozen = tuple(sorted((k, v) for k, v in params.items() if k not in ("per_frame", "level")))
    groups: dict[tuple, list[int]] = {}
    for pos, t in enumerate(np.asarray(ids).tolist()):
        row = tuple(sorted((k, tuple(v.tolist()) if isinstance(v, np.ndarray) else v)
                           for k, v in frame_draw(drawn, t).items()))
        groups.setdefault(row, []).append(pos)
    return [(_layer(name, row, h, w, frozen), np.array(pos)) for row, pos in groups.items()]


def composite(x: np.ndarray, layer: Layer) -> np.ndarray:
    """x·scale + add on float32 levels (in place), clipped and rounded to uint8."""
    scale, add = layer
    if scale is not None:
        x *= scale
    if add is not None:
        x += add
    np.clip(x, 0, 255, out=x)
    return np.rint(x, out=x).astype(np.uint8)


def texture_frames(name: str):
    """The numpy kernel of op ``name``: each frame composited with its layer."""
    def kernel(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
        _, h, w, _ = frames.shape
        groups = frame_layers(name, drawn, params, ids, h, w)
        if len(groups) == 1:                              # one draw for the clip: no gather
            return composite(frames.astype(np.float32), groups[0][0])
        out = np.empty_like(frames)
        for layer, pos in groups:
            out[pos] = composite(frames[pos].astype(np.float32), layer)
        return out
    kernel.__name__ = f"{name}_frames"
    return kernel


for _name in LAYERS:
    register_kernel(_name, "numpy", texture_frames(_name))


# -------------------------------------------------------------------------- reference forms
@reference_form("single_frequency_greyscale")
def _ref_single_frequency(drawn, params, t: int, side: int) -> dict[str, Any]:
    d = frame_draw(drawn, t)
    return {"freq": d["freq"], "phase": d["phase"], "intensity": params["intensity"]}


@reference_form("cocentric_sine_waves")
def _ref_cocentric(drawn, params, t: int, side: int) -> dict[str, Any]:
    d = frame_draw(drawn, t)
    return {"offset": d["offset"] * side, "freq": d["freq"], "amplitude": d["amplitude"] * side,
            "ring_width": d["ring_width"] * side, "intensity": [params["intensity"]] * 3}


@reference_form("plasma_noise")
def _ref_plasma(drawn, params, t: int, side: int) -> dict[str, Any]:
    d = frame_draw(drawn, t)
    return {"time": d["time"], "iterations": d["iterations"], "sharpness": d["sharpness"],
            "scale": d["scale"] * side, "intensity": params["intensity"]}


@reference_form("perlin_noise")
def _ref_perlin(drawn, params, t: int, side: int) -> dict[str, Any]:
    return {"m": np.eye(2) / (32 * side / 224), "turbulence": PERLIN_TURBULENCE,
            "seed": frame_draw(drawn, t)["seed"], "gain": PERLIN_GAIN, "bias": PERLIN_BIAS,
            "alpha": params["alpha"]}


@reference_form("brownish_noise")
def _ref_brownish(drawn, params, t: int, side: int) -> dict[str, Any]:
    return {"seed": frame_draw(drawn, t)["seed"], "intensity": params["intensity"]}


@reference_form("blue_noise_sample")
def _ref_blue(drawn, params, t: int, side: int) -> dict[str, Any]:
    return {"seed": frame_draw(drawn, t)["seed"], "threshold": params["threshold"]}
