"""Generative video-language models scored by yes/no (VideoCon): log P(yes) - log P(no).

The question "Does this video match the caption: ...? Answer yes or no." goes through the
family's chat template (the tokenizer's own when it has one) with the video placeholder expanded
to the model's number of video tokens for that clip. Pixels are made on the device: Qwen2-VL's
flattened temporal patches of each clip's ``smart_resize`` size with their (t, h, w) grid (so the
token count follows the clip's aspect), the LLaVA families' (B, F, 3, H, W) frames. Only the
last position goes through the LM head. P(yes) sums the "Yes"/"yes" tokens (likewise "No"/"no").
"""
from __future__ import annotations

import inspect
from typing import Any, Sequence

import numpy as np

from ..protocol import ModelSpecError
from .base import HfAdapter
from .family import Chat
from .runtime import load_tokenizer

QUESTION = "Does this video match the caption: {caption}? Answer yes or no."


def answer_ids(tokenizer: Any, words: Sequence[str]) -> list[int]:
    """Token ids of the answer words that are single tokens of the vocabulary."""
    ids = []
    for w in words:
        enc = tokenizer.encode(w, add_special_tokens=False)
        if len(enc) == 1 and enc[0] != tokenizer.unk_token_id and enc[0] not in ids:
            ids.append(enc[0])
    if not ids:
        raise ValueError(f"the tokenizer has none of {list(words)} as a single token; cannot score yes/no")
    return ids


def yes_no_margin(logits: Any, yes: Sequence[int], no: Sequence[int]) -> Any:
    """log P(yes) - log P(no) from (B, V) next-token logits (each side a sum over its token variants)."""
    logp = logits.float().log_softmax(dim=-1)
    return logp[:, list(yes)].logsumexp(dim=-1) - logp[:, list(no)].logsumexp(dim=-1)


