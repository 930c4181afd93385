"""``hf:NAME_OR_PATH[@REVISION][#MODE]``: parse the spec, read the checkpoint's configs, pick the family.

The family comes from ``config.json`` (``architectures`` first, then ``model_type``); each family
lists the scoring modes it supports, its default first.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..protocol import ModelSpecError

MODES = ("embed", "logits", "itm", "yesno")


@dataclass(frozen=True)
class Family:
    """A model family: the transformers class to load and the scoring modes it supports (default first)."""

    name: str
    cls: str
    modes: tuple[str, ...]
    model_types: tuple[str, ...]


FAMILIES = (
    Family("clip", "CLIPModel", ("embed",), ("clip",)),
    Family("siglip", "SiglipModel", ("embed",), ("siglip",)),
    Family("siglip2", "Siglip2Model", ("embed",), ("siglip2",)),
    Family("xclip", "XCLIPModel", ("logits", "embed"), ("xclip",)),
    Family("blip", "BlipForImageTextRetrieval", ("itm", "embed"), ("blip",)),
    Family("blip2", "Blip2ForImageTextRetrieval", ("itm",), ("blip-2", "blip_2")),
    Family("qwen2_vl", "Qwen2VLForConditionalGeneration", ("yesno",), ("qwen2_vl",)),
    Family("qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration", ("yesno",), ("qwen2_5_vl",)),
    Family("llava_next_video", "LlavaNextVideoForConditionalGeneration", ("yesno",), ("llava_next_video",)),
    Family("llava_onevision", "LlavaOnevisionForConditionalGeneration", ("yesno",), ("llava_onevision",)),
    Family("video_llava", "VideoLlavaForConditionalGeneration", ("yesno",), ("video_llava",)),
)
BY_NAME = {f.name: f for f in FAMILIES}


@dataclass(frozen=True)
class HfSpec:
    """A parsed ``hf:`` target."""

    name: str
    revision: str | None = None
    mode: str | None = None

    @property
    def local(self) -> bool:
        return os.path.isdir(self.name)


def parse_spec(target: str) -> HfSpec:
    """``NAME_OR_PATH[@REVISION][#MODE]`` -> :class:`HfSpec` (ValueError on an empty part or unknown mode)."""
    rest, hash_, mode = str(target).partition("#")
    name, at, revision = rest.partition("@")
    if not name or (at and not revision) or (hash_ and mode not in MODES):
        raise ModelSpecError(f"expected hf:NAME_OR_PATH[@REVISION][#{'|'.join(MODES)}]; got hf:{target!r}")
    return HfSpec(name, revision or None, mode or None)


def _path_like(name: str) -> bool:
    """A name that can only be a folder: absolute, relative with ./ or ../, ~, or deeper than ORG/NAME."""
    return name.startswith(("/", "./", "../", "~", "\\")) or name in (".", "..") or name.count("/") > 1


def check_local(spec: HfSpec, kind: str = "hf") -> None:
    """A local checkpoint must be a folder with config.json: a ModelSpecError saying which is missing."""
    name = os.path.expanduser(spec.name)
    if os.path.isdir(name):
        if not os.path.isfile(os.path.join(name, "config.json")):
            raise ModelSpecError(f"{kind}:{spec.name}: the folder has no config.json; expected a checkpoint "
                                 f"folder (as written by save_pretrained) or a hub name ORG/NAME")
    elif _path_like(spec.name) or os.path.exists(name):
        raise ModelSpecError(f"{kind}:{spec.name}: no such folder; expected a checkpoint folder holding "
                             f"config.json, or a hub name ORG/NAME")


def offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` asks for local files only."""
    return os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false")


def file_path(spec: HfSpec, filename: str) -> str | None:
    """Where a file of the checkpoint lies (local folder or hub cache), or None when it has none."""
    if spec.local:
        path = os.path.join(spec.name, filename)
        return path if os.path.isfile(path) else None
    from huggingface_hub import hf_hub_download
    try:
        return hf_hub_download(spec.name, filename, revision=spec.revision, local_files_only=offline())
    except Exception:                          # noqa: BLE001 - a missing optional file
        if filename == "config.json":
            raise
        return None


def read_json(spec: HfSpec, filename: str) -> dict[str, Any] | None:
    """A JSON file of the checkpoint, or None when it has none."""
    path = file_path(spec, filename)
    if path is None:
        return None
    with open(path) as f:
        return json.load(f)


def commit_of(spec: HfSpec) -> str | None:
    """The hub commit a hub checkpoint resolved to (its snapshot folder's name); None for a local folder."""
    if spec.local:
        return None
    snapshot = os.path.dirname(file_path(spec, "config.json") or "")
    parent = os.path.basename(os.path.dirname(snapshot))
    return os.path.basename(snapshot) if parent == "snapshots" else None


def pick_family(config: dict[str, Any], where: str = "config.json") -> Family:
    """The family of a checkpoint from its config (``architectures``, then ``model_type``)."""
    for arch in config.get("architectures") or ():
        for fam in FAMILIES:
            if fam.cls == arch:
                return fam
    model_type = config.get("model_type")
    for fam in FAMILIES:
        if model_type in fam.model_types:
            return fam
    known = ", ".join(f.cls for f in FAMILIES)
    raise ModelSpecError(f"{where}: no hf family for architectures={config.get('architectures')} "
                     f"model_type={model_type!r}; supported: {known}")


def pick_mode(family: Family, mode: str | None) -> str:
    """The scoring mode: the one asked for if the family supports it, else the family's default."""
    if mode is None:
        return family.modes[0]
    if mode not in family.modes:
        raise ModelSpecError(f"{family.cls} supports #{', #'.join(family.modes)}; got #{mode}")
    return mode
