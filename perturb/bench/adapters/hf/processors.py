"""Each family's official processor: its class defaults (used for keys a checkpoint's
preprocessor config leaves out) and its frame-sampling convention, kept as data in one place.

Values copy the class attributes of the transformers processors named in ``PROCESSOR`` (video
processors where the family has one). ``SAMPLING`` names the source of each default in
docs/models.md.
"""
from __future__ import annotations

from typing import Any

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
HALF = (0.5, 0.5, 0.5)
BICUBIC, BILINEAR = 3, 2

_SHORT_CROP = dict(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}, do_center_crop=True,
                   default_to_square=False, resample=BICUBIC, image_mean=CLIP_MEAN, image_std=CLIP_STD)
_QWEN = dict(size={"shortest_edge": 128 * 28 * 28, "longest_edge": 28 * 28 * 768}, resample=BICUBIC,
             image_mean=CLIP_MEAN, image_std=CLIP_STD, patch_size=14, temporal_patch_size=2, merge_size=2)

# family -> (processor class, its defaults)
PROCESSOR: dict[str, tuple[str, dict[str, Any]]] = {
    "clip": ("CLIPImageProcessor", _SHORT_CROP),
    "siglip": ("SiglipImageProcessor", dict(size={"height": 224, "width": 224}, resample=BICUBIC,
                                            image_mean=HALF, image_std=HALF)),
    "siglip2": ("Siglip2ImageProcessor", dict(resample=BILINEAR, image_mean=HALF, image_std=HALF,
                                              patch_size=16, max_num_patches=256)),
    "xclip": ("VideoMAEImageProcessor", dict(_SHORT_CROP, resample=BILINEAR, image_mean=HALF, image_std=HALF)),
    "blip": ("BlipImageProcessor", dict(size={"height": 384, "width": 384}, resample=BICUBIC,
                                        image_mean=CLIP_MEAN, image_std=CLIP_STD)),
    "qwen2_vl": ("Qwen2VLVideoProcessor", _QWEN),
    "qwen2_5_vl": ("Qwen2VLVideoProcessor", _QWEN),
    "llava_next_video": ("LlavaNextVideoVideoProcessor", _SHORT_CROP),
    "llava_onevision": ("LlavaOnevisionVideoProcessor", dict(size={"height": 384, "width": 384}, resample=BICUBIC,
                                                             image_mean=CLIP_MEAN, image_std=CLIP_STD)),
    "video_llava": ("VideoLlavaVideoProcessor", _SHORT_CROP),
}
PROCESSOR["blip2"] = PROCESSOR["blip"]

# family -> (default frame sampling, where the convention comes from)
SAMPLING: dict[str, tuple[str, str]] = {
    "clip": ("linspace", "CLIP4Clip's uniform sampling, first to last frame"),
    "siglip": ("linspace", "as CLIP (image towers applied to frames)"),
    "siglip2": ("linspace", "as CLIP (image towers applied to frames)"),
    "xclip": ("centre", "X-CLIP's segment-based test sampling (one frame per segment, centred)"),
    "blip": ("linspace", "as CLIP (image towers applied to frames)"),
    "blip2": ("linspace", "as CLIP (image towers applied to frames)"),
    "qwen2_vl": ("start", "Qwen2VLVideoProcessor.sample_frames with num_frames (cards: fps:2)"),
    "qwen2_5_vl": ("start", "Qwen2VLVideoProcessor.sample_frames with num_frames (cards: fps:2)"),
    "llava_next_video": ("start", "transformers sample_frames (i * n // count), as the model card"),
    "llava_onevision": ("start", "transformers sample_frames (i * n // count)"),
    "video_llava": ("start", "transformers sample_frames (i * n // count), as the model card"),
}
