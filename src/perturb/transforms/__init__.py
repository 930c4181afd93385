"""Training transforms: seeded per-sample corruptions of clips and captions (DESIGN §8b).

``RandomPerturbation`` (video, :mod:`.video`), ``RandomImagePerturbation`` (images, each a
one-frame clip: :mod:`.image`) and ``RandomTextPerturbation`` (captions, :mod:`.text`) are
imported on first use, so text-only code never imports torch.
"""
from __future__ import annotations

import importlib

_HOMES = {"RandomPerturbation": ".video", "RandomImagePerturbation": ".image",
          "RandomTextPerturbation": ".text"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module 'perturb.transforms' has no attribute {name!r}")
