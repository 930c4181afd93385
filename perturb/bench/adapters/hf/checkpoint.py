"""An ``hf:NAME_OR_PATH[@REVISION][#MODE]`` reference: parsed, checked (a local folder must hold
config.json) and read (its JSON configs, the hub commit it resolved to)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..protocol import ModelSpecError

MODES = ("embed", "logits", "itm", "yesno")


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
