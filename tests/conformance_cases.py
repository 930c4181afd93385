"""Every hf family against its official transformers processor, on the same frames.

Each case builds the tiny model of the real class with a vision tower sized for the real
checkpoint's preprocessing, and writes a preprocessor config copying that checkpoint's
preprocessing fields. ``official(case, frames)`` runs the family's PIL-backed transformers image
processor on the frames the adapter samples. The video processors of Qwen2-VL, LLaVA-NeXT-Video,
LLaVA-OneVision and Video-LLaVA need torchvision, which does not import beside the CPU torch
wheel, so for them the video processor's parameters go through the PIL image processor that
applies the same resize, rescale and normalisation (noted per case in ``via``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

import hf_classifiers
import hf_models
import tiny_models

CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]
HALF = [0.5, 0.5, 0.5]
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
SIZES = ((320, 240), (640, 360), (1280, 720))          # (width, height)
LENGTHS = (7, 150)
FRAMES = 8


def _vision(image_size: int, patch_size: int, **kw: Any) -> dict[str, Any]:
    return dict(hf_models.SMALL, image_size=image_size, patch_size=patch_size, **kw)


@dataclass(frozen=True)
class Case:
    """One family: its tiny-model builder, the real checkpoint's preprocessing, the official processor."""

    family: str
    checkpoint: str                      # whose preprocessor config the fields copy
    build: Callable[[Path], Path]
    preprocessor: dict[str, Any]
    processor: str                       # the transformers PIL-backed class run as the reference
    via: str = ""                        # why an image processor stands in for a video processor
    frames: int = FRAMES
    mode: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


_SHORT_CROP = {"do_resize": True, "size": {"shortest_edge": 224}, "do_center_crop": True,
               "crop_size": {"height": 224, "width": 224}, "resample": 3, "do_rescale": True,
               "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": CLIP_MEAN, "image_std": CLIP_STD}
_VIDEO = "the video processor needs torchvision; its parameters run through the PIL image processor"
_QWEN = {"min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14, "temporal_patch_size": 2, "merge_size": 2,
         "resample": 3, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
         "image_mean": CLIP_MEAN, "image_std": CLIP_STD}

_NORM = {"do_normalize": True, "do_resize": True}
_CONVNEXT = dict(_NORM, crop_pct=0.875, image_mean=IMAGENET_MEAN, image_std=IMAGENET_STD, resample=3, size=224)
_VIDEOMAE = dict(_NORM, crop_size={"height": 224, "width": 224}, do_center_crop=True, do_rescale=True,
                 image_mean=IMAGENET_MEAN, image_std=IMAGENET_STD, resample=2, rescale_factor=1 / 255,
                 size={"shortest_edge": 224})
_VIDEO_VIA = "the video processor needs torchvision; the PIL image processor of the same class's parameters"


def _classifier(family: str, checkpoint: str, preprocessor: dict[str, Any], processor: str, via: str = "") -> Case:
    """A classifier case: its tiny model at the real input size, the real checkpoint's frame count."""
    return Case(family, checkpoint, lambda p: hf_classifiers.build(family, p, image_size=224), preprocessor,
                processor, via, frames=hf_classifiers.FRAMES.get(family, 1))


