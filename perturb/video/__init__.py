"""Visual perturbations of clips: ``perturb.video.apply(clip, "motion_blur", severity=3)``."""
from __future__ import annotations

from . import blur, camera, digital, noise, temporal  # noqa: F401  (register the perturbations)
from .api import Compose, Perturbation, apply, get

__all__ = ["Compose", "Perturbation", "apply", "get"]
