"""Decoding clips on PyAV: read, stream or pick frames (uint8 (T, H, W, 3) RGB).

Frames stream from the decoder one at a time, so a long video never has to sit in memory
whole; :func:`read` simply collects :func:`iter_frames`. A truncated stream raises
:class:`perturb.errors.VideoReadError` instead of returning partial frames.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Union

import av
import cv2
from av.video.reformatter import VideoReformatter
import numpy as np

from ...errors import VideoReadError
from .probe import PathLike, describe_source, open_video, stream_duration, stream_fps, stream_start

Size = Union[int, tuple[int, int], None]
# Time slack when deciding that a stream ended early (truncated), in frame durations.
TRUNCATION_SLACK_FRAMES = 1.5


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


def resize_frame(frame: np.ndarray, wh: tuple[int, int]) -> np.ndarray:
    """``frame`` at (W, H) ``wh``: area filter when shrinking, bilinear when growing."""
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
    origin = stream_start(stream)
    if start > 0:
        try:
            container.seek(int((origin + start) / stream.time_base), stream=stream, backward=True)
        except av.FFmpegError:
            container.seek(0, stream=stream)
    fps = stream_fps(stream)
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
    where = describe_source(path)
    container, stream = open_video(path)
    try:
        src_fps = stream_fps(stream)
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
    return resize_frame(to_rgb.reformat(frame, format="rgb24").to_ndarray(), wh)


def _check_complete(container: Any, stream: Any, where: str, last_t: float, fps: float) -> None:
    """Raise if the decoded frames stop well before the duration the container declares."""
    duration = stream_duration(container, stream)
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
        raise VideoReadError(f"no frames in {describe_source(path)} between start={start} and end={end}")
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
        raise VideoReadError(f"no frames in {describe_source(path)} between start={start} and end={end}")
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

