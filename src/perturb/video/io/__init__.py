"""Video files and streams on PyAV, one job a module: :mod:`.probe` (opening, stream facts),
:mod:`.decode` (reading frames), :mod:`.encode` (writing), :mod:`.codec_stream` (a clip through a
codec and back, in memory). The public calls are handed on here: ``perturb.video.io.read(path)``."""
from __future__ import annotations

from .decode import iter_frames, read, read_frames
from .encode import VideoWriter, to_bytes, write, write_unless_same
from .probe import VideoInfo, probe

__all__ = ["VideoInfo", "VideoWriter", "iter_frames", "probe", "read", "read_frames", "to_bytes", "write",
           "write_unless_same"]
