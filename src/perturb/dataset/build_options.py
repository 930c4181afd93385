"""The build's options beyond what to build: where it runs, what it writes, how it resumes.

One frozen object, built with keywords (``BuildOptions(jobs=4, format="npz")``) by an API caller
or once by ``perturb build``, and passed whole down the build.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..clusters import DEFAULT_CONNECT_TIMEOUT
from . import encode
from .work_units import Preprocess


@dataclass(frozen=True, kw_only=True)
class BuildOptions:
    """How :func:`perturb.dataset.build` runs (the defaults: every core on this machine, lossless
    video, the dataset's own size and rate, every item, outputs re-hashed on resume)."""

    jobs: int | None = None                 # workers (None: all cores; dask/ray without a scheduler: local)
    backend: str = "loky"                   # loky (one machine), dask or ray
    scheduler: str | None = None            # a dask scheduler (tcp://host:8786) or ray address
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT   # seconds a scheduler has to answer
    format: str = "lossless"                # lossless (FFV1/MKV), x264, npy or npz
    short_side: int | None = None           # resize so the short side is this many pixels first
    fps: float | None = None                # resample to this frame rate first
    per_frame: bool = False                 # a new weather layer every frame, on the ops that take it
    limit: int | None = None                # only the first N items
    verify: bool = True                     # on resume re-hash outputs (False: trust recorded sizes)
    parquet: bool = False                   # also write manifest.parquet
    progress: bool = True                   # progress bars
    command: str | None = None              # the command recorded in dataset.json (None: sys.argv)

    def __post_init__(self) -> None:
        limit = self.limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"limit must be an int >= 1 (the first N items) or None; got {limit!r}")

    @property
    def preprocess(self) -> Preprocess:
        """The resampling before perturbing."""
        return Preprocess(self.short_side, self.fps)

    @property
    def output_format(self) -> encode.Format:
        """The output format (a ValueError names the formats for an unknown one)."""
        return encode.get_format(self.format)

