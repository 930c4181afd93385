"""``hf:NAME_OR_PATH[@REVISION][#MODE]``: Hugging Face video-text models, the family read from config.json.

Families and modes (default first): CLIP, SigLIP, SigLIP 2 ``#embed`` (dual, frames mean-pooled);
X-CLIP ``#logits`` (cross: video-conditioned prompts) or ``#embed``; BLIP ``#itm`` or ``#embed``;
BLIP-2 ``#itm``; Qwen2-VL, Qwen2.5-VL, LLaVA-NeXT-Video, LLaVA-OneVision ``#yesno`` (cross).
"""
from __future__ import annotations

from typing import Any

from ..protocol import ModelSpecError
from .base import HfAdapter
from .processors import PROCESSOR, SAMPLING
from .runtime import Pixels, Runtime, pixels_from
from .spec import BY_NAME, FAMILIES, Family, HfSpec, parse_spec, pick_family, pick_mode, read_json

__all__ = ["FAMILIES", "HfAdapter", "load_hf", "parse_spec"]

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
    """The checkpoint's processor as :class:`Pixels`: its (video) preprocessor config, missing keys
    from the processor class (a checkpoint with no config at all: the vision config's image size)."""
    vision = config.get("vision_config") or {}
    pre = read_json(spec, "video_preprocessor_config.json") or read_json(spec, "preprocessor_config.json")
    defaults = dict(PROCESSOR[family.name][1])
    if pre is None:
        side = int(vision.get("image_size", 224))
        if "crop_size" in defaults:
            defaults.update(size={"shortest_edge": side}, crop_size={"height": side, "width": side})
        elif "height" in (defaults.get("size") or {}):
            defaults.update(size={"height": side, "width": side})
    given = pre or {}

    def pick(key: str, vision_key: str) -> int:      # the config's, else the vision config's, else the class's
        return int(given.get(key) or vision.get(vision_key) or defaults[key])
    if family.name == "siglip2":
        return pixels_from(pre, defaults, rule="naflex", patch=pick("patch_size", "patch_size"),
                           max_patches=pick("max_num_patches", "num_patches"))
    if family.name in ("qwen2_vl", "qwen2_5_vl"):
        size = {**defaults["size"], **(given.get("size") or {})}
        factor = pick("patch_size", "patch_size") * pick("merge_size", "spatial_merge_size")
        return pixels_from(dict(given, size=None), dict(defaults, size=None), rule="smart", patch=factor,
                           min_pixels=int(given.get("min_pixels") or size["shortest_edge"]),
                           max_pixels=int(given.get("max_pixels") or size["longest_edge"]))
    return pixels_from(pre, defaults)


def load_hf(target: str, *, family: str | None = None, device: str = "auto", batch_size: int = 32,
            frames: int | None = None, dtype: str = "auto", precision: str = "auto",
            device_map: str | None = None, frame_sampling: str | None = None) -> HfAdapter:
    """The adapter of an ``hf:`` target (``family`` forces one, e.g. ``clip`` for ``clip:``);
    ``frame_sampling`` (centre, start, linspace) overrides the family's convention."""
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
    if fam.name in ("qwen2_vl", "qwen2_5_vl"):      # frames go in groups: rounded as its processor rounds
        tp = int((config.get("vision_config") or {}).get("temporal_patch_size", 2))
        frames = max(tp, round(frames / tp) * tp)
    if fam.name == "xclip":
        from .xclip import check_frames
        check_frames(config, frames)
    runtime = Runtime(device=device, dtype=dtype, precision=precision, batch_size=batch_size,
                      device_map=device_map)
    sampling = frame_sampling or SAMPLING[fam.name][0]
    if sampling.startswith("fps:"):
        raise ModelSpecError(f"hf models read a fixed number of frames per clip; --frame-sampling {sampling} "
                             "is not supported for them (use centre, start or linspace with --frames)")
    adapter = _adapter_class(fam, mode)(spec, fam, mode, runtime, frames, _pixels(fam, config, spec), sampling)
    adapter.setup(runtime.load(getattr(transformers, fam.cls), spec))
    return adapter