CLASSIFIER_CASES = (
    _classifier("vit", "google/vit-base-patch16-224",
                dict(_NORM, image_mean=HALF, image_std=HALF, resample=2, size=224), "ViTImageProcessorPil"),
    _classifier("deit", "facebook/deit-base-distilled-patch16-224",
                dict(_NORM, crop_size=224, do_center_crop=True, image_mean=IMAGENET_MEAN, image_std=IMAGENET_STD,
                     resample=3, size=256), "DeiTImageProcessorPil"),
    _classifier("beit", "microsoft/beit-base-patch16-224",
                dict(_NORM, crop_size=224, do_center_crop=False, image_mean=HALF, image_std=HALF, resample=2,
                     size=224), "BeitImageProcessorPil"),
    _classifier("swin", "microsoft/swin-tiny-patch4-window7-224",
                dict(_NORM, image_mean=IMAGENET_MEAN, image_std=IMAGENET_STD, resample=3, size=224),
                "ViTImageProcessorPil"),
    _classifier("convnext", "facebook/convnext-tiny-224", _CONVNEXT, "ConvNextImageProcessorPil"),
    _classifier("resnet", "microsoft/resnet-50", _CONVNEXT, "ConvNextImageProcessorPil"),
    _classifier("videomae", "MCG-NJU/videomae-base-finetuned-kinetics", _VIDEOMAE, "VideoMAEImageProcessorPil",
                _VIDEO_VIA),
    _classifier("timesformer", "facebook/timesformer-base-finetuned-k400",
                dict(_VIDEOMAE, image_mean=[0.45] * 3, image_std=[0.225] * 3), "VideoMAEImageProcessorPil",
                _VIDEO_VIA + " (TimeSformer's processor is VideoMAE's)"),
    _classifier("vivit", "google/vivit-b-16x2-kinetics400",
                dict(_VIDEOMAE, image_mean=HALF, image_std=HALF, offset=True, rescale_factor=1 / 127.5,
                     size={"shortest_edge": 256}), "VivitImageProcessor"),
)
VIDEO_FAMILIES = ("xclip", *hf_classifiers.VIDEO)      # the reference takes the frames as one video

CASES: dict[str, Case] = {c.family: c for c in (
    Case("clip", "openai/clip-vit-base-patch32",
         lambda p: tiny_models.build_clip(p, image_size=224, patch_size=32), _SHORT_CROP, "CLIPImageProcessorPil"),
    Case("siglip", "google/siglip-base-patch16-224",
         lambda p: hf_models.build_siglip(p, _vision(224, 32)),
         {"do_resize": True, "size": {"height": 224, "width": 224}, "resample": 3, "do_rescale": True,
          "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": HALF, "image_std": HALF},
         "SiglipImageProcessorPil"),
    Case("siglip2", "google/siglip2-base-patch16-naflex",
         lambda p: hf_models.build_siglip2(p, dict(hf_models.SMALL, patch_size=16, num_patches=256)),
         {"do_resize": True, "patch_size": 16, "max_num_patches": 256, "resample": 2, "do_rescale": True,
          "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": HALF, "image_std": HALF},
         "Siglip2ImageProcessorPil"),
    Case("xclip", "microsoft/xclip-base-patch32",
         lambda p: hf_models.build_xclip(p, num_frames=FRAMES, vision=_vision(224, 32)),
         dict(_SHORT_CROP, resample=2), "VideoMAEImageProcessorPil"),
    Case("blip", "Salesforce/blip-itm-base-coco",
         lambda p: hf_models.build_blip(p, _vision(384, 64)),
         {"do_resize": True, "size": {"height": 384, "width": 384}, "resample": 3, "do_rescale": True,
          "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": CLIP_MEAN, "image_std": CLIP_STD},
         "BlipImageProcessorPil"),
    Case("blip2", "Salesforce/blip2-itm-vit-g",
         lambda p: hf_models.build_blip2(p, _vision(224, 32)),
         {"do_resize": True, "size": {"height": 224, "width": 224}, "resample": 3, "do_rescale": True,
          "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": CLIP_MEAN, "image_std": CLIP_STD},
         "BlipImageProcessorPil"),
    Case("qwen2_vl", "Qwen/Qwen2-VL-2B-Instruct",
         lambda p: hf_models.build_qwen2_vl(p, patch_size=14), _QWEN, "Qwen2VLImageProcessorPil",
         "Qwen2VLVideoProcessor needs torchvision; each frame runs through Qwen2VLImageProcessorPil "
         "(same smart_resize, filter and normalisation) and is compared frame by frame"),
    Case("qwen2_5_vl", "Qwen/Qwen2.5-VL-3B-Instruct",
         lambda p: hf_models.build_qwen2_vl(p, v25=True, patch_size=14), _QWEN, "Qwen2VLImageProcessorPil",
         "as Qwen2-VL"),
    Case("llava_next_video", "llava-hf/LLaVA-NeXT-Video-7B-hf",
         lambda p: hf_models.build_llava_next_video(p, _vision(224, 32, model_type="clip_vision_model",
                                                               projection_dim=16)),
         _SHORT_CROP, "CLIPImageProcessorPil", _VIDEO),
    Case("llava_onevision", "llava-hf/llava-onevision-qwen2-0.5b-ov-hf",
         lambda p: hf_models.build_llava_onevision(p, _vision(384, 64, model_type="siglip_vision_model")),
         {"do_resize": True, "size": {"height": 384, "width": 384}, "resample": 3, "do_rescale": True,
          "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": HALF, "image_std": HALF},
         "SiglipImageProcessorPil", _VIDEO + " (a fixed-size resize, as SiglipImageProcessorPil makes it)"),
    Case("video_llava", "LanguageBind/Video-LLaVA-7B-hf",
         lambda p: hf_models.build_video_llava(p, _vision(224, 32, model_type="clip_vision_model",
                                                          projection_dim=16)),
         _SHORT_CROP, "CLIPImageProcessorPil", _VIDEO),
    *CLASSIFIER_CASES,
)}


