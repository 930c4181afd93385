"""What ImageNet-C-bar's ops share in drawing: the reference's ``RandomState`` seeds, one draw per
clip or one per frame (``per_frame``), and the check of their parameters."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

import numpy as np

SEED_HIGH = 2 ** 32                  # the reference's RandomState seeds: integers in [0, 2**32)
FRAMES_AT_ONCE = 8                   # frames a layer is applied to at once: float64 temporaries stay small


def seeds(rng: np.random.Generator, k: int) -> np.ndarray:
    """k seeds for the reference's RandomState, as its randint(0, 2**32), held as int64."""
    return rng.integers(0, SEED_HIGH, size=k, dtype=np.int64)


def draw_count(n_frames: int, params: Mapping[str, Any]) -> int:
    """How many independent draws a clip gets: one per frame with ``per_frame``, else one."""
    return n_frames if params.get("per_frame", False) else 1


def row_of(params: Mapping[str, Any], t: int) -> int:
    """The draw row of frame ``t``: its own with ``per_frame``, else the clip's one."""
    return t if params.get("per_frame", False) else 0


def groups(ids: np.ndarray, params: Mapping[str, Any]) -> Iterator[tuple[int, slice]]:
    """(draw row, positions in ``ids``) of the frames that share a layer: every frame shares row 0
    by default; with ``per_frame`` each frame has its own row (its index). Positions are slices,
    so ``frames[at]`` is a view."""
    if not params.get("per_frame", False):
        yield 0, slice(None)
        return
    for position, t in enumerate(ids.tolist()):
        yield int(t), slice(position, position + 1)


def by_draw_row(frames: np.ndarray, ids: np.ndarray, params: Mapping[str, Any],
                layer_of: Callable[[int, int, int], Any], apply: Callable[[np.ndarray, Any], np.ndarray]
                ) -> np.ndarray:
    """uint8 (N, H, W, 3) output frames ``ids``: each draw row's layer built once
    (``layer_of(row, h, w)``) and applied to its frames a few at a time (``apply(frames, layer)``)."""
    _, h, w, _ = frames.shape
    out = np.empty_like(frames)
    for row, at in groups(ids, params):
        layer = layer_of(row, h, w)
        part, dest = frames[at], out[at]
        for a in range(0, len(part), FRAMES_AT_ONCE):
            dest[a:a + FRAMES_AT_ONCE] = apply(part[a:a + FRAMES_AT_ONCE], layer)
    return out


def check_params(name: str, params: Mapping[str, Any],
                 ranges: Mapping[str, tuple[float, float]] | None = None) -> None:
    """A ValueError naming the parameter when a C-bar op's parameters are not finite numbers (in
    ``ranges[key]``, inclusive, where given) or ``per_frame`` is not a bool."""
    for key, value in params.items():
        if key == "per_frame":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"per_frame must be True or False; got {value!r}")
            continue
        low, high = (ranges or {}).get(key, (-np.inf, np.inf))
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value) or not low <= value <= high:
            where = f" in [{low}, {high}]" if ranges and key in ranges else ""
            raise ValueError(f"{name}: expected {key} to be a finite number{where}; got {value!r}")
