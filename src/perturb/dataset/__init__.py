"""Dataset readers and the -P dataset builder."""
from __future__ import annotations

from .build_options import BuildOptions
from .builder import BuildResult, build
from .items import Item
from .readers import read_dataset, read_generic, read_msrvtt, read_youcook2

__all__ = ["BuildOptions", "BuildResult", "Item", "build", "read_dataset", "read_generic", "read_msrvtt",
           "read_youcook2"]
