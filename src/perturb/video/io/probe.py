"""Opening and probing video files on PyAV: what a container says about its first video stream.

A file that is not a readable video (missing, empty, not a video, no video stream) raises
:class:`perturb.errors.VideoReadError`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Union

import av

from ...errors import VideoReadError

PathLike = Union[str, os.PathLike, BinaryIO]


@dataclass(frozen=True)
class VideoInfo:
    """What a container says about its first video stream."""

    width: int
    height: int
    fps: float
    frames: int | None          # None when the container does not store a frame count
    duration: float | None      # seconds; None when unknown
    codec: str


def describe_source(path: PathLike) -> str:
    """How an error names a video source: the path quoted, or "the given stream" for a file object."""
    return repr(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else "the given stream"


def open_video(path: PathLike) -> tuple[Any, Any]:
    """Open a container and its first video stream, or raise VideoReadError."""
    where = describe_source(path)
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


def stream_fps(stream: Any) -> float:
    """A video stream's frame rate (average, else guessed, else base rate; 25 when none is known)."""
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    return float(rate) if rate else 25.0


def stream_duration(container: Any, stream: Any) -> float | None:
    """A video stream's duration in seconds (the container's when the stream has none), or None."""
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return None


def stream_start(stream: Any) -> float:
    """A video stream's first timestamp in seconds (0 when unknown)."""
    if stream.start_time is not None and stream.time_base is not None:
        return float(stream.start_time * stream.time_base)
    return 0.0


def probe(path: PathLike) -> VideoInfo:
    """Size, frame rate, frame count and duration of a video without decoding it."""
    container, stream = open_video(path)
    try:
        cc = stream.codec_context
        return VideoInfo(width=cc.width, height=cc.height, fps=stream_fps(stream),
                         frames=int(stream.frames) or None,
                         duration=stream_duration(container, stream), codec=cc.name)
    finally:
        container.close()

