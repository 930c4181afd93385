"""In-memory codec streams for the codec ops (MPEG-1/2/4, H.264, H.265): encode a clip to packets,
decode packets back to exactly T frames, whatever a fault did to them. The one codec round trip.

A :class:`Stream` is what an encoder wrote for a clip: its access units in decode order (bytes
and presentation index) and the parameter sets it put out of band (``extradata``, as an MP4
file's avcC box or an RTP session's SDP carries them). :func:`decode` feeds the units to
FFmpeg's decoder with its default error concealment and places every frame it returns at its
presentation index; a frame it does not return repeats the last one it did (mid-grey before
the first), so damage never changes the clip's length or shape. Frames are padded (edge
pixels repeated) to what the encoder accepts and cropped back.

Everything runs on one thread: the x264 and x265 bitstreams depend on their thread counts,
and FFmpeg's frame-threaded decoding would delay output.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

import av
from av.video.reformatter import VideoReformatter
import cv2
import numpy as np

# Codec settings shared by the re-encoding perturbations: a standard MPEG frame rate (the
# mpeg2video encoder accepts only those; with a fixed quantiser it does not change the result),
# one thread so the bitstream does not depend on the machine's core count.
CODEC_FPS = 25
CODEC_GOP = 12
CODEC_PIX_FMT = "yuv420p"
# RGB -> YUV 4:2:0 with the scaler the ffmpeg command-line tool uses (PyAV's default is bilinear).
CODEC_SCALER = "BICUBIC"

DECODERS = {"libx264": "h264", "libx265": "hevc", "mpeg2video": "mpeg2video", "mpeg4": "mpeg4"}
# Frame sides the encoders get: (multiple of, at least). x264 needs even sides. x265 refuses
# sides under 16, overruns the heap on sides that are not multiples of 8 (glibc aborts under
# MALLOC_PERTURB_ at 36 x 44), and reads uninitialised memory when a side is one CTU (16, 32,
# 64 pixels: two encodes of one clip differ); padded to 72 it is bit-reproducible (measured).
PADDING = {"libx264": (2, 2), "libx265": (8, 72), "mpeg2video": (1, 1), "mpeg4": (1, 1)}
GREY = 128                                     # what a frame shows before anything decoded


@dataclass(frozen=True)
class Stream:
    """An encoded clip: access units in decode order, parameter sets out of band, geometry."""

    codec: str
    units: tuple[bytes, ...]          # one access unit (frame) per entry, in decode order
    pts: tuple[int, ...]              # presentation index of each unit
    extradata: bytes
    shape: tuple[int, int, int]       # (T, H, W) of the clip before padding
    padded: tuple[int, int]           # (H, W) the encoder saw

    @property
    def size(self) -> int:
        """Bytes of all access units (the parameter sets aside)."""
        return sum(len(u) for u in self.units)

    def bitrate(self, fps: float = CODEC_FPS) -> float:
        """Bits per second of the access units when the clip plays at ``fps``."""
        return 8.0 * self.size * fps / self.shape[0]

    def with_units(self, units: Sequence[bytes | None]) -> Stream:
        """The same stream with its units' bytes replaced; a None unit is left out."""
        kept = [(u, p) for u, p in zip(units, self.pts) if u is not None]
        return Stream(self.codec, tuple(u for u, _ in kept), tuple(p for _, p in kept),
                      self.extradata, self.shape, self.padded)


