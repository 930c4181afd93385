"""The part every hf adapter shares: spec, family, mode, runtime, frames, model card and model id."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..protocol import ModelSpecError
from ..frames import FrameSpec, check_sampling
from .checkpoint import HfSpec, commit_of
from .family import Family
from .runtime import Pixels, Runtime, features, sample, unit


class HfAdapter:
    """Base of the hf adapters: subclasses load ``self.model`` and implement encode or score.

    Clips may be uint8 numpy or torch (already on the device: they stay there); a clip of exactly
    the frames the runner picked by :attr:`frame_spec` is used as it is, a longer one is sampled.
    """

    accepts_tensors = True          # uint8 torch clips (e.g. perturbed on the device) stay there

    def __init__(self, spec: HfSpec, family: Family, mode: str, runtime: Runtime, frames: int,
                 pixels: Pixels, sampling: str = "centre", *, multiple: int = 1) -> None:
        if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
            raise ModelSpecError(f"frames must be a positive int; got {frames!r}")
        self.spec, self.family, self.mode, self.runtime = spec, family, mode, runtime
        self.frames, self.pixels = frames, pixels
        hint = None if pixels.rule in ("naflex", "smart") else (pixels.edge or min(pixels.height, pixels.width))
        self.frame_spec = FrameSpec(frames, hint, check_sampling(sampling), multiple)
        self.model: Any = None
        self.commit = commit_of(spec)

    @classmethod
    def check_config(cls, config: dict[str, Any], where: str) -> None:
        """Refuse, before loading, a checkpoint this adapter cannot score (ModelSpecError); none by default."""

    @classmethod
    def rate_sampling(cls, family: Family) -> bool:
        """Whether this adapter takes clips of different frame counts (``fps:N`` sampling)."""
        return False

    def frame_counts(self, clips: Sequence[Any]) -> list[int]:
        """Frames the model reads of each clip: ``frames``, or each clip's own count under ``fps:N``."""
        return [len(c) for c in clips] if self.frame_spec.by_rate else [self.frames] * len(clips)

    @property
    def revision(self) -> str:
        """The hub commit the checkpoint resolved to, else the revision asked for ("local" for a folder)."""
        return self.commit or self.spec.revision or ("local" if self.spec.local else "main")

    @property
    def id(self) -> str:
        """The model id of results.json: checkpoint, revision (a commit for hub names), mode and frame count."""
        frames = self.frame_spec.sampling if self.frame_spec.by_rate else f"{self.frames}f"
        return f"hf:{self.spec.name}@{self.revision}#{self.mode}@{frames}"

    @property
    def resolution(self) -> str:
        """The pixel size the model reads ("HxW", or the rule when it follows the frame size)."""
        rule = self.pixels.rule
        if rule in ("naflex", "smart"):
            return f"{rule} (aspect kept)"
        return f"{self.pixels.height}x{self.pixels.width}"

    def preprocess(self, clip: Any) -> dict[str, Any]:
        """Exactly the video tensors the model's forward receives for one uint8 (T, H, W, 3) clip,
        under the processor's key names."""
        return self.video_inputs([clip])

    def clip_pixels(self, clip: Any) -> Any:
        """(F, 3, h, w) pixel values of the frames this model samples from one clip."""
        return self.pixels(sample(clip, self.frame_spec), self.runtime)

    def stacked_pixels(self, clips: Sequence[Any]) -> Any:
        """(V, F, 3, h, w) pixel values of clips whose pixel size does not depend on the frame size."""
        return self.runtime.torch.stack([self.clip_pixels(c) for c in clips])

    @property
    def cache_version(self) -> str:
        """What the embedding cache keys this model by besides its id: the weights (checkpoint
        fingerprint for a folder, hub commit for a name) and the precision they run in."""
        from ....fingerprint import model_version

        weights = f"rev:{self.commit}" if self.commit else model_version(self.spec.name)
        return f"{weights}|{self.runtime.weight_dtype(self.model)}|{self.runtime.autocast_name}"

    def card(self) -> dict[str, Any]:
        """What the report states about the model."""
        return {"family": self.family.name, "class": self.family.cls, "checkpoint": self.spec.name,
                "revision": self.revision, "requested_revision": self.spec.revision, "mode": self.mode, "frames": self.frames,
                "resolution": self.resolution, "frame_sampling": self.frame_spec.sampling,
                "dtype": self.runtime.weight_dtype(self.model),
                "autocast": self.runtime.autocast_name, "device": self.runtime.device}


class TextTower:
    """Caption embeddings through ``get_text_features``, for adapters with ``text_inputs``."""

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        rt = self.runtime

        def run(s: slice) -> Any:
            with rt.context():
                return unit(features(self.model.get_text_features(**self.text_inputs(texts[s]))).float())
        return rt.torch.cat(list(rt.batches(len(texts), run))).cpu().numpy()
