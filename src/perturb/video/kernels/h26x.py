"""Kinetics-C's codec ops: the clip re-encoded with H.264 or H.265 at a constant rate factor
(CRF) or an average bitrate (ABR), in memory through PyAV (:mod:`..io.codec_stream`).

CRF ops encode with no B-frames and no look-ahead (x264's and x265's ``zerolatency`` tune),
so output frame t depends on input frames 0..t only and a subset renders from that prefix
(``reads="prefix"``). ABR ops keep the encoders' default frame structure and take their target
from the whole clip: the clip's *source bitrate* (:func:`source_bitrate`) divided by the
severity's divisor; they read the whole clip (``reads="clip"``).

The source stream (:func:`source_stream`) stands in for the video file the reference starts
from: the clip as ffmpeg's default libx264 encode makes it (CRF 23, preset medium, B-frames).
The bitstream faults of :mod:`.bitstream` damage the same stream.

Everything is deterministic: one encoder thread, x265 without a thread pool (its look-ahead
decisions then run in the calling thread: with a pool worker doing them, a flush could spin
forever in ``Lookahead::getDecidedPicture``, seen once on a 12-frame clip at 3 kbit/s), and
x264's mb-tree off in the source and ABR encodes (libx264's mb-tree reads uninitialised memory:
two encodes of one clip in one process gave different bitstreams, in PyAV's build and in
Debian's ffmpeg alike).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..io.codec_stream import CODEC_FPS, Stream, decode, encode
from .twins import register_kernel


ENCODERS = {"h264": "libx264", "h265": "libx265"}
X265_PARAMS = "log-level=none:pools=none:frame-threads=1"  # quiet, no thread pool, one frame at a time
# ffmpeg's default libx264 encode (what `ffmpeg -i src out.h264` writes), mb-tree off
SOURCE_OPTIONS = {"preset": "medium", "crf": "23", "x264-params": "mbtree=0"}
MIN_BIT_RATE = 1000                                         # x264 and x265 take whole kbit/s
SOURCE = ("Yi et al. 2021 (Mini Kinetics-C), create_mini_ssv2_c.py, whose codec functions "
          "create_mini_kinetics_c.py imports")


def _encoder_params(codec: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Encoder options: x265 gets its thread and log settings beside ``extra``."""
    if codec == "libx265":
        return {**extra, "x265-params": X265_PARAMS}
    return dict(extra)


def crf_options(codec: str, crf: int) -> dict[str, str]:
    """Options of a CRF encode: preset medium, no B-frames, no look-ahead, rate factor ``crf``."""
    if isinstance(crf, bool) or not isinstance(crf, (int, np.integer)) or not 0 <= crf <= 51:
        raise ValueError(f"expected crf to be an int in 0..51; got {crf!r}")
    return _encoder_params(codec, {"preset": "medium", "tune": "zerolatency", "crf": str(int(crf))})


def abr_options(codec: str, bit_rate: int) -> dict[str, str]:
    """Options of an ABR encode at ``bit_rate`` bits/s: -b:v = -maxrate = -bufsize, as the reference."""
    options = {"preset": "medium", "maxrate": str(bit_rate), "bufsize": str(bit_rate)}
    if codec == "libx264":
        options["x264-params"] = "mbtree=0"
    return _encoder_params(codec, options)


def source_stream(clip: np.ndarray, out_of_band: bool = False) -> Stream:
    """The clip as ffmpeg's default libx264 encode makes it (mb-tree off), at 25 fps."""
    return encode(clip, "libx264", SOURCE_OPTIONS, out_of_band=out_of_band)


def source_bitrate(clip: np.ndarray) -> float:
    """The clip's source bitrate: bits/s of :func:`source_stream` played at 25 fps."""
    return source_stream(clip).bitrate(CODEC_FPS)


def _divisor(value: Any) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value <= 0:
        raise ValueError(f"expected divisor to be a finite number > 0; got {value!r}")
    return float(value)


def abr_target(clip: np.ndarray, divisor: float) -> int:
    """The ABR target in bits/s: source bitrate / divisor, at least 1 kbit/s."""
    return max(MIN_BIT_RATE, int(source_bitrate(clip) / _divisor(divisor)))


def crf_reencode(clip: np.ndarray, codec: str, crf: int, keep: np.ndarray | None = None) -> np.ndarray:
    """The clip through ``codec`` (libx264 or libx265) at rate factor ``crf``; frames ``keep`` (sorted)."""
    return decode(encode(clip, codec, crf_options(codec, crf)), keep)


def abr_reencode(clip: np.ndarray, codec: str, divisor: float,
                 keep: np.ndarray | None = None) -> np.ndarray:
    """The clip through ``codec`` at its source bitrate / ``divisor``; frames ``keep`` (sorted)."""
    rate = abr_target(clip, divisor)
    return decode(encode(clip, codec, abr_options(codec, rate), bit_rate=rate), keep)


MODES = {"crf": (crf_reencode, "crf"), "abr": (abr_reencode, "divisor")}   # mode -> (function, parameter)


def reencode_frames(mode: str, codec: str):
    """The numpy kernel: ``frames`` is the prefix 0..max(ids) (CRF) or the whole clip (ABR)."""
    reencode, param = MODES[mode]

    def kernel(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, Any],
               params: Mapping[str, Any]) -> np.ndarray:
        return reencode(frames, codec, params[param], keep=ids)
    kernel.__name__ = f"{codec}_{mode}_frames"
    return kernel


# op -> (mode, encoder)
OPS = {"h264_crf": ("crf", "libx264"), "h264_abr": ("abr", "libx264"),
       "h265_crf": ("crf", "libx265"), "h265_abr": ("abr", "libx265")}
for _op, (_mode, _encoder) in OPS.items():
    register_kernel(_op, "numpy", reencode_frames(_mode, _encoder))
