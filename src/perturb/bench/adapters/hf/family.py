"""What sets one hf model family apart, as data: the :class:`Family` record (the table of the
families is :data:`perturb.bench.adapters.hf.families.FAMILIES`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

GEOMETRIES = ("processor", "naflex", "smart")
FRAME_RULES = ("any", "config", "groups", "one")


@dataclass(frozen=True)
class TextInputs:
    """How captions are tokenised for a family's text tower."""

    padding: bool | str = True        # "max_length": padded to max_length, as the tower was trained
    max_length: int | None = None     # None: the text config's max_position_embeddings
    lower: bool = False               # lower-cased first (SigLIP 2)
    mask: bool = True                 # the attention mask goes in (SigLIP's tower ran without one)


@dataclass(frozen=True)
class Chat:
    """How a generative family is asked whether a video matches a caption."""

    placeholder: str                  # the video token the prompt expands, once per video token
    template: str                     # the prompt when the tokenizer has no chat template ({q}: question)
    tokens: str = "per_clip"          # video tokens: "per_clip" (a fixed count, probed once) or "grid" (Qwen)
    select_strategy: bool = True      # get_video_features takes vision_feature_select_strategy


@dataclass(frozen=True)
class Family:
    """A model family: the transformers class to load, the adapter of each scoring mode (the
    default first), and the conventions of its official processor and pipelines."""

    name: str
    cls: str
    model_types: tuple[str, ...]
    adapters: Mapping[str, type]      # scoring mode -> adapter class
    processor: str                    # the official (video) processor class
    defaults: Mapping[str, Any]       # its defaults, for keys a checkpoint's config leaves out
    sampling: str                     # the frame-sampling convention (centre, start, linspace)
    sampling_source: str              # where that convention comes from (docs/models.md)
    geometry: str = "processor"       # frame -> pixels: the processor's resize, "naflex" (SigLIP 2), "smart" (Qwen2-VL)
    frames: str = "any"               # frame count: "any", "config" (exactly the config's num_frames), "groups"
    #                                   (a multiple of vision_config.temporal_patch_size), "one" (an image model)
    loader: str = ""                  # the transformers class that loads it when not ``cls`` (an Auto class
    #                                   picks the family's head named by the checkpoint's ``architectures``)
    text: TextInputs = field(default_factory=TextInputs)
    itm_head: tuple[str, str] | None = None   # the matching head: (forward flag, output attribute)
    chat: Chat | None = None

    def __post_init__(self) -> None:
        if self.geometry not in GEOMETRIES or self.frames not in FRAME_RULES or not self.adapters:
            raise ValueError(f"family {self.name}: geometry in {GEOMETRIES}, frames in {FRAME_RULES} "
                             "and at least one adapter expected")

    @property
    def modes(self) -> tuple[str, ...]:
        """The scoring modes it supports, the default first."""
        return tuple(self.adapters)