class YesNoAdapter(HfAdapter):
    """A cross-encoder asking the model whether each video matches each caption."""

    @classmethod
    def rate_sampling(cls, family: Any) -> bool:
        return family.chat.tokens == "grid"     # Qwen2-VL: a (t, h, w) grid and token count per clip

    def setup(self, model: Any) -> None:
        self.model = model
        self.tokenizer = load_tokenizer(self.spec)
        self.chat: Chat = self.family.chat
        self.placeholder = self.chat.placeholder
        self.yes = answer_ids(self.tokenizer, ("Yes", "yes"))
        self.no = answer_ids(self.tokenizer, ("No", "no"))
        cfg = model.config
        self.takes_token_types = "mm_token_type_ids" in inspect.signature(model.model.forward).parameters
        if self.chat.tokens == "per_clip":
            self.tokens_per_clip = self._llava_tokens_per_clip()
        else:
            v = cfg.vision_config
            self.patch, self.merge, self.tp = int(v.patch_size), int(v.spatial_merge_size), int(v.temporal_patch_size)
            if self.frames % self.tp:
                raise ModelSpecError(f"{self.family.cls} encodes frames in groups of temporal_patch_size={self.tp}; "
                                     f"--frames must be a multiple of {self.tp}; got {self.frames}")

    def grid(self, pix: Any) -> tuple[int, int, int]:
        """Qwen2-VL's (t, h, w) patch grid of one clip's (F, 3, H, W) pixels."""
        return pix.shape[0] // self.tp, pix.shape[-2] // self.patch, pix.shape[-1] // self.patch

    def video_tokens(self, grid: Sequence[int]) -> int:
        """Video tokens of a clip with this grid (Qwen2-VL merges merge x merge patches into one)."""
        return int(grid[0] * grid[1] * grid[2]) // self.merge ** 2

    def _llava_tokens_per_clip(self) -> int:
        """Video tokens of one clip after the vision tower, pooling (and OneVision's newline): one
        probe clip. Video-LLaVA keeps every frame's patch tokens (CLS included), so all but the
        last dimension of its features count."""
        torch, m = self.runtime.torch, self.model
        probe = torch.zeros(1, self.frames, 3, self.pixels.height, self.pixels.width, device=self.runtime.device,
                            dtype=next(m.parameters()).dtype)
        options = {"vision_feature_select_strategy": m.config.vision_feature_select_strategy} \
            if self.chat.select_strategy else {}
        with self.runtime.context():
            out = m.model.get_video_features(pixel_values_videos=probe,
                                             vision_feature_layer=m.config.vision_feature_layer, **options)
        feats = out if hasattr(out, "shape") else out.pooler_output
        return int(np.prod(feats.shape[:-1]))

    def prompt(self, caption: str, tokens: int) -> str:
        """The chat prompt for one caption, the video placeholder expanded to ``tokens`` tokens."""
        q = QUESTION.format(caption=caption.rstrip(" .?"))
        if getattr(self.tokenizer, "chat_template", None):
            messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": q}]}]
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        else:
            text = self.chat.template.format(q=q)
        if text.count(self.placeholder) != 1:
            raise ValueError(f"the chat prompt must hold one {self.placeholder}; got {text!r}")
        return text.replace(self.placeholder, self.placeholder * tokens)

    def video_inputs(self, clips: Sequence[Any]) -> dict[str, Any]:
        """Pixel inputs of the model for a list of clips: the LLaVA families' (V, F, 3, H, W)
        frames; Qwen2-VL's flattened temporal patches of every clip with a per-clip (t, h, w) grid
        (a clip of a frame count that is not a multiple of temporal_patch_size padded with copies of
        its last frame, as Qwen2VLVideoProcessor pads)."""
        if self.chat.tokens == "per_clip":
            return {"pixel_values_videos": self.stacked_pixels(clips)}
        torch, m, p, tp = self.runtime.torch, self.merge, self.patch, self.tp
        rows, grids = [], []
        for clip in clips:
            pix = self.clip_pixels(clip)
            if pad := -len(pix) % tp:       # fps:N may give any count: the processor repeats the last frame
                pix = torch.cat([pix, pix[-1:].expand(pad, *pix.shape[1:])])
            t, h, w = self.grid(pix)
            x = pix.reshape(t, tp, 3, h // m, m, p, w // m, m, p).permute(0, 3, 6, 4, 7, 2, 1, 5, 8)
            rows.append(x.reshape(t * h * w, 3 * tp * p * p))
            grids.append([t, h, w])
        return {"pixel_values_videos": torch.cat(rows), "video_grid_thw": torch.tensor(grids, device=rows[0].device)}

    def clip_tokens(self, inputs: dict[str, Any], n: int) -> list[int]:
        """Video tokens of each of ``n`` clips, as the prompt must expand them."""
        if self.chat.tokens == "per_clip":
            return [self.tokens_per_clip] * n
        return [self.video_tokens(g) for g in inputs["video_grid_thw"].tolist()]

    def margins(self, clips: Sequence[np.ndarray], captions: Sequence[str]) -> Any:
        """log P(yes) - log P(no) of aligned (clip, caption) rows."""
        torch = self.runtime.torch
        video = self.video_inputs(clips)
        tokens = self.clip_tokens(video, len(clips))
        tok = self.tokenizer([self.prompt(c, n) for c, n in zip(captions, tokens)], padding=True, return_tensors="pt",
                             add_special_tokens=False, padding_side="right").to(self.runtime.device)
        extra = {}
        if self.chat.tokens == "grid" and self.takes_token_types:      # transformers 5 M-RoPE
            extra["mm_token_type_ids"] = (tok["input_ids"] == self.model.config.video_token_id).long() * 2
        with self.runtime.context():
            hidden = self.model.model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"],
                                      **video, **extra).last_hidden_state
            last = tok["attention_mask"].sum(dim=1) - 1
            logits = self.model.lm_head(hidden[torch.arange(len(captions), device=hidden.device), last])
        return yes_no_margin(logits, self.yes, self.no)

    def score(self, clips: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
        rt = self.runtime
        return rt.torch.cat(list(rt.batches(len(texts), lambda s: self.margins(clips[s], texts[s])))).cpu().numpy()
