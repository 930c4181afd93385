"""Video file I/O on PyAV: read, stream, probe and write clips (uint8 (T, H, W, 3) RGB).

Frames stream from the decoder one at a time, so a long video never has to sit in memory
whole; :func:`read` simply collects :func:`iter_frames`. A file that is not a readable video
(missing, empty, not a video, no video stream, truncated) raises
:class:`perturb.errors.VideoReadError` instead of returning partial or garbage frames.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Union

import av
import cv2
from av.video.reformatter import VideoReformatter
import numpy as np

from ..errors import VideoReadError

PathLike = Union[str, os.PathLike, BinaryIO]
Size = Union[int, tuple[int, int], None]

# Default pixel format per encoder: lossless RGB where the codec can store it, else the
# most widely playable format.
DEFAULT_PIX_FMT: dict[str, str] = {
    "ffv1": "bgr0",
    "libx264rgb": "rgb24",
    "libx264": "yuv420p",
    "libx265": "yuv420p",
    "mpeg4": "yuv420p",
    "mpeg2video": "yuv420p",
    "mpeg1video": "yuv420p",
    "mjpeg": "yuvj420p",
    "libvpx-vp9": "yuv420p",
    "png": "rgb24",
}
# Formats without chroma subsampling, tried in this order when a frame size does not fit.
FULL_CHROMA = ("rgb24", "bgr0", "gbrp", "yuv444p", "yuvj444p")
# Encoders that refuse a subsampled format when the frame size is not a multiple of it.
NEEDS_EVEN_SIZE = ("libx264", "libx265", "libvpx", "libvpx-vp9", "libaom-av1")
# Chroma subsampling (horizontal, vertical) of the formats that need even sizes.
SUBSAMPLING: dict[str, tuple[int, int]] = {
    "yuv420p": (2, 2), "yuvj420p": (2, 2), "nv12": (2, 2), "nv21": (2, 2),
    "yuv422p": (2, 1), "yuvj422p": (2, 1), "yuv411p": (4, 1), "yuv410p": (4, 4),
}
# Time slack when deciding that a stream ended early (truncated), in frame durations.
TRUNCATION_SLACK_FRAMES = 1.5


@dataclass(frozen=True)
class VideoInfo:
    """What a container says about its first video stream."""

    width: int
    height: int
    fps: float
    frames: int | None          # None when the container does not store a frame count
    duration: float | None      # seconds; None when unknown
    codec: str


# ----------------------------------------------------------------------------------- reading
def _describe(path: PathLike) -> str:
    return repr(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else "the given stream"


def _open(path: PathLike) -> tuple[Any, Any]:
    """Open a container and its first video stream, or raise VideoReadError."""
    where = _describe(path)
    if isinstance(path, (str, os.PathLike)):
        p = Path(path)
        if not p.exists():
            raise VideoReadError(f"cannot read video {where}: no such file")
        if p.is_dir():
            raise VideoReadError(f"cannot read video {where}: it is a directory")
        if p.stat().st_size == 0:
            raise VideoReadError(f"cannot read video {where}: the file is empty (0 bytes)")
        source: Any = os.fspath(p)
    else:
        source = path
    try:
        container = av.open(source, "r")
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise VideoReadError(f"cannot read video {where}: not a video file FFmpeg can open ({exc})") from exc
    if not container.streams.video:
        container.close()
        raise VideoReadError(f"cannot read video {where}: the file has no video stream")
    stream = container.streams.video[0]
    if not stream.codec_context or stream.codec_context.width <= 0:
        container.close()
        raise VideoReadError(f"cannot read video {where}: the video stream has no decodable frames")
    return container, stream


def _stream_fps(stream: Any) -> float:
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    return float(rate) if rate else 25.0


def _stream_duration(container: Any, stream: Any) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return None


def _stream_start(stream: Any) -> float:
    if stream.start_time is not None and stream.time_base is not None:
        return float(stream.start_time * stream.time_base)
    return 0.0


def probe(path: PathLike) -> VideoInfo:
    """Size, frame rate, frame count and duration of a video without decoding it."""
    container, stream = _open(path)
    try:
        cc = stream.codec_context
        return VideoInfo(width=cc.width, height=cc.height, fps=_stream_fps(stream),
                         frames=int(stream.frames) or None,
                         duration=_stream_duration(container, stream), codec=cc.name)
    finally:
        container.close()


def output_size(width: int, height: int, size: Size) -> tuple[int, int]:
    """(W, H) after resizing: ``size`` is None, an int short side, or an exact (W, H)."""
    if size is None:
        return width, height
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        if size <= 0:
            raise ValueError(f"size must be a positive short side or a (W, H) pair; got {size!r}")
        scale = size / min(width, height)
        return max(1, round(width * scale)), max(1, round(height * scale))
    if (isinstance(size, (tuple, list)) and len(size) == 2
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in size)):
        return int(size[0]), int(size[1])
    raise ValueError(f"size must be a positive int (short side) or a (W, H) pair of positive ints; got {size!r}")


def _resize(frame: np.ndarray, wh: tuple[int, int]) -> np.ndarray:
    h, w = frame.shape[:2]
    if (w, h) == wh:
        return frame
    interp = cv2.INTER_AREA if wh[0] * wh[1] < w * h else cv2.INTER_LINEAR
    return cv2.resize(frame, wh, interpolation=interp)


def _check_options(fps: float | None, start: float | None, end: float | None,
                   max_frames: int | None, chunk: int | None) -> None:
    if fps is not None and not (np.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number or None; got {fps!r}")
    if start is not None and not start >= 0:
        raise ValueError(f"start must be a non-negative number of seconds or None; got {start!r}")
    if end is not None and not end > (start or 0):
        raise ValueError(f"end must be a number of seconds after start ({start or 0}); got {end!r}")
    for name, v in (("max_frames", max_frames), ("chunk", chunk)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0):
            raise ValueError(f"{name} must be a positive int or None; got {v!r}")


def _decoded(container: Any, stream: Any, where: str, start: float) -> Iterator[tuple[float, Any]]:
    """(time in seconds from the stream start, av.VideoFrame) pairs; decode errors -> VideoReadError."""
    origin = _stream_start(stream)
    if start > 0:
        try:
            container.seek(int((origin + start) / stream.time_base), stream=stream, backward=True)
        except av.FFmpegError:
            container.seek(0, stream=stream)
    fps = _stream_fps(stream)
    index = 0
    try:
        for frame in container.decode(stream):
            t = frame.time - origin if frame.time is not None else index / fps
            index += 1
            yield t, frame
    except av.FFmpegError as exc:
        raise VideoReadError(f"cannot read video {where}: decoding failed after {index} frames "
                             f"(truncated or corrupt file?): {exc}") from exc


def iter_frames(path: PathLike, *, fps: float | None = None, size: Size = None,
                start: float | None = None, end: float | None = None,
                max_frames: int | None = None, chunk: int | None = None) -> Iterator[np.ndarray]:
    """Stream RGB uint8 frames (H, W, 3), or chunks (<= chunk, H, W, 3) when ``chunk`` is set.

    ``fps`` resamples by dropping or repeating frames (each output time takes the latest source
    frame at or before it); ``size`` is an int short side or (W, H); ``start``/``end`` are
    seconds from the stream start; ``max_frames`` caps the number of output frames.
    """
    _check_options(fps, start, end, max_frames, chunk)
    if chunk is None:
        yield from _frames(path, fps, size, start, end, max_frames)
        return
    buf: list[np.ndarray] = []
    for frame in _frames(path, fps, size, start, end, max_frames):
        buf.append(frame)
        if len(buf) == chunk:
            yield np.stack(buf)
            buf = []
    if buf:
        yield np.stack(buf)


def _spans(decoded: Iterator[tuple[float, Any]], src_fps: float,
           state: dict[str, Any]) -> Iterator[tuple[Any, float, float]]:
    """(frame, its time, the next frame's time) triples; the last frame lasts one source frame.

    Records the last decoded time in ``state["last_t"]`` for the truncation check.
    """
    previous = None
    for t, frame in decoded:
        state["last_t"] = t
        if previous is not None:
            yield previous[1], previous[0], t
        previous = (t, frame)
    if previous is not None:
        yield previous[1], previous[0], previous[0] + 1.0 / src_fps


def _frames(path: PathLike, fps: float | None, size: Size, start: float | None,
            end: float | None, max_frames: int | None,
            meta: dict[str, Any] | None = None, convert: bool = True) -> Iterator[Any]:
    """Output frames as RGB arrays, or (``convert=False``) as the decoded av.VideoFrame each one
    shows (the same object for a repeated frame), converted later by :func:`_to_rgb`."""
    where = _describe(path)
    container, stream = _open(path)
    try:
        src_fps = _stream_fps(stream)
        if meta is not None:
            meta["fps"] = src_fps
            meta["frames"] = int(stream.frames or 0)
        cc = stream.codec_context
        wh = output_size(cc.width, cc.height, size)
        if meta is not None:
            meta["wh"] = wh
        t0 = float(start or 0.0)
        t_end = float("inf") if end is None else float(end)
        limit = float("inf") if max_frames is None else max_frames
        eps = 1e-6
        state: dict[str, Any] = {"last_t": None}
        emitted, stopped_early = 0, False
        to_rgb = VideoReformatter()       # one scaler context for the clip (frame.to_ndarray makes one per frame)
        for frame, t, until in _spans(_decoded(container, stream, where, t0), src_fps, state):
            if fps is None:                       # native rate: every frame whose time is in range
                times = [t] if t + eps >= t0 else []
            else:                                 # output times t0 + k/fps before the next frame
                times = [t0 + k / fps for k in range(emitted, int(np.ceil((until - t0) * fps - eps)))]
            image = None
            for i, t_out in enumerate(times):
                if t_out >= t_end - eps or emitted >= limit:
                    stopped_early = True
                    break
                if not convert:
                    yield frame
                    emitted += 1
                    continue
                if image is None:
                    image = _to_rgb(frame, wh, to_rgb)
                yield image.copy() if i else image
                emitted += 1
            if stopped_early or emitted >= limit:
                stopped_early = True
                break
        if state["last_t"] is None:
            raise VideoReadError(f"cannot read video {where}: no frame could be decoded "
                                 "(truncated or corrupt file?)")
        if not stopped_early:
            _check_complete(container, stream, where, state["last_t"], src_fps)
    finally:
        container.close()


def _to_rgb(frame: Any, wh: tuple[int, int], to_rgb: VideoReformatter) -> np.ndarray:
    return _resize(to_rgb.reformat(frame, format="rgb24").to_ndarray(), wh)


def _check_complete(container: Any, stream: Any, where: str, last_t: float, fps: float) -> None:
    """Raise if the decoded frames stop well before the duration the container declares."""
    duration = _stream_duration(container, stream)
    if duration is None:
        return
    covered = last_t + 1.0 / fps
    if duration - covered > TRUNCATION_SLACK_FRAMES / fps:
        raise VideoReadError(
            f"cannot read video {where}: frames stop at {covered:.3f} s but the container "
            f"declares {duration:.3f} s (truncated file?)")


def read(path: PathLike, *, fps: float | None = None, size: Size = None, start: float | None = None,
         end: float | None = None, max_frames: int | None = None) -> tuple[np.ndarray, float]:
    """Decode a video into a uint8 (T, H, W, 3) RGB clip; returns (clip, fps of the clip)."""
    _check_options(fps, start, end, max_frames, None)
    meta: dict[str, float] = {}
    clip = _collect(_frames(path, fps, size, start, end, max_frames, meta), meta)
    if clip is None:
        raise VideoReadError(f"no frames in {_describe(path)} between start={start} and end={end}")
    return clip, float(fps if fps is not None else meta["fps"])


def read_frames(path: PathLike, pick: Callable[[int], Any], *, fps: float | None = None,
                size: Size = None, start: float | None = None, end: float | None = None,
                max_frames: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Decode a clip of T frames but convert to RGB only the frames ``pick(T)`` names.

    Returns ``(frames, kept, T)``: ``kept`` the sorted unique indices, ``frames`` those frames,
    equal to ``read(...)[0][kept]``. For a model that reads a few frames of each clip.
    """
    _check_options(fps, start, end, max_frames, None)
    meta: dict[str, Any] = {}
    decoded = list(_frames(path, fps, size, start, end, max_frames, meta, convert=False))
    if not decoded:
        raise VideoReadError(f"no frames in {_describe(path)} between start={start} and end={end}")
    n = len(decoded)
    kept = np.unique(np.asarray(pick(n), dtype=np.int64))
    if kept.size and (kept[0] < 0 or kept[-1] >= n):
        raise ValueError(f"pick({n}) must name frames in 0..{n - 1}; got {kept.tolist()}")
    to_rgb = VideoReformatter()
    w, h = meta["wh"]
    out = np.empty((len(kept), h, w, 3), dtype=np.uint8)
    for j, i in enumerate(kept):
        out[j] = _to_rgb(decoded[i], meta["wh"], to_rgb)
    return out, kept, n


def _collect(frames: Iterator[np.ndarray], meta: dict[str, float]) -> np.ndarray | None:
    """Frames into one (T, H, W, 3) array, written in place when the container's frame count
    is known (no list of frames plus a second copy by ``np.stack``); None when there are none."""
    first = next(frames, None)
    if first is None:
        return None
    out = np.empty((max(int(meta.get("frames", 0)), 1), *first.shape), dtype=first.dtype)
    out[0] = first
    n = 1
    for frame in frames:
        if n == len(out):                 # the container under-counted: grow geometrically
            out = np.concatenate([out, np.empty_like(out)])
        out[n] = frame
        n += 1
    return out if n == len(out) else out[:n].copy()


# ----------------------------------------------------------------------------------- writing
def choose_pix_fmt(codec: str, width: int, height: int, pix_fmt: str | None = None) -> str:
    """The pixel format to encode with: the codec's default unless the frame size does not fit it."""
    supported = [f.name for f in (av.codec.Codec(codec, "w").video_formats or [])]
    if pix_fmt is not None:
        if supported and pix_fmt not in supported:
            raise ValueError(f"codec {codec!r} supports pixel formats {supported}; got {pix_fmt!r}")
        return pix_fmt
    fmt = DEFAULT_PIX_FMT.get(codec) or (supported[0] if supported else "yuv420p")
    if fmt not in supported and supported:
        fmt = supported[0]
    if codec not in NEEDS_EVEN_SIZE or _fits(fmt, width, height):
        return fmt
    for alt in FULL_CHROMA:
        if alt in supported:
            return alt
    return fmt          # the writer pads the frames to fit


def _fits(fmt: str, width: int, height: int) -> bool:
    sx, sy = SUBSAMPLING.get(fmt, (1, 1))
    return width % sx == 0 and height % sy == 0


def _padded(width: int, height: int, fmt: str) -> tuple[int, int]:
    sx, sy = SUBSAMPLING.get(fmt, (1, 1))
    return width + (-width) % sx, height + (-height) % sy


class VideoWriter:
    """Streaming encoder: ``with VideoWriter("out.mkv", 25) as w: w.write(frames)``.

    The container follows the extension (.mkv, .mp4, .avi, ...) or ``format``; frames are uint8
    RGB, one (H, W, 3) frame or a (T, H, W, 3) batch per call. ``width``/``height`` default to
    the first frame's. ``qscale`` fixes the quantiser (qmin = qmax), ``bit_rate`` caps the rate;
    other ``options`` go to the encoder as strings (e.g. {"crf": "18", "preset": "slow"}).
    Odd sizes that an encoder such as libx264 cannot hold in a subsampled format switch to a
    full-chroma format the codec supports (yuv444p); only a codec with none is edge-padded.
    ``bitexact`` asks muxer and encoder for reproducible bytes (same frames, same sha256).

    A codec the container cannot hold, an unknown extension or a missing folder is a
    ``ValueError`` naming them; leaving the ``with`` block on an exception drops the file.
    """

    def __init__(self, path: PathLike, fps: float, codec: str = "ffv1", width: int | None = None,
                 height: int | None = None, options: dict[str, Any] | None = None, *,
                 pix_fmt: str | None = None, bit_rate: int | None = None,
                 qscale: int | None = None, format: str | None = None, bitexact: bool = False) -> None:
        if not (isinstance(fps, (int, float, Fraction, np.number)) and fps > 0):
            raise ValueError(f"fps must be a positive number; got {fps!r}")
        try:
            av.codec.Codec(codec, "w")
        except (av.FFmpegError, ValueError) as exc:
            raise ValueError(f"unknown video encoder {codec!r}; try 'ffv1', 'libx264', 'mpeg4'") from exc
        if isinstance(path, (str, os.PathLike)):
            folder = Path(path).parent
            if not folder.is_dir():
                raise ValueError(f"cannot write video {_describe(path)}: folder {str(folder)!r} "
                                 "does not exist")
        self.path, self.fps, self.codec = path, fps, codec
        self.width, self.height = width, height
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.pix_fmt, self.bit_rate, self.qscale, self.format = pix_fmt, bit_rate, qscale, format
        self.bitexact = bitexact
        self._container: Any = None
        self._stream: Any = None
        self._pad = (0, 0)
        self.frames_written = 0

    def _start(self, width: int, height: int) -> None:
        self.width, self.height = self.width or width, self.height or height
        fmt = choose_pix_fmt(self.codec, self.width, self.height, self.pix_fmt)
        pw, ph = (_padded(self.width, self.height, fmt) if self.codec in NEEDS_EVEN_SIZE
                  else (self.width, self.height))
        self._pad = (pw - self.width, ph - self.height)
        target = os.fspath(self.path) if isinstance(self.path, (str, os.PathLike)) else self.path
        where = _describe(self.path)
        try:
            self._container = av.open(target, "w", format=self.format,
                                      container_options={"fflags": "+bitexact"} if self.bitexact else None)
        except (av.FFmpegError, OSError, ValueError) as exc:
            raise ValueError(f"cannot write video {where}: {self._no_container(exc)}") from exc
        try:
            rate = Fraction(self.fps).limit_denominator(1001)
            stream = self._container.add_stream(self.codec, rate=rate, options=self.options or None)
        except (av.FFmpegError, ValueError) as exc:
            container = self._container_name()
            self.abort()
            raise ValueError(f"cannot write video {where}: the {container} container "
                             f"cannot hold codec {self.codec!r} ({exc}); pick another codec or "
                             "extension (ffv1 and libx264 fit .mkv)") from exc
        stream.width, stream.height, stream.pix_fmt = pw, ph, fmt
        if self.bit_rate is not None:
            stream.codec_context.bit_rate = int(self.bit_rate)
        if self.qscale is not None:
            stream.codec_context.qmin = stream.codec_context.qmax = int(self.qscale)
        if self.bitexact:
            stream.codec_context.flags |= getattr(av.codec.context.Flags, "bitexact", 0)
        self._stream = stream

    def _container_name(self) -> str:
        return repr(self.format or self._container.format.name)

    def _no_container(self, exc: BaseException) -> str:
        if self.format:
            return f"no container format {self.format!r} ({exc})"
        if isinstance(self.path, (str, os.PathLike)):
            suffix = Path(os.fspath(self.path)).suffix or "(none)"
            return (f"no container format for the extension {suffix!r} ({exc}); "
                    "use .mkv, .mp4, .avi, .mov or .webm, or pass format=")
        return f"the output needs format= (a container name such as 'matroska') ({exc})"

    def write(self, frames: np.ndarray) -> None:
        """Encode one frame (H, W, 3) or a batch (T, H, W, 3) of uint8 RGB frames."""
        frames = np.asarray(frames)
        if frames.ndim == 3:
            frames = frames[None]
        if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
            raise ValueError("VideoWriter.write expects uint8 RGB frames (H, W, 3) or (T, H, W, 3); "
                             f"got {frames.dtype} {frames.shape}")
        if self._stream is None:
            self._start(frames.shape[2], frames.shape[1])
        if frames.shape[1:3] != (self.height, self.width):
            raise ValueError(f"VideoWriter expects frames of {self.height}x{self.width} (HxW); "
                             f"got {frames.shape[1]}x{frames.shape[2]}")
        px, py = self._pad
        for f in frames:
            if px or py:
                f = np.pad(f, ((0, py), (0, px), (0, 0)), mode="edge")
            vf = av.VideoFrame.from_ndarray(np.ascontiguousarray(f), format="rgb24")
            self._container.mux(self._stream.encode(vf))
            self.frames_written += 1

    def close(self) -> None:
        """Flush the encoder and finish the container (nothing to do before the first frame)."""
        if self._container is None:
            return
        try:
            if self._stream is not None:
                self._container.mux(self._stream.encode(None))
        finally:
            self._container.close()
            self._container = self._stream = None

    def abort(self) -> None:
        """Stop without finishing the file; a file this writer created at a path is deleted."""
        if self._container is not None:
            try:
                self._container.close()
            except (av.FFmpegError, OSError):
                pass                       # the file is deleted below anyway
            self._container = self._stream = None
            if isinstance(self.path, (str, os.PathLike)):
                Path(self.path).unlink(missing_ok=True)

    def __enter__(self) -> "VideoWriter":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write(path: PathLike, clip: np.ndarray, fps: float, codec: str = "ffv1",
          options: dict[str, Any] | None = None, *, pix_fmt: str | None = None,
          bit_rate: int | None = None, qscale: int | None = None, format: str | None = None,
          **more_options: Any) -> None:
    """Write a uint8 (T, H, W, 3) RGB clip to a video file (container from the extension).

    Default ``ffv1`` in .mkv is lossless RGB. ``libx264rgb`` with ``qp=0`` is lossless H.264;
    ``libx264`` with ``crf=...`` is the playable choice. Encoder options come as a dict
    (``options``) and/or as extra keywords.
    """
    options = {**(options or {}), **more_options}
    clip = np.asarray(clip)
    if clip.ndim != 4 or clip.shape[0] == 0 or clip.shape[-1] != 3 or clip.dtype != np.uint8:
        raise ValueError(f"write expects a uint8 (T, H, W, 3) RGB clip with T >= 1; got {clip.dtype} {clip.shape}")
    with VideoWriter(path, fps, codec, clip.shape[2], clip.shape[1], options, pix_fmt=pix_fmt,
                     bit_rate=bit_rate, qscale=qscale, format=format) as w:
        w.write(clip)


def to_bytes(clip: np.ndarray, fps: float, codec: str = "ffv1", format: str = "matroska",
             **kwargs: Any) -> bytes:
    """Encode a clip into an in-memory container (no temporary files)."""
    buf = io.BytesIO()
    write(buf, clip, fps, codec, format=format, **kwargs)
    return buf.getvalue()
