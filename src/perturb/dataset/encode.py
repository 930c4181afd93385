"""Output formats of the builder: lossless video (FFV1 or x264 qp 0) or raw frames (.npy/.npz).

Every format is a streaming sink (``open_sink(format, path, fps)`` then ``.write(chunk)`` and
``.close()``) and adds no compression artefacts of its own, so a perturbation's damage (or the
absence of it) is exactly what is stored. Video formats are written by
:class:`perturb.video.io.VideoWriter` in bit-exact mode with single-threaded encoders, so the
same frames give the same sha256.
"""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Format:
    """One output format: file extension and, for video, the encoder and its settings."""

    name: str
    ext: str
    codec: str | None = None
    container: str | None = None
    pix_fmt: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    summary: str = ""


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("lossless", "mkv", "ffv1", "matroska", "bgr0", (("threads", "1"),),
           "FFV1 in Matroska, lossless RGB (default)"),
    Format("x264", "mkv", "libx264rgb", "matroska", "rgb24",
           (("qp", "0"), ("preset", "ultrafast"), ("threads", "1")),
           "H.264 RGB with qp 0 (lossless), in Matroska"),
    Format("npy", "npy", summary="raw uint8 frames (T, H, W, 3), numpy .npy"),
    Format("npz", "npz", summary="raw uint8 frames, zip-deflated numpy .npz (key 'frames')"),
)}
ALIASES = {"ffv1": "lossless", "mkv": "lossless", "h264": "x264", "raw": "npy"}


def get_format(name: str) -> Format:
    """The Format for a name ('lossless', 'x264', 'npy', 'npz' or an alias)."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in FORMATS:
        raise ValueError(f"unknown output format {name!r}; expected one of "
                         f"{', '.join(FORMATS)} (aliases: {', '.join(ALIASES)})")
    return FORMATS[key]


class Sink(Protocol):
    """A streaming output: frames in, a complete file after close()."""

    frames_written: int

    def write(self, frames: np.ndarray) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


class NpySink:
    """Raw frames into a .npy file whose header (frame count) is fixed up on close."""

    HEADER = 128     # bytes: room for any (T, H, W, 3) shape, a multiple of 64 as numpy wants

    def __init__(self, fmt: Format, path: str, fps: float) -> None:
        self.path = path
        self.frames_written = 0
        self._shape: tuple[int, ...] | None = None
        self._f = open(path, "wb")
        self._f.write(b"\0" * self.HEADER)

    def write(self, frames: np.ndarray) -> None:
        """Append a chunk (T, H, W, 3) of uint8 frames."""
        frames = _check_frames(frames)
        if self._shape is None:
            self._shape = frames.shape[1:]
        elif frames.shape[1:] != self._shape:
            raise ValueError(f"frame size changed from {self._shape} to {frames.shape[1:]}")
        self._f.write(frames.tobytes())
        self.frames_written += len(frames)

    def close(self) -> None:
        """Write the final header and close."""
        if self._shape is None:
            raise ValueError(f"no frames were written to {self.path}")
        self._f.seek(0)
        self._f.write(npy_header((self.frames_written, *self._shape), self.HEADER))
        self._f.close()

    def abort(self) -> None:
        """Stop without finishing the file (the caller deletes it)."""
        self._f.close()


class NpzSink(NpySink):
    """Raw frames, deflated into a .npz (member 'frames.npy') on close; bounded memory."""

    def __init__(self, fmt: Format, path: str, fps: float) -> None:
        self.final = path
        super().__init__(fmt, path + ".raw", fps)

    def close(self) -> None:
        """Finish the raw .npy, then deflate it into the .npz chunk by chunk."""
        super().close()
        with zipfile.ZipFile(self.final, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
            info = zipfile.ZipInfo("frames.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(self.path, "rb") as src, z.open(info, "w", force_zip64=True) as dst:
                while block := src.read(1 << 22):
                    dst.write(block)
        os.remove(self.path)


def npy_header(shape: tuple[int, ...], size: int) -> bytes:
    """A version 1.0 .npy header for uint8 C-order data, padded to exactly ``size`` bytes."""
    text = "{'descr': '|u1', 'fortran_order': False, 'shape': %s, }" % (tuple(int(s) for s in shape),)
    body = text.ljust(size - 10 - 1) + "\n"
    if len(body) + 10 != size:
        raise ValueError(f"shape {shape} does not fit a {size}-byte .npy header")
    return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body.encode("latin1")


def _check_frames(frames: np.ndarray) -> np.ndarray:
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8 or not len(frames):
        raise ValueError(f"expected uint8 frames (T, H, W, 3) with T >= 1; got {frames.dtype} {frames.shape}")
    return np.ascontiguousarray(frames)


def open_sink(fmt: Format | str, path: str, fps: float) -> Sink:
    """A streaming writer for ``fmt`` at ``path`` (the caller picks the name; no extension logic)."""
    fmt = get_format(fmt) if isinstance(fmt, str) else fmt
    if fmt.codec is not None:
        from ..video.io import VideoWriter

        return VideoWriter(path, fps, fmt.codec, options=dict(fmt.options), pix_fmt=fmt.pix_fmt,
                           format=fmt.container, bitexact=True)
    return (NpzSink if fmt.name == "npz" else NpySink)(fmt, path, fps)


def load(path: str | os.PathLike) -> np.ndarray:
    """Frames of a builder output, whatever its format (uint8 (T, H, W, 3))."""
    p = os.fspath(path)
    if p.endswith(".npy"):
        return np.load(p)
    if p.endswith(".npz"):
        with np.load(p) as z:
            return z["frames"]
    from ..video import io

    return io.read(p)[0]

