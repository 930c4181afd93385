"""``hf:NAME_OR_PATH[@REVISION][#MODE]``: Hugging Face video-text models, the family read from config.json.

Families and modes (default first): CLIP, SigLIP, SigLIP 2 ``#embed`` (dual, frames mean-pooled);
X-CLIP ``#logits`` (cross: video-conditioned prompts) or ``#embed``; BLIP ``#itm`` or ``#embed``;
BLIP-2 ``#itm``; Qwen2-VL, Qwen2.5-VL, LLaVA-NeXT-Video, LLaVA-OneVision ``#yesno`` (cross);
image classifiers (ViT, DeiT, BEiT, Swin, ConvNeXt, ResNet) and video classifiers (VideoMAE,
TimeSformer, ViViT) ``#classify``.
What sets each family apart is data on its :class:`~.family.Family` row (:data:`~.families.FAMILIES`).
"""
from __future__ import annotations

from typing import Any

from ....options import options_object
from ..model_options import ModelOptions
from ..protocol import ModelSpecError
from .base import HfAdapter
from .checkpoint import HfSpec, parse_spec, read_json
from .families import BY_NAME, FAMILIES, pick_family, pick_mode
from .family import Family
from .runtime import Pixels, Runtime, pixels_from

__all__ = ["FAMILIES", "HfAdapter", "load_hf", "parse_spec"]

DEFAULT_FRAMES = 8


def _pixels(family: Family, config: dict[str, Any], spec: HfSpec) -> Pixels:
    """The checkpoint's processor as :class:`Pixels`: its (video) preprocessor config, missing keys
    from the processor class (a checkpoint with no config at all: the vision config's image size)."""
    vision = _vision(config)
    pre = read_json(spec, "video_preprocessor_config.json") or read_json(spec, "preprocessor_config.json")
    defaults = dict(family.defaults)
    if pre is None:
        side = int(vision.get("image_size", 224))
        if "crop_size" in defaults:
            defaults.update(size={"shortest_edge": side}, crop_size={"height": side, "width": side})
        elif "height" in (defaults.get("size") or {}):
            defaults.update(size={"height": side, "width": side})
        elif "crop_pct" in defaults:             # ConvNeXt: the short side (its crop_pct crop follows)
            defaults.update(size={"shortest_edge": side})
    given = pre or {}

    def pick(key: str, vision_key: str) -> int:      # the config's, else the vision config's, else the class's
        return int(given.get(key) or vision.get(vision_key) or defaults[key])
    if family.geometry == "naflex":
        return pixels_from(pre, defaults, rule="naflex", patch=pick("patch_size", "patch_size"),
                           max_patches=pick("max_num_patches", "num_patches"))
    if family.geometry == "smart":
        size = {**defaults["size"], **(given.get("size") or {})}
        factor = pick("patch_size", "patch_size") * pick("merge_size", "spatial_merge_size")
        return pixels_from(dict(given, size=None), dict(defaults, size=None), rule="smart", patch=factor,
                           min_pixels=int(given.get("min_pixels") or size["shortest_edge"]),
                           max_pixels=int(given.get("max_pixels") or size["longest_edge"]))
    return pixels_from(pre, defaults)


def _vision(config: dict[str, Any]) -> dict[str, Any]:
    """The vision settings: a composite model's ``vision_config``, else the config itself (classifiers)."""
    return config.get("vision_config") or config


def _frames(family: Family, config: dict[str, Any], frames: int | None) -> int:
    """The frames per clip under the family's rule: any count (default 8); exactly the checkpoint's
    ``num_frames`` (X-CLIP's temporal transformer and the video classifiers' position embeddings
    have one position per frame or tubelet, so any other count is refused before loading); one (an
    image classifier); or whole groups of ``temporal_patch_size``, rounded as the processor rounds."""
    vision = _vision(config)
    if family.frames in ("config", "one"):
        need = 1 if family.frames == "one" else int(vision.get("num_frames", DEFAULT_FRAMES))
        if frames is not None and frames != need:
            where = ("an image classifier" if family.frames == "one" else
                     "vision_config.num_frames" if config.get("vision_config") else "num_frames in config.json")
            raise ModelSpecError(f"{family.cls} checkpoint takes exactly {need} frame{'s' * (need > 1)} "
                                 f"({where}); got --frames {frames}")
        return need
    frames = DEFAULT_FRAMES if frames is None else frames
    if family.frames == "groups":
        tp = int(vision.get("temporal_patch_size", 2))
        frames = max(tp, round(frames / tp) * tp)
    return frames


def load_hf(target: str, options: ModelOptions | None = None, *, family: str | None = None) -> HfAdapter:
    """The adapter of an ``hf:`` target loaded with ``options`` (``family`` forces one, e.g. ``clip``
    for ``clip:``); ``options.frame_sampling`` (centre, start, linspace, or fps:N where the family
    takes any count per clip) overrides the family's convention."""
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    o = options_object(options, ModelOptions, "load_hf")
    spec = parse_spec(target)
    config = read_json(spec, "config.json") or {}
    fam = BY_NAME[family] if family else pick_family(config, f"{spec.name}/config.json")
    mode = pick_mode(fam, spec.mode)
    fam.adapters[mode].check_config(config, f"{spec.name}/config.json")
    frames = _frames(fam, config, o.frames)
    runtime = Runtime(device=o.device, dtype=o.dtype, precision=o.precision, batch_size=o.batch_size,
                      device_map=o.device_map)
    sampling = o.frame_sampling or fam.sampling
    if sampling.startswith("fps:") and not fam.adapters[mode].rate_sampling(fam):
        raise ModelSpecError(f"{fam.cls} #{mode} reads the same number of frames from every clip; "
                             f"--frame-sampling {sampling} is not supported for it (use centre, start or "
                             "linspace with --frames)")
    multiple = int(_vision(config).get("temporal_patch_size", 2)) if fam.frames == "groups" else 1
    adapter = fam.adapters[mode](spec, fam, mode, runtime, frames, _pixels(fam, config, spec), sampling,
                                 multiple=multiple)
    adapter.setup(runtime.load(getattr(transformers, fam.loader or fam.cls), spec))
    return adapter