def build(case: Case, root: Path) -> Path:
    """The tiny checkpoint of ``case`` with the real checkpoint's preprocessing fields."""
    path = case.build(root / case.family)
    (path / "preprocessor_config.json").write_text(json.dumps(case.preprocessor))
    return path


def video(width: int, height: int, n_frames: int, keep: np.ndarray, seed: int) -> np.ndarray:
    """A (n_frames, height, width, 3) uint8 clip with natural-looking content (smooth colour
    fields, hard edges, mild noise) on the frames ``keep``; the other frames stay black and
    untouched, so long clips cost only the sampled frames."""
    import cv2

    rng = np.random.default_rng(seed)
    clip = np.zeros((n_frames, height, width, 3), dtype=np.uint8)
    for t in np.unique(keep):
        low = rng.uniform(0, 255, (9, 12, 3)).astype(np.float32)
        frame = cv2.resize(low, (width, height), interpolation=cv2.INTER_CUBIC)
        x0, y0 = int(rng.integers(0, width // 2)), int(rng.integers(0, height // 2))
        frame[y0:y0 + height // 3, x0:x0 + width // 3] = rng.uniform(0, 255, 3)
        frame += rng.normal(0, 6, frame.shape).astype(np.float32)
        clip[t] = np.clip(frame, 0, 255).astype(np.uint8)
    return clip


def _unpatch_siglip2(values: Any, mask: Any, shapes: Any, patch: int) -> Any:
    """(F, 3, h, w) frames back from SigLIP 2 patch rows and their grid."""
    import torch

    out = []
    for rows, m, (gh, gw) in zip(values, mask, shapes.tolist()):
        x = rows[: int(m.sum())].reshape(gh, gw, patch, patch, 3).permute(4, 0, 2, 1, 3)
        out.append(x.reshape(3, gh * patch, gw * patch))
    return torch.stack(out)


def _unpatch_qwen(rows: Any, grid: list[int], tp: int, patch: int, merge: int) -> Any:
    """(t * tp, 3, h, w) frames back from Qwen2-VL patch rows of one grid (t, gh, gw)."""
    t, gh, gw = grid
    x = rows.reshape(t, gh // merge, gw // merge, merge, merge, 3, tp, patch, patch)
    x = x.permute(0, 6, 5, 1, 3, 7, 2, 4, 8)             # t, tp, c, gh/m, m, p, gw/m, m, p
    return x.reshape(t * tp, 3, gh * patch, gw * patch)


def official(case: Case, frames: np.ndarray) -> dict[str, Any]:
    """The reference processor's output on the sampled frames, plus ``frames``: (F, 3, h, w)
    normalised pixels in the adapter's frame order, and ``grid`` where the family has one."""
    import transformers

    cfg = dict(case.preprocessor)
    proc = getattr(transformers, case.processor)(**cfg)
    images = list(frames)
    if case.family in VIDEO_FAMILIES:
        out = proc(images, return_tensors="pt")
        return {"pixel_values": out["pixel_values"], "frames": out["pixel_values"][0]}
    out = proc(images=images, return_tensors="pt")
    if case.family == "siglip2":
        return {**out, "frames": _unpatch_siglip2(out["pixel_values"], out["pixel_attention_mask"],
                                                  out["spatial_shapes"], cfg["patch_size"])}
    if case.family.startswith("qwen"):                  # one image per frame, each repeated tp times
        tp, grids = cfg["temporal_patch_size"], out["image_grid_thw"].tolist()
        per = grids[0][1] * grids[0][2]
        pix = [_unpatch_qwen(out["pixel_values"][i * per:(i + 1) * per], g, tp, cfg["patch_size"],
                             cfg["merge_size"])[0] for i, g in enumerate(grids)]
        import torch
        return {"frames": torch.stack(pix), "grid": [len(images) // tp, grids[0][1], grids[0][2]],
                "tokens": len(images) // tp * per // cfg["merge_size"] ** 2}
    return {"pixel_values": out["pixel_values"], "frames": out["pixel_values"]}


def ours(case: Case, adapter: Any, clip: np.ndarray) -> dict[str, Any]:
    """``adapter.preprocess(clip)`` plus the same ``frames`` / ``grid`` / ``tokens`` views as :func:`official`."""
    got = adapter.preprocess(clip)
    if case.family == "siglip2":
        return {**got, "frames": _unpatch_siglip2(got["pixel_values"], got["pixel_attention_mask"],
                                                  got["spatial_shapes"], adapter.pixels.patch)}
    if case.family.startswith("qwen"):
        grid = got["video_grid_thw"][0].tolist()
        return {**got, "frames": _unpatch_qwen(got["pixel_values_videos"], grid, adapter.tp, adapter.patch,
                                               adapter.merge),
                "grid": grid, "tokens": adapter.clip_tokens(got, 1)[0]}
    key = "pixel_values_videos" if "pixel_values_videos" in got else "pixel_values"
    pix = got[key]
    return {**got, "frames": pix[0] if pix.ndim == 5 else pix}


def levels(case: Case, pix: Any) -> np.ndarray:
    """Normalised pixels back in 0..255 levels (ViViT's offset rescale, 1/127.5 then -1, undone too)."""
    cfg = case.preprocessor
    mean = np.asarray(cfg["image_mean"], dtype=np.float64).reshape(1, 3, 1, 1)
    std = np.asarray(cfg["image_std"], dtype=np.float64).reshape(1, 3, 1, 1)
    return (pix.double().numpy() * std + mean + (1 if cfg.get("offset") else 0)) / cfg.get("rescale_factor", 1 / 255)


def use_official_pixels(case: Case, adapter: Any) -> Any:
    """``adapter`` reading the reference processor's pixels (its layout code unchanged)."""
    def clip_pixels(clip: Any) -> Any:
        return official(case, np.asarray(clip)[adapter.frame_spec.indices(len(clip))])["frames"]
    adapter.clip_pixels = clip_pixels
    return adapter


def scores(adapter: Any, clips: list, texts: list[str]) -> np.ndarray:
    """(V, T) similarities: dot products of unit embeddings, or the cross-encoder's pair scores; a
    classifier's (V, C) logits (it reads no text)."""
    if hasattr(adapter, "classify"):
        return adapter.classify(clips)
    if hasattr(adapter, "encode_videos") and getattr(adapter, "mode", "") in ("embed",):
        return adapter.encode_videos(clips) @ adapter.encode_texts(texts).T
    v, t = len(clips), len(texts)
    pairs = [clips[i] for i in range(v) for _ in range(t)]
    return np.asarray(adapter.score(pairs, [texts[j] for _ in range(v) for j in range(t)])).reshape(v, t)
