"""Visual perturbations: weather (fog, frost, snow, spatter), after ImageNet-C (imagecorruptions 1.1.2).

Each op lays a random layer over the frames (a plasma fog field, a frost texture, snow flakes,
water or mud drops), generated on the host by :mod:`.weather_layers` from a key drawn once per
clip, and composites it per frame (numpy here, torch in :mod:`.torch_weather`).

For video the layer is drawn once per clip and moves coherently: frame t shows a window of one
larger layer at an integer offset ``round(t·v)``, so fog drifts, snow falls and drops run down the
lens at a constant velocity v (frost stays put, as ice on a lens does). The image suite draws
every image anew; ``per_frame=True`` (see :func:`perturb.video.apply`) does that for every frame:
an independent layer per frame, each one the image recipe at the frame's size. Either way a
frame's layer is a function of (key, frame index, frame size), so any subset of frames renders
as in the whole clip.
"""
from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Callable, Mapping

import cv2
import numpy as np

from .opencv_frames import per_frame_into, scratch
from .twins import register_kernel
from .weather_layers import fog_layer, frost_layer, next_power_of_2, snow_layer, spatter_layer

Layer = Callable[[np.random.Generator, int, int, Mapping[str, Any], float], np.ndarray]
LAYERS: dict[str, Layer] = {"fog": fog_layer, "frost": frost_layer, "snow": snow_layer,
                            "spatter": spatter_layer}
# Direction of travel (degrees, image axes: x right, y down) drawn uniformly in this range;
# snow falls along its streak angle instead (drawn in SNOW_ANGLES, as the reference's blur).
DRIFT_DIRECTIONS = {"fog": (0.0, 360.0), "spatter": (45.0, 135.0)}
SNOW_ANGLES = (-135.0, -45.0)
KEY_MAX = 2**63
# Layers that tile seamlessly (fog's diamond-square map is a torus): the map side for h x w frames,
# the image recipe's; a drifting window wraps around it instead of reading a larger layer.
TORUS = {"fog": lambda h, w: next_power_of_2(max(h, w))}
# Parameters that must be > 0 (the rest may be 0).
POSITIVE = {"fog": ("strength", "decay", "wibble"), "frost": ("scale",),
            "snow": ("std", "zoom", "radius", "sigma"), "spatter": ("std", "sigma", "smear")}


def check_params(name: str, params: Mapping[str, Any]) -> None:
    """A ValueError naming the parameter when a weather op's parameters are out of range."""
    for key, value in params.items():
        if key == "per_frame":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"per_frame must be True or False; got {value!r}")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value) or value < 0:
            raise ValueError(f"{name}: expected {key} to be a finite number >= 0; got {value!r}")
        if key in POSITIVE[name] and value <= 0:
            raise ValueError(f"{name}: expected {key} > 0; got {value!r}")


def drift_starts(velocity: np.ndarray, n_frames: int) -> np.ndarray:
    """Window corners (y, x) in the clip's layer for frames 0..T-1 under drift ``velocity``
    (vx, vy px/frame): content moves by round(t·v) at frame t. Non-negative, min 0 per axis."""
    off = np.rint(np.arange(n_frames)[:, None] * np.asarray(velocity, np.float64)[None, ::-1])
    return (off.max(axis=0) - off).astype(np.int64)


