"""Zero-shot classification with a dual encoder: class names through prompt templates.

CLIP's zero-shot recipe (Radford et al. 2021, "Learning Transferable Visual Models From Natural
Language Supervision", section 3.1.4, and its ``zeroshot_classifier`` notebook): each class's
label embedding is the mean of its unit text embeddings over the templates, renormalised; a clip's
logits are 100 x its unit embedding against every label embedding. Works with every dual-encoder
family (CLIP, SigLIP, SigLIP 2, X-CLIP). X-CLIP's text embedding depends on the video through its
prompts generator, so it has no label embedding of its own: it runs as its ``#embed`` adapter
(:class:`~.hf.xclip.XClipEmbedder`, prompts left out).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...fingerprint import digest
from .cache import CacheKey, EmbeddingCache
from .protocol import Model, unit_rows

LOGIT_SCALE = 100.0                   # CLIP's zero-shot logit scale
TEXT_BATCH = 256                      # prompts per encode_texts call
DEFAULT_TEMPLATES = {"image": ("a photo of a {}.",), "video": ("a video of a {}.",)}
PLACEHOLDER = "{}"


@dataclass(frozen=True)
class Prompts:
    """The prompt templates (each holds exactly one ``{}``) and the dataset's class names, in label order."""

    templates: tuple[str, ...]
    class_names: tuple[str, ...]


def _check_template(template: str, where: str) -> str:
    count = template.count(PLACEHOLDER)
    if count != 1:
        raise ValueError(f"{where}: template {template!r} holds {count} '{{}}'; expected exactly one "
                         f"'{{}}' where the class name goes (e.g. 'a photo of a {{}}.')")
    return template


def read_templates(value: str) -> tuple[str, ...]:
    """``--prompt``: a string with exactly one ``{}`` is one template; anything else names a UTF-8
    file of templates, one a line (blank lines and ``#`` comments skipped), each with exactly one
    ``{}``. A one-line ValueError for a missing or empty file or a template without ``{}``."""
    if value.count(PLACEHOLDER) == 1:
        return (value,)
    path = Path(value)
    if not path.is_file():
        raise ValueError(f"--prompt {value!r}: neither a template with exactly one '{{}}' (e.g. "
                         f"'a photo of a {{}}.') nor a file of templates")
    from ...dataset.annotations import read_lines

    templates = tuple(_check_template(line.strip(), f"{path}:{n}")
                      for n, line in enumerate(read_lines(path), 1)
                      if line.strip() and not line.strip().startswith("#"))
    if not templates:
        raise ValueError(f"{path}: no templates; expected one template a line, each with exactly one '{{}}'")
    return templates


class ZeroShotClassifier:
    """A dual encoder scoring clips against class names (a Classifier: ``labels``, ``classify``).

    The label embeddings are made once, on the first ``classify``, and kept on disk under
    ``cache_dir`` (keyed by the model's id and version, the templates and each class name), so a
    later classifier over the same model and prompts makes no text pass at all.
    """

    def __init__(self, model: Model, prompts: Prompts, cache_dir: str | None = None) -> None:
        if model.kind != "dual":
            raise ValueError(f"zero-shot classification needs a dual encoder (encode_videos, encode_texts); "
                             f"{model.id} is a {model.kind} model (for X-CLIP use its #embed mode)")
        if not prompts.class_names:
            raise ValueError("zero-shot classification needs at least one class name")
        self.templates = tuple(_check_template(t, "prompts") for t in prompts.templates)
        if not self.templates:
            raise ValueError("zero-shot classification needs at least one prompt template")
        self.model = model
        self.labels: tuple[str, ...] = tuple(prompts.class_names)
        self.cache = EmbeddingCache(cache_dir)
        self.inner_version = model.cache_version or model.id
        self.cache_version = digest(self.inner_version, self.templates, self.labels)
        self.text_passes = 0                       # label-embedding passes made (0 or 1)
        self._label_rows: np.ndarray | None = None

    @property
    def frame_spec(self) -> Any:
        return getattr(self.model.impl, "frame_spec", None)

    @property
    def accepts_tensors(self) -> bool:
        return bool(getattr(self.model.impl, "accepts_tensors", False))

    def card(self) -> dict[str, Any]:
        """The dual encoder's card, plus the templates and the number of classes."""
        inner = getattr(self.model.impl, "card", None)
        return {**(inner() if callable(inner) else {}),
                "zero_shot": {"templates": list(self.templates), "classes": len(self.labels)}}

    def _cache_key(self) -> CacheKey:
        return CacheKey(model=self.model.id, dataset="zero-shot", modality="text", perturbation="labels",
                        severity=None, seed=0, settings=digest(self.templates),
                        model_version=self.inner_version, dataset_name="zero-shot label embeddings")

    def _fingerprints(self) -> dict[str, str]:
        return {name: digest(self.templates, name) for name in self.labels}

    def _embed(self, names: Sequence[str]) -> np.ndarray:
        """(len(names), D) label embeddings: every template filled with each name, text-embedded,
        unit rows averaged over the templates, renormalised."""
        prompts = [t.replace(PLACEHOLDER, name) for name in names for t in self.templates]
        rows = np.concatenate([self.model.encode_texts(prompts[i:i + TEXT_BATCH])
                               for i in range(0, len(prompts), TEXT_BATCH)])
        self.text_passes += 1
        means = unit_rows(rows).reshape(len(names), len(self.templates), -1).mean(axis=1)
        return unit_rows(means).astype(np.float32)

    def label_embeddings(self) -> np.ndarray:
        """(C, D) unit label embeddings in label order: from memory, else the cache, else one text pass."""
        if self._label_rows is None:
            key, fps = self._cache_key(), self._fingerprints()
            found = self.cache.load(key, self.labels, fps)
            missing = [name for name in dict.fromkeys(self.labels) if name not in found]
            if missing:
                rows = self._embed(missing)
                self.cache.save(key, missing, rows, fps)
                found.update(zip(missing, rows))
            self._label_rows = np.stack([found[name] for name in self.labels]).astype(np.float32)
        return self._label_rows

    def classify(self, clips: Sequence[Any]) -> np.ndarray:
        """(N, C) logits: 100 x each clip's unit embedding against every label embedding."""
        videos = unit_rows(self.model.encode_videos(clips))
        return (LOGIT_SCALE * videos @ self.label_embeddings().T).astype(np.float32)


def zero_shot(model: Model, prompts: Prompts, cache_dir: str | None = None) -> Model:
    """``model`` (a dual encoder) as a classifier over ``prompts``' class names, its id
    ``<model id>#zero-shot@<8 hex of the classifier's cache_version>``."""
    impl = ZeroShotClassifier(model, prompts, cache_dir)
    return Model(impl, f"{model.id}#zero-shot@{impl.cache_version[:8]}")
