"""An ``hf:NAME_OR_PATH[@REVISION][#MODE]`` reference: parsed, checked (a local folder must hold
config.json and a tokenizer; a hub name must be in the local cache or the hub reachable) and read
(its JSON configs, the hub commit it resolved to)."""
from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlparse

from ..protocol import ModelSpecError

MODES = ("embed", "logits", "itm", "yesno", "classify")


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


# The files of which a saved tokenizer has at least one (fast tokenizers, BPE, WordPiece, SentencePiece).
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "vocab.txt", "spiece.model", "tokenizer.model",
                   "sentencepiece.bpe.model")
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def check_tokenizer(spec: HfSpec, kind: str = "hf") -> None:
    """A local folder must hold its tokenizer: without one transformers builds an empty vocabulary
    and every caption becomes unknown tokens. A ModelSpecError names the files looked for."""
    if spec.local and not any(os.path.isfile(os.path.join(spec.name, f)) for f in TOKENIZER_FILES):
        raise ModelSpecError(f"{kind}:{spec.name}: the folder has no tokenizer files (none of "
                             f"{', '.join(TOKENIZER_FILES)}); save the tokenizer or processor next to "
                             "the model (processor.save_pretrained(FOLDER), or tokenizer.save_pretrained)")


def _offline_by_request() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() not in ("0", "", "false", "no", "off")


@lru_cache(maxsize=1)
def _hub_unreachable() -> bool:
    """No route to the hub's host (one connection attempt, 3 s at most, once per process); a
    proxy in the environment is trusted to reach it."""
    if any(os.environ.get(v) for v in PROXY_VARIABLES):
        return False
    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    try:
        socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)),
                                 timeout=3).close()
        return False
    except OSError:
        return True


def offline() -> bool:
    """True when only local files can be had: ``HF_HUB_OFFLINE`` asks for that, or the hub cannot
    be reached (then asking it would only retry for half a minute)."""
    return _offline_by_request() or _hub_unreachable()


def not_cached(spec: HfSpec, kind: str = "hf", partly: bool = False) -> str:
    """The message for a hub model that is not (or only ``partly``) in the local cache while the
    hub is out of reach."""
    from huggingface_hub import constants

    why = "HF_HUB_OFFLINE is set" if _offline_by_request() else "the hub cannot be reached (no network)"
    where = "only partly in" if partly else "not in"
    return (f"{kind}:{spec.name} is {where} the local Hugging Face cache ({constants.HF_HUB_CACHE}) and {why}; "
            f"download it where there is network (huggingface-cli download {spec.name}) and bring the "
            "cache along, or pass a local folder (hf:FOLDER, as written by save_pretrained)")


# The heads of the classifier checkpoints (config.json's ``architectures``): models that read no text.
CLASSIFIER_HEADS = ("ForImageClassification", "ForImageClassificationWithTeacher", "ForVideoClassification")


def is_classifier(config: dict[str, Any]) -> bool:
    """Whether ``architectures`` names an image or video classification head."""
    return any(str(name).endswith(CLASSIFIER_HEADS) for name in config.get("architectures") or ())


def check_available(spec: HfSpec, kind: str = "hf") -> None:
    """Before any work: a local folder holds a tokenizer (unless it is a classifier, which reads no
    text); a hub model is cached or can be fetched."""
    if spec.local:
        if not is_classifier(read_json(spec, "config.json") or {}):
            check_tokenizer(spec, kind)
    else:
        file_path(spec, "config.json", kind)


# (hub cache, name, revision, file) -> where it lies: each file of a hub checkpoint is resolved once
# per process (the early check, the family's config, the commit in the model id all ask for config.json).
_HUB_PATHS: dict[tuple[str, str, str | None, str], str | None] = {}


def file_path(spec: HfSpec, filename: str, kind: str = "hf") -> str | None:
    """Where a file of the checkpoint lies (local folder or hub cache), or None when it has none.
    config.json is required: a ModelSpecError when the hub model is neither cached nor reachable,
    or the hub has no such model."""
    if spec.local:
        path = os.path.join(spec.name, filename)
        return path if os.path.isfile(path) else None
    from huggingface_hub import constants
    key = (constants.HF_HUB_CACHE, spec.name, spec.revision, filename)
    if key not in _HUB_PATHS:
        _HUB_PATHS[key] = _hub_path(spec, filename, kind)
    return _HUB_PATHS[key]


def _hub_path(spec: HfSpec, filename: str, kind: str) -> str | None:
    """A hub checkpoint's file from the local cache, or downloaded where the hub can be reached."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError
    local_only = offline()
    try:
        return hf_hub_download(spec.name, filename, revision=spec.revision, local_files_only=local_only)
    except (RepositoryNotFoundError, RevisionNotFoundError) as e:
        if filename != "config.json":
            return None
        what = f"revision {spec.revision!r}" if isinstance(e, RevisionNotFoundError) else "model"
        raise ModelSpecError(f"{kind}:{spec.name}: no such {what} on the Hugging Face hub (a private or "
                             "gated model needs `huggingface-cli login`)") from None
    except Exception:                          # noqa: BLE001 - a missing optional file
        if filename != "config.json":
            return None
        if local_only:
            raise ModelSpecError(not_cached(spec, kind)) from None
        raise


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
