"""Encoding clips on PyAV: :class:`VideoWriter`, :func:`write` and :func:`to_bytes`."""
from __future__ import annotations

import io
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np

from .probe import PathLike, describe_source

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
                raise ValueError(f"cannot write video {describe_source(path)}: folder {str(folder)!r} "
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
        where = describe_source(self.path)
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


def write_unless_same(path: PathLike, clip: np.ndarray, fps: float) -> bool:
    """Write a clip losslessly (``ffv1``) unless ``path`` already decodes to exactly it at ``fps``:
    then the file is left alone, as whatever keys on it (an embedding cache) expects; a container
    holds a random segment id, so rewriting the same frames would not give the same bytes.
    Whether it wrote."""
    from .decode import read

    clip = np.asarray(clip)
    try:
        old, old_fps = read(path)
        if old_fps == fps and old.shape == clip.shape and np.array_equal(old, clip):
            return False
    except (OSError, ValueError, av.error.FFmpegError):       # missing or unreadable: written anew
        pass
    write(path, clip, fps)
    return True


def to_bytes(clip: np.ndarray, fps: float, codec: str = "ffv1", format: str = "matroska",
             **kwargs: Any) -> bytes:
    """Encode a clip into an in-memory container (no temporary files)."""
    buf = io.BytesIO()
    write(buf, clip, fps, codec, format=format, **kwargs)
    return buf.getvalue()
