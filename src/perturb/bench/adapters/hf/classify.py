"""Image and video classifiers (``AutoModelForImageClassification``, ``AutoModelForVideoClassification``):
logits over the checkpoint's ``id2label`` classes, in index order.

An image classifier reads one frame of a clip (an image is a clip of one frame; of a longer clip,
the middle frame by default); a video classifier reads its config's ``num_frames`` frames of a clip
as one (F, 3, H, W) input. Pixels are the checkpoint's processor's, as for every hf family.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..protocol import ModelSpecError
from .base import HfAdapter
from .checkpoint import is_classifier
ONE_FRAME = {"centre": "middle", "start": "first", "linspace": "first"}     # what each rule reads of a video


class HfClassifier(HfAdapter):
    """A classifier: ``classify(clips)`` -> (N, len(labels)) float32 logits."""

    labels: list[str]

    @classmethod
    def check_config(cls, config: dict[str, Any], where: str) -> None:
        """A checkpoint saved without a classification head (a backbone, a pre-training model) would
        load with a random head: refused before loading."""
        names = config.get("architectures")
        if names and not is_classifier(config):
            raise ModelSpecError(f"{where}: architectures={list(names)} has no classification head; expected "
                                 "a *ForImageClassification or *ForVideoClassification checkpoint")

    def setup(self, model: Any) -> None:
        self.model = model
        id2label = model.config.id2label
        self.labels = [str(id2label[i]) for i in range(len(id2label))]

    @property
    def video(self) -> bool:
        """Whether the model reads several frames per clip (a video classifier)."""
        return self.family.frames != "one"

    def video_inputs(self, clips: Sequence[Any]) -> dict[str, Any]:
        """``pixel_values``: (N, 3, H, W) of one frame per clip, or (N, F, 3, H, W) for a video
        classifier, in the weights' dtype (VideoMAE's tubelet convolution takes no other)."""
        if self.video:
            pix = self.stacked_pixels(clips)
        else:
            pix = self.runtime.torch.cat([self.clip_pixels(c) for c in clips])
        return {"pixel_values": pix.to(self.model.dtype)}

    def classify(self, clips: Sequence[Any]) -> np.ndarray:
        """(N, len(labels)) float32 logits of uint8 (T, H, W, 3) numpy or torch clips."""
        rt = self.runtime

        def run(s: slice) -> Any:
            with rt.context():
                return self.model(**self.video_inputs(clips[s])).logits.float()
        return rt.torch.cat(list(rt.batches(len(clips), run))).cpu().numpy()

    @property
    def sampling(self) -> str:
        """The frames read, in words: a video classifier's rule, an image classifier's frame."""
        rule = self.frame_spec.sampling
        return rule if self.video else ONE_FRAME[rule]

    def card(self) -> dict[str, Any]:
        return {**super().card(), "sampling": self.sampling, "classes": len(self.labels)}