def draw_weather(name: str) -> Callable[[np.random.Generator, int, Mapping[str, Any]], dict[str, np.ndarray]]:
    """The drawer of op ``name``: one layer key, per-frame window corners, snow's streak angles."""
    def draw(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
        check_params(name, params)
        per_frame = bool(params.get("per_frame", False))
        drawn = {"key": np.array(int(rng.integers(0, KEY_MAX)), dtype=np.int64)}
        angle = 0.0
        if name == "snow":
            angles = rng.uniform(*SNOW_ANGLES, size=n_frames if per_frame else 1)
            drawn["angles"] = np.broadcast_to(angles, (n_frames,)).copy()
            angle = float(angles[0])
            speed, heading = params["fall"], angle + 180.0        # falls down along its streaks
        elif name in DRIFT_DIRECTIONS:
            heading = float(rng.uniform(*DRIFT_DIRECTIONS[name]))
            speed = params["drift"]
        else:
            speed, heading = 0.0, 0.0
        if per_frame:
            speed = 0.0
        theta = np.deg2rad(heading)
        drawn["starts"] = drift_starts((speed * np.cos(theta), speed * np.sin(theta)), n_frames)
        return drawn
    return draw


def _frozen(params: Mapping[str, Any]) -> tuple:
    return tuple(sorted((k, v) for k, v in params.items() if k != "per_frame"))


@lru_cache(maxsize=4)
def _clip_layer(name: str, key: int, h: int, w: int, frozen: tuple, angle: float) -> np.ndarray:
    """The whole clip's layer (read-only), cached: rendering frames in groups draws it once."""
    layer = LAYERS[name](np.random.default_rng([key]), h, w, dict(frozen), angle)
    layer.setflags(write=False)
    return layer


@lru_cache(maxsize=2)
def _tiled_torus(name: str, key: int, side: int, frozen: tuple) -> np.ndarray:
    """A periodic layer repeated 2 x 2, so every window of up to side x side is a plain slice."""
    tiled = np.tile(_clip_layer(name, key, side, side, frozen, 0.0), (2, 2))
    tiled.setflags(write=False)
    return tiled


@lru_cache(maxsize=2)
def _clip_planes(name: str, key: int, h: int, w: int, frozen: tuple, angle: float,
                 form: Callable[[np.ndarray], tuple]) -> tuple:
    """The clip's layer laid out by ``form`` (read-only planes), cached beside the layer."""
    planes = form(_clip_layer(name, key, h, w, frozen, angle))
    for plane in planes:
        if plane is not None:
            plane.setflags(write=False)
    return planes


def frame_layers(name: str, drawn: Mapping[str, np.ndarray], params: Mapping[str, Any],
                 ids: np.ndarray, h: int, w: int, form: Callable[[np.ndarray], tuple] | None = None) -> list:
    """The layer of each output frame ``ids`` for frames of h x w pixels (host float32 arrays).

    With ``form`` (a layer -> tuple of planes), each frame gets the windows of ``form(layer)``
    instead, formed once per clip layer: a kernel's operands laid out once, not per frame."""
    key, frozen = int(drawn["key"]), _frozen(params)
    angles = drawn.get("angles")
    if params.get("per_frame", False):
        made = [LAYERS[name](np.random.default_rng([key, int(t)]), h, w, dict(frozen),
                             0.0 if angles is None else float(angles[t])) for t in ids]
        return made if form is None else [form(layer) for layer in made]
    starts = drawn["starts"]
    if name in TORUS:              # a periodic field: windows wrap around one map of its own size
        side = TORUS[name](h, w)
        tiled = _tiled_torus(name, key, side, frozen)
        made = [tiled[y % side:y % side + h, x % side:x % side + w] for y, x in starts[ids].tolist()]
        return made if form is None else [form(layer) for layer in made]
    span = starts.max(axis=0)
    args = (name, key, h + int(span[0]), w + int(span[1]), frozen, 0.0 if angles is None else float(angles[0]))
    if form is None:
        layer = _clip_layer(*args)
        return [layer[y:y + h, x:x + w] for y, x in starts[ids].tolist()]
    planes = _clip_planes(*args, form)
    return [tuple(None if p is None else p[y:y + h, x:x + w] for p in planes) for y, x in starts[ids].tolist()]


# ------------------------------------------------------------------------- numpy composites
def composite_fog(frame: np.ndarray, layer: np.ndarray, params: Mapping[str, Any],
                  dst: np.ndarray | None = None) -> np.ndarray:
    """(x + s·fog) · max / (max + s) on [0, 1] values, max the frame's brightest value; on levels
    that is x·k + fog·255·s·k with k = max / (max + s), one OpenCV weighted sum."""
    s = float(params["strength"])
    peak = float(frame.max()) / 255
    k = peak / (peak + s)
    return cv2.addWeighted(frame.astype(np.float32), k, cv2.merge([layer] * 3), 255 * s * k, 0.0,
                           dst=dst, dtype=cv2.CV_8U)


def composite_frost(frame: np.ndarray, layer: np.ndarray, params: Mapping[str, Any],
                    dst: np.ndarray | None = None) -> np.ndarray:
    """scale·x + frost·texture on 0..255 levels."""
    return cv2.addWeighted(frame.astype(np.float32), float(params["scale"]), layer,
                           float(params["frost"]), 0.0, dst=dst, dtype=cv2.CV_8U)


GRAY_WEIGHTS = np.array([0.299, 0.587, 0.114], np.float32)      # OpenCV's RGB -> gray


def composite_snow(frame: np.ndarray, layer: np.ndarray, params: Mapping[str, Any],
                   dst: np.ndarray | None = None) -> np.ndarray:
    """Greyed-bright blend b·x + (1-b)·max(x, 1.5·gray + 0.5), plus the flakes, on [0, 1], in
    float32 in that order, then x 255 rounded to nearest and saturated; into ``dst`` when given.
    Work buffers are the thread's own (:func:`scratch`) and the planes three-channel OpenCV
    arrays, not numpy broadcasts: both cost more than the arithmetic at this size."""
    h, w, _ = frame.shape
    x = np.divide(frame, np.float32(255), out=scratch("snow.x", (h, w, 3), np.float32))
    b = np.float32(params["blend"])
    gray = np.matmul(x, GRAY_WEIGHTS, out=scratch("snow.gray", (h, w), np.float32))
    gray *= np.float32(1.5)
    gray += np.float32(0.5)
    other = cv2.merge([gray] * 3, dst=scratch("snow.other", (h, w, 3), np.float32))
    cv2.max(x, other, dst=other)
    x *= b
    other *= 1 - b
    x += other
    cv2.add(x, cv2.merge([layer] * 3, dst=other), dst=x)
    return cv2.convertScaleAbs(x, dst=dst, alpha=255.0)       # every value is >= 0


def spatter_planes(layer: np.ndarray, mud: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
    """Spatter's (h, w, 4) layer as OpenCV operands: the keep factor on three channels (None for
    water, whose keep is exactly 1) and the levels added, each with contiguous rows."""
    keep = np.repeat(layer[..., :1], 3, axis=2) if mud else None
    return keep, np.ascontiguousarray(layer[..., 1:])


FORMS = {"spatter": lambda params: _SPATTER_FORMS[bool(params.get("mud", True))]}
_SPATTER_FORMS = {True: partial(spatter_planes, mud=True), False: partial(spatter_planes, mud=False)}


def composite_spatter(frame: np.ndarray, layer: np.ndarray | tuple, params: Mapping[str, Any],
                      dst: np.ndarray | None = None) -> np.ndarray:
    """x·keep + add on 0..255 levels (water: keep 1; mud: keep 1 - mask), float32 sums rounded
    to nearest and saturated by OpenCV; water's keep is exactly 1, so its product is skipped.
    ``layer`` is the (h, w, 4) layer or its :func:`spatter_planes` (windows laid out per clip).
    (Both terms float32: OpenCV adds uint8 to float32 in double, which rounds ties otherwise;
    its uint8 x float32 product is exact in double, so rounding it once to float32 is numpy's.)"""
    mud = bool(params.get("mud", True))               # a layer of unknown kind keeps its product
    keep, add = spatter_planes(layer, mud) if isinstance(layer, np.ndarray) else layer
    x = scratch("spatter.x", frame.shape, np.float32)
    if keep is None:
        np.copyto(x, frame)
    else:
        cv2.multiply(frame, keep, dst=x, dtype=cv2.CV_32F)
    return cv2.add(x, add, dst=dst, dtype=cv2.CV_8U)


COMPOSITES = {"fog": composite_fog, "frost": composite_frost, "snow": composite_snow,
              "spatter": composite_spatter}


def composited_frames(name: str):
    """The numpy kernel of op ``name``: each frame composited with its layer."""
    def kernel(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
        _, h, w, _ = frames.shape
        form = FORMS[name](params) if name in FORMS else None
        layers = frame_layers(name, drawn, params, ids, h, w, form)
        return per_frame_into(frames, lambda frame, i, dst: COMPOSITES[name](frame, layers[i], params, dst))
    kernel.__name__ = f"{name}_frames"
    return kernel


for _name in COMPOSITES:
    register_kernel(_name, "numpy", composited_frames(_name))
