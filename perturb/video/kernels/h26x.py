"""Kinetics-C's codec ops: the clip re-encoded with H.264 or H.265 at a constant rate factor
(CRF) or an average bitrate (ABR), in memory through PyAV (:mod:`._codec_stream`).

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

from ...registry import Spec, register
from ..io.codec_stream import Stream, decode, encode
from .jpeg_mpeg import CODEC_FPS
from ..render import CLIP, PREFIX, Renderer
from ..severity_params import table

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


def _kernel(mode: str, codec: str):
    """The numpy kernel: ``frames`` is the prefix 0..max(ids) (CRF) or the whole clip (ABR)."""
    reencode, param = MODES[mode]

    def kernel(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, Any],
               params: Mapping[str, Any]) -> np.ndarray:
        return reencode(frames, codec, params[param], keep=ids)
    kernel.__name__ = f"_{codec}_{mode}_frames"
    return kernel


_COMMON = dict(modality="video", category="digital", random=False, temporal=False)
_ENCODE = ("Encoded in memory through PyAV's {encoder} (preset medium) at 25 fps on one thread{threads}, "
           "so the bitstream is the same on every machine. Odd sides are padded by repeating the "
           "edge pixels{pad} and cropped back after decoding (the reference crops odd sides off). ")
_PAD = {"libx264": "", "libx265": " (x265: to multiples of 8 of at least 72, below which x265 "
                                  "overruns its heap or reads uninitialised memory)"}
_THREADS = {"libx264": "", "libx265": " (x265 without a thread pool: its output depends on the pool size, "
                                      "and a pool worker deciding frame types could leave a flush spinning)"}
_CRF = ("Source: " + SOURCE + ": `ffmpeg -vcodec {encoder} -crf c` with the encoder's defaults. "
        "Here B-frames and look-ahead are off (the zerolatency tune; x264 then has no mb-tree, x265 "
        "no cu-tree), so output frame t depends on input frames 0..t only: a subset of frames "
        "renders from that prefix, exactly as in the whole clip. ")
_ABR = ("Source: " + SOURCE + ": the source file's bit rate (ffprobe's format bit_rate, audio "
        "included) divided by 2, 4, 8, 16, 32 is passed as -b:v, -maxrate and -bufsize. A clip in "
        "memory has no source file: its source bitrate here is that of the clip encoded as "
        "ffmpeg's default libx264 encode makes it (CRF 23, preset medium, the way the reference's "
        "packet-loss tool makes its sources; mb-tree off, which reads uninitialised memory in "
        "libx264), in bits per second at 25 fps, and the target is that divided by the divisor "
        "(at least 1 kbit/s). The encoder keeps its default B-frames and look-ahead{mbtree}, so "
        "every output frame depends on the whole clip. ")
_MBTREE = {"libx264": " (mb-tree off, as in the source)", "libx265": ""}
# op -> what benchmarks/kinetics_vs_ffmpeg.py measured against the reference route (temporary
# files, Debian's ffmpeg 5.1 CLI: x264 core 164, x265 3.5) on the 32-frame sample clip at
# severities 1, 3, 5 (benchmarks/README.md, results/2026-11-25-vm.json)
_ROUTE = ("Measured against the ffmpeg command-line route with temporary files on the 32-frame "
          "sample clip, severities 1, 3, 5 (benchmarks/README.md): ")
MEASURED: dict[str, str] = {
    "h264_crf": _ROUTE + "frames identical to `ffmpeg -tune zerolatency -threads 1` at the same CRF; "
                "the reference's command (B-frames, look-ahead, mb-tree) gives a mean PSNR of 31.56, "
                "25.04, 18.95 dB where ours gives 31.32, 25.10, 19.83. 1.8-2.1x faster; PyAV's "
                "encode call alone is 82-96% of our time and bounds the speed-up.",
    "h265_crf": _ROUTE + "mean PSNR 30.50, 24.71, 19.30 dB against the CLI's 30.46, 24.40, 18.76 at the "
                "same settings (x265 4.2 here, 3.5 there: PSNR between the two outputs 33.7, 26.3, "
                "20.6 dB) and the reference command's 30.36, 24.38, 18.56. 1.3-1.8x faster; PyAV's "
                "encode call alone is 90-94% of our time, so 2x is out of reach while both routes "
                "run the same encoder.",
    "h264_abr": _ROUTE + "reached 179, 50, 19 kbit/s against targets of 153, 38, 10 (the CLI: 196, 63, "
                "28 against 156, 39, 10; a 1.28-s clip starts with an I-frame the buffer cannot "
                "hold); mean PSNR 29.00, 21.38, 13.23 dB against 29.22, 22.13, 13.56. 2.5-2.7x faster.",
    "h265_abr": _ROUTE + "reached 175, 55, 40 kbit/s against targets of 153, 38, 10 (the CLI: 187, 64, "
                "46 against 156, 39, 10); mean PSNR 29.26, 22.93, 14.62 dB against 29.35, 22.92, "
                "12.91. 1.7-2.4x faster.",
    "bit_error": _ROUTE + "damaged fraction of a 640-frame stream 9.9e-6, 3.3e-5, 1.01e-4 against "
                 "5.5e-6, 3.5e-5, 9.2e-5 by `-bsf noise`; mean PSNR 25.8 ± 5.9, 19.7 ± 4.2, 15.9 ± "
                 "3.9 dB over five seeds (the filter's single, unseeded pick: 31.3, 13.2, 12.8 dB). "
                 "2.1-2.3x faster.",
    "packet_loss": _ROUTE + "datagrams lost on a 640-frame stream 0.98%, 2.9%, 6.0% for rates of 1, 3, "
                   "6%; `-bsf noise=drop`, the nearest command-line route, drops whole frames: 0.78%, "
                   "2.8%, 6.4% of packets. Mean PSNR 15.4 ± 4.0, 11.7 ± 1.1, 10.8 ± 1.2 dB over five "
                   "seeds (the filter's route: 10.2 dB at every rate, its first drop takes the only "
                   "I-frame). 2.1-2.2x faster.",
}


def _register(name: str, mode: str, codec: str, aliases: tuple[str, ...], summary: str) -> None:
    text = (_CRF if mode == "crf" else _ABR).format(encoder=codec, mbtree=_MBTREE[codec])
    text += _ENCODE.format(encoder=codec, threads=_THREADS[codec], pad=_PAD[codec])
    register(Spec(name=name,
                  render=Renderer(PREFIX if mode == "crf" else CLIP, kernels={"numpy": _kernel(mode, codec)}),
                  aliases=aliases, summary=summary, severities=table(name),
                  deviation=text + MEASURED.get(name, ""), **_COMMON))


_register("h264_crf", "crf", "libx264", ("H.264 CRF", "avc_crf"),
          "Whole clip re-encoded with H.264 (libx264) at a constant rate factor")
_register("h264_abr", "abr", "libx264", ("H.264 ABR", "avc_abr"),
          "Whole clip re-encoded with H.264 (libx264) at an average bitrate below the source's")
_register("h265_crf", "crf", "libx265", ("H.265 CRF", "hevc_crf"),
          "Whole clip re-encoded with H.265 (libx265) at a constant rate factor")
_register("h265_abr", "abr", "libx265", ("H.265 ABR", "hevc_abr"),
          "Whole clip re-encoded with H.265 (libx265) at an average bitrate below the source's")
