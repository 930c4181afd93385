"""Tiny randomly initialised image and video classifiers of the real transformers classes, saved
with ``save_pretrained`` (no tokenizer: a classifier reads no text), for tests.

``build(family, path, image_size=, frames=)`` writes one; labels are IMAGE_LABELS or VIDEO_LABELS
(ImageNet's and Kinetics-400's first five classes), so ``id2label`` is known.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

IMAGE_LABELS = ("tench", "goldfish", "great white shark", "tiger shark", "hammerhead")
VIDEO_LABELS = ("abseiling", "air drumming", "answering questions", "applauding", "applying cream")
TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
CNN = dict(hidden_sizes=[8, 16], depths=[1, 1])
# family -> (model class, config class, config fields given image_size and frames)
SPECS: dict[str, tuple[str, str, Any]] = {
    "vit": ("ViTForImageClassification", "ViTConfig", lambda s, f: dict(TINY, image_size=s, patch_size=s // 7)),
    "deit": ("DeiTForImageClassificationWithTeacher", "DeiTConfig",
             lambda s, f: dict(TINY, image_size=s, patch_size=s // 7)),
    "beit": ("BeitForImageClassification", "BeitConfig", lambda s, f: dict(TINY, image_size=s, patch_size=s // 7)),
    "swin": ("SwinForImageClassification", "SwinConfig",
             lambda s, f: dict(image_size=s, patch_size=s // 14, embed_dim=16, depths=[1, 1], num_heads=[1, 2],
                               window_size=7)),
    "convnext": ("ConvNextForImageClassification", "ConvNextConfig", lambda s, f: dict(CNN, num_stages=2)),
    "resnet": ("ResNetForImageClassification", "ResNetConfig",
               lambda s, f: dict(CNN, embedding_size=8, layer_type="basic")),
    "videomae": ("VideoMAEForVideoClassification", "VideoMAEConfig",
                 lambda s, f: dict(TINY, image_size=s, patch_size=s // 7, num_frames=f, tubelet_size=2)),
    "timesformer": ("TimesformerForVideoClassification", "TimesformerConfig",
                    lambda s, f: dict(TINY, image_size=s, patch_size=s // 7, num_frames=f)),
    "vivit": ("VivitForVideoClassification", "VivitConfig",
              lambda s, f: dict(TINY, image_size=s, num_frames=f, tubelet_size=[2, s // 7, s // 7])),
}
FRAMES = {"videomae": 16, "timesformer": 8, "vivit": 32}       # the real checkpoints' num_frames
VIDEO = tuple(FRAMES)


def labels_of(family: str) -> tuple[str, ...]:
    return VIDEO_LABELS if family in VIDEO else IMAGE_LABELS


def build(family: str, path: Path, image_size: int = 28, frames: int | None = None, seed: int = 0) -> Path:
    """A one-layer (or two-stage) classifier of ``family``'s real class, saved under ``path``."""
    import torch
    import transformers

    cls, config_cls, fields = SPECS[family]
    labels = labels_of(family)
    config = getattr(transformers, config_cls)(
        **fields(image_size, frames or FRAMES.get(family, 1)), num_labels=len(labels),
        id2label=dict(enumerate(labels)), label2id={name: i for i, name in enumerate(labels)})
    with torch.random.fork_rng():            # seeded weights without touching the global stream
        torch.manual_seed(seed)
        model = getattr(transformers, cls)(config)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    return path


BUILDERS = {family: (lambda f: lambda p: build(f, p))(family) for family in SPECS}
