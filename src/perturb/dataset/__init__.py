"""Dataset readers (retrieval and labelled) and the -P dataset builder."""
from __future__ import annotations

from .build_options import BuildOptions
from .builder import BuildResult, build
from .classes import label_index, map_labels, read_classes
from .items import Item, LabelledItem
from .labelled import read_class_folders, read_kinetics, read_label_file, read_labelled
from .readers import read_dataset, read_generic, read_msrvtt, read_youcook2
from .subset import keep_subset

__all__ = ["BuildOptions", "BuildResult", "Item", "LabelledItem", "build", "keep_subset", "label_index",
           "map_labels", "read_class_folders", "read_classes", "read_dataset", "read_generic", "read_kinetics",
           "read_label_file", "read_labelled", "read_msrvtt", "read_youcook2"]
