"""X-CLIP: its score is ``forward()``'s ``logits_per_video``, so by default it is a cross-encoder.

X-CLIP adds a video-conditioned prompt to every text embedding inside ``forward()`` (the prompts
generator attends from the text to the video's patch tokens), so a caption has no embedding of
its own. ``#logits`` (default) scores each (video, caption) pair with the model's logits; distinct
clips and captions of a call go through one forward, so scoring N videos x Q captions costs N/B
vision passes. ``#embed`` drops the prompts and is a plain dual encoder over
``get_video_features`` / ``get_text_features``. The model takes exactly ``vision_config.num_frames``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import HfAdapter, TextTower
from .pairs import distinct
from .runtime import features, load_tokenizer, unit


class XClipAdapter(HfAdapter):
    """X-CLIP as a pair scorer (``#logits``) or, via :class:`XClipEmbedder`, a dual encoder."""

    def setup(self, model: Any) -> None:
        self.model = model
        self.tokenizer = load_tokenizer(self.spec)
        self.max_length = int(model.config.text_config.max_position_embeddings)

    def video_inputs(self, clips: Sequence[Any]) -> dict[str, Any]:
        """``pixel_values`` (V, F, 3, H, W) of the sampled frames."""
        return {"pixel_values": self.stacked_pixels(clips)}

    def text_inputs(self, texts: Sequence[str]) -> dict[str, Any]:
        tok = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt").to(self.runtime.device)
        return {"input_ids": tok["input_ids"], "attention_mask": tok["attention_mask"]}

    def logits(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> Any:
        """(V, T) ``logits_per_video`` of every clip against every text."""
        with self.runtime.context():
            return self.model(**self.video_inputs(clips), **self.text_inputs(texts)).logits_per_video.float()

    def score(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
        uc, ci, ut, ti = distinct(clips, texts)
        rt = self.runtime
        rows = rt.torch.cat(list(rt.batches(len(uc), lambda s: self.logits(uc[s], ut))))
        return rows[rt.torch.tensor(ci), rt.torch.tensor(ti)].cpu().numpy()


class XClipEmbedder(TextTower, XClipAdapter):
    """X-CLIP without its prompts generator: unit video and text embeddings."""

    def encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        rt = self.runtime

        def run(s: slice) -> Any:
            with rt.context():
                return unit(features(self.model.get_video_features(**self.video_inputs(clips[s]))).float())
        return rt.torch.cat(list(rt.batches(len(clips), run))).cpu().numpy()
