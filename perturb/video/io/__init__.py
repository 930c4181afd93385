"""Video file I/O on PyAV: read, stream, probe and write clips (uint8 (T, H, W, 3) RGB).

The work lives in three modules, one job each: :mod:`.probe` (opening, stream facts),
:mod:`.decode` (reading frames) and :mod:`.encode` (writing); every name stays importable from
here.
"""
from __future__ import annotations

from .decode import (Size, TRUNCATION_SLACK_FRAMES, _check_complete, _check_options, _collect,  # noqa: F401
                     _decoded, _frames, _resize, _spans, _to_rgb, iter_frames, output_size, read,
                     read_frames)
from .encode import (DEFAULT_PIX_FMT, FULL_CHROMA, NEEDS_EVEN_SIZE, SUBSAMPLING, VideoWriter,  # noqa: F401
                     _fits, _padded, choose_pix_fmt, to_bytes, write)
from .probe import (PathLike, VideoInfo, _describe, _open, _stream_duration, _stream_fps,  # noqa: F401
                    _stream_start, probe)
