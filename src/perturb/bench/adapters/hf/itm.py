"""BLIP / BLIP-2 image-text matching heads as video cross-encoders.

Each sampled frame is scored with the ITM head; a pair's score is the mean over frames of the
head's log-odds ``logit[match] - logit[no match]`` (monotone in the softmax match probability
BLIP's re-ranking uses). ``#embed`` (BLIP only) is the ITC dual encoder: unit-norm projections of
the vision and text [CLS] tokens, the similarity ``forward(use_itm_head=False)`` returns.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import HfAdapter
from .pairs import distinct
from .runtime import load_tokenizer, unit


class ItmAdapter(HfAdapter):
    """Pairs scored by the matching head, frame by frame."""

    def setup(self, model: Any) -> None:
        self.model = model
        self.tokenizer = load_tokenizer(self.spec)
        cfg = model.config.text_config if hasattr(model.config, "text_config") else model.config
        self.max_length = min(64, int(getattr(cfg, "max_position_embeddings", 64)))

    def text_inputs(self, texts: Sequence[str]) -> dict[str, Any]:
        tok = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt").to(self.runtime.device)
        return {"input_ids": tok["input_ids"], "attention_mask": tok["attention_mask"]}

    def video_inputs(self, clips: Sequence[Any]) -> dict[str, Any]:
        """The sampled frames of the clips as one batch of images (clip after clip)."""
        return {"pixel_values": self.stacked_pixels(clips).flatten(0, 1)}

    def head(self, pixel_values: Any, input_ids: Any, attention_mask: Any) -> Any:
        """(B, 2) ITM logits of aligned (image, text) rows, through the family's matching head."""
        flag, output = self.family.itm_head
        out = self.model(pixel_values=pixel_values, input_ids=input_ids, attention_mask=attention_mask,
                         **{flag: True})
        return getattr(out, output)

    def score(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
        rt, f = self.runtime, self.frames
        uc, ci, ut, ti = distinct(clips, texts)
        pix = self.stacked_pixels(uc)                                  # (V, F, 3, H, W)
        tok = self.text_inputs(ut)
        ci_t, ti_t = rt.torch.tensor(ci, device=pix.device), rt.torch.tensor(ti, device=pix.device)

        def run(s: slice) -> Any:
            n = s.stop - s.start
            p = pix[ci_t[s]].flatten(0, 1)                             # (n*F, 3, H, W)
            ids = tok["input_ids"][ti_t[s]].repeat_interleave(f, dim=0)
            mask = tok["attention_mask"][ti_t[s]].repeat_interleave(f, dim=0)
            with rt.context():
                logits = self.head(p, ids, mask).float()
            return (logits[:, 1] - logits[:, 0]).view(n, f).mean(dim=1)
        return rt.torch.cat(list(rt.batches(len(ci), run))).cpu().numpy()


class BlipEmbedder(ItmAdapter):
    """BLIP's ITC projections as a dual encoder (mean of unit frame embeddings)."""

    def encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        rt, m, f = self.runtime, self.model, self.frames
        def run(s: slice) -> Any:
            with rt.context():
                cls = m.vision_model(**self.video_inputs(clips[s]))[0][:, 0]
                e = unit(m.vision_proj(cls).float())
            return unit(e.view(-1, f, e.shape[-1]).mean(dim=1))
        return rt.torch.cat(list(rt.batches(len(clips), run))).cpu().numpy()

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        rt, m = self.runtime, self.model

        def run(s: slice) -> Any:
            with rt.context():
                cls = m.text_encoder(**self.text_inputs(texts[s])).last_hidden_state[:, 0]
                return unit(m.text_proj(cls).float())
        return rt.torch.cat(list(rt.batches(len(texts), run))).cpu().numpy()
