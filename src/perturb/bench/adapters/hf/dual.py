"""Image dual encoders over frames (CLIP, SigLIP, SigLIP 2): the mean of unit frame embeddings.

SigLIP's text tower was trained on text padded to ``max_length`` (64 tokens); SigLIP 2 also
lower-cases (its fixed-resolution checkpoints are ``SiglipModel``s, told apart by their Gemma
tokenizer). SigLIP 2 takes NaFlex patch sequences: the frame resized with its aspect kept to at most
``max_num_patches`` patches, padded, with the mask and grid its processor gives.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import HfAdapter, TextTower
from .runtime import features, load_tokenizer, mean_per_clip, unit


class FrameDualEncoder(TextTower, HfAdapter):
    """A dual encoder: frames through ``get_image_features``, captions through ``get_text_features``."""

    @classmethod
    def rate_sampling(cls, family: Any) -> bool:
        return True                     # a video is the mean of its frames, however many

    def setup(self, model: Any) -> None:
        self.model = model
        self.tokenizer = load_tokenizer(self.spec)
        text = self.family.text
        self.max_length = text.max_length or int(model.config.text_config.max_position_embeddings)
        self.padding = text.padding
        # SigLIP 2 (NaFlex, or fixed-resolution checkpoints saved as SigLIP with its Gemma tokenizer)
        self.lower = text.lower or type(self.tokenizer).__name__.startswith("Gemma")

    def image_inputs(self, pix: Any) -> dict[str, Any]:
        """Model inputs for (F, 3, h, w) pixels of one size (SigLIP 2: its patch sequence padded to
        ``max_num_patches``, the mask of real patches and the patch grid, as Siglip2ImageProcessor)."""
        if self.family.geometry != "naflex":
            return {"pixel_values": pix}
        torch, p, most = self.runtime.torch, self.pixels.patch, self.pixels.max_patches
        n, c, h, w = pix.shape
        gh, gw = h // p, w // p
        patches = pix.reshape(n, c, gh, p, gw, p).permute(0, 2, 4, 3, 5, 1).reshape(n, gh * gw, p * p * c)
        padded = torch.zeros(n, most, p * p * c, dtype=patches.dtype, device=pix.device)
        padded[:, :gh * gw] = patches
        mask = torch.zeros(n, most, dtype=torch.long, device=pix.device)
        mask[:, :gh * gw] = 1
        return {"pixel_values": padded, "pixel_attention_mask": mask,
                "spatial_shapes": torch.tensor([[gh, gw]] * n, dtype=torch.long, device=pix.device)}

    def video_inputs(self, clips: Sequence[Any]) -> dict[str, Any]:
        """The frames of several clips as one batch of image-tower inputs (clip after clip)."""
        parts = [self.image_inputs(self.clip_pixels(c)) for c in clips]
        return {k: self.runtime.torch.cat([part[k] for part in parts]) for k in parts[0]}

    def text_inputs(self, texts: Sequence[str]) -> dict[str, Any]:
        texts = [t.lower() for t in texts] if self.lower else list(texts)
        tok = self.tokenizer(texts, padding=self.padding, truncation=True, max_length=self.max_length,
                             return_tensors="pt").to(self.runtime.device)
        out = {"input_ids": tok["input_ids"]}
        if "attention_mask" in tok and self.family.text.mask:      # SigLIP ran without a mask
            out["attention_mask"] = tok["attention_mask"]
        return out

    def encode_videos(self, clips: Sequence[Any]) -> np.ndarray:
        """Mean unit frame embedding of the sampled frames of each clip (uint8 numpy or torch clips)."""
        rt = self.runtime

        def run(s: slice) -> Any:
            with rt.context():
                f = features(self.model.get_image_features(**self.video_inputs(clips[s]))).float()
            return unit(mean_per_clip(unit(f), self.frame_counts(clips[s])))
        return rt.torch.cat(list(rt.batches(len(clips), run))).cpu().numpy()
