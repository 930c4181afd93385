"""CLIP zero-shot (Portillo-Quintero et al.): mean of L2-normalised frame embeddings, via transformers.

Clips go to the device as uint8 (pinned host memory and an asynchronous copy on CUDA; torch
tensors already on the device stay there); resizing, cropping and normalising run on the device
(half precision on CUDA, float32 on CPU, where antialiased resizing has no half kernel), and the
model runs under autocast on CUDA. The CPU and CUDA paths are the same code with other settings.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Sequence

import numpy as np

from .frames import FrameSpec, frame_indices

# Bytes of device memory one frame costs in a forward pass of a ViT-B-size model (activations,
# half precision, with headroom); the automatic batch size fills a quarter of the free memory.
AUTO_BYTES_PER_FRAME = 24 * 2**20
AUTO_MAX_FRAMES = 4096


def pick_device(device: str = "auto") -> str:
    """``cuda`` when asked for or available under ``auto``, else ``cpu``."""
    import torch
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise ValueError(f"device must be auto, cpu or cuda[:N]; got {device!r}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was requested but torch sees no CUDA device")
    return device


def auto_batch_size(free_bytes: int, frames: int) -> int:
    """Clips per forward pass that fit a quarter of ``free_bytes`` of device memory (at least 1)."""
    return max(1, int(min(AUTO_MAX_FRAMES, free_bytes // 4 // AUTO_BYTES_PER_FRAME)) // frames)


class ClipAdapter:
    """A dual encoder over a ``CLIPModel`` and its processor, from a hub name or a local path."""

    def __init__(self, name_or_path: str, device: str = "auto", batch_size: int | str = 32,
                 frames: int = 8) -> None:
        import torch
        from transformers import AutoTokenizer, CLIPModel
        from transformers.utils import logging as hf_logging

        if frames < 1:
            raise ValueError(f"frames must be >= 1; got {frames}")
        if batch_size != "auto" and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                     or batch_size < 1):
            raise ValueError(f"batch_size must be a positive int or 'auto'; got {batch_size!r}")
        offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false")
        hf_logging.set_verbosity_error()
        self.device = pick_device(device)
        self.model = CLIPModel.from_pretrained(name_or_path, local_files_only=offline).to(self.device).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(name_or_path, local_files_only=offline)
        self._init_pixels(name_or_path, offline)
        self.frames = frames
        self.frame_spec = FrameSpec(frames, self.size)    # the runner hands over only these frames
        self.accepts_tensors = True                       # uint8 torch clips may stay on the device
        self.max_length = int(self.model.config.text_config.max_position_embeddings)
        self._torch = torch
        self.cuda = self.device.startswith("cuda")
        self.pixel_dtype = torch.float16 if self.cuda else torch.float32
        self.batch_size = self._auto_batch() if batch_size == "auto" else batch_size

    def _auto_batch(self) -> int:
        """Clips per forward pass: a quarter of free device memory on CUDA, 32 on CPU."""
        if not self.cuda:
            return 32
        free, _ = self._torch.cuda.mem_get_info(self._torch.device(self.device))
        return auto_batch_size(free, self.frames)


    def _init_pixels(self, name_or_path: str, offline: bool) -> None:
        """Resolution and normalisation from the saved image processor config (CLIP's by default)."""
        import json
        from huggingface_hub import hf_hub_download

        cfg: dict = {}
        local = os.path.join(name_or_path, "preprocessor_config.json")
        try:
            path = local if os.path.isdir(name_or_path) else hf_hub_download(
                name_or_path, "preprocessor_config.json", local_files_only=offline)
            with open(path) as f:
                cfg = json.load(f)
        except (OSError, ValueError):
            cfg = {}
        crop = cfg.get("crop_size", self.model.config.vision_config.image_size)
        self.size = int(crop["height"] if isinstance(crop, dict) else crop)
        self.mean = np.asarray(cfg.get("image_mean", [0.4815, 0.4578, 0.4082]), dtype=np.float32)
        self.std = np.asarray(cfg.get("image_std", [0.2686, 0.2613, 0.2758]), dtype=np.float32)

    def _to_device(self, frames: list[Any]):
        """uint8 (F, H, W, 3) frames as one device tensor: via pinned memory and a non-blocking
        copy from host arrays, untouched when they already are tensors on the device."""
        torch = self._torch
        if all(isinstance(f, torch.Tensor) and str(f.device) == str(torch.device(self.device)) for f in frames):
            return torch.cat(frames) if len(frames) > 1 else frames[0]
        n = sum(len(f) for f in frames)
        host = torch.empty((n, *frames[0].shape[1:]), dtype=torch.uint8, pin_memory=self.cuda)
        at = 0
        for f in frames:                           # one copy into the (pinned) batch, no concatenation
            host[at:at + len(f)] = f if isinstance(f, torch.Tensor) else torch.from_numpy(np.asarray(f))
            at += len(f)
        return host.to(self.device, non_blocking=True)

    def _pixels(self, x):
        """Resize the short side, centre-crop and normalise uint8 (F, H, W, 3) frames on the device."""
        torch = self._torch
        x = x.permute(0, 3, 1, 2).to(self.pixel_dtype) / 255.0
        h, w = x.shape[-2:]
        scale = self.size / min(h, w)
        nh, nw = max(self.size, round(h * scale)), max(self.size, round(w * scale))
        x = torch.nn.functional.interpolate(x, size=(nh, nw), mode="bicubic", antialias=True,
                                            align_corners=False).clamp(0, 1)
        top, left = (nh - self.size) // 2, (nw - self.size) // 2
        x = x[..., top:top + self.size, left:left + self.size]
        mean = torch.as_tensor(self.mean, device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
        std = torch.as_tensor(self.std, device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
        return (x - mean) / std

    @staticmethod
    def _features(out):
        return out if hasattr(out, "norm") else out.pooler_output

    def _run(self, fn, **inputs):
        torch = self._torch
        autocast = torch.autocast("cuda", dtype=torch.float16) if self.cuda else contextlib.nullcontext()
        with torch.inference_mode(), autocast:
            return self._features(fn(**inputs)).float()

    def encode_videos(self, clips: Sequence[Any]) -> np.ndarray:
        """Mean of unit-norm frame embeddings of ``frames`` frames per clip (numpy or torch uint8)."""
        picked = [c[frame_indices(len(c), self.frames)] for c in clips]
        step = self.batch_size
        feats = []
        for i in range(0, len(picked), step):
            pix = self._pixels(self._to_device(picked[i:i + step]))
            f = self._run(self.model.get_image_features, pixel_values=pix)
            feats.append(f / f.norm(dim=-1, keepdim=True).clamp_min(1e-12))
        per_frame = self._torch.cat(feats).view(len(clips), self.frames, -1)
        return per_frame.mean(dim=1).cpu().numpy()

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        feats = []
        for i in range(0, len(texts), self.batch_size):
            tok = self.tokenizer(list(texts[i:i + self.batch_size]), padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="pt").to(self.device)
            feats.append(self._run(self.model.get_text_features, input_ids=tok["input_ids"],
                                   attention_mask=tok["attention_mask"]))
        return self._torch.cat(feats).cpu().numpy()
