"""Visual perturbations: lossy compression (per-frame JPEG, whole-clip MPEG re-encoding), in memory.

JPEG goes through OpenCV's encoder frame by frame; the codecs push the whole clip through a
PyAV encoder and straight into a decoder (no container, no temporary files). All are
deterministic, so ``random=False``.

Which frames a subset needs (:mod:`.render`): JPEG renders each frame alone. The codecs'
encoders carry state across GOP borders (rate control, motion-search predictors: one GOP
re-encoded alone differs by up to 137 levels in its P-frames on the sample clip), so a GOP
window is not rendered alone; with no B-frames they never look ahead, so output frame t is
rendered exactly from input frames 0..t (``reads="prefix"``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import av
from av.video.reformatter import VideoReformatter
import cv2
import numpy as np

from .opencv_frames import per_frame

# Codec settings shared by the re-encoding perturbations: a standard MPEG frame rate (the
# mpeg2video encoder accepts only those; with a fixed quantiser it does not change the result),
# one thread so the bitstream does not depend on the machine's core count.
CODEC_FPS = 25
CODEC_GOP = 12
CODEC_PIX_FMT = "yuv420p"
# RGB -> YUV 4:2:0 with the scaler the ffmpeg command-line tool uses (PyAV's default is bilinear).
CODEC_SCALER = "BICUBIC"


# --------------------------------------------------------------------------------------- jpeg
def jpeg(clip: np.ndarray, rng: np.random.Generator, quality: int) -> np.ndarray:
    """Encode and decode every frame as JPEG at ``quality`` (OpenCV, in memory)."""
    params = [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)]

    def roundtrip(frame: np.ndarray, _: int) -> np.ndarray:
        ok, buf = cv2.imencode(".jpg", cv2.cvtColor(frame, cv2.COLOR_RGB2BGR), params)
        if not ok:
            raise RuntimeError(f"OpenCV could not JPEG-encode a frame of shape {frame.shape}")
        return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)

    return per_frame(clip, roundtrip)


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
    t, h, w, _ = clip.shape
    enc = av.CodecContext.create(codec, "w")
    enc.width, enc.height, enc.pix_fmt = w, h, CODEC_PIX_FMT
    enc.time_base = Fraction(1, CODEC_FPS)
    enc.framerate = Fraction(CODEC_FPS, 1)
    enc.gop_size = CODEC_GOP
    enc.max_b_frames = 0          # no look-ahead: frames 0..t alone give output frame t exactly
    enc.thread_count = 1
    enc.qmin = enc.qmax = int(q)
    if bit_rate is not None:
        enc.bit_rate = int(bit_rate)
    dec = av.CodecContext.create(codec, "r")
    dec.thread_count = 1
    # one scaler context each way for the clip (frame.reformat / to_ndarray make one per frame)
    to_yuv, to_rgb = VideoReformatter(), VideoReformatter()
    ids = np.arange(t) if keep is None else np.asarray(keep)
    wanted = set(ids.tolist())
    decoded: list[np.ndarray | None] = []
    last: list[Any] = []                       # the last decoded frame, for a decoder that drops some

    def convert(frames) -> None:
        for f in frames:
            decoded.append(to_rgb.reformat(f, format="rgb24").to_ndarray() if len(decoded) in wanted else None)
            last[:] = [f]

    for i in range(t):
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(clip[i]), format="rgb24")
        frame = to_yuv.reformat(frame, format=CODEC_PIX_FMT, interpolation=CODEC_SCALER)
        frame.pts = i
        frame.time_base = enc.time_base
        for packet in enc.encode(frame):
            convert(dec.decode(packet))
    for packet in enc.encode(None):
        convert(dec.decode(packet))
    convert(dec.decode(None))
    if not decoded:
        raise RuntimeError(f"the {codec} decoder returned no frames for a clip of {t}")
    if len(decoded) < t:                       # a decoder that drops frames repeats its last one
        tail = decoded[-1] if decoded[-1] is not None else to_rgb.reformat(last[0], format="rgb24").to_ndarray()
        decoded += [tail] * (t - len(decoded))
    return np.stack([decoded[i] for i in ids])


# ---------------------------------------------------------------------- draw / render split
def _jpeg_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return jpeg(frames, None, **params)


def _codec_frames(codec: str):
    def kernel(prefix: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
        return reencode(prefix, codec, **params, keep=None if len(ids) == len(prefix) else ids)
    kernel.__name__ = f"_{codec}_frames"
    return kernel
