"""Visual perturbations: lossy compression (per-frame JPEG, whole-clip MPEG re-encoding), in memory.

JPEG goes through OpenCV's encoder frame by frame; the codecs push the whole clip through the
codec stream's encoder and decoder (:mod:`..io.codec_stream`: no container, no temporary files). All are
deterministic, so ``random=False``.

Which frames a subset needs (:mod:`..render`): JPEG renders each frame alone. The codecs'
encoders carry state across GOP borders (rate control, motion-search predictors: one GOP
re-encoded alone differs by up to 137 levels in its P-frames on the sample clip), so a GOP
window is not rendered alone; with no B-frames they never look ahead, so output frame t is
rendered exactly from input frames 0..t (``reads="prefix"``).
"""
from __future__ import annotations

import cv2
import numpy as np

from ..io.codec_stream import CODEC_GOP, decode, encode
from .opencv_frames import per_frame_into, scratch
from .twins import numpy_kernel, register_kernel

# JPEG frames decoded straight to RGB where OpenCV can (libjpeg-turbo's RGB output: the same levels
# as BGR swapped), else as BGR and swapped.
DECODE_RGB = getattr(cv2, "IMREAD_COLOR_RGB", None)


# --------------------------------------------------------------------------------------- jpeg
def jpeg(clip: np.ndarray, quality: int) -> np.ndarray:
    """Encode and decode every frame as JPEG at ``quality`` (OpenCV, in memory)."""
    params = [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)]

    def roundtrip(frame: np.ndarray, _: int, dst: np.ndarray) -> None:
        bgr = cv2.cvtColor(frame, cv2.COLOR_RGB2BGR, dst=scratch("jpeg.bgr", frame.shape, np.uint8))
        ok, buf = cv2.imencode(".jpg", bgr, params)
        if not ok:
            raise RuntimeError(f"OpenCV could not JPEG-encode a frame of shape {frame.shape}")
        if DECODE_RGB is None:
            cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB, dst=dst)
        else:
            dst[...] = cv2.imdecode(buf, DECODE_RGB)

    return per_frame_into(clip, roundtrip)


# ------------------------------------------------------------------------------------- codecs
def reencode(clip: np.ndarray, codec: str, q: int, bit_rate: int | None = None,
             keep: np.ndarray | None = None) -> np.ndarray:
    """Round-trip a clip through ``codec`` with a fixed quantiser ``q`` (1..31), in memory.

    The quantiser is fixed through qmin = qmax (the "qscale" option is ignored by FFmpeg's
    encoders when set from PyAV); ``bit_rate`` optionally caps the rate. The result has the
    input's (T, H, W, 3) exactly, or holds only the output frames ``keep`` (sorted indices):
    every frame is still encoded and decoded, but only those are converted back to RGB.
    """
    if not (isinstance(q, (int, np.integer)) and 1 <= q <= 31):
        raise ValueError(f"the quantiser q must be an int in 1..31; got {q!r}")
    # no B-frames (bf 0): no look-ahead, so frames 0..t alone give output frame t exactly
    options = {"qmin": str(int(q)), "qmax": str(int(q)), "g": str(CODEC_GOP), "bf": "0"}
    return decode(encode(clip, codec, options, bit_rate=bit_rate), keep)


# ---------------------------------------------------------------------- draw / render split
@numpy_kernel("jpeg")
def jpeg_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return jpeg(frames, **params)


def codec_frames(codec: str):
    """The numpy kernel of an MPEG op: the prefix 0..max(ids) re-encoded with ``codec``."""
    def kernel(prefix: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
        return reencode(prefix, codec, **params, keep=None if len(ids) == len(prefix) else ids)
    kernel.__name__ = f"{codec}_frames"
    return kernel


ENCODERS = {"mpeg1": "mpeg2video", "mpeg2": "mpeg4"}       # op -> the FFmpeg encoder it re-encodes with
for _op, _encoder in ENCODERS.items():
    register_kernel(_op, "numpy", codec_frames(_encoder))