def padded_size(codec: str, height: int, width: int) -> tuple[int, int]:
    """(H, W) padded to the sides the encoder takes reproducibly (:data:`PADDING`)."""
    step, low = PADDING[codec]
    return max(low, -(-height // step) * step), max(low, -(-width // step) * step)


def _frames(clip: np.ndarray, size: tuple[int, int]):
    """The clip's frames as YUV 4:2:0 av.VideoFrames of ``size`` (edges repeated to pad)."""
    t, h, w, _ = clip.shape
    ph, pw = size
    to_yuv = VideoReformatter()
    for i in range(t):
        frame = clip[i]
        if (ph, pw) != (h, w):
            frame = cv2.copyMakeBorder(frame, 0, ph - h, 0, pw - w, cv2.BORDER_REPLICATE)
        out = av.VideoFrame.from_ndarray(np.ascontiguousarray(frame), format="rgb24")
        out = to_yuv.reformat(out, format=CODEC_PIX_FMT, interpolation=CODEC_SCALER)
        out.pts = i
        yield out


def encode(clip: np.ndarray, codec: str, options: Mapping[str, str], *,
           bit_rate: int | None = None, out_of_band: bool = False) -> Stream:
    """Encode a uint8 (T, H, W, 3) clip with ``codec`` (a key of :data:`DECODERS`) and ``options``.

    ``bit_rate`` (bits/s at :data:`CODEC_FPS`) sets average-bitrate mode. ``out_of_band``
    (H.264) moves the sequence and picture parameter sets out of the access units into
    ``extradata``. They are taken out of the encoded units rather than asked of the encoder
    (FFmpeg's global-header flag): with that flag libx264 gave a different I-frame in about
    one run in twenty on the sample clip.
    """
    if codec not in DECODERS:
        raise ValueError(f"expected codec among {sorted(DECODERS)}; got {codec!r}")
    t, h, w, _ = clip.shape
    size = padded_size(codec, h, w)
    enc = av.CodecContext.create(codec, "w")
    enc.height, enc.width = size
    enc.pix_fmt = CODEC_PIX_FMT
    enc.time_base = Fraction(1, CODEC_FPS)
    enc.framerate = Fraction(CODEC_FPS, 1)
    enc.thread_count = 1
    if bit_rate is not None:
        enc.bit_rate = int(bit_rate)
    enc.options = dict(options)
    units: list[bytes] = []
    pts: list[int] = []
    for frame in [*_frames(clip, size), None]:
        for packet in enc.encode(frame):
            units.append(bytes(packet))
            pts.append(int(packet.pts))
    stream = Stream(codec, tuple(units), tuple(pts), b"", (t, h, w), size)
    return parameter_sets_apart(stream) if out_of_band else stream


START = b"\x00\x00\x01"
H264_PARAMETER_SETS = (7, 8)                   # SPS, PPS


def nal_units(data: bytes) -> list[bytes]:
    """The NAL units of an Annex B byte string, without their start codes."""
    cuts = []
    i = data.find(START)
    while i >= 0:
        cuts.append(i)
        i = data.find(START, i + 3)
    return [data[a + 3:b].rstrip(b"\x00") if b < len(data) else data[a + 3:]
            for a, b in zip(cuts, [*cuts[1:], len(data)])]


def annex_b(nals: Sequence[bytes]) -> bytes:
    """NAL units joined into an Annex B byte string (4-byte start codes)."""
    return b"".join(b"\x00\x00\x00\x01" + n for n in nals)


def parameter_sets_apart(stream: Stream) -> Stream:
    """An H.264 stream with its SPS and PPS moved from the access units into ``extradata``."""
    found: dict[int, bytes] = {}
    units = []
    for unit in stream.units:
        nals = nal_units(unit)
        for n in nals:
            if n and n[0] & 0x1F in H264_PARAMETER_SETS:
                found.setdefault(n[0] & 0x1F, n)
        units.append(annex_b([n for n in nals if not (n and n[0] & 0x1F in H264_PARAMETER_SETS)]))
    extradata = annex_b([found[k] for k in H264_PARAMETER_SETS if k in found])
    return Stream(stream.codec, tuple(units), stream.pts, extradata, stream.shape, stream.padded)


def decode(stream: Stream, keep: np.ndarray | None = None) -> np.ndarray:
    """The stream's T frames as uint8 RGB (or only the presentation indices ``keep``, sorted).

    A unit the decoder rejects is skipped; a frame that never comes out, or comes out at the
    wrong size or without a valid index, repeats the last good one before it.
    """
    t, h, w = stream.shape
    dec = av.CodecContext.create(DECODERS[stream.codec], "r")
    dec.thread_count = 1
    if stream.extradata:
        dec.extradata = stream.extradata
    got: dict[int, Any] = {}

    def place(frames) -> None:
        for f in frames:
            if f.pts is not None and 0 <= f.pts < t and (f.height, f.width) == stream.padded:
                got.setdefault(int(f.pts), f)

    for data, pts in zip(stream.units, stream.pts):
        packet = padded_packet(data)
        packet.pts = packet.dts = pts
        try:
            place(dec.decode(packet))
        except av.FFmpegError:
            continue                            # a unit the decoder refuses: its frame goes missing
    try:
        place(dec.decode(None))
    except av.FFmpegError:
        pass
    return _assemble(got, t, h, w, np.arange(t) if keep is None else np.asarray(keep))


def padded_packet(data: bytes) -> av.Packet:
    """A packet holding a copy of ``data`` with FFmpeg's zeroed input padding behind it.
    (``av.Packet(bytes)`` points at the bytes object itself, with no padding: a decoder that reads
    ahead, as the mpeg4 decoder does, then reads whatever memory follows, and its output varies
    from run to run.)"""
    packet = av.Packet(len(data))
    memoryview(packet)[:] = data
    return packet


def _assemble(got: Mapping[int, Any], t: int, h: int, w: int, keep: np.ndarray) -> np.ndarray:
    """Frames ``keep`` from the decoded ones, holding the last good frame over missing ones."""
    decoded = np.array(sorted(got), dtype=np.int64)
    out = np.empty((len(keep), h, w, 3), np.uint8)
    to_rgb = VideoReformatter()
    # the decoded frame shown at each output index: the last one at or before it
    source = np.searchsorted(decoded, keep, side="right") - 1
    cache: dict[int, np.ndarray] = {}
    for i, s in enumerate(source):
        if s < 0:
            out[i] = GREY
            continue
        k = int(decoded[s])
        if k not in cache:
            cache = {k: to_rgb.reformat(got[k], format="rgb24").to_ndarray()[:h, :w]}
        out[i] = cache[k]
    return out
