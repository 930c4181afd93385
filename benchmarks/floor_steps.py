"""The floors of the ops that still miss their peer, as data: the fewest steps every correct
implementation of OUR function must take, written plainly with OpenCV/numpy frame by frame
(numpy rows, uint8 (T, H, W, 3)) or with torch on the whole clip (torch rows, float
(T, 3, H, W) in [0, 1]).

A floor is a lower bound, never an alternative implementation: it leaves out everything that
turns its intermediate results into the output (the gains, the tables' use, the blends), so
whatever ours or a faster rewrite does costs at least this much. Each step is named; the
builder returns the callable that runs them once on the whole clip, the numpy rows' frames shared
out over the same threads as our kernels' (``frames_in_threads``), so a floor is no slower than
ours for want of threads. pixelate is the exception
stated in its entry: its floor bounds the OpenCV route to Pillow's exact boxes, not the function
(Pillow's own C loop computes the same function).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import cv2
import numpy as np

from perturb.video.kernels.blur import zoom_factors
from perturb.video.kernels.imagenet_c_pixelate import box_pass_plan, box_sums, pixelate_size, with_zero_row
from perturb.video.kernels.opencv_frames import centre_zoom_matrix, frames_in_threads, scratch

Params = Mapping[str, Any]


@dataclass(frozen=True)
class Floor:
    """One op's floor on one path: its named steps, why they bound our function, and a builder
    ``build(clip, params) -> run`` (``clip`` is the path's input; ``run()`` does the steps once)."""

    op: str
    path: str
    steps: tuple[str, ...]
    why: str
    build: Callable[[Any, Params], Callable[[], Any]]


# ------------------------------------------------------------------------------- numpy path
def _planes_max(clip: np.ndarray, _: Params) -> Callable[[], None]:
    def frame_max(t: int) -> None:
        r, g, b = cv2.split(clip[t])
        cv2.max(cv2.max(r, g), b)
    return lambda: frames_in_threads(len(clip), frame_max)


def _sums_lut(clip: np.ndarray, _: Params) -> Callable[[], np.ndarray]:
    tables = np.tile(np.arange(256, dtype=np.uint8)[:, None, None], (1, 1, 3))   # any table: a LUT costs the same

    def run() -> np.ndarray:
        out = np.empty_like(clip)

        def frame(t: int) -> None:
            cv2.sumElems(clip[t])
            cv2.LUT(clip[t], tables, dst=out[t])
        frames_in_threads(len(clip), frame)
        return out
    return run


def _saturate_gain(clip: np.ndarray, _: Params) -> Callable[[], None]:
    table = np.zeros(256 * 256, np.float32)                             # the gain S'/S by (max, min)

    def frame_gain(t: int) -> None:
        r, g, b = cv2.split(clip[t])
        v, m = cv2.max(cv2.max(r, g), b), cv2.min(cv2.min(r, g), b)
        table.take((v.astype(np.uint16) << 8) | m)
    return lambda: frames_in_threads(len(clip), frame_gain)


def _pixelate_columns(clip: np.ndarray, params: Params) -> Callable[[], None]:
    _, h, w, _ = clip.shape
    rows, _ = box_pass_plan(w, pixelate_size(w, params["scale"]), h)

    def frame_columns(t: int) -> None:
        box_sums(with_zero_row(clip[t], "floor.pixelate", transpose=True), rows)
    return lambda: frames_in_threads(len(clip), frame_columns)


def _zoom_warps(clip: np.ndarray, params: Params) -> Callable[[], None]:
    _, h, w, _ = clip.shape
    matrices = [centre_zoom_matrix(float(z), w, h) for z in zoom_factors(params["zooms"]) if z != 1.0]
    def frame_warps(t: int) -> None:
        warped = scratch("floor.zoom", clip.shape[1:], np.uint8)
        for m in matrices:
            cv2.warpAffine(clip[t], m, (w, h), dst=warped, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return lambda: frames_in_threads(len(clip), frame_warps)


# ------------------------------------------------------------------------------- torch path
def _levels(x: Any) -> Any:
    """The range check and the clip's levels rint(255x) in a fresh float output."""
    import torch
    torch.aminmax(x)
    out = torch.empty_like(x)
    torch.mul(x, 255.0, out=out)
    return out.round_()


def _torch_max(x: Any, _: Params) -> Callable[[], Any]:
    return lambda: _levels(x).amax(dim=1)


def _torch_sums(x: Any, _: Params) -> Callable[[], Any]:
    return lambda: _levels(x).sum(dim=(2, 3))


RANGE_AND_LEVELS = ("range check: torch.aminmax", "levels: rint(255x) into a fresh output")

FLOORS: tuple[Floor, ...] = (
    Floor("brightness", "numpy", ("cv2.split", "V: 2 cv2.max"),
          "the HSV value V = max(R, G, B) of every pixel, needed before its gain V'/V", _planes_max),
    Floor("contrast", "numpy", ("channel sums: cv2.sumElems", "3-channel cv2.LUT into a fresh output"),
          "every frame's channel means before any level is mapped, then every value written once", _sums_lut),
    Floor("saturate", "numpy", ("cv2.split", "max: 2 cv2.max", "min: 2 cv2.min",
                                "gain: take from the 65,536 table by (max, min)"),
          "S = (V - min)/V of every pixel and its gain S'/S, needed before any channel moves", _saturate_gain),
    Floor("pixelate", "numpy", ("frame transposed: cv2.transpose", "column sums: a row copy per box position, numpy adds (uint16)"),
          "bounds the OpenCV route to Pillow's exact boxes (the first pass's sums; the row pass, the rounding "
          "and the enlargement left out), not the function: Pillow's C loop computes the same", _pixelate_columns),
    Floor("zoom_blur", "numpy", ("bilinear cv2.warpAffine per zoom factor != 1",),
          "the mean of the frame and its centre zooms at exact float positions: every zoom is a bilinear "
          "warp of the whole frame (a resize and crop samples other positions)", _zoom_warps),
    Floor("rain", "numpy", ("channel sums: cv2.sumElems", "3-channel cv2.LUT into a fresh output"),
          "the lift and the pull to the channel means need each frame's sums before any value; every value is "
          "then written once (off the streaks a per-channel table; the streaks themselves left out)", _sums_lut),
    Floor("brightness", "torch", RANGE_AND_LEVELS + ("V: amax(dim=1)",),
          "a float clip is checked and quantised to levels (the function is defined on levels), needs a fresh "
          "output and V of every pixel", _torch_max),
    Floor("contrast", "torch", RANGE_AND_LEVELS + ("channel sums: sum((2, 3))",),
          "a float clip is checked and quantised to levels, needs a fresh output and every frame's channel "
          "means", _torch_sums),
    Floor("rain", "torch", RANGE_AND_LEVELS + ("channel sums: sum((2, 3))",),
          "a float clip is checked and quantised to levels, needs a fresh output and every frame's channel "
          "sums (the lift and the pull to the means)", _torch_sums),
)
