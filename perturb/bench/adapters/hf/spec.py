"""``hf:NAME_OR_PATH[@REVISION][#MODE]``: the model families, as data, and picking one.

The family comes from ``config.json`` (``architectures`` first, then ``model_type``). Each
:class:`~.family.Family` says which adapter serves each scoring mode (its default first), how
its processor makes pixels, how its text is padded and how it samples frames; the adapters read
these fields and never a family's name. The reference itself is parsed in :mod:`.checkpoint`.
"""
from __future__ import annotations

from typing import Any

from ..protocol import ModelSpecError
from .checkpoint import (HfSpec, check_local, commit_of, file_path, offline, parse_spec,  # noqa: F401
                         read_json)
from .dual import FrameDualEncoder
from .family import Family, TextInputs
from .itm import BlipEmbedder, ItmAdapter
from .processors import PROCESSOR, SAMPLING
from .xclip import XClipAdapter, XClipEmbedder
from .yesno import LLAVA_NEXT_CHAT, ONEVISION_CHAT, QWEN_CHAT, VIDEO_LLAVA_CHAT, YesNoAdapter

EMBED = {"embed": FrameDualEncoder}
ITM = {"itm": ItmAdapter, "embed": BlipEmbedder}
YESNO = {"yesno": YesNoAdapter}


def _family(name: str, cls: str, model_types: tuple[str, ...], adapters: dict[str, type], **extra: Any) -> Family:
    """A family with its processor's defaults and frame-sampling convention (:mod:`.processors`)."""
    processor, defaults = PROCESSOR[name]
    sampling, source = SAMPLING[name]
    return Family(name, cls, model_types, adapters, processor, defaults, sampling, source, **extra)


FAMILIES = (
    _family("clip", "CLIPModel", ("clip",), EMBED),
    _family("siglip", "SiglipModel", ("siglip",), EMBED, text=TextInputs(padding="max_length", mask=False)),
    _family("siglip2", "Siglip2Model", ("siglip2",), EMBED, geometry="naflex",
            text=TextInputs(padding="max_length", max_length=64, lower=True)),
    _family("xclip", "XCLIPModel", ("xclip",), {"logits": XClipAdapter, "embed": XClipEmbedder}, frames="config"),
    _family("blip", "BlipForImageTextRetrieval", ("blip",), ITM, itm_head=("use_itm_head", "itm_score")),
    _family("blip2", "Blip2ForImageTextRetrieval", ("blip-2", "blip_2"), {"itm": ItmAdapter},
            itm_head=("use_image_text_matching_head", "logits_per_image")),
    _family("qwen2_vl", "Qwen2VLForConditionalGeneration", ("qwen2_vl",), YESNO, geometry="smart",
            frames="groups", chat=QWEN_CHAT),
    _family("qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration", ("qwen2_5_vl",), YESNO, geometry="smart",
            frames="groups", chat=QWEN_CHAT),
    _family("llava_next_video", "LlavaNextVideoForConditionalGeneration", ("llava_next_video",), YESNO,
            chat=LLAVA_NEXT_CHAT),
    _family("llava_onevision", "LlavaOnevisionForConditionalGeneration", ("llava_onevision",), YESNO,
            chat=ONEVISION_CHAT),
    _family("video_llava", "VideoLlavaForConditionalGeneration", ("video_llava",), YESNO, chat=VIDEO_LLAVA_CHAT),
)
BY_NAME = {f.name: f for f in FAMILIES}


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
