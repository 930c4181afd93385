"""Visual perturbation: temporal_blur, motion blur over time (Yi et al. 2021's Kinetics-C/SSv2-C).

Output frame t is the mean of the 2c input frames t-c .. t+c-1 (the reference's window: c
before, c-1 after), rounded to the nearest level (half up). Frames past the clip's ends are
the end frames repeated, so the clip keeps its T frames (the reference drops the first and
last c). Its renderer reads that window of neighbours (``reads="window"``); sums are exact
integers in numpy and torch alike, so numpy, torch-CPU and CUDA give the same pixels.
"""
from __future__ import annotations

from typing import Any, Mapping

import cv2
import numpy as np

from .temporal import window_sources
from .twins import numpy_kernel


def check_c(c: Any) -> int:
    """The half-window c as an int >= 1, or a ValueError naming it."""
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
        raise ValueError(f"temporal_blur: expected c to be an int >= 1 (the mean spans 2c frames); got {c!r}")
    return int(c)


def draw_window(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Nothing random: the window (c before, c - 1 after) and the clip's length, for the render."""
    c = check_c(params["c"])
    return {"window": np.array([c, c - 1], np.int64), "n_frames": np.array(n_frames, np.int64)}


def window_positions(ids: np.ndarray, drawn: Mapping[str, np.ndarray]) -> np.ndarray:
    """(N, 2c) positions, in the sorted source frames of ``ids``, of each output frame's window."""
    frames = window_sources(ids, drawn["window"], int(drawn["n_frames"]))
    return np.searchsorted(np.unique(frames), frames)


@numpy_kernel("temporal_blur")
def temporal_blur_frames(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, np.ndarray],
                         params: Mapping[str, Any]) -> np.ndarray:
    """Window means by running sums: a consecutive output frame adds one frame and drops one."""
    c = check_c(params["c"])
    pos = window_positions(ids, drawn)
    acc = np.zeros(frames.shape[1:], np.uint16 if 2 * c * 255 <= np.iinfo(np.uint16).max else np.int32)
    out = np.empty((len(ids), *frames.shape[1:]), np.uint8)
    for i in range(len(ids)):
        if i and ids[i] == ids[i - 1] + 1:
            np.add(acc, frames[pos[i, -1]], out=acc)
            np.subtract(acc, frames[pos[i - 1, 0]], out=acc)
        else:
            acc[...] = 0
            for p in pos[i]:
                np.add(acc, frames[p], out=acc)
        # round(s / 2c + 1 / 8c) = floor((s + c) / 2c): a quarter step clear of every rounding edge
        cv2.convertScaleAbs(acc, dst=out[i], alpha=1 / (2 * c), beta=1 / (8 * c))
    return out
