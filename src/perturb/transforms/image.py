"""``RandomImagePerturbation``: :class:`~.video.RandomPerturbation`'s draws over a batch of images.

Each image is a one-frame clip: a sample with the same settings, epoch and key draws the same
(op, severity, seed) as under ``RandomPerturbation`` and renders as ``perturb.image.apply``
renders it. Ops with no meaning on one image (temporal and stream ops) are refused when the
transform is made.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..image.api import IMAGE, refusal
from ..registry import REGISTRY
from ..video.clip import Form, is_torch, validate
from .batch import BatchKind
from .video import RandomPerturbation

EXPECTED = ("an image batch (B, H, W, 3) uint8 (numpy, or torch on any device) or (B, 3, H, W) float in "
            "[0, 1] (torch), or one image (H, W, 3) / (3, H, W) of the same kinds")
IMAGE_BATCH = Form("image batch", EXPECTED, lead="B", hint=" (a batch of clips goes through RandomPerturbation)",
                   empty="a batch of at least one image", plural="images")


def check_image_batch(x: Any) -> tuple[Any, BatchKind]:
    """An image batch (or one image) validated and viewed as a batch of one-frame clips (B, 1, ...)."""
    if not is_torch(x) and not isinstance(x, np.ndarray):
        raise ValueError(f"expected {EXPECTED}; got {type(x).__name__}")
    if len(x.shape) not in (3, 4):
        raise ValueError(f"expected {EXPECTED}; got {'torch' if is_torch(x) else 'numpy'} {x.dtype} "
                         f"with shape {tuple(x.shape)}")
    single = len(x.shape) == 3
    layout = validate(x, IMAGE if single else IMAGE_BATCH)
    batch = x[None] if single else x
    clips = batch[:, None] if layout is not None else np.ascontiguousarray(batch)[:, None]
    return clips, BatchKind(layout, single)


class RandomImagePerturbation(RandomPerturbation):
    """Each image gets a random op at a random severity with chance ``p``, drawn from (seed, epoch,
    key) as :class:`~.video.RandomPerturbation` draws a clip's: ``t(images, keys=ids)``.

    ``ops`` is a selection of ops that apply to images (default ``"suite:imagenet-c"``);
    ``severity``, ``weights``, ``p``, ``seed`` and ``n`` as for ``RandomPerturbation``, and so are
    calls: ``epoch=`` per call, ``return_params=True``, a lone key for one image.
    """

    def __init__(self, ops: str | Sequence[str] = "suite:imagenet-c", *, severity: Any = (1, 5),
                 weights: Sequence[float] | Mapping[str, float] | None = None, p: float = 1.0,
                 seed: int = 0, n: int | tuple[int, int] = 1) -> None:
        super().__init__(ops, severity=severity, weights=weights, p=p, seed=seed, n=n)
        refused = [ref for ref in self.sampler.ops if refusal(REGISTRY.get(ref, "video"))]
        if refused:
            raise ValueError(f"ops {ops!r} select {', '.join(refused)}, which {'has' if len(refused) == 1 else 'have'} "
                             "no meaning on one image (temporal or stream ops); perturb.image.ops() lists the "
                             "ops that apply to images")

    def check(self, batch: Any) -> tuple[Any, BatchKind]:
        """The images as a batch of one-frame clips (B, 1, ...) plus how they came in."""
        return check_image_batch(batch)

    def shaped(self, out: Any) -> Any:
        """The one-frame clips back as images (B, ...)."""
        return out[:, 0]
