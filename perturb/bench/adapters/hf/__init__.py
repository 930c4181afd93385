"""``hf:NAME_OR_PATH[@REVISION][#MODE]``: Hugging Face video-text models, the family read from config.json.

Families and modes (default first): CLIP, SigLIP, SigLIP 2 ``#embed`` (dual, frames mean-pooled);
X-CLIP ``#logits`` (cross: video-conditioned prompts) or ``#embed``; BLIP ``#itm`` or ``#embed``;
BLIP-2 ``#itm``; Qwen2-VL, Qwen2.5-VL, LLaVA-NeXT-Video, LLaVA-OneVision ``#yesno`` (cross).
"""
from __future__ import annotations

from typing import Any

from .base import HfAdapter
from .runtime import CLIP_MEAN, CLIP_STD, Pixels, Runtime, pixels_from
from .spec import BY_NAME, FAMILIES, Family, HfSpec, parse_spec, pick_family, pick_mode, read_json

__all__ = ["FAMILIES", "HfAdapter", "load_hf", "parse_spec"]

HALF = (0.5, 0.5, 0.5)
DEFAULT_FRAMES = 8


def _adapter_class(family: Family, mode: str) -> type:
    from .dual import FrameDualEncoder
    from .itm import BlipEmbedder, ItmAdapter
    from .xclip import XClipAdapter, XClipEmbedder
    from .yesno import YesNoAdapter
    if family.name == "xclip":
        return XClipEmbedder if mode == "embed" else XClipAdapter
    if family.name in ("blip", "blip2"):
        return BlipEmbedder if mode == "embed" else ItmAdapter
    if mode == "yesno":
        return YesNoAdapter
    return FrameDualEncoder


def _pixels(family: Family, config: dict[str, Any], spec: HfSpec) -> Pixels:
    """Resolution and normalisation from the checkpoint (preprocessor config, else vision config)."""
    vision = config.get("vision_config") or {}
    pre = read_json(spec, "video_preprocessor_config.json") or read_json(spec, "preprocessor_config.json")
    mean, std = (HALF, HALF) if family.name in ("siglip", "siglip2", "llava_onevision") else (CLIP_MEAN, CLIP_STD)
    if family.name in ("qwen2_vl", "qwen2_5_vl"):       # its size entries are pixel budgets, not sides
        side = (pre or {}).get("size", {}).get("height", 224) if isinstance((pre or {}).get("size"), dict) else 224
        factor = int(vision.get("patch_size", 14)) * int(vision.get("spatial_merge_size", 2))
        side = max(factor, round(side / factor) * factor)
        pre = dict(pre or {}, size={"height": side, "width": side}, do_center_crop=False)
    if family.name == "siglip2":
        p = int(vision.get("patch_size", 16))
        side = int((max(1, int(vision.get("num_patches", 256))) ** 0.5)) * p
        pre = dict(pre or {}, size={"height": side, "width": side}, do_center_crop=False)
    return pixels_from(pre, int(vision.get("image_size", 224)), mean, std)


def load_hf(target: str, *, family: str | None = None, device: str = "auto", batch_size: int = 32,
            frames: int | None = None, dtype: str = "auto", precision: str = "auto",
            device_map: str | None = None) -> HfAdapter:
    """The adapter of an ``hf:`` target (``family`` forces one, e.g. ``clip`` for ``clip:``)."""
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    spec = parse_spec(target)
    config = read_json(spec, "config.json") or {}
    fam = BY_NAME[family] if family else pick_family(config, f"{spec.name}/config.json")
    mode = pick_mode(fam, spec.mode)
    if frames is None:
        frames = int((config.get("vision_config") or {}).get("num_frames", DEFAULT_FRAMES)) \
            if fam.name == "xclip" else DEFAULT_FRAMES
    if fam.name == "xclip":
        from .xclip import check_frames
        check_frames(config, frames)
    runtime = Runtime(device=device, dtype=dtype, precision=precision, batch_size=batch_size,
                      device_map=device_map)
    adapter = _adapter_class(fam, mode)(spec, fam, mode, runtime, frames, _pixels(fam, config, spec))
    adapter.setup(runtime.load(getattr(transformers, fam.cls), spec))
    return adapter
