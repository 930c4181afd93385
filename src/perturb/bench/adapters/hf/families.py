"""The hf model families, one :class:`~.family.Family` row each, and picking a checkpoint's family.

A row holds everything that sets a family apart: the transformers class and the ``model_type``
values that name it in ``config.json``, the adapter of each scoring mode (its default first), its
official processor with that class's defaults (for keys a checkpoint's preprocessor config leaves
out), its frame-sampling convention and where that comes from (docs/models.md), and how its
pixels, frames, text and prompts are made. Adding a family is one row here, plus its adapter class
when none of the existing ones scores it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..protocol import ModelSpecError
from .classify import HfClassifier
from .dual import FrameDualEncoder
from .family import Chat, Family, TextInputs
from .itm import BlipEmbedder, ItmAdapter
from .xclip import XClipAdapter, XClipEmbedder
from .yesno import YesNoAdapter

# Processor defaults: the class attributes of the transformers processors the rows name.
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
HALF = (0.5, 0.5, 0.5)
BICUBIC, BILINEAR = 3, 2
SHORT_CROP = dict(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}, do_center_crop=True,
                  default_to_square=False, resample=BICUBIC, image_mean=CLIP_MEAN, image_std=CLIP_STD)
SQUARE_384 = dict(size={"height": 384, "width": 384}, resample=BICUBIC, image_mean=CLIP_MEAN, image_std=CLIP_STD)
QWEN = dict(size={"shortest_edge": 128 * 28 * 28, "longest_edge": 28 * 28 * 768}, resample=BICUBIC,
            image_mean=CLIP_MEAN, image_std=CLIP_STD, patch_size=14, temporal_patch_size=2, merge_size=2)

# Frame-sampling conventions shared by several families: (rule, where it comes from).
AS_CLIP = ("linspace", "as CLIP (image towers applied to frames)")
QWEN_SAMPLING = ("start", "Qwen2VLVideoProcessor.sample_frames with num_frames (cards: fps:2)")
LLAVA_CARD = ("start", "transformers sample_frames (i * n // count), as the model card")
ONE_FRAME = ("centre", "an image is a clip of one frame; of a video, the middle frame (one centred segment)")
WINDOW = ("linspace", "the transformers examples' sample_frame_indices: np.linspace over a window of the video "
                      "(here the whole clip, not a random one)")

EMBED = {"embed": FrameDualEncoder}
ITM = {"itm": ItmAdapter, "embed": BlipEmbedder}
YESNO = {"yesno": YesNoAdapter}
QWEN_CHAT = Chat("<|video_pad|>", "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>{q}<|im_end|>\n"
                 "<|im_start|>assistant\n", tokens="grid")
LLAVA_CHAT = Chat("<video>", "USER: <video>\n{q} ASSISTANT:")
CLASSIFY = {"classify": HfClassifier}
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
SQUARE_224 = dict(size={"height": 224, "width": 224}, image_mean=HALF, image_std=HALF)
CONVNEXT = dict(size={"shortest_edge": 384}, default_to_square=False, crop_pct=224 / 256, resample=BICUBIC,
                image_mean=HALF, image_std=HALF)
VIDEOMAE = dict(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}, do_center_crop=True,
                default_to_square=False, resample=BILINEAR, image_mean=HALF, image_std=HALF)


def image_classifier(name: str, cls: str, processor: str, defaults: dict[str, Any]) -> Family:
    """An ``AutoModelForImageClassification`` family: one frame per clip."""
    return Family(name, cls, (name,), CLASSIFY, processor, defaults, *ONE_FRAME, frames="one",
                  loader="AutoModelForImageClassification")


def video_classifier(name: str, cls: str, processor: str, defaults: dict[str, Any]) -> Family:
    """An ``AutoModelForVideoClassification`` family: exactly the config's ``num_frames`` per clip."""
    return Family(name, cls, (name,), CLASSIFY, processor, defaults, *WINDOW, frames="config",
                  loader="AutoModelForVideoClassification")


