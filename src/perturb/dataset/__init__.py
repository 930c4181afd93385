"""Dataset readers and the -P dataset builder."""
from __future__ import annotations

from .builder import BuildResult, build
from .items import Item
from .readers import read_dataset, read_generic, read_msrvtt, read_youcook2

__all__ = ["BuildResult", "Item", "build", "read_dataset", "read_generic", "read_msrvtt",
           "read_youcook2"]
