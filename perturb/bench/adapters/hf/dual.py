"""Image dual encoders over frames (CLIP, SigLIP, SigLIP 2): the mean of unit frame embeddings.

SigLIP's text tower was trained on text padded to ``max_length`` (64 tokens); SigLIP 2 also
lower-cases (its fixed-resolution checkpoints are ``SiglipModel``s, told apart by their Gemma tokenizer). SigLIP 2 takes NaFlex patch sequences, made here on the device from a fixed square.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import HfAdapter, TextTower
from .runtime import features, load_tokenizer, sample, unit


class FrameDualEncoder(TextTower, HfAdapter):
    """A dual encoder: frames through ``get_image_features``, captions through ``get_text_features``."""

    accepts_tensors = True          # uint8 torch clips (e.g. perturbed on the device) stay there

    def setup(self, model: Any) -> None:
        self.model = model
        self.tokenizer = load_tokenizer(self.spec)
        name = self.family.name
        self.max_length = 64 if name == "siglip2" else int(model.config.text_config.max_position_embeddings)
        self.padding = "max_length" if name in ("siglip", "siglip2") else True
        # SigLIP 2 (NaFlex, or fixed-resolution checkpoints saved as SigLIP with its Gemma tokenizer)
        self.lower = name == "siglip2" or type(self.tokenizer).__name__.startswith("Gemma")

    def image_inputs(self, pix: Any) -> dict[str, Any]:
        """Model inputs for (F, 3, H, W) pixels (SigLIP 2: flattened patches and their grid)."""
        if self.family.name != "siglip2":
            return {"pixel_values": pix}
        torch, p = self.runtime.torch, int(self.model.config.vision_config.patch_size)
        n, c, h, w = pix.shape
        gh, gw = h // p, w // p
        patches = pix[..., :gh * p, :gw * p].reshape(n, c, gh, p, gw, p).permute(0, 2, 4, 3, 5, 1)
        patches = patches.reshape(n, gh * gw, p * p * c)
        return {"pixel_values": patches,
                "pixel_attention_mask": torch.ones(n, gh * gw, dtype=torch.long, device=pix.device),
                "spatial_shapes": torch.tensor([[gh, gw]] * n, dtype=torch.long, device=pix.device)}

    def text_inputs(self, texts: Sequence[str]) -> dict[str, Any]:
        texts = [t.lower() for t in texts] if self.lower else list(texts)
        tok = self.tokenizer(texts, padding=self.padding, truncation=True, max_length=self.max_length,
                             return_tensors="pt").to(self.runtime.device)
        out = {"input_ids": tok["input_ids"]}
        if "attention_mask" in tok and self.family.name != "siglip":      # SigLIP ran without a mask
            out["attention_mask"] = tok["attention_mask"]
        return out

    def encode_videos(self, clips: Sequence[Any]) -> np.ndarray:
        """Mean unit frame embedding of ``frames`` frames per clip (uint8 numpy or torch clips)."""
        rt = self.runtime
        frames = rt.to_device([sample(c, self.frames) for c in clips])
        per = self.frames

        def run(s: slice) -> Any:
            chunk = frames[s.start * per:s.stop * per]
            with rt.context():
                f = features(self.model.get_image_features(**self.image_inputs(self.pixels(chunk, rt)))).float()
            return unit(unit(f).view(-1, per, f.shape[-1]).mean(dim=1))
        return rt.torch.cat(list(rt.batches(len(clips), run))).cpu().numpy()