FAMILIES = (
    Family("clip", "CLIPModel", ("clip",), EMBED, "CLIPImageProcessor", SHORT_CROP,
           "linspace", "CLIP4Clip's uniform sampling, first to last frame"),
    Family("siglip", "SiglipModel", ("siglip",), EMBED, "SiglipImageProcessor",
           dict(size={"height": 224, "width": 224}, resample=BICUBIC, image_mean=HALF, image_std=HALF), *AS_CLIP,
           text=TextInputs(padding="max_length", mask=False)),
    Family("siglip2", "Siglip2Model", ("siglip2",), EMBED, "Siglip2ImageProcessor",
           dict(resample=BILINEAR, image_mean=HALF, image_std=HALF, patch_size=16, max_num_patches=256), *AS_CLIP,
           geometry="naflex", text=TextInputs(padding="max_length", max_length=64, lower=True)),
    Family("xclip", "XCLIPModel", ("xclip",), {"logits": XClipAdapter, "embed": XClipEmbedder},
           "VideoMAEImageProcessor", dict(SHORT_CROP, resample=BILINEAR, image_mean=HALF, image_std=HALF),
           "centre", "X-CLIP's segment-based test sampling (one frame per segment, centred)", frames="config"),
    Family("blip", "BlipForImageTextRetrieval", ("blip",), ITM, "BlipImageProcessor", SQUARE_384, *AS_CLIP,
           itm_head=("use_itm_head", "itm_score")),
    Family("blip2", "Blip2ForImageTextRetrieval", ("blip-2", "blip_2"), {"itm": ItmAdapter}, "BlipImageProcessor",
           SQUARE_384, *AS_CLIP, itm_head=("use_image_text_matching_head", "logits_per_image")),
    Family("qwen2_vl", "Qwen2VLForConditionalGeneration", ("qwen2_vl",), YESNO, "Qwen2VLVideoProcessor", QWEN,
           *QWEN_SAMPLING, geometry="smart", frames="groups", chat=QWEN_CHAT),
    Family("qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration", ("qwen2_5_vl",), YESNO, "Qwen2VLVideoProcessor",
           QWEN, *QWEN_SAMPLING, geometry="smart", frames="groups", chat=QWEN_CHAT),
    Family("llava_next_video", "LlavaNextVideoForConditionalGeneration", ("llava_next_video",), YESNO,
           "LlavaNextVideoVideoProcessor", SHORT_CROP, *LLAVA_CARD, chat=LLAVA_CHAT),
    Family("llava_onevision", "LlavaOnevisionForConditionalGeneration", ("llava_onevision",), YESNO,
           "LlavaOnevisionVideoProcessor", SQUARE_384, "start", "transformers sample_frames (i * n // count)",
           chat=Chat("<video>", "<|im_start|>user <video>\n{q}<|im_end|><|im_start|>assistant\n")),
    Family("video_llava", "VideoLlavaForConditionalGeneration", ("video_llava",), YESNO, "VideoLlavaVideoProcessor",
           SHORT_CROP, *LLAVA_CARD, chat=replace(LLAVA_CHAT, select_strategy=False)),
    image_classifier("vit", "ViTForImageClassification", "ViTImageProcessor", dict(SQUARE_224, resample=BILINEAR)),
    image_classifier("deit", "DeiTForImageClassification", "DeiTImageProcessor",
                     dict(size={"height": 256, "width": 256}, crop_size={"height": 224, "width": 224},
                          do_center_crop=True, resample=BICUBIC, image_mean=HALF, image_std=HALF)),
    image_classifier("beit", "BeitForImageClassification", "BeitImageProcessor", dict(SQUARE_224, resample=BICUBIC)),
    image_classifier("swin", "SwinForImageClassification", "ViTImageProcessor", dict(SQUARE_224, resample=BILINEAR)),
    image_classifier("convnext", "ConvNextForImageClassification", "ConvNextImageProcessor", CONVNEXT),
    image_classifier("resnet", "ResNetForImageClassification", "ConvNextImageProcessor", CONVNEXT),
    video_classifier("videomae", "VideoMAEForVideoClassification", "VideoMAEImageProcessor", VIDEOMAE),
    video_classifier("timesformer", "TimesformerForVideoClassification", "VideoMAEImageProcessor", VIDEOMAE),
    video_classifier("vivit", "VivitForVideoClassification", "VivitImageProcessor",
                     dict(VIDEOMAE, size={"shortest_edge": 256}, rescale_factor=1 / 127.5, offset=True)),
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
