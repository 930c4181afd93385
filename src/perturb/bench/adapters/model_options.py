"""The options a model is loaded with (:class:`ModelOptions`): built once, by the command line or
the caller, and passed whole from ``benchmark()`` to :func:`~.factory.load_model`, each kind's
loader and :func:`~.hf.load_hf`; every kind reads the fields it takes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .zero_shot import Prompts


@dataclass(frozen=True, kw_only=True)
class ModelOptions:
    """How a model is loaded and run: where (``device``, ``device_map``), in what number format
    (``dtype`` of the weights, autocast ``precision``), how many items per forward pass
    (``batch_size``; 0 = automatic for hf models), which frames (``frames`` per clip, None: the
    model's own count; ``frame_sampling``: centre, start, linspace or fps:N for hf models), an http
    server's ``timeout`` in seconds, and ``cache_key``, the version the embedding cache keys the
    model by (else its checkpoint, revision, ``cache_version`` or name).

    Classification: ``labels``, the class names of a ``callable:`` logit function in its logit
    order (``--classes``); ``prompts``, the class names and templates a dual encoder classifies
    with zero-shot (:mod:`.zero_shot`), its label embeddings cached under ``prompt_cache``."""

    device: str = "auto"
    batch_size: int = 32
    frames: int | None = None
    timeout: float = 60.0
    dtype: str = "auto"
    precision: str = "auto"
    device_map: str | None = None
    frame_sampling: str | None = None
    cache_key: str | None = None
    labels: tuple[str, ...] | None = None
    prompts: Prompts | None = None
    prompt_cache: str | None = None
